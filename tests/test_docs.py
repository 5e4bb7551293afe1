"""The README is the entry and docs/ holds the rest: links resolve, the README stays short, every
setting is documented once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
PAGES = [README, *DOCS]

_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} +(.+?) *#*$", re.M)


def _prose(text: str) -> str:
    """The text outside code, where a bracket is a link."""
    return _INLINE_CODE.sub("", _FENCE.sub("", text))


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: the link text and inline code kept, markup dropped,
    lower-cased, punctuation but hyphens and underscores removed, spaces made hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"[`*]", "", text).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    for heading in _HEADING.findall(_FENCE.sub("", path.read_text(encoding="utf-8"))):
        slug = _anchor(heading)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def relative_links(path: Path) -> list[str]:
    return [
        target
        for target in _LINK.findall(_prose(path.read_text(encoding="utf-8")))
        if not re.match(r"^[a-z][a-z0-9+.-]*:", target)  # http:, https:, mailto:
    ]


def test_the_docs_exist_and_the_links_are_found() -> None:
    # A broken pattern would make every other test here pass on nothing.
    assert len(DOCS) >= 5
    assert len(relative_links(README)) >= len(DOCS)
    assert "model-endpoints" in anchors(REPO / "docs" / "researchers.md")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in relative_links(page):
        file_part, _, fragment = target.partition("#")
        destination = (page.parent / file_part).resolve() if file_part else page
        if not destination.exists():
            broken.append(f"{target}: no file {destination.relative_to(REPO)}")
        elif fragment and fragment not in anchors(destination):
            broken.append(f"{target}: no heading #{fragment} in {destination.name}")
    assert not broken, f"{page.name} has broken links:\n" + "\n".join(broken)


def test_the_readme_is_an_entry_that_links_every_doc() -> None:
    text = README.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) < 200, f"README.md has {len(lines)} lines; move detail into docs/"
    # It opens with the two commands.
    first_block = _FENCE.search(text)
    assert first_block and text.index(first_block.group()) < 200
    assert "scripts/run" in first_block.group() and "scripts/test" in first_block.group()
    linked = {(README.parent / t.partition("#")[0]).resolve() for t in relative_links(README)}
    assert not [d.name for d in DOCS if d.resolve() not in linked]


def test_every_setting_is_in_the_configuration_table_once() -> None:
    settings = (REPO / "hctqa" / "settings.py").read_text(encoding="utf-8")
    variables = set(re.findall(r'\benv_\w+\(\s*"([A-Z][A-Z0-9_]+)"', settings))
    variables |= set(re.findall(r'os\.environ\.get\(\s*"([A-Z][A-Z0-9_]+)"', settings))
    assert len(variables) > 50
    table = [
        line.split("|")[1]
        for line in (REPO / "docs" / "operators.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| `")
    ]
    documented = [name for cell in table for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", cell)]
    assert not sorted(variables - set(documented)), "settings missing from docs/operators.md"
    assert not sorted({n for n in documented if documented.count(n) > 1})


def test_the_readme_names_every_queue_scripts_run_starts_a_worker_for() -> None:
    from django.conf import settings

    run = (REPO / "scripts" / "run").read_text(encoding="utf-8")
    started = re.search(r"^queues=\(([^)]*)\)", run, re.M)
    assert started is not None
    assert set(started.group(1).split()) == set(settings.WORKER_QUEUES)
    sentence = re.search(r"one Celery worker per queue\s*\(([^)]*)\)", README.read_text())
    assert sentence is not None
    assert set(re.findall(r"`(\w+)`", sentence.group(1))) == set(settings.WORKER_QUEUES)
