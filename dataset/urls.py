from django.urls import path

from dataset import views

app_name = "dataset"

urlpatterns = [
    path("dataset/", views.dataset, name="dataset"),
    path("dataset/coverage/", views.coverage, name="coverage"),
    path("tables/<str:table_id>/", views.table_detail, name="table_detail"),
    path("tables/<str:table_id>/download/<str:fmt>/", views.table_download, name="table_download"),
]
