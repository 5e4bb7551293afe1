"""The four tracks, one entry each: what a track measures, its items and their gold, its
submission format, its scorer and figures, its board's columns, how an endpoint is asked, and
what a release carries. QA is the first track; its items are the dataset's questions and
its scoring is the leaderboard's own (``leaderboard.services.scoring``).

Adding a fifth track: a core module with its items, scorer and figures (``hctqa.core.tracks``,
``figures.FIGURES``), a builder of its items from the dataset (``services.items``), and an
entry here. The submissions, worker scoring, intervals, disclosure, boards, API, exports,
endpoint runs and releases then serve it as they serve the others.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hctqa.core.tracks import prompts
from hctqa.core.tracks.extraction import score_extraction
from hctqa.core.tracks.figures import Figure, figures_of
from hctqa.core.tracks.shared import MAX_PREDICTION_CHARS, Item, Scorecard
from hctqa.core.tracks.sql import score_sql
from hctqa.core.tracks.transformation import HCT_FORMATS, score_transformation

QA = "qa"

Scorer = Callable[..., Scorecard]


@dataclass(frozen=True)
class TrackInfo:
    """One track. ``modes``: the item sets a submission chooses between (extraction: region
    given or whole page); a board ranks each apart. ``sources``: where its items' gold comes
    from, by item source (a ground-truth set's items say so themselves)."""

    slug: str
    name: str
    short: str
    measures: str
    data: str
    submission: str
    prediction: str
    primary: str
    figures_note: str = ""
    modes: tuple[tuple[str, str], ...] = ()
    sources: Mapping[str, str] = field(default_factory=dict)
    score: Scorer | None = None
    # Endpoint runs: the table formats a text run may send, or the vision input.
    run_formats: tuple[str, ...] = ()
    vision: bool = False
    doc: str = ""

    @property
    def is_qa(self) -> bool:
        return self.slug == QA

    def figures(self, mode: str = "") -> tuple[Figure, ...]:
        if self.is_qa:
            return QA_FIGURES
        return figures_of(self.slug, mode)

    def figure(self, name: str, mode: str = "") -> Figure:
        return next(f for f in self.figures(mode) if f.name == name)

    @property
    def default_mode(self) -> str:
        return self.modes[0][0] if self.modes else ""

    def mode_label(self, mode: str) -> str:
        return dict(self.modes).get(mode, "")

    @property
    def max_prediction_chars(self) -> int:
        return MAX_PREDICTION_CHARS[self.slug]  # type: ignore[index]


# QA's figures as its board shows them (the leaderboard computes them, under two rules).
QA_FIGURES = (
    Figure("recall", "Recall", "The reference scorer's recall, macro-averaged", "recall"),
    Figure("precision", "Precision", "The reference scorer's precision", "precision"),
    Figure("cc", "CC", "Complete containment: every gold value in the answer", "cc"),
)

SYNTHETIC_GOLD = (
    "the synthetic generator's own files: exact by construction (HCT.csv, DB.csv, the SQL "
    "and its result)"
)
ACCEPTED_GOLD = (
    "a real document region: the platform's own extraction, corrected and accepted by a "
    "reviewer (so it leans toward what the platform's extractor reads)"
)

TRACKS: dict[str, TrackInfo] = {
    QA: TrackInfo(
        slug=QA,
        name="Question answering",
        short="QA",
        measures="Answering questions over human-centric tables, scored by the benchmark's "
        "reference scorer (both published rule versions).",
        data="The benchmark's verified questions on real and synthetic tables.",
        submission='JSON lines {"id": question id, "prediction": the answer text}.',
        prediction="the response text",
        primary="recall",
        doc="researchers.md",
    ),
    "extraction": TrackInfo(
        slug="extraction",
        name="Table extraction",
        short="Extraction",
        measures="From a document page (a PDF page or a page image) to the structure of its "
        "tables: rows, columns, spanning cells and their text.",
        data="Synthetic tables drawn by the platform to PDF and PNG; the accepted tables of "
        "ingested documents (the real page and region); ground-truth sets in the ICDAR 2013 "
        "format an admin imports (the ICDAR 2013 EU set).",
        submission='JSON lines {"id", "prediction"}: the table in the extraction command\'s '
        'cell schema {"rows", "cols", "cells": [{"row", "col", "rowspan", "colspan", '
        '"text"}]} or {"html": "<table>…</table>"}; whole page: {"tables": [{"bbox": [x0, '
        "top, x1, bottom], …}]}.",
        prediction="an object: the table's cells or HTML (whole page: every table with its box)",
        primary="teds",
        figures_note="TEDS, TEDS-Struct and exact structure are means over true tables; "
        "adjacency F1 is micro-averaged over every table's relations.",
        modes=(("region", "Region given"), ("page", "Whole page")),
        sources={
            "synthetic": "the generator's HCT table, drawn by the platform to PDF and PNG",
            "accepted": ACCEPTED_GOLD,
        },
        score=score_extraction,
        vision=True,
        doc="track-extraction.md",
    ),
    "transformation": TrackInfo(
        slug="transformation",
        name="Table transformation",
        short="Transformation",
        measures="From a human-centric table to its relational form: one row per value, one "
        "column per attribute (each level of the row and column headers) and the value.",
        data="Synthetic tables: the input is the HCT in any of the QA text formats, the gold "
        "the generator's DB.csv.",
        submission='JSON lines {"id", "prediction"}: the relational table as CSV text with a '
        "header row.",
        prediction="CSV text",
        primary="row_f1",
        figures_note="Values are normalised as the QA scorer normalises gold values; columns "
        "are matched by their values, so their names and order do not count.",
        sources={"synthetic": SYNTHETIC_GOLD},
        score=score_transformation,
        run_formats=HCT_FORMATS,
        doc="track-transformation.md",
    ),
    "sql": TrackInfo(
        slug="sql",
        name="NL-to-SQL",
        short="NL-to-SQL",
        measures="From a question and the relational table's schema to SQL, run on the table "
        "in a sandbox and compared with the generator's own result.",
        data="Synthetic questions with SQL, under their QA ids: the input is the question and "
        "the schema (column names and each attribute's values), the gold the generator's SQL "
        "and its result.",
        submission='JSON lines {"id", "prediction"}: one SQLite SELECT statement.',
        prediction="SQL text",
        primary="execution_accuracy",
        figures_note="QA recall reads the executed result as a QA answer, so SQL systems and "
        "QA models are compared on the same questions.",
        sources={"synthetic": SYNTHETIC_GOLD},
        score=score_sql,
        run_formats=("schema",),
        doc="track-sql.md",
    ),
}


def track(slug: str) -> TrackInfo:
    """The track named ``slug``; KeyError for no such track."""
    return TRACKS[slug]


def item_tracks() -> list[TrackInfo]:
    """The tracks whose items live in ``TrackItem`` (all but QA)."""
    return [t for t in TRACKS.values() if not t.is_qa]


def choices() -> list[tuple[str, str]]:
    return [(t.slug, t.name) for t in TRACKS.values()]


def score(
    info: TrackInfo, items: Sequence[Item], predictions: Mapping[str, Any], *, model_name: str = ""
) -> Scorecard:
    """Score predictions on items with the track's core scorer."""
    if info.score is None:
        raise ValueError(f"The {info.name} track is scored by the leaderboard")
    if info.slug == "sql":
        return info.score(items, predictions, model_name=model_name)
    return info.score(items, predictions)


# --- Endpoint runs -------------------------------------------------------------------------


def run_messages(info: TrackInfo, item: Item, *, table_format: str, image: bytes | None):
    """What an endpoint run sends for one item (``image``: the table's PNG, for a vision
    run)."""
    if info.slug == "extraction":
        if image is None:
            raise ValueError("An extraction run needs the table's image")
        return prompts.extraction_messages(image)
    if info.slug == "transformation":
        return prompts.transformation_messages(item.inputs["hct"][table_format], table_format)
    if info.slug == "sql":
        return prompts.sql_messages(item.inputs["question"], item.inputs["schema"])
    raise ValueError(f"The {info.name} track has no endpoint prompt")


def read_reply(info: TrackInfo, reply: str) -> Any:
    """The prediction in a model's reply; ``prompts.ReplyError`` when it holds none."""
    reader = {
        "extraction": prompts.read_html_reply,
        "transformation": prompts.read_csv_reply,
        "sql": prompts.read_sql_reply,
    }[info.slug]
    return reader(reply)
