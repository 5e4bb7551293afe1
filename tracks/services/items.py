"""Making the tracks' items from the dataset, and keeping them in step with it.

Every track's items are made by ``hctqa.core.tracks`` from what the dataset holds:

- transformation: each synthetic table (its canonical CSV and ``DB.csv``);
- NL-to-SQL: each verified question with SQL on a synthetic table (not in the gold pool);
- extraction, synthetic: each synthetic table drawn to PDF and PNG, in both modes;
- extraction, accepted: each table accepted from an ingested PDF or image: its page and box,
  and its reviewed grid as gold; a page is a whole-page item when every table found on it
  was accepted (a page with a rejected or pending candidate has no complete gold);
- extraction, ground-truth sets: made when a set is imported (``groundtruth``), left alone
  here.

An item's split is its table's; the items of one document take its most hidden table's
(``shared.item_splits``). A build writes what changed, deletes what is gone, and tells the
leaderboard (``question_set_changed``), which scores again the submissions whose item set
changed. Drawing is the slow part: a synthetic table whose HTML and title did not change
keeps its drawing.
"""

from __future__ import annotations

import hashlib
import io
import json
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field, replace

from django.db import transaction
from django.utils import timezone
from PIL import Image

from dataset.models import Question, QuestionStatus, SyntheticTable, Table
from dataset.signals import announce_question_set_change
from hctqa.core.extraction.grid import grid_from_canonical
from hctqa.core.extraction.metrics import competition_form
from hctqa.core.splits import SPLITS
from hctqa.core.tracks.extraction import page_item, region_item, synthetic_items
from hctqa.core.tracks.rendering import DEFAULT_DPI
from hctqa.core.tracks.shared import Item, TrackError, item_splits
from hctqa.core.tracks.sql import sql_item
from hctqa.core.tracks.transformation import transformation_item
from ingest import files as ingest_files
from ingest.models import Candidate, CandidateStatus, DocumentKind
from tracks import files
from tracks.models import ItemSource, Track, TrackItem

Report = Callable[[int, str], None]

# Bumped when the drawing of synthetic tables changes, so every one is drawn again.
DRAWING_VERSION = "1"
_HIDDENNESS = {split: rank for rank, split in enumerate(SPLITS)}


@dataclass
class Built:
    """An item to store, its bytes written already."""

    item: Item
    table_id: str | None
    built_from: str = ""
    files: list[str] = field(default_factory=list)

    @property
    def mode(self) -> str:
        return str(self.item.inputs.get("mode", ""))


def _sha256(*parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part if isinstance(part, bytes) else part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


def item_digest(item: Item, split: str) -> str:
    """What a score depends on: the item's inputs, gold, reference, source and split."""
    payload = json.dumps(
        [item.inputs, item.gold, item.reference, item.source, split],
        sort_keys=True,
        ensure_ascii=False,
    )
    return _sha256(payload)


def _stored(item: Item, table_id: str | None, built_from: str = "") -> Built:
    """Write the item's files; the item is kept without their bytes."""
    for relative, data in item.files.items():
        files.write(relative, data)
    return Built(replace(item, files={}), table_id, built_from, sorted(item.files))


# --- The builders, one per kind of item ----------------------------------------------------


def _synthetic_tables() -> Iterator[SyntheticTable]:
    return (
        SyntheticTable.objects.select_related("table")
        .only("table__id", "table__canonical_csv", "table__title", "family", "relational_csv")
        .order_by("table_id")
        .iterator(chunk_size=200)
    )


def transformation_built(skipped: list[str]) -> Iterator[Built]:
    for synthetic in _synthetic_tables():
        table = synthetic.table
        try:
            item = transformation_item(
                table_id=table.pk,
                canonical_csv=table.canonical_csv,
                relational_csv=synthetic.relational_csv,
            )
        except ValueError as exc:
            skipped.append(f"transformation {table.pk}: {exc}")
            continue
        yield Built(item, table.pk)


def sql_built(skipped: list[str]) -> Iterator[Built]:
    questions = (
        Question.objects.filter(status=QuestionStatus.VERIFIED, in_gold_pool=False)
        .exclude(sql="")
        .exclude(table__synthetic__isnull=True)
        .values_list(
            "id", "table_id", "text", "sql", "gold_answer", "table__synthetic__relational_csv"
        )
        .order_by("table_id", "id")
    )
    for qid, table_id, text, sql, gold_answer, relational_csv in questions.iterator(
        chunk_size=2000
    ):
        try:
            item = sql_item(
                item_id=qid,
                table_id=table_id,
                question=text,
                sql=sql,
                gold_answer=gold_answer,
                relational_csv=relational_csv,
            )
        except ValueError as exc:
            skipped.append(f"sql {qid}: {exc}")
            continue
        yield Built(item, table_id)


def _title(table: Table, family: str) -> str:
    return table.title or family.replace("_", " ")


def extraction_synthetic_built(
    skipped: list[str], report: Callable[[int, int], None] | None = None
) -> Iterator[Built]:
    """Each synthetic table's four extraction items. A table already drawn from the same
    HTML and title keeps its items and files."""
    kept: dict[str, list[TrackItem]] = {}
    for row in TrackItem.objects.filter(track=Track.EXTRACTION, source=ItemSource.SYNTHETIC):
        kept.setdefault(row.table_id or "", []).append(row)
    total = SyntheticTable.objects.count()
    for number, synthetic in enumerate(_synthetic_tables(), start=1):
        table = synthetic.table
        title = _title(table, synthetic.family)
        hct_html = SyntheticTable.objects.values_list("hct_html", flat=True).get(pk=table.pk)
        built_from = _sha256(DRAWING_VERSION, str(DEFAULT_DPI), title, hct_html)
        rows = kept.get(table.pk, [])
        if len(rows) == 4 and all(
            r.built_from == built_from and all(files.exists(f) for f in r.files) for r in rows
        ):
            from tracks.selectors import core_item

            for row in rows:
                yield Built(core_item(row), table.pk, built_from, list(row.files))
        else:
            try:
                items = synthetic_items(table_id=table.pk, hct_html=hct_html, title=title)
            except ValueError as exc:
                skipped.append(f"extraction {table.pk}: {exc}")
                items = []
            for item in items:
                yield _stored(item, table.pk, built_from)
        if report:
            report(number, total)


def _document_file(candidate: Candidate) -> tuple[str, str, bytes]:
    """The accepted table's document as an item file: (path, kind, bytes). An image becomes a
    PNG (the track's image kind)."""
    document = candidate.document
    stem = f"extraction/accepted/{document.collection.code}--{document.number}"
    data = ingest_files.read(document.stored_path)
    if document.kind == DocumentKind.PDF:
        return f"{stem}.pdf", "pdf", data
    if not data.startswith(b"\x89PNG"):
        with Image.open(io.BytesIO(data)) as image:
            out = io.BytesIO()
            image.convert("RGB").save(out, "PNG")
            data = out.getvalue()
    return f"{stem}.png", "png", data


def extraction_accepted_built(skipped: list[str]) -> tuple[list[Built], dict[str, str]]:
    """A region item per accepted table of a PDF or image, and a page item per page whose
    every table found was accepted; with each page item's most hidden table split (its
    tables' own splits decide it)."""
    accepted = (
        Candidate.objects.filter(
            status=CandidateStatus.ACCEPTED,
            table__isnull=False,
            page__isnull=False,
            bbox__isnull=False,
            document__kind__in=[DocumentKind.PDF, DocumentKind.IMAGE],
        )
        .exclude(document__stored_path="")
        .select_related("document__collection", "table")
        .order_by("document_id", "page", "number")
    )
    undecided = set(
        Candidate.objects.exclude(status=CandidateStatus.ACCEPTED)
        .exclude(page__isnull=True)
        .values_list("document_id", "page")
    )
    built: list[Built] = []
    page_splits: dict[str, str] = {}
    by_document: dict[int, list[Candidate]] = {}
    for candidate in accepted:
        by_document.setdefault(candidate.document_id, []).append(candidate)
    for document_id, candidates in by_document.items():
        first = candidates[0]
        try:
            path, kind, data = _document_file(first)
        except (OSError, ValueError) as exc:
            # The document's file is gone or unreadable: no item until it is back.
            skipped.append(f"extraction, document {first.document}: {exc}")
            continue
        document = first.document
        split_key = f"accepted--{document.collection.code}--{document.number}"
        pages: dict[int, list[Candidate]] = {}
        grids = {}
        for candidate in candidates:
            try:
                grids[candidate.pk] = competition_form(
                    grid_from_canonical(candidate.table.canonical_csv)
                )
            except ValueError as exc:
                skipped.append(f"extraction {candidate.table.pk}: {exc}")
        for candidate in candidates:
            table = candidate.table
            if candidate.pk not in grids:
                continue
            grid = grids[candidate.pk]
            common = {"file": path, "data": data, "kind": kind, "page": candidate.page}
            built.append(
                _stored(
                    region_item(
                        item_id=f"{table.pk}--region",
                        table_id=table.pk,
                        bbox=tuple(candidate.bbox),
                        grid=grid,
                        source=ItemSource.ACCEPTED,
                        split_key=split_key,
                        **common,
                    ),
                    table.pk,
                    _sha256(document.sha256),
                )
            )
            pages.setdefault(candidate.page, []).append(candidate)
        for page, on_page in pages.items():
            if (document_id, page) in undecided:
                continue
            key = f"{document.collection.code}--{document.number}#p{page}"
            tables = [(tuple(c.bbox), grids[c.pk]) for c in on_page]
            item = page_item(
                item_id=f"{document.collection.code}--{document.number}--p{page}--page",
                table_id=key,
                file=path,
                data=data,
                kind=kind,
                page=page,
                tables=tables,
                source=ItemSource.ACCEPTED,
                split_key=split_key,
            )
            built.append(_stored(item, None, _sha256(document.sha256)))
            page_splits[key] = max((c.table.split for c in on_page), key=lambda s: _HIDDENNESS[s])
    return built, page_splits


# --- Storing -------------------------------------------------------------------------------


@dataclass
class BuildCounts:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    by_track: dict[str, int] = field(default_factory=dict)
    files_removed: int = 0
    rescored: int = 0
    # Board rows of the platform's baselines made again on the new items (signals.items_built).
    baselines: int = 0
    # What could not be made into an item, with the reason (a table the core cannot read).
    skipped: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.created or self.updated or self.deleted)

    def as_dict(self) -> dict[str, object]:
        return {
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "deleted": self.deleted,
            "by_track": self.by_track,
            "files_removed": self.files_removed,
            "rescored": self.rescored,
            "baselines": self.baselines,
            "skipped": len(self.skipped),
            "skipped_examples": self.skipped[:20],
        }


def _splits(built: list[Built], extra: dict[str, str] | None = None) -> dict[str, str]:
    table_ids = {b.table_id for b in built if b.table_id}
    table_splits = dict(Table.objects.filter(pk__in=table_ids).values_list("id", "split"))
    table_splits.update(extra or {})
    return item_splits([b.item for b in built], table_splits)  # type: ignore[arg-type]


def store(
    built: list[Built], splits: dict[str, str], counts: BuildCounts, tracks: Collection[str]
) -> None:
    """Create, update or delete the items of the builder-made sources (synthetic and
    accepted) of ``tracks`` so that they are exactly ``built``; inside the caller's
    transaction."""
    managed = TrackItem.objects.filter(ground_truth_set__isnull=True, track__in=list(tracks))
    existing = {
        (track, item_id): (pk, digest, built_from)
        for pk, track, item_id, digest, built_from in managed.values_list(
            "pk", "track", "item_id", "digest", "built_from"
        )
    }
    create, update = [], []
    seen = set()
    now = timezone.now()
    for b in built:
        item = b.item
        split = splits[item.id]
        digest = item_digest(item, split)
        key = (item.track, item.id)
        if key in seen:
            raise TrackError(f"Two {item.track} items are called {item.id}")
        seen.add(key)
        counts.by_track[item.track] = counts.by_track.get(item.track, 0) + 1
        row = TrackItem(
            track=item.track,
            item_id=item.id,
            mode=b.mode,
            split=split,
            source=item.source,
            table_id=b.table_id,
            table_key=item.table_id,
            split_key=item.split_key,
            inputs=dict(item.inputs),
            gold=item.gold,
            reference=dict(item.reference),
            files=b.files,
            digest=digest,
            built_from=b.built_from,
        )
        known = existing.get(key)
        if known is None:
            create.append(row)
        elif known[1:] != (digest, b.built_from):
            row.pk = known[0]
            row.updated_at = now
            update.append(row)
        else:
            counts.unchanged += 1
    gone = [pk for key, (pk, _, _) in existing.items() if key not in seen]
    for start in range(0, len(gone), 5000):
        counts.deleted += TrackItem.objects.filter(pk__in=gone[start : start + 5000]).delete()[0]
    TrackItem.objects.bulk_create(create, batch_size=500)
    fields = [
        "mode",
        "split",
        "source",
        "table",
        "table_key",
        "split_key",
        "inputs",
        "gold",
        "reference",
        "files",
        "digest",
        "built_from",
        "updated_at",
    ]
    TrackItem.objects.bulk_update(update, fields, batch_size=500)
    counts.created += len(create)
    counts.updated += len(update)


def items_build(
    *, report: Report | None = None, tracks: Collection[str] | None = None
) -> BuildCounts:
    """Make every track's items from the dataset (``tracks``: only these), store what
    changed, and tell the leaderboard when an item set changed under scored submissions."""

    def say(percent: int, stage: str) -> None:
        if report:
            report(percent, stage)

    wanted = set(Track.values if tracks is None else tracks)
    started = time.monotonic()
    counts = BuildCounts()
    built: list[Built] = []
    if Track.TRANSFORMATION in wanted:
        say(1, "Transformation items")
        built += transformation_built(counts.skipped)
    if Track.SQL in wanted:
        say(4, "NL-to-SQL items")
        built += sql_built(counts.skipped)
    accepted: list[Built] = []
    page_splits: dict[str, str] = {}
    if Track.EXTRACTION in wanted:
        say(10, "Drawing synthetic tables")

        def drawn(number: int, total: int) -> None:
            say(
                10 + 75 * number // max(total, 1),
                f"Drawing synthetic tables: {number:,} of {total:,}",
            )

        built += extraction_synthetic_built(counts.skipped, drawn)
        say(86, "Accepted tables")
        accepted, page_splits = extraction_accepted_built(counts.skipped)
    splits = _splits(built) | _splits(accepted, page_splits)
    built += accepted
    say(92, "Saving")
    with transaction.atomic():
        store(built, splits, counts, wanted)
        if counts.changed:
            counts.rescored = announce_question_set_change(
                sender=TrackItem,
                reason="the tracks' items changed (a build made them again from the dataset)",
                question_ids=[],
            )
    used = {f for paths in TrackItem.objects.values_list("files", flat=True) for f in paths}
    counts.files_removed = files.remove_unused(used)
    say(100, f"Done in {time.monotonic() - started:.0f} s")
    return counts
