"""Endpoint runs on the tracks, against a fake OpenAI-compatible server: the items sent with
the tracks' versioned prompts (the table region as a PNG for extraction), the replies read
strictly, and the run a scored submission."""

from __future__ import annotations

import base64
import hashlib
import io

import pytest
from PIL import Image

from leaderboard import services
from leaderboard.models import InferenceResponse, RunStatus, TrackScore
from leaderboard.services import InferenceRunInput, inference_run_create, inference_run_execute
from plumbing.errors import ApplicationError
from tests.factories import UserFactory
from tests.fake_openai import FakeOpenAI, Reply
from tests.leaderboard.inference_helpers import last_user_text, quick_inference, registered
from tracks.models import TrackItem

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quick(settings, monkeypatch) -> None:
    quick_inference(settings, monkeypatch)


@pytest.fixture
def researcher():
    return UserFactory(role="researcher")


def run_on(user, server, track: str, **fields):
    data = InferenceRunInput(
        model_name="fake-7b",
        endpoint=registered(server.base_url).name,
        modality=fields.pop("modality", "text"),
        table_format=fields.pop("table_format", "csv"),
        split=fields.pop("split", "validation"),
        data_scope="",
        weights="open",
        parameters_billions=7,
        track=track,
        **fields,
    )
    run = inference_run_create(user=user, data=data, enqueue=False)
    inference_run_execute(run_id=run.pk)
    run.refresh_from_db()
    return run


def scored_figures(run) -> dict:
    assert run.status == RunStatus.DONE, run.error
    services.submission_score(submission_id=run.submission_id)
    return TrackScore.objects.get(submission_id=run.submission_id).figures


def test_an_sql_run_sends_question_and_schema_and_scores_the_replies(built, researcher) -> None:
    gold = dict(
        TrackItem.objects.filter(track="sql", split="validation").values_list(
            "inputs__question", "gold"
        )
    )

    def model(body):
        text = last_user_text(body)
        question = text.split("Question: ", 1)[1].split("\n\nSQL:")[0]
        return Reply(f"```sql\n{gold[question]};\n```")

    with FakeOpenAI(model) as server:
        run = run_on(researcher, server, "sql")
    assert run.total == len(gold) and run.answered == len(gold)
    assert run.config["prompt_version"] == "2026-11" and run.config["track"] == "sql"
    assert scored_figures(run) == {"execution_accuracy": 1.0, "recall": 1.0}
    body = server.requests[0]
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "DBdata" in last_user_text(body)


def test_a_transformation_run_with_unreadable_replies_scores_them_missing(
    built, researcher
) -> None:
    items = TrackItem.objects.filter(track="transformation", split="validation")
    by_table = {row.inputs["hct"]["markdown"]: row.gold for row in items}
    first = sorted(by_table)[0]

    def model(body):
        table = last_user_text(body).split("\n", 1)[1].rsplit("\n\nThe relational", 1)[0]
        if table == first:
            return Reply("I cannot do that.")
        return Reply(f"Here it is:\n```csv\n{by_table[table]}```")

    with FakeOpenAI(model) as server:
        run = run_on(researcher, server, "transformation", table_format="markdown")
    assert run.config["replies_without_a_prediction"] == 1
    share = (len(by_table) - 1) / len(by_table)
    figures = scored_figures(run)
    assert figures["row_f1"] == pytest.approx(share, abs=1e-6)


def _html(gold: dict) -> str:
    rows: dict[int, list[str]] = {}
    for cell in gold["cells"]:
        spans = f' rowspan="{cell["rowspan"]}" colspan="{cell["colspan"]}"'
        rows.setdefault(cell["row"], []).append(f"<td{spans}>{cell['text']}</td>")
    covered = {
        (r, c)
        for cell in gold["cells"]
        for r in range(cell["row"], cell["row"] + cell["rowspan"])
        for c in range(cell["col"], cell["col"] + cell["colspan"])
    }
    out = []
    for r in range(gold["rows"]):
        cells = {c["col"]: c for c in gold["cells"] if c["row"] == r}
        tds = []
        for c in range(gold["cols"]):
            if c in cells:
                cell = cells[c]
                tds.append(
                    f'<td rowspan="{cell["rowspan"]}" colspan="{cell["colspan"]}">'
                    f"{cell['text']}</td>"
                )
            elif (r, c) not in covered:
                tds.append("<td></td>")
        out.append("<tr>" + "".join(tds) + "</tr>")
    return "<table>" + "".join(out) + "</table>"


def test_an_extraction_run_sends_each_region_as_a_png_and_reads_the_html(
    built, icdar_set, researcher
) -> None:
    items = TrackItem.objects.filter(track="extraction", mode="region", split="validation")
    golds = [row.gold for row in items]
    seen: list[tuple[int, int]] = []

    def model(body):
        url = body["messages"][-1]["content"][1]["image_url"]["url"]
        image = base64.b64decode(url.split(",", 1)[1])
        with Image.open(io.BytesIO(image)) as png:
            seen.append(png.size)
        # The fake model knows which table an image shows by the image's hash.
        return Reply(f"```html\n{answers[hashlib.sha256(image).hexdigest()]}\n```")

    # The images the run will send, computed as it does, mapped to their gold.
    from hctqa.core.tracks.rendering import region_png
    from tracks import files

    answers = {}
    for row in items:
        data = files.path_of(row.inputs["file"]).read_bytes()
        png = region_png(
            data, kind=row.inputs["kind"], page=row.inputs["page"], bbox=tuple(row.inputs["bbox"])
        )
        answers[hashlib.sha256(png).hexdigest()] = _html(row.gold)
    with FakeOpenAI(model) as server:
        run = run_on(researcher, server, "extraction", modality="vision", table_format="image")
    assert (run.modality, run.table_format, run.mode) == ("vision", "image", "region")
    assert len(seen) == len(golds) and all(w > 50 and h > 20 for w, h in seen)
    figures = scored_figures(run)
    assert figures["teds_struct"] > 0.99 and figures["adj_f1"] > 0.99
    assert InferenceResponse.objects.filter(run=run, item__isnull=False).count() == len(golds)


def test_track_runs_refuse_what_their_prompt_cannot_ask(built, researcher) -> None:
    with FakeOpenAI(lambda body: Reply("x")) as server:
        with pytest.raises(ApplicationError) as refused:
            run_on(researcher, server, "extraction", mode="page")
        assert "region" in str(refused.value.by_field["mode"])
        with pytest.raises(ApplicationError) as refused:
            run_on(researcher, server, "transformation", table_format="image")
        assert "table_format" in refused.value.by_field
        with pytest.raises(ApplicationError) as refused:
            run_on(researcher, server, "sql", split="all")
        assert "split" in refused.value.by_field


def test_a_track_run_from_the_command_line(built, researcher) -> None:
    import io

    from django.core.management import call_command

    gold = dict(
        TrackItem.objects.filter(track="sql", split="validation").values_list(
            "inputs__question", "gold"
        )
    )

    def model(body):
        question = last_user_text(body).split("Question: ", 1)[1].split("\n\nSQL:")[0]
        return Reply(gold[question])

    with FakeOpenAI(model) as server:
        out = io.StringIO()
        call_command(
            "run_inference",
            "--user",
            researcher.username,
            "--model",
            "fake-7b",
            "--endpoint",
            registered(server.base_url).name,
            "--parameters",
            "7",
            "--track",
            "sql",
            "--split",
            "validation",
            stdout=out,
        )
    assert "execution_accuracy 1.000" in out.getvalue()
