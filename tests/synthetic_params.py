"""A small copy of the generator's parameter files: two families (one hierarchical), few
layouts and two replicas, so a whole generation takes a second or two."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SMALL_FAMILIES = ("Number of accidents", "Food import-export in tons")


def write_small_params(source: Path, target: Path, **overrides: Any) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    for name in ("PARAM_semantics.json", "PARAM_NLquestionTemplates.json"):
        (target / name).write_bytes((source / name).read_bytes())
    tables = json.loads((source / "PARAM_tableTemplates.json").read_text())
    tables.update(
        replica=2,
        col_row_levels=["1_1", "2_2"],
        col_row_name_pos=["none_none"],
        col_row_agg_pos=["none_none", "right_bottom", "right_top"],
        tables=[t for t in tables["tables"] if t["valueName"] in SMALL_FAMILIES],
    )
    tables.update(overrides)
    (target / "PARAM_tableTemplates.json").write_text(json.dumps(tables))
    return target
