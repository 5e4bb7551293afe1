"""The dataset's filter forms: the dataset page, the API's lists, the table formats."""

from __future__ import annotations

from django import forms

from dataset.models import QuestionOrigin, QuestionStatus, Split
from dataset.selectors import QuestionFilters, TableFilters, source_choices
from hctqa.core.render import FORMATS
from hctqa.core.taxonomy import TABLE_PROPERTIES

_ANY = [("", "Any")]
_PROPERTY_CHOICES = _ANY + [
    (p.code, p.label if p.parent is None else f"{TABLE_PROPERTIES.get(p.parent).label} › {p.label}")
    for p in TABLE_PROPERTIES.properties
]


def _source_choices() -> list[tuple[str, str]]:
    return _ANY + source_choices()


_YES_NO = [("", "Any"), ("yes", "Yes"), ("no", "No")]


class TableFilterForm(forms.Form):
    label_suffix = ""

    q = forms.CharField(required=False, max_length=200, label="Search")
    source = forms.ChoiceField(required=False, choices=_source_choices)
    split = forms.ChoiceField(required=False, choices=_ANY + list(Split.choices))
    table_property = forms.ChoiceField(
        required=False, choices=_PROPERTY_CHOICES, label="Table property"
    )
    has_human_question = forms.ChoiceField(
        required=False, choices=_YES_NO, label="Has a human-written question"
    )
    page = forms.IntegerField(required=False, min_value=1)

    def filters(self) -> TableFilters:
        data = self.cleaned_data
        human = {"yes": True, "no": False}.get(data["has_human_question"])
        return TableFilters(
            source=data["source"],
            split=data["split"],
            table_property=data["table_property"],
            has_human_question=human,
            search=data["q"].strip(),
        )


class QuestionFilterForm(forms.Form):
    table = forms.CharField(required=False, max_length=160)
    source = forms.ChoiceField(required=False, choices=_source_choices)
    split = forms.ChoiceField(required=False, choices=_ANY + list(Split.choices))
    origin = forms.ChoiceField(required=False, choices=_ANY + list(QuestionOrigin.choices))
    status = forms.ChoiceField(required=False, choices=_ANY + list(QuestionStatus.choices))
    q = forms.CharField(required=False, max_length=200)

    def filters(self) -> QuestionFilters:
        data = self.cleaned_data
        return QuestionFilters(
            table=data["table"],
            source=data["source"],
            split=data["split"],
            origin=data["origin"],
            status=data["status"],
            search=data["q"].strip(),
        )


class TableFormatForm(forms.Form):
    format = forms.ChoiceField(required=False, choices=[(f, f) for f in FORMATS])

    def fmt(self) -> str:
        return self.cleaned_data["format"] or "html"
