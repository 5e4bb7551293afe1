"""Publishing a release to the Hugging Face Hub (``manage.py push_release`` and the admin
action), against a local stand-in for the Hub (tests/hub_stub.py): one commit holding the
edition's Hugging Face folder, tagged with the version; the token from the environment, never
stored; the full edition only when allowed, and only to a private repository; clear refusals
and time limits."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from releases.models import BuildStatus, PushStatus, ReleaseBuild, ReleasePush
from releases.tasks import push_release
from tests.factories import UserFactory
from tests.hub_stub import HubStub, Repo

pytestmark = pytest.mark.django_db

TOKEN = "hf_test_SECRET_token_0123456789"


@pytest.fixture
def hub(settings, monkeypatch) -> Iterator[HubStub]:
    """The stand-in Hub as HF_ENDPOINT, a token in HF_TOKEN, and the library's shared client
    and settings put back afterwards."""
    from huggingface_hub import constants
    from huggingface_hub.utils import _http

    monkeypatch.setattr(_http, "_GLOBAL_CLIENT_FACTORY", _http._GLOBAL_CLIENT_FACTORY)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", constants.HF_HUB_DISABLE_XET)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    settings.HF_HUB_TIMEOUT = 2
    with HubStub(token=TOKEN) as stub:
        settings.HF_ENDPOINT = stub.url
        yield stub
    _http.close_session()


@pytest.fixture
def released(dataset: dict, cut) -> object:
    release, _ = cut("2026.11")
    return release


def push(*args: str) -> str:
    out = io.StringIO()
    call_command("push_release", *args, stdout=out)
    return out.getvalue()


def hf_folder(root: Path, edition: str) -> dict[str, bytes]:
    folder = root / "2026.11" / edition / "hf"
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def no_token_kept() -> None:
    for row in ReleasePush.objects.values():
        assert TOKEN not in str(row)


def test_the_public_folder_goes_up_as_one_commit_tagged_with_the_version(
    hub: HubStub, released, releases_root: Path
) -> None:
    # The repository holds an older state: a file the release does not have goes.
    hub.repos["qcri-ai/HCTQA"] = Repo(private=False)
    hub.repos["qcri-ai/HCTQA"].files["data/old.parquet"] = b"old"
    printed = push("2026.11", "--repo", "qcri-ai/HCTQA")

    repo = hub.repos["qcri-ai/HCTQA"]
    (commit,) = repo.commits
    folder = hf_folder(releases_root, "public")
    assert commit.added == folder and "README.md" in folder and "data/test.jsonl" in folder
    assert commit.deleted == ["data/old.parquet"]
    assert repo.files == {**folder, ".gitattributes": b"*.parquet lfs\n"}
    assert commit.summary == "HCT-QA 2026.11 (public edition)"
    assert repo.tags == {"2026.11": commit.oid}
    assert not repo.private
    done = ReleasePush.objects.get()
    assert done.status == PushStatus.DONE and done.commit_oid == commit.oid
    assert done.files == len(folder) and done.removed == 1
    assert done.commit_url in printed and "tagged 2026.11" in printed
    # The token went with every request and nowhere else.
    assert {r["headers"].get("authorization") for r in hub.log} == {f"Bearer {TOKEN}"}
    assert TOKEN not in printed
    no_token_kept()


def test_the_release_page_says_where_it_was_published(
    hub: HubStub, released, client: Client
) -> None:
    push("2026.11", "--repo", "qcri-ai/HCTQA")
    page = client.get("/releases/2026.11/").content.decode()
    assert f'href="{hub.url}/datasets/qcri-ai/HCTQA/tree/2026.11"' in page
    assert 'load_dataset("qcri-ai/HCTQA", revision="2026.11")' in page


def test_the_full_edition_needs_an_explicit_flag_and_a_private_repository(
    hub: HubStub, released, releases_root: Path
) -> None:
    with pytest.raises(CommandError, match="test split's gold answers.*--allow-full-edition"):
        push("2026.11", "--repo", "org/full", "--edition", "full")
    assert hub.log == [] and not ReleasePush.objects.exists()

    # Allowed, it never goes to a public repository...
    hub.repos["org/open"] = Repo(private=False)
    with pytest.raises(CommandError, match="org/open is public"):
        push("2026.11", "--repo", "org/open", "--edition", "full", "--allow-full-edition")
    assert hub.repos["org/open"].commits == []
    # ...and a new one is made private.
    push("2026.11", "--repo", "org/full", "--edition", "full", "--allow-full-edition")
    assert hub.repos["org/full"].private
    assert hub.repos["org/full"].commits[0].added == hf_folder(releases_root, "full")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["2030.1", "--repo", "org/name"], "No release 2030.1: cut it first"),
        (["2026.11", "--repo", "no-slash"], "Not a Hub repository: 'no-slash'"),
        (["2026.11", "--repo", "org/../name"], "Not a Hub repository"),
    ],
)
def test_bad_input_is_refused_before_anything_is_sent(
    hub: HubStub, released, args: list[str], message: str
) -> None:
    with pytest.raises(CommandError, match=message):
        push(*args)
    assert hub.log == [] and not ReleasePush.objects.exists()


def test_a_release_still_being_built_is_not_pushed(hub: HubStub, db) -> None:
    ReleaseBuild.objects.create(version="2026.12", title="x", status=BuildStatus.BUILDING)
    with pytest.raises(CommandError, match="2026.12 is still being built"):
        push("2026.12", "--repo", "org/name")
    assert hub.log == []


def test_without_a_token_nothing_is_sent(hub: HubStub, released, monkeypatch) -> None:
    monkeypatch.delenv("HF_TOKEN")
    with pytest.raises(CommandError, match="No Hugging Face token: set HF_TOKEN"):
        push("2026.11", "--repo", "org/name")
    assert hub.log == [] and not ReleasePush.objects.exists()


def test_a_token_the_hub_refuses(hub: HubStub, released, monkeypatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_wrong")
    with pytest.raises(CommandError, match="refused the token .check HF_TOKEN.") as refused:
        push("2026.11", "--repo", "org/name")
    assert "hf_wrong" not in str(refused.value)
    failed = ReleasePush.objects.get()
    assert failed.status == PushStatus.FAILED and "refused the token" in failed.error
    assert "hf_wrong" not in failed.error


def test_a_hub_that_does_not_answer_in_time(hub: HubStub, released) -> None:
    hub.fail("create", stall=6)
    started = time.monotonic()
    with pytest.raises(CommandError, match="did not answer within 2 s while making"):
        push("2026.11", "--repo", "org/name")
    assert time.monotonic() - started < 5
    assert ReleasePush.objects.get().status == PushStatus.FAILED


def test_a_failed_commit_publishes_nothing_and_a_lost_tag_is_made_by_pushing_again(
    hub: HubStub, released
) -> None:
    hub.fail("commit", 500, "The storage is down")
    with pytest.raises(CommandError, match="Nothing was published: the Hub answered 500 .*down"):
        push("2026.11", "--repo", "org/name")
    assert hub.repos["org/name"].commits == [] and hub.repos["org/name"].tags == {}

    hub.fail("tag", 503, "Try later")
    with pytest.raises(CommandError, match="was made but not tagged.*push again"):
        push("2026.11", "--repo", "org/name")
    assert hub.repos["org/name"].tags == {}
    push("2026.11", "--repo", "org/name")
    repo = hub.repos["org/name"]
    assert repo.tags == {"2026.11": repo.commits[-1].oid}
    assert [p.status for p in ReleasePush.objects.order_by("id")] == ["failed", "failed", "done"]


def test_a_version_is_published_once(hub: HubStub, released) -> None:
    push("2026.11", "--repo", "org/name")
    with pytest.raises(CommandError, match="has a tag 2026.11 already"):
        push("2026.11", "--repo", "org/name")
    assert len(hub.repos["org/name"].commits) == 1


def test_a_file_changed_after_the_cut_is_not_published(
    hub: HubStub, released, releases_root: Path
) -> None:
    readme = releases_root / "2026.11/public/hf/README.md"
    readme.chmod(0o644)
    readme.write_text("changed")
    with pytest.raises(CommandError, match="hf/README.md was changed after the release was cut"):
        push("2026.11", "--repo", "org/name")
    assert hub.log == []


def test_admins_push_from_the_admin_and_the_worker_does_it(
    hub: HubStub, released, client: Client, django_capture_on_commit_callbacks
) -> None:
    client.force_login(UserFactory(role="admin"))
    url = "/admin/releases/release/"
    chosen = {"action": "push_to_hub", "_selected_action": [released.pk]}
    form = client.post(url, chosen)
    assert form.status_code == 200 and "Allow the full edition" in form.content.decode()

    refused = client.post(url, {**chosen, "apply": "1", "repo": "org/name", "edition": "full"})
    assert "test split&#x27;s gold answers" in refused.content.decode()
    assert not ReleasePush.objects.exists()

    with django_capture_on_commit_callbacks() as callbacks:
        queued = client.post(
            url, {**chosen, "apply": "1", "repo": "org/name", "edition": "public"}, follow=True
        )
    assert "is being pushed to org/name" in queued.content.decode()
    assert len(callbacks) == 1 and hub.log == []
    pushed = ReleasePush.objects.get()
    assert pushed.status == PushStatus.QUEUED and pushed.created_by.username
    # The task the callback queues, run here; a second run of the same message does nothing.
    assert push_release.apply(args=[pushed.pk]).get().startswith("pushed to org/name")
    assert push_release.apply(args=[pushed.pk]).get() == "not queued"
    assert hub.repos["org/name"].tags == {"2026.11": hub.repos["org/name"].commits[0].oid}
    page = client.get(f"/admin/releases/releasepush/{pushed.pk}/change/").content.decode()
    assert "Done" in page and TOKEN not in page


@pytest.mark.parametrize("role", ["researcher", "annotator"])
def test_others_cannot_push(hub: HubStub, released, client: Client, role: str) -> None:
    from django.core.exceptions import PermissionDenied

    from releases.services import release_push_start

    with pytest.raises(PermissionDenied):
        release_push_start(user=UserFactory(role=role), version="2026.11", repo="org/name")
    assert not ReleasePush.objects.exists()
