from django.urls import path

from ingest import api

urlpatterns = [
    path("collections/", api.CollectionsApi.as_view(), name="api-ingest-collections"),
    path("documents/", api.DocumentsApi.as_view(), name="api-ingest-documents"),
    path("documents/<int:document_id>/", api.DocumentApi.as_view(), name="api-ingest-document"),
    path("documents/<int:document_id>/draw/", api.DrawApi.as_view(), name="api-ingest-draw"),
    path("candidates/<int:candidate_id>/", api.CandidateApi.as_view(), name="api-ingest-candidate"),
    path(
        "candidates/<int:candidate_id>/draft/",
        api.CandidateDraftApi.as_view(),
        name="api-ingest-candidate-draft",
    ),
    path(
        "candidates/<int:candidate_id>/save/",
        api.CandidateSaveApi.as_view(),
        name="api-ingest-candidate-save",
    ),
    path(
        "candidates/<int:candidate_id>/reject/",
        api.CandidateRejectApi.as_view(),
        name="api-ingest-candidate-reject",
    ),
    path(
        "candidates/<int:candidate_id>/extract/",
        api.CandidateExtractApi.as_view(),
        name="api-ingest-candidate-extract",
    ),
    path("preview/", api.PreviewApi.as_view(), name="api-ingest-preview"),
    path("quality/", api.QualityApi.as_view(), name="api-ingest-quality"),
]
