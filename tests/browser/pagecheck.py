"""Checks every page a browser test changes goes through: screenshots at 1440 px and 390 px
wide (kept under the test's tmp dir), no page-level sideways scroll, key controls visible and
inside the viewport, and axe-core (vendored, tests/browser/vendor) with no serious or critical
violation. ``ConsoleWatch``: every browser test fails on a console error or a refusal by the
Content-Security-Policy (the ``page`` fixture of tests/conftest.py watches each page)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Page, expect

AXE = Path(__file__).parent / "vendor" / "axe.min.js"
WIDTHS = (1440, 390)

# Chromium fires securitypolicyviolation in the page for each refusal; the listener is
# installed before any of the page's own scripts run, on every page the test opens.
_CSP_LISTENER = """
document.addEventListener("securitypolicyviolation", (e) => {
  window.reportViolation(
    `${e.effectiveDirective} refused ${e.blockedURI || "inline"} at ${e.sourceFile}:${e.lineNumber}`
  );
});
"""


@dataclass
class ConsoleWatch:
    """What a browser test's pages said was wrong: console errors and refusals by the
    Content-Security-Policy. A test that makes an error on purpose (a 409 it provokes, a
    request refused) says which with ``expect``; anything else fails the test."""

    problems: list[str] = field(default_factory=list)
    expected: list[re.Pattern[str]] = field(default_factory=list)

    @classmethod
    def on(cls, page: Page) -> ConsoleWatch:
        watch = cls()
        page.context.expose_function("reportViolation", lambda text: watch.add(page, text))
        page.context.add_init_script(_CSP_LISTENER)
        page.on(
            "console",
            lambda message: (
                watch.add(page, message.text)
                if message.type == "error" or "Content Security Policy" in message.text
                else None
            ),
        )
        page.on("pageerror", lambda error: watch.add(page, f"uncaught {error}"))
        return watch

    def add(self, page: Page, text: str) -> None:
        self.problems.append(f"{page.url}: {text}")

    def expect(self, pattern: str) -> None:
        """Console errors matching ``pattern`` (a regular expression) are the test's own."""
        self.expected.append(re.compile(pattern))

    def unexpected(self) -> list[str]:
        return [p for p in self.problems if not any(e.search(p) for e in self.expected)]


def axe_violations(page: Page) -> list[dict]:
    """Serious and critical axe-core violations on the page as it is now. The script is
    evaluated through the DevTools protocol, so a strict Content-Security-Policy does not
    stop it."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(AXE.read_text(encoding="utf-8"))
    result = page.evaluate(
        """async () => {
            const r = await axe.run(document, {resultTypes: ["violations"]});
            return r.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.slice(0, 5).map((n) => n.target.join(" "))}));
        }"""
    )
    return [v for v in result if v["impact"] in ("serious", "critical")]


def check_page(
    page: Page,
    name: str,
    folder: Path,
    *,
    controls: tuple[str, ...] = (),
    widths: tuple[int, ...] = WIDTHS,
) -> list[Path]:
    """Check the page at each width; returns the screenshots taken. ``controls``: selectors of
    the controls that must be visible and inside the viewport's width (scrolled into view
    first: a long page is fine, a control off to the side is not)."""
    shots = []
    for width in widths:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(50)
        shot = folder / f"{name}-{width}.png"
        page.screenshot(path=str(shot), full_page=True)
        shots.append(shot)
        scroll = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert scroll[0] <= scroll[1], f"{name} at {width} px scrolls sideways: {scroll}"
        for selector in controls:
            control = page.locator(selector).first
            control.scroll_into_view_if_needed()
            expect(control).to_be_visible()
            box = control.bounding_box()
            assert box is not None
            assert box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, (
                f"{selector} on {name} at {width} px is outside the viewport: {box}"
            )
        violations = axe_violations(page)
        assert not violations, f"{name} at {width} px: {violations}"
    page.set_viewport_size({"width": 1280, "height": 900})
    return shots
