"""Progress for management commands: a redrawn bar on a terminal, a line per quarter in logs."""

from __future__ import annotations

from django.core.management.base import OutputWrapper


class ProgressLine:
    def __init__(self, label: str, out: OutputWrapper) -> None:
        self.label = label
        self.out = out
        self.tty = out.isatty()
        self._last = -1

    def __call__(self, done: int, total: int) -> None:
        percent = 100 if total == 0 else done * 100 // total
        step = percent if self.tty else percent // 25 * 25
        if step == self._last:
            return
        self._last = step
        bar = "#" * (percent // 5) + "-" * (20 - percent // 5)
        text = f"{self.label} [{bar}] {percent:3d}% ({done:,}/{total:,})"
        if self.tty:
            self.out.write("\r" + text, ending="\n" if done >= total else "")
        else:
            self.out.write(text)
