"""A small real sample of the dataset, and a releases folder of each test's own."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from django.core.management import call_command

from dataset.models import Question, QuestionStatus, Table
from dataset.services import release_import
from releases.models import Release
from tests.factories import ModelQuestionFactory

# Real tables of every source and split (splits from the stable hash of the id), with the
# hand-checked questions of the alpaca test among them.
REAL_SAMPLE = (
    "arxiv--1--1118",  # train
    "arxiv--1--2803",  # train
    "arxiv--1--307",  # train
    "arxiv--1--3232",  # validation
    "arxiv--1--3810",  # test
    "census--1--1026",  # train
    "census--1--1677",  # test
    "pak--1--1030",  # train
    "pak--1--1051",  # test
    "psa--1--102",  # train
    "psa--1--122",  # test
    "psa--1--16",  # validation
)
SYNTHETIC_SAMPLE = (
    "synthetic--Number_of_students_set100_1",  # train
    "synthetic--Number_of_students_set112_1",  # validation
    "synthetic--Number_of_students_set112_3",  # test
)


@pytest.fixture
def releases_root(tmp_path: Path, settings) -> Path:
    settings.RELEASES_ROOT = tmp_path / "releases"
    settings.RELEASE_BUILD_PROCESSES = 1
    return settings.RELEASES_ROOT


@pytest.fixture
def dataset(release_by_id: dict, synthetic_tables: list, releases_root: Path) -> dict:
    """The sample, plus model-generated questions that must never be released: unverified,
    awaiting adjudication and dropped. Returns them by name."""
    synthetic = {t.id: t for t in synthetic_tables}
    release_import(
        tables=[release_by_id[t] for t in REAL_SAMPLE] + [synthetic[t] for t in SYNTHETIC_SAMPLE]
    )
    table = Table.objects.get(pk="psa--1--102")
    unverified = ModelQuestionFactory(
        table=table, id="psa--1--102--A90", text="Unverified?", gold_answer="{UNV-1}"
    )
    waiting = ModelQuestionFactory(
        table=table,
        id="psa--1--102--A91",
        text="Waiting?",
        gold_answer="{ADJ-1}",
        status=QuestionStatus.ADJUDICATION,
    )
    dropped = ModelQuestionFactory(
        table=table,
        id="psa--1--102--A92",
        text="Dropped?",
        gold_answer="{DROP-1}",
        status=QuestionStatus.DROPPED,
    )
    verified = ModelQuestionFactory(
        table=table,
        id="psa--1--102--A93",
        text="Verified model question?",
        gold_answer="{MODEL-OK}",
        status=QuestionStatus.VERIFIED,
    )
    return {"unverified": unverified, "waiting": waiting, "dropped": dropped, "verified": verified}


@pytest.fixture
def cut(releases_root: Path) -> Callable[..., tuple[Release, str]]:
    """Cut a release with the command; the release and what the command printed."""

    def run(version: str, *args: str) -> tuple[Release, str]:
        out = io.StringIO()
        call_command("cut_release", version, *args, stdout=out)
        return Release.objects.get(version=version), out.getvalue()

    return run


def released_questions() -> set[str]:
    return set(Question.objects.filter(status=QuestionStatus.VERIFIED).values_list("id", flat=True))
