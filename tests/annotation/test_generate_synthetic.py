"""generate_synthetic, the admin page and its task, the coverage page, and the round trip to
a synthetic-board score."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client, override_settings

from annotation import services
from annotation.models import SyntheticRun
from dataset.models import Question, SyntheticTable, Table
from hctqa.core.wording import counted
from plumbing.jobs import RunStatus
from tests.factories import UserFactory
from tests.synthetic_params import write_small_params

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def small_params(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_small_params(
        data_dir / "hctqa-synthetic",
        tmp_path_factory.mktemp("params"),
        col_row_agg_pos=["none_none", "right_top"],
        row_format=["indent"],
        shuffle=["none"],
    )


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_it_writes_the_released_layout_that_import_synthetic_reads(
    small_params: Path, tmp_path: Path
) -> None:
    out = tmp_path / "families"
    output = run("generate_synthetic", "--params", str(small_params), "--out", str(out))
    assert "Number_of_accidents:" in output and "Questions per template: T1 " in output
    assert "tables/s" in output
    names = sorted(p.name for p in out.iterdir())
    assert any(n.endswith("_QandA_NONSEM.json") for n in names)
    assert len(names) % 10 == 0
    imported = run("import_synthetic", str(out))
    assert f"{len(names) // 10} tables" in imported
    assert SyntheticTable.objects.filter(family="Number_of_accidents").exists()
    question = Question.objects.filter(template_number=5).first()
    assert question is not None and question.sql.startswith("SELECT")


def test_it_refuses_a_non_empty_folder_unless_forced(small_params: Path, tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("keep")
    with pytest.raises(CommandError, match="not empty"):
        run("generate_synthetic", "--params", str(small_params), "--out", str(tmp_path))
    run("generate_synthetic", "--params", str(small_params), "--out", str(tmp_path), "--force")
    assert (tmp_path / "x.txt").read_text() == "keep"


def test_bad_parameters_name_the_file_and_nothing_is_written(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="PARAM_semantics.json: missing"):
        run("generate_synthetic", "--params", str(tmp_path), "--import")
    assert not Table.objects.exists()


def test_an_unknown_family_is_refused(small_params: Path) -> None:
    with pytest.raises(CommandError, match="no family named 'Nope'"):
        run("generate_synthetic", "--params", str(small_params), "--family", "Nope", "--import")
    assert not Table.objects.exists()


def test_generated_gold_scores_a_perfect_synthetic_submission(small_params: Path) -> None:
    from hctqa.core.scoring import gold_values
    from leaderboard import services as board
    from leaderboard.models import Submission

    run(
        "generate_synthetic",
        "--params",
        str(small_params),
        "--family",
        "Number_of_accidents",
        "--import",
    )
    gold = dict(Question.objects.filter(origin="synthetic").values_list("id", "gold_answer"))
    assert gold
    # A model that answers every question right: the gold values, as a model writes them.
    answers = {qid: " || ".join(gold_values(answer)) for qid, answer in gold.items()}
    researcher = UserFactory(role="researcher")
    data = board.SubmissionInput(
        model_name="oracle",
        weights="open",
        parameters_billions=1,
        modality="text",
        table_format="paper",
        split="all",
        data_scope="synthetic",
    )
    submission = board.submission_create_from_predictions(
        owner=researcher, data=data, predictions=answers
    )
    board.submission_score(submission_id=submission.pk)
    scored = Submission.objects.get(pk=submission.pk)
    assert scored.status == "scored"
    for rules in ("2025-05", "2025-10"):
        score = scored.score_for(rules)
        assert (score.recall, score.cc) == (1.0, 1.0)


def test_the_admin_page_runs_the_generator_as_a_task(small_params: Path, client: Client) -> None:
    admin = UserFactory(role="admin")
    client.force_login(admin)
    with override_settings(SYNTHETIC_PARAMS_DIR=str(small_params)):
        page = client.get("/annotate/synthetic/")
        assert page.status_code == 200 and b"Number_of_accidents" in page.content
        response = client.post(
            "/annotate/synthetic/", {"mode": "families", "families": ["Number_of_accidents"]}
        )
        run_ = SyntheticRun.objects.get()
        assert response.status_code == 302 and run_.status == RunStatus.QUEUED
        # The run page's status line says "Queued" and follows the run; no banner outlives it.
        started = client.get(response["Location"]).content.decode()
        assert "is queued" not in started and 'hx-trigger="every 2s"' in started
        assert services.synthetic_run_execute(run_id=run_.pk) == "done"
        assert services.synthetic_run_execute(run_id=run_.pk) == "not claimable"
    run_.refresh_from_db()
    assert run_.status == RunStatus.DONE and run_.progress == 100
    assert run_.tables_created == Table.objects.filter(source="synthetic").count() > 0
    page = client.get(f"/annotate/synthetic/{run_.pk}/")
    assert b"Tables per family and layout" in page.content
    assert b"Template 15" in page.content
    partial = client.get(f"/annotate/synthetic/{run_.pk}/", HTTP_HX_REQUEST="true")
    assert b"<progress" in partial.content and b"<html" not in partial.content


def test_a_targeted_run_says_when_no_layout_can(small_params: Path) -> None:
    admin = UserFactory(role="admin")
    with override_settings(SYNTHETIC_PARAMS_DIR=str(small_params)):
        run_ = services.synthetic_run_create(
            user=admin, required_properties=["unbalanced_multi_level_column"], table_count=5
        )
        assert services.synthetic_run_execute(run_id=run_.pk) == "failed"
    run_.refresh_from_db()
    assert run_.status == RunStatus.FAILED
    assert "No layout in the parameter files produces" in run_.error
    assert not Table.objects.exists()


def test_a_targeted_run_imports_tables_with_the_properties(small_params: Path) -> None:
    admin = UserFactory(role="admin")
    wanted = ["local_row_group_aggregation", "global_column_aggregation"]
    with override_settings(SYNTHETIC_PARAMS_DIR=str(small_params)):
        run_ = services.synthetic_run_create(user=admin, required_properties=wanted, table_count=2)
        assert services.synthetic_run_execute(run_id=run_.pk) == "done"
    tables = Table.objects.filter(source="synthetic")
    assert tables.count() == 2
    assert all(t.table_properties[p] for t in tables for p in wanted)


@pytest.mark.parametrize("folder", ["", "elsewhere"])
def test_without_parameter_files_the_page_says_how_to_give_them(
    client: Client, folder: str, tmp_path: Path
) -> None:
    client.force_login(UserFactory(role="admin"))
    with override_settings(SYNTHETIC_PARAMS_DIR=str(tmp_path / folder) if folder else ""):
        page = client.get("/annotate/synthetic/").content.decode()
    fix = re.search(r'<div class="error" role="alert">(.*?)</div>', page, re.S)
    assert fix is not None
    text = " ".join(re.sub(r"<[^>]+>", "", fix.group(1)).split())
    assert "Set SYNTHETIC_PARAMS_DIR to the folder holding PARAM_tableTemplates.json" in text
    assert "hctqa-synthetic folder of the HCT-QA data" in text
    assert "scripts/run sets it when HCTQA_DATA_DIR holds them" in text
    assert page.count("disabled>Generate and import") == 2


def test_only_admins_start_runs(client: Client, small_params: Path) -> None:
    client.force_login(UserFactory(role="annotator"))
    with override_settings(SYNTHETIC_PARAMS_DIR=str(small_params)):
        assert client.get("/annotate/synthetic/").status_code == 403
        assert client.post("/annotate/synthetic/", {"mode": "families"}).status_code == 403
    assert not SyntheticRun.objects.exists()


def test_the_coverage_page_counts_real_and_synthetic_tables(client: Client) -> None:
    from tests.factories import TableFactory

    TableFactory(source="psa", table_properties={"row_nesting": True})
    TableFactory(source="synthetic", table_properties={"row_nesting": True})
    TableFactory(source="synthetic", table_properties={"row_nesting": False})
    page = client.get("/dataset/coverage/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "Real (1)" in text and "Synthetic (2)" in text
    row = text.split("Row nesting</td>", 1)[1].split("</tr>", 1)[0]
    assert '<td class="num">1</td><td class="num">1</td>' in row


def test_an_identical_run_is_refused_while_one_is_queued_or_running(
    small_params: Path, client: Client
) -> None:
    """Issue 23: five identical generator runs queued in 0.2 s delayed a sweep by 43 s."""
    admin = UserFactory(role="admin")
    client.force_login(admin)
    with override_settings(SYNTHETIC_PARAMS_DIR=str(small_params)):
        started = [
            client.post(
                "/annotate/synthetic/", {"mode": "families", "families": ["Number_of_accidents"]}
            )
            for _ in range(5)
        ]
        first = SyntheticRun.objects.get()
        assert [r.status_code for r in started] == [302, 400, 400, 400, 400]
        assert f"An identical synthetic run (run {first.pk}) is already queued".encode() in (
            started[-1].content
        )
        # Another request is a run of its own; once the first is done, it may run again.
        other = services.synthetic_run_create(user=admin)  # every family
        assert services.synthetic_run_execute(run_id=first.pk) == "done"
        again = services.synthetic_run_create(user=admin, families=["Number_of_accidents"])
    assert SyntheticRun.objects.filter(status=RunStatus.QUEUED).count() == 2
    assert again.pk not in (first.pk, other.pk)


def test_a_run_names_its_table_properties_by_their_labels(client: Client) -> None:
    admin = UserFactory(role="admin")
    run_ = SyntheticRun.objects.create(
        created_by=admin,
        required_properties=["row_nesting", "local_column_group_aggregation"],
        table_count=3,
    )
    client.force_login(admin)
    for url in (f"/annotate/synthetic/{run_.pk}/", "/annotate/synthetic/"):
        # The run's page, and the list of recent runs under the start page's form.
        shown = client.get(url).content.decode().split("<h2>Recent runs</h2>")[-1]
        assert "Row nesting, Column aggregation › Local (column group)" in shown, url
        assert "local_column_group_aggregation" not in shown, url


def test_the_import_shows_as_its_own_stage_while_it_runs(
    small_params: Path, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The generator's last progress call (tables N of N) comes less than a second before the
    # import starts: the import must still be recorded, not left looking like generation.
    admin = UserFactory(role="admin")
    client.force_login(admin)
    seen = {}
    real_import = services.synthetic.release_import

    def watched_import(**kwargs: object) -> object:
        row = SyntheticRun.objects.get()
        seen.update(stage=row.stage, done=row.done, total=row.total)
        seen["line"] = client.get(f"/annotate/synthetic/{row.pk}/").content.decode()
        return real_import(**kwargs)

    monkeypatch.setattr(services.synthetic, "release_import", watched_import)
    with override_settings(SYNTHETIC_PARAMS_DIR=str(small_params)):
        run_ = services.synthetic_run_create(user=admin, families=["Number_of_accidents"])
        assert services.synthetic_run_execute(run_id=run_.pk) == "done"
    assert seen["stage"] == "import" and seen["done"] == 0 and seen["total"] > 0
    tables = counted(seen["total"], "table")
    assert f"Running</strong> · importing {tables} into the dataset" in seen["line"]
