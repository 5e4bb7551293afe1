"""Writing a release's files.

Everything is written into an empty folder that the service renames to
``RELEASES_ROOT/<version>`` once every file is written and hashed. Each edition is a folder:

- ``hf/``: the Hugging Face dataset folder: ``README.md`` (the dataset card),
  ``data/<split>.jsonl`` and ``.parquet`` (a record per question), ``tables/<split>.jsonl``
  and ``.parquet`` (a record per table) and ``images/``;
- ``prompts/<format>.jsonl.gz``: a prompt per question in each text table format, the lines
  ``export_prompts`` writes;
- ``alpaca/``: LLaMA-Factory's alpaca JSON for "real only" and "real and synthetic", a file
  per split, and its ``dataset_info.json``;
- ``tables.tar.gz``: every table's canonical CSV and HTML rendering (and a synthetic table's
  relational table);
- ``hctqa-<version>-<edition>.tar.gz``: the one download, the ``hf/`` folder as an archive
  (its one folder is named like the archive), with its ``.sha256`` for ``sha256sum -c``;
- ``changelog.json``, ``release.json`` (what the release is) and ``SHA256SUMS``.

The public edition differs from the full one only in what concerns the test split; every
other file is written once and hard-linked into both. The records themselves are made by
helper processes (``releases.render_worker``), a chunk of tables at a time, and written here
in table order.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import pickle
import queue
import re
import select
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.core.files.storage import default_storage

from dataset.models import Split, SyntheticTable
from hctqa.core import alpaca
from hctqa.core.dataset_card import (
    QUESTION_FEATURES,
    TABLE_FEATURES,
    CardFacts,
    Feature,
    SplitFile,
    TrackFacts,
    dataset_card,
)
from hctqa.core.release_records import (
    FULL,
    PUBLIC,
    TAR_END,
    QuestionRow,
    TableRow,
    archive_name,
    gzip_member,
    tar_header,
    tar_padding,
)
from hctqa.core.snapshots import (
    Changelog,
    FrozenQuestion,
    Snapshot,
    SnapshotError,
    changelog,
    question_set_digests,
    release_counts,
    sha256sums,
)
from plumbing.errors import ApplicationError
from releases.selectors import release_questions, release_tables
from tracks import files as track_files
from tracks.registry import item_tracks
from tracks.selectors import PUBLIC_SPLITS, gold_origins
from tracks.services.export import item_records

SPLIT_ORDER = tuple(Split.values)
_SAFE_STEM = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,150}")
_IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".webp", ".tif", ".tiff", ".bmp"}
# A chunk of work for a helper: about this many questions (or tables without any).
_CHUNK_QUESTIONS = 600
_CHUNK_TABLES = 150
_HEADER = struct.Struct(">Q")

Report = Callable[[int, str], None]


class BuildError(ApplicationError):
    """Why a release could not be built; nothing of it is left."""


@dataclass(frozen=True)
class ReleaseMeta:
    version: str
    title: str
    notes: str
    created: datetime
    commit: str
    previous_version: str | None


@dataclass
class BuildResult:
    counts: dict[str, Any]
    changelog: Changelog
    snapshot_sha256: str
    question_set_digests: dict[str, str]
    files: list[dict[str, Any]]


# --- Reading the dataset -------------------------------------------------------------------


@dataclass(frozen=True)
class _Loaded:
    tables: list[TableRow]
    questions: dict[str, list[QuestionRow]]
    images: dict[str, str]  # table id -> stored image name


def _stem(table_id: str) -> str:
    """A file name for a table: its id, or a hash of an id that is not safe as one."""
    if _SAFE_STEM.fullmatch(table_id):
        return table_id
    return "table-" + hashlib.sha256(table_id.encode("utf-8")).hexdigest()[:20]


def _image_path(stem: str, stored: str) -> str:
    suffix = Path(stored).suffix.lower()
    return f"images/{stem}{suffix if suffix in _IMAGE_SUFFIXES else '.img'}"


def _load() -> _Loaded:
    """Every table, and the release's questions by table. Tables are read first: a question
    whose table appeared after that read waits for the next release."""
    synthetic = {
        tid: (family, relational)
        for tid, family, relational in SyntheticTable.objects.values_list(
            "table_id", "family", "relational_csv"
        )
    }
    tables: list[TableRow] = []
    images: dict[str, str] = {}
    rows = (
        release_tables()
        .order_by("id")
        .values_list(
            "id", "source", "split", "canonical_csv", "image", "table_properties", "title", "notes"
        )
    )
    for tid, source, split, csv_text, image, properties, title, notes in rows.iterator(
        chunk_size=2000
    ):
        family, relational = synthetic.get(tid, ("", ""))
        stem = _stem(tid)
        if image:
            images[tid] = image
        tables.append(
            TableRow(
                id=tid,
                source=source,
                split=split,
                canonical_csv=csv_text,
                table_properties=properties or {},
                collection=family or source,
                relational_csv=relational,
                image=_image_path(stem, image) if image else "",
                stem=stem,
                title=title,
                notes=notes,
            )
        )
    known = {t.id for t in tables}
    questions: dict[str, list[QuestionRow]] = {}
    rows = (
        release_questions()
        .order_by("table_id", "id")
        .values_list(
            "table_id",
            "id",
            "text",
            "gold_answer",
            "origin",
            "template_number",
            "sql",
            "query_properties",
        )
    )
    for table_id, *fields in rows.iterator(chunk_size=5000):
        if table_id in known:
            fields[-1] = fields[-1] or {}
            questions.setdefault(table_id, []).append(QuestionRow(*fields))
    return _Loaded(tables=tables, questions=questions, images=images)


# --- Helper processes ----------------------------------------------------------------------


def _read_exact(fd: int, size: int, deadline: float) -> bytes:
    parts: list[bytes] = []
    while size:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise BuildError("A release helper process took too long; cut the release again")
        data = os.read(fd, min(size, 1 << 20))
        if not data:
            raise BuildError("A release helper process stopped; see the worker's log")
        parts.append(data)
        size -= len(data)
    return b"".join(parts)


class _Helpers:
    """Helper processes, each with a thread that sends it chunks and takes the replies."""

    def __init__(self, processes: int, timeout: float) -> None:
        self.timeout = timeout
        self.tasks: queue.Queue[tuple[int, bytes] | None] = queue.Queue()
        self.done: dict[int, Any] = {}
        self.cond = threading.Condition()
        self.failure: BaseException | None = None
        self.procs: list[subprocess.Popen[bytes]] = []
        self.logs: list[IO[bytes]] = []
        self.threads: list[threading.Thread] = []
        for n in range(processes):
            log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
            proc = subprocess.Popen(  # noqa: S603 - this interpreter, our own module
                [sys.executable, "-m", "releases.render_worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                cwd=settings.BASE_DIR,
            )
            self.procs.append(proc)
            self.logs.append(log)
            thread = threading.Thread(
                target=self._serve, args=(proc,), name=f"release-helper-{n}", daemon=True
            )
            thread.start()
            self.threads.append(thread)

    def _serve(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        while True:
            task = self.tasks.get()
            if task is None:
                return
            index, payload = task
            try:
                proc.stdin.write(_HEADER.pack(len(payload)) + payload)
                proc.stdin.flush()
                deadline = time.monotonic() + self.timeout
                fd = proc.stdout.fileno()
                size = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))[0]
                reply = pickle.loads(_read_exact(fd, size, deadline))  # noqa: S301 - our helper
            except (OSError, BuildError) as exc:
                reply = (
                    exc
                    if isinstance(exc, BuildError)
                    else BuildError(f"A release helper process failed ({exc})")
                )
            with self.cond:
                self.done[index] = reply
                self.cond.notify_all()

    def submit(self, index: int, payload: bytes) -> None:
        self.tasks.put((index, payload))

    def result(self, index: int) -> tuple[dict[tuple[str, str], bytes], int]:
        """A chunk's bytes per file, and its longest JSON line."""
        deadline = time.monotonic() + self.timeout
        with self.cond:
            while index not in self.done:
                if not any(t.is_alive() for t in self.threads):
                    raise BuildError("The release helper processes stopped")
                if not self.cond.wait(timeout=1) and time.monotonic() > deadline:
                    raise BuildError("A release helper process took too long")
            reply = self.done.pop(index)
        if isinstance(reply, BaseException):
            raise reply
        if reply[0] == "error":
            raise BuildError(f"Table {reply[1]} cannot be released: {reply[2]}")
        return reply[1], reply[2]

    def close(self) -> None:
        for _ in self.threads:
            self.tasks.put(None)
        for proc in self.procs:
            if proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()
        for proc in self.procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for log in self.logs:
            log.close()


def _chunks(loaded: _Loaded) -> Iterator[list[tuple[TableRow, list[QuestionRow]]]]:
    chunk: list[tuple[TableRow, list[QuestionRow]]] = []
    weight = 0
    for t in loaded.tables:
        questions = loaded.questions.get(t.id, [])
        chunk.append((t, questions))
        weight += len(questions)
        if weight >= _CHUNK_QUESTIONS or len(chunk) >= _CHUNK_TABLES:
            yield chunk
            chunk, weight = [], 0
    if chunk:
        yield chunk


# --- Files ---------------------------------------------------------------------------------


class _File:
    """A file written in pieces, hashed as it is written."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.handle = open(path, "xb")  # noqa: SIM115 - closed in close()
        self.sha256 = hashlib.sha256()
        self.size = 0
        self.lines = 0
        self.started = False

    def write(self, data: bytes) -> None:
        self.sha256.update(data)
        self.handle.write(data)
        self.size += len(data)

    def close(self) -> tuple[int, str]:
        self.handle.flush()
        os.fsync(self.handle.fileno())
        self.handle.close()
        return self.size, self.sha256.hexdigest()


def _write_bytes(path: Path, data: bytes) -> tuple[int, str]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "xb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    return len(data), hashlib.sha256(data).hexdigest()


def _file_digest(path: Path) -> tuple[int, str]:
    with open(path, "rb") as handle:
        digest = hashlib.file_digest(handle, "sha256")
    return path.stat().st_size, digest.hexdigest()


def _arrow_type(feature: Feature) -> Any:
    import pyarrow as pa

    if feature.fields:
        return pa.struct([(f.name, _arrow_type(f)) for f in feature.fields])
    return {"string": pa.string(), "int32": pa.int32(), "bool": pa.bool_()}[feature.dtype]


def parquet_copy(
    source: Path, target: Path, features: Sequence[Feature], block_size: int
) -> tuple[int, str]:
    """The JSONL file as Parquet, typed as the dataset card declares."""
    import pyarrow as pa
    import pyarrow.json as pa_json
    import pyarrow.parquet as pq

    table = pa_json.read_json(
        source,
        read_options=pa_json.ReadOptions(block_size=block_size),
        parse_options=pa_json.ParseOptions(
            explicit_schema=pa.schema([(f.name, _arrow_type(f)) for f in features]),
            unexpected_field_behavior="error",
        ),
    )
    with open(target, "xb") as handle:
        pq.write_table(table, handle, compression="zstd")
        handle.flush()
        os.fsync(handle.fileno())
    return _file_digest(target)


def _read_image(table_id: str, stored: str) -> bytes:
    try:
        with default_storage.open(stored, "rb") as handle:
            return handle.read()
    except (OSError, ValueError) as exc:
        raise BuildError(
            f"The image of table {table_id} ({stored}) cannot be read ({exc}); restore or "
            "remove it before cutting a release"
        ) from None


class _Progress:
    """Reports at most twice a second, so a fast build does not write a row per table."""

    def __init__(self, report: Report) -> None:
        self._report = report
        self._last = 0.0

    def __call__(self, percent: int, stage: str, *, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last >= 0.5:
            self._last = now
            self._report(min(100, max(0, percent)), stage)


# --- The build -----------------------------------------------------------------------------


def write_release(
    *, folder: Path, meta: ReleaseMeta, previous: Snapshot | None, report: Report
) -> BuildResult:
    """Write both editions into ``folder`` (which must be empty) and return what the release
    records. Raises ``BuildError`` when there is nothing to release or a table cannot be read;
    the caller removes the folder."""
    progress = _Progress(report)
    progress(1, "Reading the dataset", force=True)
    loaded = _load()
    total = sum(len(v) for v in loaded.questions.values())
    if total == 0:
        raise BuildError("Nothing to release: the dataset has no verified questions")
    full, public = folder / FULL, folder / PUBLIC
    full.mkdir()
    public.mkdir()
    files: dict[tuple[str, str], _File] = {}
    digests: dict[tuple[str, str], tuple[int, str]] = {}

    def file(key: tuple[str, str]) -> _File:
        if key not in files:
            files[key] = _File(folder / key[0] / key[1])
        return files[key]

    for table_id, stored in loaded.images.items():
        t_stem = _stem(table_id)
        path = f"hf/{_image_path(t_stem, stored)}"
        digests[(FULL, path)] = _write_bytes(full / path, _read_image(table_id, stored))

    helpers = _Helpers(max(1, settings.RELEASE_BUILD_PROCESSES), settings.RELEASE_BUILD_TIMEOUT)
    mtime = int(meta.created.timestamp())
    try:
        chunks = list(_chunks(loaded))
        # Keep the helpers busy, but hold few replies at once.
        ahead = 2 * len(helpers.procs) + 1
        for index, chunk in enumerate(chunks[:ahead]):
            helpers.submit(index, _payload(chunk, mtime))
        written = longest = 0
        for index, chunk in enumerate(chunks):
            result, chunk_longest = helpers.result(index)
            longest = max(longest, chunk_longest)
            if index + ahead < len(chunks):
                helpers.submit(index + ahead, _payload(chunks[index + ahead], mtime))
            for key in sorted(result):
                _append(file(key), key, result[key])
            written += sum(len(q) for _, q in chunk)
            progress(5 + 80 * written // total, f"Writing questions: {written:,} of {total:,}")
    finally:
        helpers.close()

    progress(86, "Closing the files", force=True)
    for key in list(files):
        if key[1].startswith("alpaca/"):
            f = files[key]
            f.write(b"\n]\n" if f.started else b"[]\n")
        if key[1] == "tables.tar.gz":
            files[key].write(gzip_member(TAR_END))
    line_counts = {key: f.lines for key, f in files.items()}
    for key, f in files.items():
        digests[key] = f.close()
    return _finish(
        folder=folder,
        meta=meta,
        previous=previous,
        loaded=loaded,
        digests=digests,
        line_counts=line_counts,
        longest_line=longest,
        progress=progress,
    )


def _payload(chunk: list[tuple[TableRow, list[QuestionRow]]], mtime: int) -> bytes:
    return pickle.dumps({"items": chunk, "mtime": mtime}, protocol=pickle.HIGHEST_PROTOCOL)


def _append(f: _File, key: tuple[str, str], data: bytes) -> None:
    if key[1].startswith("alpaca/"):
        # Records come each preceded by ",\n": the array opens before the first.
        if not f.started:
            data = b"[\n" + data[2:]
        f.started = True
    elif key[1].endswith(".jsonl"):
        f.lines += data.count(b"\n")
    f.write(data)


def _split_files(
    kind: str, edition: str, digests: dict[tuple[str, str], tuple[int, str]], lines: dict
) -> tuple[SplitFile, ...]:
    out = []
    for split in SPLIT_ORDER:
        path = f"hf/{kind}/{split}.jsonl"
        key = (edition, path) if (edition, path) in lines else (FULL, path)
        if key in lines:
            out.append(SplitFile(split, f"{kind}/{split}.jsonl", lines[key], digests[key][0]))
    return tuple(out)


def _finish(
    *,
    folder: Path,
    meta: ReleaseMeta,
    previous: Snapshot | None,
    loaded: _Loaded,
    digests: dict[tuple[str, str], tuple[int, str]],
    line_counts: dict[tuple[str, str], int],
    longest_line: int,
    progress: _Progress,
) -> BuildResult:
    full, public = folder / FULL, folder / PUBLIC
    progress(87, "Writing the Parquet copies", force=True)
    # A block of the JSON reader holds whole lines.
    block_size = max(16 << 20, 2 * longest_line + (1 << 20))
    for edition, path in sorted(line_counts):
        if not path.endswith(".jsonl"):
            continue
        features = QUESTION_FEATURES if path.startswith("hf/data/") else TABLE_FEATURES
        target = path.removesuffix(".jsonl") + ".parquet"
        digests[(edition, target)] = parquet_copy(
            folder / edition / path, folder / edition / target, features, block_size
        )

    progress(92, "Writing the dataset cards and checksums", force=True)
    frozen = [
        FrozenQuestion(q.id, t.id, t.source, t.split, q.origin, q.gold_answer)
        for t in loaded.tables
        for q in loaded.questions.get(t.id, [])
    ]
    counts = release_counts([(t.source, t.split) for t in loaded.tables], frozen)
    snapshot = Snapshot.of({t.id: t.split for t in loaded.tables}, frozen)
    log = changelog(previous, snapshot, previous_version=meta.previous_version)
    digests[(FULL, "changelog.json")] = _write_bytes(
        full / "changelog.json", json.dumps(log.as_json()).encode("utf-8") + b"\n"
    )
    splits = [s for s in SPLIT_ORDER if (FULL, f"hf/data/{s}.jsonl") in line_counts]
    names = {
        alpaca.entry_name(v, s): alpaca.file_name(v, s)
        for v in alpaca.VARIANTS
        for s in splits
        if (FULL, f"alpaca/{alpaca.file_name(v, s)}") in digests
    }
    digests[(FULL, "alpaca/dataset_info.json")] = _write_bytes(
        full / "alpaca/dataset_info.json",
        json.dumps(alpaca.dataset_info(names), indent=2).encode("utf-8") + b"\n",
    )

    progress(90, "Writing the tracks' items", force=True)
    track_facts = _write_tracks(full, digests)

    # What public/ does not have yet is the same in both editions: link it.
    for (edition, path), value in list(digests.items()):
        if edition == FULL and (PUBLIC, path) not in digests:
            target = public / path
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(full / path, target)
            digests[(PUBLIC, path)] = value

    for edition in (FULL, PUBLIC):
        facts = CardFacts(
            version=meta.version,
            title=meta.title,
            notes=meta.notes,
            edition=edition,
            created=meta.created.date().isoformat(),
            commit=meta.commit or "unknown",
            counts=counts,
            question_files=_split_files("data", edition, digests, line_counts),
            table_files=_split_files("tables", edition, digests, line_counts),
            changes=log.counts() if previous is not None else None,
            previous=meta.previous_version,
            tracks=track_facts,
        )
        digests[(edition, "hf/README.md")] = _write_bytes(
            folder / edition / "hf/README.md", dataset_card(facts).encode("utf-8")
        )

    progress(93, "Packing each edition's Hugging Face folder", force=True)
    _write_archives(folder, meta, digests)

    for edition in (FULL, PUBLIC):
        about = {
            "version": meta.version,
            "title": meta.title,
            "notes": meta.notes,
            "edition": edition,
            "created": meta.created.isoformat(timespec="seconds"),
            "commit": meta.commit,
            "previous": meta.previous_version,
            "counts": counts,
            "changes": log.counts(),
            "withheld": "the test split's gold answers, SQL and relational tables, and the "
            "tracks' test gold"
            if edition == PUBLIC
            else "the tracks' test gold",
        }
        digests[(edition, "release.json")] = _write_bytes(
            folder / edition / "release.json",
            json.dumps(about, indent=2, ensure_ascii=False).encode("utf-8") + b"\n",
        )
        sums = sha256sums({p: v[1] for (e, p), v in digests.items() if e == edition})
        digests[(edition, "SHA256SUMS")] = _write_bytes(
            folder / edition / "SHA256SUMS", sums.encode("utf-8")
        )

    snapshot_bytes = gzip.compress(
        json.dumps(snapshot.as_json(), separators=(",", ":")).encode("utf-8"), mtime=0
    )
    _size, snapshot_sha = _write_bytes(folder / "snapshot.json.gz", snapshot_bytes)
    progress(96, "Sealing the files", force=True)
    for edition, path in digests:
        (folder / edition / path).chmod(0o444)
    (folder / "snapshot.json.gz").chmod(0o444)
    return BuildResult(
        counts=counts,
        changelog=log,
        snapshot_sha256=snapshot_sha,
        question_set_digests=question_set_digests(frozen),
        files=[
            {"edition": e, "path": p, "size": size, "sha256": sha}
            for (e, p), (size, sha) in sorted(digests.items())
        ],
    )


# --- The tracks beside QA ------------------------------------------------------------------


def _write_tracks(
    full: Path, digests: dict[tuple[str, str], tuple[int, str]]
) -> tuple[TrackFacts, ...]:
    """Each track's items of each split, ``tracks/<track>/<split>/items.jsonl`` with the
    files they name beside it: gold for train and validation only, in both editions (the
    test split's gold is in neither: its boards score it)."""
    out = []
    for info in item_tracks():
        counts: dict[str, int] = {}
        for split in SPLIT_ORDER:
            with_gold = split in PUBLIC_SPLITS
            records, named = item_records(info, split=split, with_gold=with_gold)
            if not records:
                continue
            base = f"tracks/{info.slug}/{split}"
            lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
            digests[(FULL, f"{base}/items.jsonl")] = _write_bytes(
                full / base / "items.jsonl", lines.encode("utf-8")
            )
            track_files.copy_out(named, full / base)
            for relative in sorted(named):
                digests[(FULL, f"{base}/{relative}")] = _file_digest(full / base / relative)
            counts[split] = len(records)
        if counts:
            modes = [m for m, _ in info.modes] or [""]
            figures = {f.name: f for m in modes for f in info.figures(m)}
            out.append(
                TrackFacts(
                    slug=info.slug,
                    name=info.name,
                    measures=info.measures,
                    submission=info.submission,
                    figures=tuple(f"{f.name}: {f.description}" for f in figures.values()),
                    items=counts,
                    sources=gold_origins(info),
                )
            )
    return tuple(out)


# --- The one download per edition ----------------------------------------------------------

_ARCHIVE_BLOCK = 8 << 20  # compressed apart, two at a time (zlib lets go of the GIL)
_ARCHIVE_LEVEL = 6
_COPY_BLOCK = 1 << 20


def _compress_block(data: bytes) -> bytes:
    compressor = zlib.compressobj(_ARCHIVE_LEVEL, zlib.DEFLATED, 31)
    return compressor.compress(data) + compressor.flush()


def _compressed(path: Path, size: int, pool: ThreadPoolExecutor) -> Iterator[bytes]:
    """A file's data and tar padding as gzip members of ``_ARCHIVE_BLOCK`` bytes each, in
    order, with a few blocks in flight."""
    pending: list[Future[bytes]] = []
    with open(path, "rb") as handle:
        while block := handle.read(_ARCHIVE_BLOCK):
            if len(block) < _ARCHIVE_BLOCK:
                block += tar_padding(size)
            pending.append(pool.submit(_compress_block, block))
            if len(pending) > 3:
                yield pending.pop(0).result()
    for future in pending:
        yield future.result()
    # A size that is a multiple of the block is one of 512 too: no padding is missing.


def _copy_range(source: Path, offset: int, length: int, out: _File) -> None:
    with open(source, "rb") as handle:
        handle.seek(offset)
        while length:
            data = handle.read(min(length, _COPY_BLOCK))
            if not data:
                raise BuildError(f"{source} ended early while it was copied")
            out.write(data)
            length -= len(data)


def _write_archives(
    folder: Path, meta: ReleaseMeta, digests: dict[tuple[str, str], tuple[int, str]]
) -> None:
    """Each edition's ``hf/`` folder as ``hctqa-<version>-<edition>.tar.gz`` (a folder of the
    same name inside), and its ``.sha256``. A gzip member per header and per block of data;
    the data of a file both editions share is compressed once and copied into the second."""
    mtime = int(meta.created.timestamp())
    done: dict[tuple[int, int], tuple[Path, int, int]] = {}
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="release-archive") as pool:
        for edition in (FULL, PUBLIC):
            name = archive_name(meta.version, edition)
            root = name.removesuffix(".tar.gz")
            target = folder / edition / name
            out = _File(target)
            paths = sorted(p for e, p in digests if e == edition and p.startswith("hf/"))
            folders = sorted({str(Path(p).parent) for p in paths} | {"hf"})
            for sub in folders:
                arcname = root + sub.removeprefix("hf")
                out.write(gzip_member(tar_header(arcname, 0, mtime=mtime, directory=True)))
            for path in paths:
                source = folder / edition / path
                stat = source.stat()
                arcname = f"{root}/{path.removeprefix('hf/')}"
                out.write(gzip_member(tar_header(arcname, stat.st_size, mtime=mtime)))
                start = out.size
                shared = done.get((stat.st_dev, stat.st_ino))
                if shared is not None:
                    _copy_range(*shared, out)
                else:
                    for member in _compressed(source, stat.st_size, pool):
                        out.write(member)
                    done[(stat.st_dev, stat.st_ino)] = (target, start, out.size - start)
            out.write(gzip_member(TAR_END))
            digests[(edition, name)] = out.close()
            digests[(edition, f"{name}.sha256")] = _write_bytes(
                folder / edition / f"{name}.sha256",
                sha256sums({name: digests[(edition, name)][1]}).encode("utf-8"),
            )


def read_snapshot(path: Path, expected_sha256: str) -> Snapshot:
    """The snapshot a release stored for the next changelog, checked against its hash."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BuildError(
            f"The previous release's snapshot {path} cannot be read ({exc.strerror}); its "
            "folder must stay where it was cut"
        ) from None
    if hashlib.sha256(data).hexdigest() != expected_sha256:
        raise BuildError(
            f"The previous release's snapshot {path} was changed after the release was cut"
        )
    try:
        return Snapshot.from_json(json.loads(gzip.decompress(data)))
    except (OSError, ValueError, SnapshotError) as exc:
        raise BuildError(f"The previous release's snapshot {path} is damaged ({exc})") from None
