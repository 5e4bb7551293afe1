"""The platform's own git commit, which releases and inference runs record."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from django.conf import settings


@lru_cache(maxsize=1)
def platform_commit() -> str:
    """The checkout's git commit, read from .git without running git ("" if unknown). A git
    worktree's .git is a file naming its folder; branch refs live in the shared folder."""
    git = settings.BASE_DIR / ".git"
    try:
        if git.is_file():
            pointer = git.read_text().strip()
            if not pointer.startswith("gitdir: "):
                return ""
            git = (settings.BASE_DIR / pointer[8:]).resolve()
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head
        return _ref(git, head[5:]) or _ref(_common_dir(git), head[5:])
    except OSError:
        return ""


def _common_dir(git: Path) -> Path:
    try:
        return (git / (git / "commondir").read_text().strip()).resolve()
    except OSError:
        return git


def _ref(git: Path, ref: str) -> str:
    if (git / ref).is_file():
        return (git / ref).read_text().strip()
    try:
        for line in (git / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split(" ", 1)[0]
    except OSError:
        pass
    return ""
