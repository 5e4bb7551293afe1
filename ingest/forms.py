from __future__ import annotations

from django import forms

from dataset.models import Collection


class UploadForm(forms.Form):
    """The files themselves come from ``request.FILES.getlist("files")``: several at once."""

    collection = forms.ModelChoiceField(
        queryset=Collection.objects.order_by("name"), to_field_name="code", empty_label=None
    )


class CollectionForm(forms.Form):
    code = forms.CharField(max_length=16, help_text="Starts the ids of its tables, e.g. qnpc-2024.")
    name = forms.CharField(max_length=200)
    publisher = forms.CharField(max_length=200, required=False)
    url = forms.URLField(max_length=500, required=False, label="URL", assume_scheme="https")
    licence = forms.CharField(max_length=200, required=False)
    ocr_language = forms.CharField(
        max_length=40,
        required=False,
        label="OCR language",
        initial="eng",
        help_text="For scans and images: Tesseract's code, such as eng, ara, or eng+ara for "
        "bilingual tables (blank: eng). Its data package must be installed on the ingest worker.",
    )
