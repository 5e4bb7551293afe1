from __future__ import annotations

from pathlib import Path

import pytest

from hctqa.core.reported import ReportedError, parse_paper_table


def test_the_paper_table_reads_into_real_and_synthetic_rows(data_dir: Path) -> None:
    rows = parse_paper_table((data_dir / "paper-table1.csv").read_text())
    assert len([r for r in rows if r.data_scope == "real"]) == 34
    assert len([r for r in rows if r.data_scope == "synthetic"]) == 20
    gpt4o = next(r for r in rows if r.model_name == "gpt-4o" and r.data_scope == "real")
    assert (gpt4o.parameters_billions, gpt4o.weights, gpt4o.recall) == (None, "closed", 0.616)
    assert gpt4o.by_source["psa"] == {"precision": 0.627, "recall": 0.606, "cc": 0.515}
    vision = next(r for r in rows if r.model_name == "InternVL2-4B")
    assert vision.precision is None and vision.by_source["census"]["recall"] == 0.254


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("x,Org,7B,half,text", "weights should be open or closed"),
        ("x,Org,seven,open,text", "parameters should look like 7B or 100B+"),
        ("x,Org,100B+,open,text", "an open model needs an exact size"),
        ("x,Org,7B,open,audio", "modality should be text or vision"),
    ],
)
def test_bad_rows_are_named(row: str, message: str) -> None:
    header = "model,provider,parameters,weights,modality,all_recall\n"
    with pytest.raises(ReportedError, match=f"Line 2 \\(x\\): {message}"):
        parse_paper_table(header + row + ",0.5\n")
    with pytest.raises(ReportedError, match="Missing columns: modality"):
        parse_paper_table("model,provider,parameters,weights\nx,y,1B,open\n")
