from django.urls import path

from releases import api

urlpatterns = [
    path("releases/", api.ReleaseListApi.as_view(), name="api-release-list"),
    path("releases/create/", api.ReleaseCreateApi.as_view(), name="api-release-create"),
    path("releases/builds/<int:pk>/", api.ReleaseBuildApi.as_view(), name="api-release-build"),
    path("releases/<str:version>/", api.ReleaseDetailApi.as_view(), name="api-release-detail"),
]
