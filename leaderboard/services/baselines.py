"""The platform's own systems on the tracks' boards, scored like any submission:

- extraction: the platform's extractor through its command's contract (the text path for a
  PDF, OCR for an image or a page without text; ``tracks.extraction.platform_prediction``)
  and pdfplumber's ``extract_tables`` with its default settings (PDF items only: it reads no
  image);
- transformation: the unpivot the platform reads off a table's header rows and columns
  (``transformation.unpivot``).

NL-to-SQL has no baseline of the platform's own: a model through an endpoint is one (an
inference run), and the gold SQL is the ceiling the tests check. A baseline's predictions
are made here (the extraction child process reads each item's file under its time and
memory limits), stored as a predictions file, and scored by the worker. Running again
replaces a baseline's row on its board: after the items change, score them again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction

from hctqa.core.extraction.worker import PageRunner
from hctqa.core.tables import TableFormatError
from hctqa.core.tracks.extraction import pdfplumber_prediction, platform_prediction
from hctqa.core.tracks.shared import TrackError
from hctqa.core.tracks.transformation import unpivot
from leaderboard.models import Kind, Submission, TrackScore, Visibility
from leaderboard.services.submissions import SubmissionInput, baseline_create
from tracks import files
from tracks import selectors as track_selectors
from tracks.models import TrackItem
from tracks.registry import TrackInfo, track

Report = Callable[[int, int], None]
ORGANISATION = "HCT-QA platform"


@dataclass(frozen=True)
class Baseline:
    """One of the platform's systems on a track: its board row's name and what it is, and
    how it predicts a list of items (id → prediction, None where it read nothing)."""

    track: str
    name: str
    description: str
    predict: Callable[[list[TrackItem], Report | None], dict[str, Any]]
    modality: str = "text"


def _extraction(reader: Callable[..., Any]) -> Callable[[list[TrackItem], Report | None], dict]:
    def predict(rows: list[TrackItem], report: Report | None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        folder = files.root()
        with PageRunner(
            seconds=settings.INGEST_PAGE_SECONDS, memory_mb=settings.INGEST_WORKER_MEMORY_MB
        ) as runner:
            for number, row in enumerate(rows, start=1):
                out[row.item_id] = reader(track_selectors.core_item(row), folder, runner)
                if report:
                    report(number, len(rows))
        return out

    return predict


def _unpivot(rows: list[TrackItem], report: Report | None) -> dict[str, Any]:
    canonical = dict(
        TrackItem.objects.filter(pk__in=[r.pk for r in rows]).values_list(
            "item_id", "table__canonical_csv"
        )
    )
    out: dict[str, Any] = {}
    for number, row in enumerate(rows, start=1):
        try:
            out[row.item_id] = unpivot(canonical[row.item_id])
        except (TableFormatError, TrackError, KeyError, TypeError):
            out[row.item_id] = None
        if report:
            report(number, len(rows))
    return out


BASELINES: tuple[Baseline, ...] = (
    Baseline(
        "extraction",
        "Platform extractor",
        "The platform's own extractor (hctqa.core.extraction, its command's default strategy): "
        "the text path for a PDF, OCR (Tesseract) for an image or a page without text. Its "
        "rules were developed on the ICDAR 2013 EU set, and the accepted tables' gold began as "
        "its own extraction: read its figures on those sources with that in mind.",
        _extraction(platform_prediction),
    ),
    Baseline(
        "extraction",
        "pdfplumber extract_tables",
        "pdfplumber's extract_tables with its default settings (tables drawn with lines): "
        "the largest table in the box, or every table of the page with its box. It reads no "
        "image: PNG items have no prediction.",
        _extraction(pdfplumber_prediction),
    ),
    Baseline(
        "transformation",
        "Unpivot of the headers",
        "Each value cell of the table as a row of its row labels, column labels and value, "
        "aggregate rows and columns and outline rows left out (hctqa.core.tracks"
        ".transformation.unpivot).",
        _unpivot,
    ),
)


def baselines_of(info: TrackInfo) -> list[Baseline]:
    return [b for b in BASELINES if b.track == info.slug]


@transaction.atomic
def baseline_store(
    *, baseline: Baseline, mode: str, split: str, predictions: dict[str, Any]
) -> Submission:
    """Keep a baseline's predictions as its board row (replacing the one it had for this
    track, mode and split), queued for the worker to score."""
    info = track(baseline.track)
    data = SubmissionInput(
        model_name=baseline.name,
        organisation=ORGANISATION,
        weights="open",
        modality=baseline.modality,
        table_format="other",
        split=split,
        data_scope="",
        track=info.slug,
        mode=mode,
        description=baseline.description,
        visibility=Visibility.PUBLIC,
    )
    old = Submission.objects.filter(
        kind=Kind.BASELINE, track=info.slug, mode=mode, split=split, model_name=baseline.name
    )
    for submission in old:
        stored = submission.predictions
        submission.delete()
        if stored:
            transaction.on_commit(lambda stored=stored: stored.storage.delete(stored.name))
    return baseline_create(data=data, predictions=predictions)


def baselines_run(
    *,
    tracks: Iterable[str] | None = None,
    split: str = "test",
    limit: int | None = None,
    report: Callable[[str, int, int], None] | None = None,
) -> list[Submission]:
    """Make every baseline's predictions on its track's items of ``split`` (each mode) and
    store them as board rows, queued for scoring. ``limit``: the first items only (a
    check)."""
    made = []
    for baseline in BASELINES:
        if tracks is not None and baseline.track not in tracks:
            continue
        info = track(baseline.track)
        for mode in [m for m, _ in info.modes] or [""]:
            rows = list(track_selectors.items_of(track=info.slug, split=split, mode=mode))
            if limit is not None:
                rows = rows[:limit]
            if not rows:
                continue
            label = f"{baseline.name}, {info.short}{' ' + mode if mode else ''}"

            def progress(number: int, total: int, label: str = label) -> None:
                if report:
                    report(label, number, total)

            predictions = baseline.predict(rows, progress)
            made.append(
                baseline_store(baseline=baseline, mode=mode, split=split, predictions=predictions)
            )
    return made


def describe_track_score(submission: Submission) -> str:
    """One line on a scored track submission, for the commands: its figures (withheld ones
    said so), or its status and error."""
    info = track(submission.track)
    mode = f" ({submission.mode})" if submission.mode else ""
    head = f"{info.name}{mode}, {submission.model_name}: {submission.status}"
    score = TrackScore.objects.filter(submission=submission).first()
    if score is None:
        return head + (f" — {submission.error}" if submission.error else "")
    figures = ", ".join(
        f"{f.name} withheld"
        if score.figures.get(f.name) is None
        else f"{f.name} {score.figures[f.name]:.3f}"
        for f in info.figures(submission.mode)
    )
    return f"{head}: {figures} on {score.n:,} items"
