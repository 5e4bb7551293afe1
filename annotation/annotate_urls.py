from django.urls import path

from annotation import annotate_views as views

app_name = "annotate"

urlpatterns = [
    path("", views.hub, name="hub"),
    path("properties/", views.property_next, name="properties_next"),
    path("properties/<str:table_id>/", views.property_tool, name="properties"),
    path("questions/", views.question_next, name="questions_next"),
    path("questions/<str:table_id>/", views.question_tool, name="questions"),
    path("agreement/", views.agreement, name="agreement"),
    path("agreement/<str:table_id>/", views.resolve, name="resolve"),
]
