from __future__ import annotations

import pytest

from hctqa.core.snapshots import (
    FrozenQuestion,
    Snapshot,
    VersionError,
    changelog,
    check_version,
    question_set_digests,
    question_set_sha256,
    release_counts,
    sha256sums,
)


@pytest.mark.parametrize("version", ["2026.11", "2026.11.2", "1.0.0", "2.0.0-rc.1", " 0.3.9 "])
def test_calendar_and_semantic_versions_are_accepted(version: str) -> None:
    assert check_version(version) == version.strip()


@pytest.mark.parametrize(
    "version", ["", "latest", "2026.13", "1.0", "01.2.3", "1.2.3/..", "../x", "9" * 41]
)
def test_other_names_are_refused_with_an_example(version: str) -> None:
    with pytest.raises(VersionError, match="2026.11|version"):
        check_version(version)


def q(qid: str, table: str, gold: str, split: str = "train", source: str = "psa") -> FrozenQuestion:
    return FrozenQuestion(qid, table, source, split, "human", gold)


def test_the_changelog_lists_every_kind_of_change_by_id() -> None:
    before = Snapshot.of(
        {"t1": "train", "t2": "test", "t3": "train"},
        [q("t1--M1", "t1", "{1}"), q("t1--M2", "t1", "{2}"), q("t2--M1", "t2", "{3}", "test")],
    )
    after = Snapshot.of(
        {"t1": "train", "t2": "validation", "t4": "train"},
        [q("t1--M1", "t1", "{1}"), q("t1--M2", "t1", "{20}"), q("t4--M1", "t4", "{4}")],
    )
    log = changelog(before, after, previous_version="2026.10")
    assert log.previous == "2026.10"
    assert log.tables_added == ("t4",) and log.tables_removed == ("t3",)
    assert log.questions_added == ("t4--M1",)
    assert log.questions_removed == ("t2--M1",)
    assert log.gold_changed == ("t1--M2",)
    assert [(c.table_id, c.before, c.after) for c in log.splits_changed] == [
        ("t2", "test", "validation")
    ]
    assert log.counts() == {
        "tables_added": 1,
        "tables_removed": 1,
        "questions_added": 1,
        "questions_removed": 1,
        "gold_changed": 1,
        "splits_changed": 1,
    }


def test_a_preview_cuts_the_lists_but_keeps_the_counts() -> None:
    after = Snapshot.of({f"t{i}": "train" for i in range(30)}, [])
    preview = changelog(None, after, previous_version=None).as_json(limit=5)
    assert preview["previous"] is None
    assert len(preview["tables_added"]) == 5 and preview["counts"]["tables_added"] == 30


def test_a_snapshot_keeps_no_gold_answer_and_reads_back() -> None:
    snapshot = Snapshot.of({"t1": "test"}, [q("t1--M1", "t1", "{secret answer}", "test")])
    data = snapshot.as_json()
    assert "secret answer" not in repr(data)
    assert Snapshot.from_json(data) == snapshot


def test_the_question_set_digest_names_ids_and_answers_in_any_order() -> None:
    a = question_set_sha256({"q1": "{1}", "q2": "{2}"})
    assert a == question_set_sha256({"q2": "{2}", "q1": "{1}"})
    assert a != question_set_sha256({"q1": "{1}", "q2": "{3}"})
    assert a != question_set_sha256({"q1": "{1}"})


def test_digests_follow_the_scorer_splits_and_scopes() -> None:
    questions = [
        q("a", "t1", "{1}", "test"),
        q("b", "t2", "{2}", "train"),
        q("c", "s1", "{3}", "test", source="synthetic"),
        q("d", "u1", "{4}", "test", source="qnpc-2024"),  # an ingested collection: real
    ]
    digests = question_set_digests(questions)
    assert set(digests) == {
        "test/real",
        "train/real",
        "all/real",
        "test/synthetic",
        "all/synthetic",
    }
    assert digests["test/real"] == question_set_sha256({"a": "{1}", "d": "{4}"})
    assert digests["all/real"] == question_set_sha256({"a": "{1}", "b": "{2}", "d": "{4}"})


def test_counts_per_source_split_and_origin() -> None:
    questions = [
        q("a", "t1", "{1}", "test"),
        q("b", "t1", "{2}", "test"),
        q("c", "s", "{3}", source="synthetic"),
    ]
    counts = release_counts([("psa", "test"), ("synthetic", "train"), ("psa", "train")], questions)
    assert counts["tables"] == 3 and counts["questions"] == 3
    assert counts["tables_by_source"] == {"psa": 2, "synthetic": 1}
    assert counts["questions_by_split"] == {"test": 2, "train": 1}
    assert counts["questions_by_origin"] == {"human": 3}
    assert counts["questions_by_source_and_split"] == {
        "psa": {"test": 2},
        "synthetic": {"train": 1},
    }


def test_sha256sums_is_what_sha256sum_checks() -> None:
    assert sha256sums({"b/x": "22", "a": "11"}) == "11  a\n22  b/x\n"
