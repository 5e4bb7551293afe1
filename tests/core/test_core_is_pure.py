from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CORE_MODULES = [
    "hctqa.core.taxonomy",
    "hctqa.core.tables",
    "hctqa.core.render",
    "hctqa.core.release",
    "hctqa.core.splits",
    "hctqa.core.synthetic",
    "hctqa.core.demo",
    "hctqa.core.scoring",
    "hctqa.core.disclosure",
    "hctqa.core.predictions",
    "hctqa.core.stats",
    "hctqa.core.outcomes",
    "hctqa.core.reported",
    "hctqa.core.answers",
    "hctqa.core.gold_control",
    "hctqa.core.agreement",
    "hctqa.core.query_templates",
    "hctqa.core.generation",
    "hctqa.core.prompts",
    "hctqa.core.images",
    "hctqa.core.safe_json",
    "hctqa.core.snapshots",
    "hctqa.core.alpaca",
    "hctqa.core.dataset_card",
    "hctqa.core.release_records",
    "hctqa.core.similarity",
    "hctqa.core.wording",
    "hctqa.core.synthgen.rrandom",
    "hctqa.core.synthgen.collation",
    "hctqa.core.synthgen.params",
    "hctqa.core.synthgen.tables",
    "hctqa.core.synthgen.nltext",
    "hctqa.core.synthgen.questions",
    "hctqa.core.synthgen.nonsense",
    "hctqa.core.synthgen.pipeline",
    "hctqa.core.synthgen.output",
    "hctqa.core.extraction.grid",
    "hctqa.core.extraction.html",
    "hctqa.core.extraction.pdf",
    "hctqa.core.extraction.documents",
    "hctqa.core.extraction.worker",
    "hctqa.core.extraction.metrics",
    "hctqa.core.extraction.printable",
    "hctqa.core.extraction.layout",
    "hctqa.core.extraction.table",
    "hctqa.core.extraction.lines",
    "hctqa.core.extraction.columns",
    "hctqa.core.extraction.spans",
    "hctqa.core.extraction.headers",
    "hctqa.core.extraction.rows",
    "hctqa.core.extraction.structure",
    "hctqa.core.extraction.extract",
    "hctqa.core.extraction.icdar",
    "hctqa.core.extraction.detect",
    "hctqa.core.extraction.__main__",
    "hctqa.core.extraction.images",
    "hctqa.core.extraction.ocr",
    "hctqa.core.extraction.rules_image",
    "hctqa.core.extraction.scanned",
    "hctqa.core.hidden_text",
    "hctqa.core.tracks.shared",
    "hctqa.core.tracks.sandbox",
    "hctqa.core.tracks.sql",
    "hctqa.core.tracks.teds",
    "hctqa.core.tracks.rendering",
    "hctqa.core.tracks.extraction",
    "hctqa.core.tracks.transformation",
    "hctqa.core.tracks.prompts",
    "hctqa.core.tracks.figures",
]


def test_the_core_never_imports_django_or_celery() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in CORE_MODULES)
        + "banned = ('django', 'celery', 'rest_framework')\n"
        + "bad = sorted(m for m in sys.modules if m.split('.')[0] in banned)\n"
        + "print(','.join(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert out.stdout.strip() == ""


def test_every_core_module_is_listed_here() -> None:
    core = Path(__file__).resolve().parents[2] / "hctqa" / "core"
    found = {
        "hctqa." + ".".join(p.relative_to(core.parent).with_suffix("").parts)
        for p in core.rglob("*.py")
        if p.stem != "__init__"
    }
    assert found == set(CORE_MODULES)
