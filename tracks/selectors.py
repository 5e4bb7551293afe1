"""Reads of the tracks' items. Gold and reference leave through here only for the splits
whose gold is public (train and validation), and to the scorer."""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, F, QuerySet
from django.http import Http404

from dataset.models import Split
from hctqa.core.tracks.shared import Item
from tracks.models import GroundTruthSet, ItemBuild, ItemSource, TrackItem
from tracks.registry import TrackInfo, item_tracks, track

# Splits whose gold anyone may read.
PUBLIC_SPLITS = (Split.TRAIN.value, Split.VALIDATION.value)


def items_of(*, track: str, split: str, mode: str = "") -> QuerySet[TrackItem]:
    """The items a submission of this track, split and mode is scored on (``split`` "all":
    every split)."""
    items = TrackItem.objects.filter(track=track)
    if split != "all":
        items = items.filter(split=split)
    if mode:
        items = items.filter(mode=mode)
    return items.order_by("item_id")


def core_item(row: TrackItem) -> Item:
    return Item(
        id=row.item_id,
        track=row.track,  # type: ignore[arg-type]
        table_id=row.table_key,
        inputs=row.inputs,
        gold=row.gold,
        reference=row.reference,
        split_key=row.split_key,
        source=row.source,
    )


def core_items(rows: Iterable[TrackItem]) -> list[Item]:
    """The core's items (without file bytes: their paths are under ``TRACK_FILES_ROOT``)."""
    return [core_item(row) for row in rows]


def item_ids(*, track: str) -> set[str]:
    """Every id a submission of this track may name (any split or mode)."""
    return set(TrackItem.objects.filter(track=track).values_list("item_id", flat=True))


def item_places(*, track: str, item_ids: Iterable[str]) -> Counter[tuple[str, str]]:
    """How many of these ids sit in each (split, mode): to tell a researcher where the ids
    of a file that matches nothing belong."""
    ids = list(item_ids)
    places: Counter[tuple[str, str]] = Counter()
    for start in range(0, len(ids), 5000):
        rows = (
            TrackItem.objects.filter(track=track, item_id__in=ids[start : start + 5000])
            .values_list("split", "mode")
            .annotate(n=Count("pk"))
            .order_by()
        )
        for split, mode, n in rows:
            places[(split, mode)] += n
    return places


def item_set_key(track: str, mode: str, split: str) -> str:
    return f"{track}/{mode or '-'}/{split}"


def item_set_digest(rows: Iterable[tuple[str, str]]) -> str:
    """The SHA-256 of an item set: its sorted ids with each item's digest."""
    digest = hashlib.sha256()
    for item_id, item_digest in sorted(rows):
        digest.update(f"{item_id}\x00{item_digest}\n".encode())
    return digest.hexdigest()


def item_set_digests() -> dict[str, str]:
    """The item set each track submission would be scored on now, keyed
    ``item_set_key(track, mode, split)`` (split "all" too): what a scored submission's
    ``question_set_sha256`` is compared with."""
    grouped: dict[str, list[tuple[str, str]]] = defaultdict(list)
    rows = TrackItem.objects.values_list("track", "mode", "split", "item_id", "digest")
    for track_slug, mode, split, item_id, digest in rows.iterator(chunk_size=5000):
        for key_mode in {mode, ""} if mode else {""}:
            grouped[item_set_key(track_slug, key_mode, split)].append((item_id, digest))
            grouped[item_set_key(track_slug, key_mode, "all")].append((item_id, digest))
    return {key: item_set_digest(rows) for key, rows in grouped.items()}


@dataclass(frozen=True)
class ItemFacts:
    """What the breakdowns group an item by."""

    split: str
    source: str
    table_properties: dict[str, Any]


def scoring_rows(*, track: str, split: str, mode: str = "") -> list[TrackItem]:
    """The items a submission is scored on, each with its table's properties
    (``table_properties``, for the breakdowns): one query."""
    rows = items_of(track=track, split=split, mode=mode).annotate(
        table_properties=F("table__table_properties")
    )
    return list(rows)


def item_facts(row: TrackItem) -> ItemFacts:
    return ItemFacts(row.split, row.source, getattr(row, "table_properties", None) or {})


def source_labels() -> dict[str, str]:
    """Each item source's name: the platform's own two, then the ground-truth sets."""
    labels = dict(ItemSource.choices)
    labels.update(GroundTruthSet.objects.values_list("code", "name"))
    return labels


def gold_origins(info: TrackInfo) -> dict[str, str]:
    """Where each source's gold comes from, in a phrase, for the board."""
    origins = dict(info.sources)
    for code, name in GroundTruthSet.objects.values_list("code", "name"):
        origins[code] = f"{name}: ground truth drawn by people, imported in the ICDAR 2013 format"
    return origins


@dataclass(frozen=True)
class TrackCounts:
    """A track's items by mode and split, and by source."""

    info: TrackInfo
    by_split: dict[str, dict[str, int]]  # mode ("" for none) → split → items
    by_source: dict[str, int]
    total: int


def track_counts() -> list[TrackCounts]:
    """Every item track's counts: two queries."""
    by_split: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    for track_slug, mode, split, n in (
        TrackItem.objects.values_list("track", "mode", "split").annotate(n=Count("pk")).order_by()
    ):
        by_split[track_slug][mode][split] = n
    by_source: dict[str, dict[str, int]] = defaultdict(dict)
    for track_slug, source, n in (
        TrackItem.objects.values_list("track", "source").annotate(n=Count("pk")).order_by()
    ):
        by_source[track_slug][source] = n
    out = []
    for info in item_tracks():
        found = by_split.get(info.slug, {})
        order = [m for m, _ in info.modes] or [""]
        splits = {
            mode: {s: found[mode][s] for s in PUBLIC_SPLITS + ("test",) if s in found[mode]}
            for mode in order
            if mode in found
        }
        sources = by_source.get(info.slug, {})
        out.append(TrackCounts(info, splits, sources, sum(sources.values())))
    return out


def latest_build() -> ItemBuild | None:
    return ItemBuild.objects.order_by("-created_at", "-id").first()


def active_build() -> ItemBuild | None:
    return ItemBuild.objects.filter(active=True).first()


def track_or_404(slug: str) -> TrackInfo:
    try:
        return track(slug)
    except KeyError:
        raise Http404("No such track") from None


def qa_counts() -> dict[str, dict[str, int]]:
    """QA's items (verified questions outside the gold pool) by data scope and split."""
    from dataset.models import Question, QuestionStatus, Source

    rows = (
        Question.objects.filter(status=QuestionStatus.VERIFIED, in_gold_pool=False)
        .exclude(table__source=Source.DEMO)
        .values_list("table__source", "table__split")
        .annotate(n=Count("pk"))
        .order_by()
    )
    out: dict[str, dict[str, int]] = {"real": {}, "synthetic": {}}
    for source, split, n in rows:
        scope = "synthetic" if source == Source.SYNTHETIC else "real"
        out[scope][split] = out[scope].get(split, 0) + n
    return out


def ground_truth_sets() -> list[GroundTruthSet]:
    return list(GroundTruthSet.objects.order_by("code"))
