"""Issue 23, item 3: answers left out by the 2025-10 rules made figures rest on a single test
question. Each replay, and that it now fails: no figure on test-split questions rests on 1 to
10 of them, the owner's included; a test-split file leaving most answers out is refused."""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client

from hctqa.core.disclosure import DISCLOSURE_MARGIN
from leaderboard import services
from leaderboard.models import DailyLimitEntry, Score, Status, Submission
from plumbing.errors import ApplicationError
from tests.leaderboard.conftest import FORM, answers, upload
from tests.leaderboard.test_scores_trust import data, questions

pytestmark = pytest.mark.django_db


def left_out_but(gold: dict[str, str], guessed: set[str]) -> dict[str, str]:
    """ "No answer" everywhere but the guessed questions, which get their gold answer."""
    right = answers(gold)
    return {q: (right[q] if q in guessed else "No answer") for q in gold}


def scored(owner, predictions: dict[str, str], **fields: object) -> Submission:
    submission = services.submission_create(
        owner=owner, data=data(**fields), predictions=upload(predictions)
    )
    assert services.submission_score(submission_id=submission.pk) == "scored"
    submission.refresh_from_db()
    return submission


# --- The file: 991 "No answer" lines and one guess ----------------------------------------


def test_a_test_file_leaving_most_answers_out_is_refused_and_says_why(
    client: Client, researcher
) -> None:
    test = questions("psa--9--1", 992, split="test", properties={})
    guess = {"psa--9--1--M0"}
    # The replay: under 2025-10 it scored n = 1 and recall 1.0 or 0.0, the guess's own score.
    with pytest.raises(ApplicationError) as refused:
        services.submission_create(
            owner=researcher, data=data(), predictions=upload(left_out_but(test, guess))
        )
    message = refused.value.message
    assert "leaves 991 of its 992 test-split answers out" in message
    assert 'JSON null, or an answer starting with "no answer" or "error"' in message
    assert "the 2025-10 rules" in message and "at most half (496)" in message
    # The same through the API and the page; nothing is stored, no daily slot is used.
    client.force_login(researcher)
    for url in ("/api/submissions/create/", "/leaderboard/submit/"):
        response = client.post(url, {**FORM, "predictions": upload(left_out_but(test, guess))})
        assert response.status_code == 400 and "leaves 991 of its 992" in response.content.decode()
    assert not Submission.objects.exists() and not DailyLimitEntry.objects.exists()
    # JSON null is left out alike; so is "Error: …". The split "all" holds the test split.
    train = questions("psa--9--2", 20, split="train", properties={})
    nulls = {q: None for q in test} | {"psa--9--1--M1": "Error: timeout"} | answers(train)
    with pytest.raises(ApplicationError, match="leaves 992 of its 992 test-split answers out"):
        services.submission_create(owner=researcher, data=data(split="all"), predictions=upload(
            [{"id": q, "response": a} for q, a in nulls.items()]
        ))  # fmt: skip
    # Half left out is not most: scored, its figures on 496 test questions shown.
    half = set(sorted(test)[:496])
    kept = scored(researcher, left_out_but(test, half))
    newer = kept.score_for("2025-10")
    assert (newer.n_questions, newer.excluded, newer.recall) == (496, 496, 1.0)
    # Vision answers have the 2025-05 rules only, which leave nothing out.
    scored(researcher, left_out_but(test, guess), modality="vision", table_format="image")


def test_a_stored_file_that_leaves_most_answers_out_fails_when_scored_again(researcher) -> None:
    test = questions("psa--9--3", 30, split="test", properties={})
    submission = scored(researcher, left_out_but(test, set(sorted(test)[:15])))
    # Uploaded before the rule, or the test split grew under it: scoring again refuses it.
    more = questions("psa--9--4", 12, split="test", properties={})
    with submission.predictions.open("wb") as handle:
        body = "\n".join(
            f'{{"id": "{q}", "response": "{a}"}}'
            for q, a in (left_out_but(test, {"psa--9--3--M0"}) | answers(more)).items()
        )
        handle.write(body.encode())
    services.submission_rescore(submission=submission, user=researcher)
    assert services.submission_score(submission_id=submission.pk).startswith("failed")
    submission.refresh_from_db()
    assert submission.status == Status.FAILED
    assert "leaves 29 of its 42 test-split answers out" in submission.error


# --- Per source, and the owner's own view -------------------------------------------------


@pytest.fixture
def four_sources() -> dict[str, str]:
    """600 test questions from psa, 20 each from pak, census and arxiv (row-nesting tables)."""
    gold = questions("psa--9--5", 600, split="test", properties={})
    for source in ("pak", "census", "arxiv"):
        gold |= questions(f"{source}--9--1", 20, split="test", properties={"row_nesting": True})
    return gold


def test_per_source_figures_on_one_guess_each_are_withheld_from_the_owner_too(
    client: Client, researcher, four_sources: dict[str, str]
) -> None:
    # The replay: 19 of each small source left out and one guess each (57 of 660 left out),
    # read back as four per-source figures on n = 1 of one file (psa answered right).
    guesses = {f"{s}--9--1--M0" for s in ("pak", "census", "arxiv")}
    predictions = answers(four_sources) | left_out_but(
        {q: a for q, a in four_sources.items() if not q.startswith("psa")}, guesses
    )
    submission = scored(researcher, predictions)
    newer = Score.objects.get(submission=submission, rules="2025-10")
    assert newer.n_questions == 603 and newer.recall == 1.0  # overall: 603 test questions
    for source in ("pak", "census", "arxiv"):
        figures = newer.by_source[source]
        assert figures["n"] == 1 and figures["withheld"] is True
        assert figures["recall"] is None and figures["precision"] is None
        assert getattr(newer, f"recall_{source}") is None
    # psa too: the overall figure minus psa's would give the three guesses' sum.
    assert newer.by_source["psa"]["recall"] is None and newer.recall_psa is None
    # Under 2025-05 nothing is left out and every source rests on 20 or more, but the two
    # versions' overall figures differ by the 57 answers left out: psa's 2025-05 figure
    # would give the three guesses (the 2025-10 overall minus psa), and so would the fourth
    # small source beside the other two (2025-05 overall − 2025-10 overall − the three).
    older = Score.objects.get(submission=submission, rules="2025-05")
    assert older.recall_pak == pytest.approx(1 / 20) and "withheld" not in older.by_source["pak"]
    assert older.recall_census == pytest.approx(1 / 20)
    assert older.recall_psa is None and older.recall_arxiv is None

    # Everywhere a figure leaves: the owner's API, model page and export, the board.
    client.force_login(researcher)
    body = client.get(f"/api/submissions/{submission.pk}/").json()["scores"]["2025-10"]
    assert body["recall_pak"] is None and body["by_source"]["pak"]["recall"] is None
    assert body["breakdowns"]["table_properties"] == []  # row nesting: three questions
    assert body["breakdowns"]["withheld"] == 1
    page = client.get(submission.get_absolute_url() + "?rules=2025-10").content.decode()
    assert page.count('<td class="withheld-figure"') == 4
    assert f"rests on 1 to {DISCLOSURE_MARGIN} test-split answers" in page
    assert "Row nesting" not in page
    board = client.get("/leaderboard/text/export.csv?split=test&rules=2025-10").content.decode()
    (row,) = csv.DictReader(io.StringIO(board))
    assert (row["recall"], row["recall_pak"], row["recall_psa"]) == ("1.0", "", "")


def test_the_owner_sees_no_breakdown_group_the_public_may_not(
    client: Client, researcher, four_sources: dict[str, str]
) -> None:
    # Five of 60 row-nesting test questions counted: a group on five, once the owner's.
    kept = {f"{s}--9--1--M{k}" for s in ("pak",) for k in range(5)}
    small = {q: a for q, a in four_sources.items() if not q.startswith("psa")}
    submission = scored(researcher, answers(four_sources) | left_out_but(small, kept))
    rows = Score.objects.get(submission=submission, rules="2025-10").breakdowns
    (group,) = rows["table_properties"]
    assert (group["key"], group["n"], group["withheld"], group["recall"]) == (
        "row_nesting",
        5,
        True,
        None,
    )
    client.force_login(researcher)
    body = client.get(f"/api/submissions/{submission.pk}/").json()
    assert body["scores"]["2025-10"]["breakdowns"]["table_properties"] == []
    # Under 2025-05 the group holds all 60, but beside both overall figures and pak's and
    # census's it would give the five answers kept: it is withheld too, as is psa's figure.
    assert body["scores"]["2025-05"]["breakdowns"]["table_properties"] == []
    older = body["scores"]["2025-05"]
    assert older["recall_pak"] == pytest.approx(5 / 20) and older["recall_psa"] is None


# --- Comparisons ----------------------------------------------------------------------------


def test_a_comparison_on_a_few_shared_test_questions_is_refused(client: Client, researcher) -> None:
    test = questions("psa--9--6", 40, split="test", properties={})
    ids = sorted(test)
    # Each counts 20 or more; the two share 5 counted answers under 2025-10.
    a = scored(researcher, left_out_but(test, set(ids[:25])), model_name="a")
    b = scored(researcher, left_out_but(test, set(ids[20:])), model_name="b")
    newer = client.get(f"/leaderboard/compare/?a={a.pk}&b={b.pk}&rules=2025-10")
    assert newer.status_code == 400
    assert "share 5 counted test-split answers" in newer.content.decode()
    assert "comparison" not in newer.context
    # Under 2025-05 they share all 40.
    older = client.get(f"/leaderboard/compare/?a={a.pk}&b={b.pk}&rules=2025-05")
    assert older.status_code == 200 and older.context["comparison"].metrics["recall"].n == 40
