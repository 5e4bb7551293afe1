"""The upgrade that gives the demo tables a source and a data scope of their own: tables of
the demo family and the demo submissions move there; the benchmark's synthetic tables and
other submissions stay where they are."""

from __future__ import annotations

import pytest

from tests.migration_helpers import latest, migrate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [
    ("annotation", "0013_collections"),
    ("leaderboard", "0009_scores_per_rules_version_and_rescoring"),
]


def test_demo_tables_and_demo_submissions_move_to_the_demo_scope() -> None:
    old = migrate(BEFORE)
    Table = old.get_model("annotation", "Table")
    SyntheticTable = old.get_model("annotation", "SyntheticTable")
    for table_id, family in (
        ("synthetic--demo-students", "demo"),
        ("synthetic--Number_of_students_set1_1_", "Number_of_students"),
    ):
        table = Table.objects.create(
            id=table_id, source="synthetic", split="test", canonical_csv="a"
        )
        SyntheticTable.objects.create(
            table=table, family=family, hct_csv="a", hct_html="", relational_csv="a"
        )
    User = old.get_model("auth", "User")
    Submission = old.get_model("leaderboard", "Submission")
    owner = User.objects.create(username="researcher")
    common = {"kind": "submission", "owner": owner, "weights": "closed", "modality": "text",
              "table_format": "paper", "split": "all", "data_scope": "synthetic"}  # fmt: skip
    demo = Submission.objects.create(model_name="demo-oracle", organisation="HCT-QA demo", **common)
    other = Submission.objects.create(model_name="demo-oracle", organisation="A lab", **common)

    new = migrate(latest())
    Table = new.get_model("dataset", "Table")
    Submission = new.get_model("leaderboard", "Submission")
    assert dict(Table.objects.values_list("id", "source")) == {
        "synthetic--demo-students": "demo",
        "synthetic--Number_of_students_set1_1_": "synthetic",
    }
    assert Submission.objects.get(pk=demo.pk).data_scope == "demo"
    assert Submission.objects.get(pk=other.pk).data_scope == "synthetic"
