"""Debian's chromium as the browser tests and the benchmarks launch it: headless, never a
downloaded browser, with nothing reaching out to the network on its own."""

from __future__ import annotations

import os
from typing import Any

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def launch_chromium(playwright: Any) -> Any:
    """The browser, from a started ``sync_playwright()``."""
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
