"""How many real and synthetic tables have each table property: the coverage page."""

from __future__ import annotations

from dataclasses import dataclass

from dataset.models import Source, Table
from hctqa.core import taxonomy


@dataclass(frozen=True)
class CoverageRow:
    code: str
    label: str
    depth: int
    real: int
    synthetic: int


def property_coverage() -> tuple[list[CoverageRow], int, int]:
    """Per table property, how many real and how many synthetic tables have it (one query)."""
    real: dict[str, int] = {}
    synthetic: dict[str, int] = {}
    totals = {"real": 0, "synthetic": 0}
    for source, properties in Table.objects.values_list("source", "table_properties").iterator():
        side = "synthetic" if source in (Source.SYNTHETIC, Source.DEMO) else "real"
        totals[side] += 1
        counts = synthetic if side == "synthetic" else real
        for code, value in (properties or {}).items():
            if value is True:
                counts[code] = counts.get(code, 0) + 1
    by_code = {p.code: p for p in taxonomy.TABLE_PROPERTIES.properties}
    rows = []
    for prop in taxonomy.TABLE_PROPERTIES.properties:
        depth, parent = 0, prop.parent
        while parent:
            depth += 1
            parent = by_code[parent].parent if parent in by_code else None
        rows.append(
            CoverageRow(
                prop.code, prop.label, depth, real.get(prop.code, 0), synthetic.get(prop.code, 0)
            )
        )
    return rows, totals["real"], totals["synthetic"]
