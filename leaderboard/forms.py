from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, fields
from decimal import Decimal
from typing import Any, TypeVar

from django import forms

from hctqa.core import taxonomy
from leaderboard import selectors
from leaderboard.models import (
    DEFAULT_RULES,
    INFERENCE_FORMATS,
    INFERENCE_STYLES,
    DataScope,
    EvalSplit,
    Modality,
    PromptStyle,
    Rules,
    SizeClass,
    TableFormat,
    Visibility,
    Weights,
)
from leaderboard.services import InferenceRunInput, SubmissionInput
from leaderboard.services.submissions import TRACK_SPLITS
from plumbing.errors import Problems
from tracks.registry import TrackInfo
from tracks.registry import choices as track_choices

_ANY = [("", "Any")]
T = TypeVar("T")


def _parameters_field() -> forms.DecimalField:
    """The parameter count, as uploads and inference runs both ask for it."""
    return forms.DecimalField(
        label="Parameters (billions)",
        required=False,
        min_value=Decimal("0.01"),
        max_digits=8,
        decimal_places=2,
        help_text="In billions, e.g. 7 or 0.5. Needed for open weights; leave it blank for a "
        "closed model of unknown size.",
        error_messages={"invalid": "Give the parameter count as a number of billions, e.g. 7"},
    )


def _weights_field(**kwargs: object) -> forms.ChoiceField:
    return forms.ChoiceField(
        choices=[("", "Choose…"), *Weights.choices],
        error_messages={"required": "Say whether the model's weights are open or closed"},
        **kwargs,
    )


def input_from(cls: type[T], values: Mapping[str, Any]) -> T:
    """A service's input dataclass from the values a form or serializer could read; the
    others keep their default, or are blank (their errors are reported apart)."""
    return cls(
        **{
            f.name: values.get(f.name, "" if f.default is MISSING else f.default)
            for f in fields(cls)  # type: ignore[arg-type]
        }
    )


def form_problems(form: forms.Form) -> Problems:
    """The form's own errors (after ``is_valid()``), for a service to report with its own."""
    problems = Problems()
    problems.add_form_errors({k: list(v) for k, v in form.errors.items()})
    return problems


class SubmissionForm(forms.Form):
    model_name = forms.CharField(
        max_length=200, error_messages={"required": "Give the model's name"}
    )
    organisation = forms.CharField(max_length=200, required=False)
    parameters_billions = _parameters_field()
    # No default: a wrong guess would contradict the parameter count's help.
    weights = _weights_field(help_text="Open: the parameter count is needed.")
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
    # Not required here: a file kept from the last try (``kept_upload``) may stand in; the
    # service says when there is neither.
    predictions = forms.FileField(
        required=False,
        help_text="JSONL or a JSON array, optionally gzipped: one object per question with "
        "question_id (or qap_id, qa_id, id) and response (or answer, prediction, output; null "
        "for no answer). A gt key is compared with our gold answers, never scored.",
    )
    kept_upload = forms.CharField(required=False, max_length=64, widget=forms.HiddenInput)

    # What an API client may leave out.
    DEFAULTS = {
        "prompt_style": PromptStyle.ZERO_SHOT,
        "data_scope": DataScope.REAL,
        "visibility": Visibility.PUBLIC,
    }

    def to_input(self) -> SubmissionInput:
        """The values read (after ``is_valid()``); a field the form could not read is blank,
        and its error is in ``form_problems``."""
        values = dict(self.cleaned_data)
        for key, default in self.DEFAULTS.items():
            values[key] = values.get(key) or default
        return input_from(SubmissionInput, values)


SORT_CHOICES = [(k, k) for k in selectors.SORTABLE] + [
    (f"-{k}", f"-{k}") for k in selectors.SORTABLE
]


# The public boards: one per question set (never train or validation, which are owners' own).
BOARD_SPLIT_CHOICES = [
    (EvalSplit.ALL.value, "All questions (the paper's Table 1)"),
    (EvalSplit.TEST.value, "Test split"),
]
RULES_CHOICES = [
    (Rules.V2025_05.value, "2025-05 (the paper's rules)"),
    (Rules.V2025_10.value, "2025-10"),
]


class RulesForm(forms.Form):
    """The rules version a model page shows (the vision rules are 2025-05's only)."""

    rules = forms.ChoiceField(required=False, choices=RULES_CHOICES, label="Rules")

    def __init__(self, *args: object, modality: str = Modality.TEXT, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.modality = modality

    def clean_rules(self) -> str:
        rules = self.cleaned_data["rules"] or DEFAULT_RULES
        if self.modality == Modality.VISION and rules != DEFAULT_RULES:
            raise forms.ValidationError("Vision answers have only the 2025-05 rules")
        return rules


# The board's columns a reader may hide, in the board's order (rank, tick and model always
# show). The vision board has no precision.
# In the board's order: recall, the main score, first.
BOARD_COLUMNS = [
    ("recall", "Recall"),
    ("precision", "Precision"),
    ("cc", "CC"),
    ("psa", "QNPC"),
    ("pak", "Pak."),
    ("census", "US Census"),
    ("arxiv", "arXiv"),
    ("size", "Size"),
    ("input", "Input"),
    ("scored_on", "Scored on"),
]
COLUMNS_CHOSEN = "1"


class BoardFilterForm(RulesForm):
    """The board's filters. ``modality`` is the board's (the vision board has only the
    2025-05 rules). The columns shown travel in the URL too: ``cols=1`` says the
    checkboxes were sent, and each ``col`` names a column shown (a form without script
    cannot send the boxes left unticked)."""

    label_suffix = ""
    split = forms.ChoiceField(
        required=False,
        choices=BOARD_SPLIT_CHOICES,
        label="Questions",
        error_messages={
            "invalid_choice": "The public boards rank all questions or the test split, not "
            "%(value)s: train and validation scores are for their owners only"
        },
    )
    q = forms.CharField(required=False, max_length=200, label="Search")
    size_class = forms.ChoiceField(
        required=False, choices=_ANY + list(SizeClass.choices), label="Size"
    )
    weights = forms.ChoiceField(required=False, choices=_ANY + list(Weights.choices))
    # No "any": real and synthetic scores are never ranked together (blank means real).
    data_scope = forms.ChoiceField(required=False, choices=list(DataScope.choices), label="Data")
    table_format = forms.ChoiceField(
        required=False, choices=_ANY + list(TableFormat.choices), label="Table format"
    )
    sort = forms.ChoiceField(required=False, choices=SORT_CHOICES)
    page = forms.IntegerField(required=False, min_value=1)
    col = forms.MultipleChoiceField(
        required=False,
        choices=BOARD_COLUMNS,
        widget=forms.CheckboxSelectMultiple,
        label="Columns shown",
    )
    cols = forms.CharField(required=False, max_length=1, widget=forms.HiddenInput)

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        if self.modality == Modality.VISION:
            self.fields["col"].choices = [c for c in BOARD_COLUMNS if c[0] != "precision"]

    def clean_split(self) -> str:
        return self.cleaned_data["split"] or EvalSplit.ALL

    def shown_columns(self) -> list[str]:
        """The columns to show: those ticked, or all of them when none were chosen."""
        offered = [key for key, _ in self.fields["col"].choices]
        data = getattr(self, "cleaned_data", {})
        if data.get("cols") == COLUMNS_CHOSEN:
            return [key for key in offered if key in data.get("col", [])]
        return offered

    def filters(self) -> selectors.BoardFilters:
        data = self.cleaned_data
        return selectors.BoardFilters(
            modality=self.modality,
            split=data["split"],
            rules=data["rules"],
            size_class=data["size_class"],
            weights=data["weights"],
            data_scope=data["data_scope"] or DataScope.REAL,
            table_format=data["table_format"],
            search=data["q"].strip(),
            sort=data["sort"] or "-recall",
        )


class CompareForm(forms.Form):
    """Two submissions to compare: chosen in the page's lists (``a``, ``b``), or ticked on
    the board (``pick``, twice)."""

    a = forms.IntegerField(min_value=1, label="First submission")
    b = forms.IntegerField(min_value=1, label="Second submission")
    rules = forms.ChoiceField(required=False, choices=RULES_CHOICES, label="Rules")

    def __init__(self, data: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        self.ticked: int | None = None
        if data is not None and "pick" in data:
            picks = data.getlist("pick")  # type: ignore[attr-defined]
            self.ticked = len(picks)
            data = data.copy()  # type: ignore[attr-defined]
            data.setlist("a", picks[:1])  # type: ignore[union-attr]
            data.setlist("b", picks[1:2])  # type: ignore[union-attr]
        super().__init__(data, **kwargs)

    def clean_rules(self) -> str:
        return self.cleaned_data["rules"] or DEFAULT_RULES

    def clean(self) -> dict:
        if self.ticked is not None and self.ticked != 2:
            raise forms.ValidationError(
                f"Tick two rows of the board to compare them, not {self.ticked}"
            )
        data = super().clean()
        if data.get("a") and data.get("a") == data.get("b"):
            raise forms.ValidationError("Choose two different submissions")
        return data


OWN_ENDPOINT = ""


class InferenceRunForm(forms.Form):
    """A new inference run. Ranges and combinations are checked by the service, which says
    what is wrong with a field; the form only reads the values."""

    track = forms.ChoiceField(
        choices=track_choices(),
        initial="qa",
        required=False,
        label="Task",
        help_text="QA: the benchmark's questions. Extraction: a vision model transcribes each "
        "table region as HTML. Transformation: the table in the format below, to relational "
        "CSV. NL-to-SQL: the question and the schema, to SQL.",
    )
    mode = forms.ChoiceField(
        choices=[("", "—"), ("region", "Region given (extraction)")],
        required=False,
        label="Extraction mode",
    )
    model_name = forms.CharField(
        max_length=200, help_text="As the endpoint knows it, e.g. Qwen/Qwen2.5-7B-Instruct."
    )
    endpoint = forms.ChoiceField(
        required=False,
        help_text="An endpoint an admin registered (its key stays on the server), or your own.",
    )
    base_url = forms.CharField(
        label="Your endpoint's base URL",
        max_length=500,
        required=False,
        help_text="Only for your own endpoint: OpenAI-compatible and public, e.g. "
        "https://api.openai.com/v1 or https://my-vllm.example.org/v1.",
    )
    api_key = forms.CharField(
        label="Your endpoint's API key",
        max_length=500,
        required=False,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Only for your own endpoint, if it needs one. Kept encrypted while the run "
        "can send, erased when it ends, never shown again.",
    )
    modality = forms.ChoiceField(choices=Modality.choices, initial=Modality.TEXT)
    table_format = forms.ChoiceField(
        choices=INFERENCE_FORMATS,
        initial=TableFormat.PAPER,
        help_text="Vision runs send the table as an image.",
    )
    prompt_style = forms.ChoiceField(choices=INFERENCE_STYLES, initial=PromptStyle.ZERO_SHOT)
    system_role = forms.BooleanField(
        required=False,
        initial=True,
        label="Send the instructions as a system message",
        help_text="Untick for models without a system role: the text then starts the first "
        "user message.",
    )
    split = forms.ChoiceField(choices=EvalSplit.choices, initial=EvalSplit.TEST)
    data_scope = forms.ChoiceField(choices=DataScope.choices, initial=DataScope.REAL)
    temperature = forms.FloatField(initial=0.0)
    max_tokens = forms.IntegerField(initial=128)
    concurrency = forms.IntegerField(
        initial=8, label="Requests in flight", help_text="At once, between 1 and 256."
    )
    use_cache = forms.BooleanField(
        required=False,
        initial=True,
        label="Reuse cached answers",
        help_text="Answers this model gave to the very same prompt and parameters before.",
    )
    organisation = forms.CharField(max_length=200, required=False)
    parameters_billions = _parameters_field()
    weights = _weights_field(help_text="Open: the parameter count is needed.")
    visibility = forms.ChoiceField(
        choices=Visibility.choices,
        initial=Visibility.PUBLIC,
        help_text="Of the leaderboard entry the run becomes.",
    )
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args: object, endpoints: list[tuple[str, str]], **kwargs: object) -> None:
        """``endpoints``: (name, label) of the registered endpoints the user may use."""
        super().__init__(*args, **kwargs)
        field = self.fields["endpoint"]
        field.choices = [*endpoints, (OWN_ENDPOINT, "My own endpoint (give its URL below)")]
        field.initial = endpoints[0][0] if endpoints else OWN_ENDPOINT

    def to_input(self) -> InferenceRunInput:
        """The values read (after ``is_valid()``); a field the form could not read keeps its
        default or is blank, and its error is in ``form_problems``."""
        values = dict(self.cleaned_data)
        values["track"] = values.get("track") or "qa"
        if values.get("endpoint", OWN_ENDPOINT) != OWN_ENDPOINT:
            # The own-endpoint fields are for the other choice; without JavaScript they are
            # still on the page, with whatever the browser filled in.
            values["base_url"] = values["api_key"] = ""
        return input_from(InferenceRunInput, values)


class InferenceResumeForm(forms.Form):
    api_key = forms.CharField(
        label="Your endpoint's API key",
        max_length=500,
        required=False,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="It was erased when the run stopped.",
    )


# --- The tracks beside QA ------------------------------------------------------------------


class TrackSubmissionForm(SubmissionForm):
    """A submission to a track beside QA: the same metadata and file as QA's (the same
    lifecycle), without QA's table format, prompt style and data scope, with the track's
    mode where it has modes."""

    mode = forms.ChoiceField(required=False, choices=[])

    def __init__(self, *args: Any, info: TrackInfo, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.info = info
        for name in ("table_format", "prompt_style", "data_scope"):
            del self.fields[name]
        self.fields["split"].choices = [(s.value, s.label) for s in TRACK_SPLITS]
        self.fields["modality"].help_text = (
            "Vision: the system reads the page as an image." if info.slug == "extraction" else ""
        )
        self.fields["parameters_billions"].help_text = (
            "In billions, for a model (e.g. 7); blank for a system that is not one, or a "
            "closed model of unknown size."
        )
        self.fields["weights"].help_text = "Open: its weights or code are public."
        if info.modes:
            self.fields["mode"].choices = list(info.modes)
            self.fields["mode"].initial = info.default_mode
            self.fields["mode"].required = True
        else:
            del self.fields["mode"]
        self.fields["predictions"].help_text = (
            f"JSON lines (or a JSON array), gzipped or not: one object per item, "
            f'{{"id": ..., "prediction": ...}}, the prediction {info.prediction} (null for '
            "none). A test-split file names every test item."
        )

    def to_input(self) -> SubmissionInput:
        values = dict(self.cleaned_data)
        values.update(
            track=self.info.slug,
            mode=values.get("mode") or "",
            table_format=TableFormat.OTHER,
            prompt_style=PromptStyle.ZERO_SHOT,
            data_scope="",
            visibility=values.get("visibility") or Visibility.PUBLIC,
        )
        return input_from(SubmissionInput, values)


class TrackBoardForm(forms.Form):
    """A track's board: its mode, the figures shown (all items, an item source or a table
    property), filters and the sort."""

    label_suffix = ""
    mode = forms.ChoiceField(required=False, choices=[], label="Mode")
    group = forms.ChoiceField(required=False, choices=[], label="Figures on")
    q = forms.CharField(required=False, max_length=200, label="Search")
    weights = forms.ChoiceField(required=False, choices=_ANY + list(Weights.choices))
    sort = forms.ChoiceField(required=False, choices=[])

    def __init__(self, *args: Any, info: TrackInfo, sources: Mapping[str, str], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.info = info
        if info.modes:
            self.fields["mode"].choices = list(info.modes)
        else:
            del self.fields["mode"]
        properties = [
            (f"{selectors.GROUP_PROPERTY}{p.code}", taxonomy.TABLE_PROPERTIES.full_label(p.code))
            for p in taxonomy.TABLE_PROPERTIES.properties
            if p.kind == "flag"
        ]
        self.fields["group"].choices = [
            ("", "All items"),
            ("Item source", [(f"{selectors.GROUP_SOURCE}{k}", v) for k, v in sources.items()]),
            ("Table property", properties),
        ]
        modes = [m for m, _ in info.modes] or [""]
        sorts = {s for m in modes for s in selectors.track_board_sorts(info, m)}
        self.fields["sort"].choices = [(s, s) for s in sorted(sorts)]

    def clean_mode(self) -> str:
        return self.cleaned_data.get("mode") or self.info.default_mode

    def filters(self) -> selectors.TrackBoardFilters:
        data = self.cleaned_data
        mode = data.get("mode") or self.info.default_mode
        sort = data["sort"] or f"-{self.info.primary}"
        if sort.lstrip("-") not in {f.name for f in self.info.figures(mode)} | {
            "model",
            "submitted",
        }:
            sort = f"-{self.info.primary}"  # a figure of the other mode
        return selectors.TrackBoardFilters(
            track=self.info.slug,
            mode=mode,
            group=data["group"],
            weights=data["weights"],
            search=data["q"].strip(),
            sort=sort,
        )
