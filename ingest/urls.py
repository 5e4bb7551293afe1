from django.urls import path

from ingest import views

app_name = "ingest"

urlpatterns = [
    path("", views.home, name="home"),
    path("collections/new/", views.collection_new, name="collection_new"),
    path("quality/", views.quality, name="quality"),
    path("documents/<int:document_id>/", views.document, name="document"),
    path(
        "documents/<int:document_id>/pages/<int:number>.jpg",
        views.page_image,
        name="page_image",
    ),
    path("documents/<int:document_id>/pages/<int:number>/", views.page, name="page"),
    path("candidates/<int:candidate_id>/", views.candidate, name="candidate"),
    path("candidates/<int:candidate_id>/crop.png", views.crop, name="crop"),
    path("candidates/<int:candidate_id>/reject/", views.reject, name="reject"),
    path("candidates/<int:candidate_id>/image/", views.image, name="image"),
]
