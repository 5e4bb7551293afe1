from django.urls import path

from endpoints import api

urlpatterns = [
    path("endpoints/", api.EndpointListApi.as_view(), name="api-endpoint-list"),
    path("endpoints/<slug:name>/", api.EndpointDetailApi.as_view(), name="api-endpoint-detail"),
]
