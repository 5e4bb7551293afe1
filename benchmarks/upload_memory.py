"""Peak memory of reading an upload, before and after the streaming reader (issue 10, item 11).

Each file is read in a fresh process, by the reader at a git revision ("before": the whole
file read into memory, parsed, then checked for unknown ids) and by the working tree's
reader ("after": streamed, unknown ids counted as they pass, stopping at 100 problems).
The figures are the process's peak resident memory above what it held just before reading.

    .venv/bin/python benchmarks/upload_memory.py [--data ../shared/data] [--before 94ceb5f]

Files: a million unknown ids (45 MB of JSON Lines), one 49 MB answer, the real gemma sample
(9,835 answers) as JSON Lines, gzipped, and as a JSON array, and 9,835 answers of 5,000
characters (49 MB: the most an accepted file holds, so the answers kept are the memory).
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def memory_mb(field: str) -> float:
    """VmRSS (resident now) or VmHWM (the peak). Not ru_maxrss: on Linux a child started
    by fork and exec inherits its parent's high-water mark there."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field}")


def load_reader(revision: str) -> object:
    """hctqa/core/predictions.py as it was at ``revision`` (or the working tree's)."""
    if revision == "working-tree":
        from hctqa.core import predictions

        return predictions
    source = subprocess.run(
        ["git", "show", f"{revision}:hctqa/core/predictions.py"],
        cwd=REPO,
        check=True,
        capture_output=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "predictions_before.py"
    path.write_bytes(source)
    spec = importlib.util.spec_from_file_location("predictions_before", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def measure_one(revision: str, path: Path, known_path: Path) -> None:
    """In a child process: read one file, print peak growth (MB), seconds and the outcome."""
    reader = load_reader(revision)
    known = set(json.loads(known_path.read_text()))
    limit = 60 * 1024 * 1024
    base = memory_mb("VmRSS")
    start = time.perf_counter()
    try:
        if hasattr(reader, "read_predictions"):
            with path.open("rb") as handle:
                read = reader.read_predictions(
                    handle, max_bytes=limit, max_answer_chars=10_000, known_ids=known
                )
            outcome = f"{len(read.answers):,} answers"
        else:  # the reader before: the upload read whole, then parsed, then checked
            predictions = reader.parse_predictions(path.read_bytes(), max_bytes=limit)
            reader.check_known(predictions, known)
            outcome = f"{len(predictions):,} answers"
    except ValueError as exc:
        outcome = "refused: " + str(exc)[:70]
    seconds = time.perf_counter() - start
    peak = memory_mb("VmHWM")
    print(json.dumps({"growth": peak - base, "seconds": seconds, "outcome": outcome}))


def make_files(folder: Path, data: Path) -> dict[str, Path]:
    with gzip.open(data / "sample-submissions" / "gemma-2-9b-it--text--real.jsonl.gz") as f:
        sample = [json.loads(line) for line in f]
    (folder / "known.json").write_text(json.dumps([r["qap_id"] for r in sample]))
    files = {
        "1,000,000 unknown ids (JSONL)": folder / "unknown.jsonl",
        "one 49 MB answer (JSONL)": folder / "big-answer.jsonl",
        "gemma sample, 9,835 answers (JSONL)": folder / "sample.jsonl",
        "gemma sample (JSONL, gzipped)": folder / "sample.jsonl.gz",
        "gemma sample (JSON array)": folder / "sample.json",
        "9,835 answers of 5,000 characters": folder / "long-answers.jsonl",
    }
    with files["1,000,000 unknown ids (JSONL)"].open("w") as out:
        for i in range(1_000_000):
            out.write(f'{{"id": "psa--9--{i}--M0", "response": "12"}}\n')
    qid = sample[0]["qap_id"]
    files["one 49 MB answer (JSONL)"].write_text(
        json.dumps({"qap_id": qid, "response": "9" * 49_000_000}) + "\n"
    )
    lines = "".join(json.dumps(r) + "\n" for r in sample)
    files["gemma sample, 9,835 answers (JSONL)"].write_text(lines)
    files["gemma sample (JSONL, gzipped)"].write_bytes(gzip.compress(lines.encode()))
    files["gemma sample (JSON array)"].write_text(json.dumps(sample, indent=1))
    # The most an accepted file can hold: what the reader keeps is the answers themselves.
    files["9,835 answers of 5,000 characters"].write_text(
        "".join(json.dumps({"qap_id": r["qap_id"], "response": "7" * 5000}) + "\n" for r in sample)
    )
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ.get("HCTQA_DATA_DIR", REPO.parent / "shared" / "data")),
    )
    parser.add_argument(
        "--before", default="94ceb5f", help="git revision of the reader to compare with"
    )
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        revision, path, known = args.one
        measure_one(revision, Path(path), Path(known))
        return
    folder = Path(tempfile.mkdtemp(prefix="hctqa-upload-bench-"))
    files = make_files(folder, args.data)
    print(f"{'file':38} {'size':>8}  {'reader':7} {'peak growth':>12} {'time':>7}  outcome")
    for name, path in files.items():
        size = f"{path.stat().st_size / 1024 / 1024:.1f} MB"
        for label, revision in (("before", args.before), ("after", "working-tree")):
            result = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--one",
                    revision,
                    str(path),
                    str(folder / "known.json"),
                ],
                check=True,
                capture_output=True,
                text=True,
            )
            r = json.loads(result.stdout)
            print(
                f"{name:38} {size:>8}  {label:7} {r['growth']:9.0f} MB {r['seconds']:6.2f}s  "
                f"{r['outcome']}"
            )


if __name__ == "__main__":
    main()
