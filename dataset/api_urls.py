from django.urls import path

from dataset import api

urlpatterns = [
    path("tables/", api.TableListApi.as_view(), name="api-table-list"),
    path("tables/<str:table_id>/", api.TableDetailApi.as_view(), name="api-table-detail"),
    path(
        "tables/<str:table_id>/formats/<str:fmt>/",
        api.TableRenderingApi.as_view(),
        name="api-table-rendering",
    ),
    path("questions/", api.QuestionListApi.as_view(), name="api-question-list"),
    path(
        "questions/<str:question_id>/", api.QuestionDetailApi.as_view(), name="api-question-detail"
    ),
]
