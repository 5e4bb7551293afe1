"""A human-centric table as a printable web page, ruled or borderless.

The benchmark (``benchmarks/ingest_roundtrip.py``) and the tests print these with Chromium
to make PDFs whose true tables are known. The table is the project's own HTML rendering
(``render.to_html``); the style follows the site's (headers centred and at the bottom of
their cell, row labels at the top, line breaks kept), with a black rule around every cell
or none at all. The page is as wide as the table needs, so cells do not wrap.
"""

from __future__ import annotations

from html import escape

from hctqa.core.render import to_html
from hctqa.core.tables import HCT

_STYLE = """
@page { margin: 0; }
body { margin: 24px; font-family: "DejaVu Sans", sans-serif; }
table.hct { border-collapse: collapse; font-size: 11px; }
.hct th, .hct td { padding: 3px 6px; white-space: pre-line; vertical-align: top; %(rule)s }
.hct thead th { text-align: center; vertical-align: bottom; }
.hct tbody th { text-align: left; font-weight: 600; }
.hct td { text-align: right; }
"""
RULE = "border: 1px solid #000;"
# For the printer: the page shrinks to its content (the body's box and its margins), so a
# page is as large as its table.
CONTENT_SIZE_JS = """() => {
  document.body.style.display = "inline-block";
  const box = document.body.getBoundingClientRect();
  const page = document.documentElement.getBoundingClientRect();
  const height = Math.max(page.height, box.bottom + box.top);
  return [Math.ceil(box.right + box.left), Math.ceil(height)];
}"""
NO_RULE = "border: 0;"


def printable_page(table: HCT, *, ruled: bool = True, title: str = "") -> str:
    heading = f"<h1>{escape(title)}</h1>" if title else ""
    return _document(heading + to_html(table), ruled)


def printable_pages(tables: list[HCT], *, ruled: bool = True) -> str:
    """One table per printed page (for A4 or Letter paper)."""
    body = "".join(f'<section class="sheet">{to_html(t)}</section>' for t in tables)
    return _document(body, ruled, ".sheet { break-after: page; }")


def _document(body: str, ruled: bool, extra: str = "") -> str:
    style = _STYLE % {"rule": RULE if ruled else NO_RULE} + extra
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        f"<style>{style}</style></head><body>{body}</body></html>"
    )
