from __future__ import annotations

from decimal import Decimal

from django import forms

from leaderboard import selectors
from leaderboard.models import (
    DataScope,
    EvalSplit,
    Modality,
    PromptStyle,
    SizeClass,
    TableFormat,
    Visibility,
    Weights,
)
from leaderboard.services import SubmissionInput

_ANY = [("", "Any")]


class SubmissionForm(forms.Form):
    model_name = forms.CharField(max_length=200)
    organisation = forms.CharField(max_length=200, required=False)
    parameters_billions = forms.DecimalField(
        label="Parameters (billions)",
        required=False,
        min_value=Decimal("0.01"),
        max_digits=8,
        decimal_places=2,
        help_text="Leave blank for a closed model of unknown size.",
    )
    weights = forms.ChoiceField(choices=Weights.choices)
    modality = forms.ChoiceField(choices=Modality.choices)
    table_format = forms.ChoiceField(choices=TableFormat.choices, initial=TableFormat.PAPER)
    prompt_style = forms.ChoiceField(
        choices=PromptStyle.choices, initial=PromptStyle.ZERO_SHOT, required=False
    )
    split = forms.ChoiceField(choices=EvalSplit.choices, initial=EvalSplit.TEST)
    data_scope = forms.ChoiceField(
        choices=DataScope.choices, initial=DataScope.REAL, required=False
    )
    visibility = forms.ChoiceField(
        choices=Visibility.choices, initial=Visibility.PUBLIC, required=False
    )
    paper_url = forms.URLField(required=False, max_length=500, assume_scheme="https")
    code_url = forms.URLField(required=False, max_length=500, assume_scheme="https")
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    predictions = forms.FileField(
        help_text="JSONL or a JSON array, optionally gzipped: one object per question with "
        "question_id (or qap_id, qa_id, id) and response (or answer, prediction)."
    )

    # What an API client may leave out.
    DEFAULTS = {
        "prompt_style": PromptStyle.ZERO_SHOT,
        "data_scope": DataScope.REAL,
        "visibility": Visibility.PUBLIC,
    }

    def to_input(self) -> SubmissionInput:
        data = {k: v for k, v in self.cleaned_data.items() if k != "predictions"}
        for key, default in self.DEFAULTS.items():
            data[key] = data[key] or default
        return SubmissionInput(**data)


SORT_CHOICES = [(k, k) for k in selectors.SORTABLE] + [
    (f"-{k}", f"-{k}") for k in selectors.SORTABLE
]


class BoardFilterForm(forms.Form):
    label_suffix = ""
    q = forms.CharField(required=False, max_length=200, label="Search")
    size_class = forms.ChoiceField(
        required=False, choices=_ANY + list(SizeClass.choices), label="Size"
    )
    weights = forms.ChoiceField(required=False, choices=_ANY + list(Weights.choices))
    data_scope = forms.ChoiceField(
        required=False, choices=_ANY + list(DataScope.choices), label="Data"
    )
    table_format = forms.ChoiceField(
        required=False, choices=_ANY + list(TableFormat.choices), label="Table format"
    )
    sort = forms.ChoiceField(required=False, choices=SORT_CHOICES)
    page = forms.IntegerField(required=False, min_value=1)

    def filters(self, *, modality: str) -> selectors.BoardFilters:
        data = self.cleaned_data
        return selectors.BoardFilters(
            modality=modality,
            size_class=data["size_class"],
            weights=data["weights"],
            data_scope=data["data_scope"] or DataScope.REAL,
            table_format=data["table_format"],
            search=data["q"].strip(),
            sort=data["sort"] or "-recall",
        )


class CompareForm(forms.Form):
    a = forms.IntegerField(min_value=1, label="First submission")
    b = forms.IntegerField(min_value=1, label="Second submission")

    def clean(self) -> dict:
        data = super().clean()
        if data.get("a") and data.get("a") == data.get("b"):
            raise forms.ValidationError("choose two different submissions")
        return data
