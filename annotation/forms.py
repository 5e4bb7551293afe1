"""Annotation's forms: assigning tables to annotators."""

from __future__ import annotations

from django import forms

from annotation.models import AnnotationTool
from annotation.selectors import annotators_for
from dataset.forms import TableFilterForm


class AnnotatorChoice(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj: object) -> str:
        return obj.get_username()  # type: ignore[attr-defined]


class AssignForm(TableFilterForm):
    """Tables to assign (a list of ids, or else the dataset's filters), to whom, for what."""

    page = None  # type: ignore[assignment]
    annotators = AnnotatorChoice(
        queryset=annotators_for(),
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Choose at least one annotator"},
    )
    kind = forms.ChoiceField(
        choices=AnnotationTool.choices,
        initial=AnnotationTool.PROPERTIES,
        widget=forms.RadioSelect,
        label="Work",
    )
    table_ids = forms.CharField(
        required=False,
        max_length=200_000,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Table ids",
        help_text="One or more, separated by spaces, commas or lines. Leave empty to assign "
        "every table the filters match.",
    )
