"""A helper process of a release build: it turns chunks of tables into release records
(``hctqa.core.release_records.render_chunk``), so that a build uses every core.

Run by the build as ``python -m releases.render_worker``; it needs neither Django nor the
database. Requests and replies are pickles, each preceded by its length (8 bytes, big
endian), on stdin and stdout. A request is ``{"items": [...], "mtime": int}``; the reply is
``("ok", {key: bytes}, longest)`` (``longest``: the longest JSON line, in bytes) or
``("error", table_id, message)``. End of input ends it.
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
from typing import IO

_HEADER = struct.Struct(">Q")


def _read_exact(stream: IO[bytes], size: int) -> bytes | None:
    data = stream.read(size)
    if len(data) < size:
        return None
    return data


def _longest_line(files: dict) -> int:
    """The longest line of the JSON Lines files: the Parquet copies read them in blocks, and a
    block must hold a whole line."""
    return max(
        (
            len(line)
            for (_, path), data in files.items()
            if path.endswith(".jsonl")
            for line in data.split(b"\n")
        ),
        default=0,
    )


def main() -> None:
    from hctqa.core.release_records import RecordError, render_chunk

    requests = sys.stdin.buffer
    # Replies go to the original stdout; anything printed by accident goes to stderr.
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    while True:
        header = _read_exact(requests, _HEADER.size)
        if header is None:
            return
        body = _read_exact(requests, _HEADER.unpack(header)[0])
        if body is None:
            return
        request = pickle.loads(body)  # noqa: S301 - from the build process that started us
        try:
            files = render_chunk(request["items"], archive_mtime=request["mtime"])
            reply: tuple = ("ok", files, _longest_line(files))
        except RecordError as exc:
            reply = ("error", exc.table_id, exc.message)
        data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        replies.write(_HEADER.pack(len(data)))
        replies.write(data)
        replies.flush()


if __name__ == "__main__":
    main()
