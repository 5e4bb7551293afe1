from django.urls import path

from annotation import annotate_api as api

urlpatterns = [
    path("taxonomies/", api.TaxonomiesApi.as_view(), name="api-annotate-taxonomies"),
    path("properties/next/", api.PropertyNextApi.as_view(), name="api-annotate-property-next"),
    path(
        "properties/<str:table_id>/",
        api.PropertyWorkApi.as_view(),
        name="api-annotate-property-work",
    ),
    path(
        "properties/<str:table_id>/draft/",
        api.PropertyDraftApi.as_view(),
        name="api-annotate-property-draft",
    ),
    path(
        "properties/<str:table_id>/save/",
        api.PropertySaveApi.as_view(),
        name="api-annotate-property-save",
    ),
    path(
        "properties/<str:table_id>/skip/",
        api.PropertySkipApi.as_view(),
        name="api-annotate-property-skip",
    ),
    path("answers/check/", api.AnswerCheckApi.as_view(), name="api-annotate-answer-check"),
    path("questions/next/", api.QuestionNextApi.as_view(), name="api-annotate-question-next"),
    path(
        "questions/<str:table_id>/",
        api.QuestionWorkApi.as_view(),
        name="api-annotate-question-work",
    ),
    path(
        "questions/<str:table_id>/draft/",
        api.QuestionDraftApi.as_view(),
        name="api-annotate-question-draft",
    ),
    path(
        "questions/<str:table_id>/save/",
        api.QuestionSaveApi.as_view(),
        name="api-annotate-question-save",
    ),
    path(
        "questions/<str:table_id>/skip/",
        api.QuestionSkipApi.as_view(),
        name="api-annotate-question-skip",
    ),
    path("agreement/", api.AgreementApi.as_view(), name="api-annotate-agreement"),
    path(
        "agreement/<str:table_id>/resolve/", api.ResolveApi.as_view(), name="api-annotate-resolve"
    ),
]
