"""Inter-annotator agreement on table properties: Krippendorff's alpha across all annotators
(the release counting as one) and Cohen's kappa per pair of annotators, per property."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

# table id → annotator → property code → value
Annotations = Mapping[str, Mapping[str, Mapping[str, object]]]


def krippendorff_alpha(units: Sequence[Mapping[str, object]]) -> float | None:
    """Nominal alpha over units (one mapping of coder → value per unit). None when there are
    too few pairable values or no variation at all (alpha is undefined then)."""
    import krippendorff  # A small, numpy-only package; imported when needed.

    coders = sorted({c for unit in units for c in unit})
    pairable = [u for u in units if len(u) >= 2]
    if len(coders) < 2 or not pairable:
        return None
    values = sorted({str(v) for u in pairable for v in u.values()})
    if len(values) < 2:
        return None
    index = {v: i for i, v in enumerate(values)}
    data = np.full((len(coders), len(pairable)), np.nan)
    for col, unit in enumerate(pairable):
        for row, coder in enumerate(coders):
            if coder in unit:
                data[row, col] = index[str(unit[coder])]
    alpha = float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    return None if math.isnan(alpha) else alpha


def cohen_kappa(pairs: Sequence[tuple[object, object]]) -> float | None:
    """Kappa of two annotators over the items both labelled. None when chance agreement is
    total (both always gave the same single label), where kappa is undefined."""
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(1 for a, b in pairs if a == b) / n
    labels = {x for pair in pairs for x in pair}
    expected = sum(
        (sum(1 for a, _ in pairs if a == label) / n) * (sum(1 for _, b in pairs if b == label) / n)
        for label in labels
    )
    if expected >= 1:
        return None
    return (observed - expected) / (1 - expected)


@dataclass(frozen=True)
class PropertyAgreement:
    code: str
    alpha: float | None
    tables: int  # tables with at least two annotations
    disagreements: int  # of those, tables where the annotations differ on this property


@dataclass(frozen=True)
class PairAgreement:
    a: str
    b: str
    tables: int
    kappa: dict[str, float | None]  # per property

    @property
    def mean_kappa(self) -> float | None:
        defined = [k for k in self.kappa.values() if k is not None]
        return sum(defined) / len(defined) if defined else None


@dataclass(frozen=True)
class Disagreement:
    table_id: str
    properties: tuple[str, ...]  # codes on which the annotations differ


@dataclass(frozen=True)
class AgreementReport:
    properties: tuple[PropertyAgreement, ...]
    pairs: tuple[PairAgreement, ...]
    disagreements: tuple[Disagreement, ...]


def agreement_report(annotations: Annotations, codes: Sequence[str]) -> AgreementReport:
    multi = {t: a for t, a in annotations.items() if len(a) >= 2}
    properties = []
    for code in codes:
        units = [
            {coder: bool(values.get(code)) for coder, values in by.items()} for by in multi.values()
        ]
        differing = sum(1 for u in units if len(set(u.values())) > 1)
        properties.append(PropertyAgreement(code, krippendorff_alpha(units), len(units), differing))
    coders = sorted({c for by in multi.values() for c in by})
    pairs = []
    for a, b in itertools.combinations(coders, 2):
        shared = [by for by in multi.values() if a in by and b in by]
        if not shared:
            continue
        kappa = {
            code: cohen_kappa([(bool(by[a].get(code)), bool(by[b].get(code))) for by in shared])
            for code in codes
        }
        pairs.append(PairAgreement(a, b, len(shared), kappa))
    disagreements = []
    for table_id, by in sorted(multi.items()):
        differing = tuple(
            code for code in codes if len({bool(v.get(code)) for v in by.values()}) > 1
        )
        if differing:
            disagreements.append(Disagreement(table_id, differing))
    return AgreementReport(tuple(properties), tuple(pairs), tuple(disagreements))


def majority(
    by_annotator: Mapping[str, Mapping[str, object]], codes: Sequence[str]
) -> dict[str, bool]:
    """Each property set when more than half of the annotations set it (ties: not set)."""
    n = len(by_annotator)
    return {
        code: sum(1 for v in by_annotator.values() if v.get(code) is True) * 2 > n for code in codes
    }
