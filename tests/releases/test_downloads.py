"""One download per edition (its Hugging Face folder as a .tar.gz, checked with
``sha256sum -c``), and release files that answer HEAD and Range requests, so that download
tools can check and resume them, with the same permissions as a GET."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from django.test import Client

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

ARCHIVE = "hctqa-2026.11-public.tar.gz"
URL = f"/releases/2026.11/public/{ARCHIVE}"


@pytest.fixture
def released(dataset: dict, cut) -> object:
    release, _ = cut("2026.11")
    return release


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def saved_as(response, folder: Path) -> Path:
    """The response's body in ``folder``, under the name it asks to be saved as."""
    name = response["Content-Disposition"].split('filename="', 1)[1].rstrip('"')
    path = folder / name
    path.write_bytes(body(response))
    return path


def test_each_edition_is_one_archive_of_its_hugging_face_folder(
    released, releases_root: Path, tmp_path: Path
) -> None:
    for edition in ("public", "full"):
        name = f"hctqa-2026.11-{edition}.tar.gz"
        folder = releases_root / "2026.11" / edition
        unpacked = tmp_path / edition
        unpacked.mkdir()
        subprocess.run(  # noqa: S603 - GNU tar, as a user unpacks it
            [shutil.which("tar") or "tar", "xzf", str(folder / name), "-C", str(unpacked)],
            check=True,
            timeout=60,
        )
        (root,) = unpacked.iterdir()
        assert root.name == f"hctqa-2026.11-{edition}"
        hf = folder / "hf"
        expected = {p.relative_to(hf): p.read_bytes() for p in hf.rglob("*") if p.is_file()}
        got = {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}
        assert got == expected and Path("README.md") in got
        # The same files make the same archive: nobody's user, the release's time.
        with tarfile.open(folder / name) as archive:
            members = archive.getmembers()
        assert {(m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0, "", "")}
        assert {m.mtime for m in members} == {int(released.created_at.timestamp())}
        record = {(f["edition"], f["path"]): f for f in released.files}
        assert (
            record[(edition, name)]["sha256"]
            == hashlib.sha256((folder / name).read_bytes()).hexdigest()
        )
        assert (folder / f"{name}.sha256").read_text() == (
            f"{record[(edition, name)]['sha256']}  {name}\n"
        )


def test_a_downloaded_archive_checks_with_sha256sum(
    client: Client, released, tmp_path: Path
) -> None:
    archive = saved_as(client.get(URL), tmp_path)
    checksum = saved_as(client.get(f"{URL}.sha256"), tmp_path)
    assert archive.name == ARCHIVE and checksum.name == f"{ARCHIVE}.sha256"
    check = subprocess.run(  # noqa: S603 - coreutils, as the page says
        [shutil.which("sha256sum") or "sha256sum", "-c", checksum.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert check.returncode == 0 and f"{ARCHIVE}: OK" in check.stdout
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one byte changed
    archive.write_bytes(bytes(data))
    check = subprocess.run(  # noqa: S603
        [shutil.which("sha256sum") or "sha256sum", "-c", checksum.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert check.returncode != 0 and "FAILED" in check.stdout


def test_a_download_cut_short_is_resumed_with_a_range(
    client: Client, released, releases_root: Path, tmp_path: Path
) -> None:
    whole = (releases_root / "2026.11/public" / ARCHIVE).read_bytes()
    size = len(whole)
    head = client.head(URL)
    assert head.status_code == 200 and head.content == b""
    assert head["Content-Length"] == str(size) and head["Accept-Ranges"] == "bytes"
    etag = head["ETag"]

    # The first third came before the connection dropped; the tool asks for the rest.
    first = client.get(URL, HTTP_RANGE=f"bytes=0-{size // 3 - 1}")
    assert first.status_code == 206
    assert first["Content-Range"] == f"bytes 0-{size // 3 - 1}/{size}"
    part = tmp_path / ARCHIVE
    part.write_bytes(body(first))
    rest = client.get(URL, HTTP_RANGE=f"bytes={part.stat().st_size}-", HTTP_IF_RANGE=etag)
    assert rest.status_code == 206
    assert rest["Content-Range"] == f"bytes {size // 3}-{size - 1}/{size}"
    assert rest["Content-Length"] == str(size - size // 3)
    with part.open("ab") as f:
        f.write(body(rest))
    assert part.read_bytes() == whole
    (tmp_path / f"{ARCHIVE}.sha256").write_bytes(body(client.get(f"{URL}.sha256")))
    check = subprocess.run(  # noqa: S603
        [shutil.which("sha256sum") or "sha256sum", "-c", f"{ARCHIVE}.sha256"],
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
    )
    assert check.returncode == 0


@pytest.mark.parametrize(
    ("header", "status", "content_range", "expected"),
    [
        ("bytes=-10", 206, "bytes {last10}/{size}", slice(-10, None)),
        ("bytes=5-4000000000", 206, "bytes 5-{end}/{size}", slice(5, None)),
        ("bytes={size}-", 416, "bytes */{size}", None),
        ("bytes=-0", 416, "bytes */{size}", None),
        ("bytes=0-1,5-6", 200, None, slice(None)),  # several ranges: the whole file
        ("bytes=9-3", 200, None, slice(None)),  # not a range
        ("lines=0-1", 200, None, slice(None)),
    ],
)
def test_ranges_served_ignored_and_refused(
    client: Client,
    released,
    releases_root: Path,
    header: str,
    status: int,
    content_range: str | None,
    expected: slice | None,
) -> None:
    whole = (releases_root / "2026.11/public/hf/README.md").read_bytes()
    size = len(whole)
    fill = {"size": size, "end": size - 1, "last10": f"{size - 10}-{size - 1}"}
    response = client.get("/releases/2026.11/public/hf/README.md", HTTP_RANGE=header.format(**fill))
    assert response.status_code == status
    assert response.get("Content-Range") == (content_range and content_range.format(**fill))
    if expected is not None:
        assert body(response) == whole[expected]


def test_a_range_of_another_version_gets_the_whole_file(client: Client, released) -> None:
    response = client.get(
        "/releases/2026.11/public/hf/README.md", HTTP_RANGE="bytes=0-9", HTTP_IF_RANGE='"other"'
    )
    assert response.status_code == 200 and "Content-Range" not in response


@pytest.mark.parametrize("role", [None, "researcher"])
def test_head_and_range_are_refused_the_full_edition_as_get_is(
    client: Client, released, role: str | None
) -> None:
    if role:
        client.force_login(UserFactory(role=role))
    url = "/releases/2026.11/full/hctqa-2026.11-full.tar.gz"
    assert client.get(url).status_code == 403
    assert client.head(url).status_code == 403
    assert client.get(url, HTTP_RANGE="bytes=0-99").status_code == 403
    assert client.head("/releases/2026.11/public/hf/nothing.jsonl").status_code == 404
    client.force_login(UserFactory(role="admin"))
    head = client.head(url)
    assert head.status_code == 200 and head["Cache-Control"] == "private, no-store"
    part = client.get(url, HTTP_RANGE="bytes=0-99")
    assert part.status_code == 206 and len(body(part)) == 100


def test_the_page_and_the_api_give_each_editions_archive(client: Client, released) -> None:
    record = {(f["edition"], f["path"]): f for f in released.files}
    public = record[("public", ARCHIVE)]
    page = client.get("/releases/2026.11/").content.decode()
    assert f'href="{URL}"' in page and public["sha256"] in page
    assert f'href="{URL}.sha256"' in page
    assert 'load_dataset("hctqa-2026.11-public")' in page
    assert 'filter(lambda r: r["dataset_type"] == "realWorldHCTs")' in page
    assert "hctqa-2026.11-full" not in page
    api = client.get("/api/releases/2026.11/").json()
    assert set(api["archives"]) == {"public"}
    archive = api["archives"]["public"]
    assert archive["path"] == ARCHIVE and archive["sha256"] == public["sha256"]
    assert archive["size"] == public["size"] and archive["url"].endswith(URL)
    assert archive["sha256_url"].endswith(f"{URL}.sha256")
    assert ARCHIVE in {f["path"] for f in api["files"]["public"]}
    listed = client.get("/api/releases/").json()["results"][0]
    assert listed["archives"]["public"]["sha256"] == public["sha256"]
    client.force_login(UserFactory(role="admin"))
    assert set(client.get("/api/releases/2026.11/").json()["archives"]) == {"public", "full"}
