from django.urls import path

from discussion import views

app_name = "discussion"

urlpatterns = [
    path("tables/<str:table_id>/", views.table_thread, name="table"),
    path("questions/<str:question_id>/", views.question_thread, name="question"),
]
