"""One-page PDFs written by hand for the extraction tests: text in Helvetica (a standard font,
so pdfplumber measures its glyphs without an embedded font), ruling lines, rectangles and paths
drawn the ways real producers draw them. Coordinates are given as pdfplumber reports them
(points, origin at the top left) and turned into PDF user space here.

    page = PdfPage(600, 800)
    page.text(40, 100, "Total")              # a line of text whose top is at 100
    page.rect(40, 120, 300, 120.4)           # a thin filled rectangle: a rule
    page.path([(40, 130), (300, 130), (300, 200), (40, 200)], close=True)  # a frame
    pdf_bytes = page.pdf()
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# Helvetica's ascent over its font size, as pdfminer places a glyph's top.
ASCENT = 0.718


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


class PdfPage:
    """A page being drawn: ``text``, ``rect``, ``line`` and ``path`` add to its content."""

    def __init__(self, width: float = 600, height: float = 800) -> None:
        self.width = width
        self.height = height
        self.ops: list[str] = []

    def _y(self, top: float) -> float:
        return self.height - top

    def text(
        self,
        x: float,
        top: float,
        text: str,
        size: float = 10,
        *,
        bold: bool = False,
        grey: float = 0.0,
    ) -> None:
        """``text`` with its glyphs' top at ``top`` (pdfminer's top: baseline − ascent), in
        ``grey`` (0 black, 1 white)."""
        font = "F2" if bold else "F1"
        baseline = self._y(top + ASCENT * size)
        self.ops.append(
            f"{grey:g} g BT /{font} {size:g} Tf 1 0 0 1 {x:.3f} {baseline:.3f} Tm "
            f"({_escape(text)}) Tj ET 0 g"
        )

    def text_with_marker(
        self, x: float, top: float, text: str, marker: str, size: float = 10, ratio: float = 0.7
    ) -> None:
        """``text`` with a footnote marker set right after it, smaller (``ratio`` of the size)
        and raised, as a superscript: one run of glyphs, no space between."""
        baseline = self._y(top + ASCENT * size)
        self.ops.append(
            f"BT /F1 {size:g} Tf 1 0 0 1 {x:.3f} {baseline:.3f} Tm ({_escape(text)}) Tj "
            f"/F1 {size * ratio:g} Tf {0.4 * size:g} Ts ({_escape(marker)}) Tj 0 Ts ET"
        )

    def vertical_text(self, x: float, bottom: float, text: str, size: float = 10) -> None:
        """``text`` turned a quarter left (reading upwards, as vertical column headers are set),
        its baseline at ``x`` and its first glyph starting at ``bottom``."""
        self.ops.append(
            f"BT /F1 {size:g} Tf 0 1 -1 0 {x:.3f} {self._y(bottom):.3f} Tm ({_escape(text)}) Tj ET"
        )

    def rect(
        self,
        x0: float,
        top: float,
        x1: float,
        bottom: float,
        *,
        fill: bool = True,
        stroke: bool = False,
        grey: float = 0.0,
    ) -> None:
        """A rectangle (``re``), filled and/or stroked; one thinner than a point is how word
        processors export ruling lines."""
        paint = {(True, True): "B", (True, False): "f", (False, True): "S"}[(fill, stroke)]
        self.ops.append(
            f"{grey:g} g {grey:g} G {x0:.3f} {self._y(bottom):.3f} {x1 - x0:.3f} "
            f"{bottom - top:.3f} re {paint} 0 g 0 G"
        )

    def line(
        self,
        x0: float,
        top: float,
        x1: float,
        bottom: float,
        width: float = 0.5,
        *,
        grey: float = 0.0,
        dash: tuple[float, float] | None = None,
    ) -> None:
        """A stroked straight line, in ``grey`` (0 black, 1 white), dashed with ``dash``
        (on, off; points)."""
        pattern = f"[{dash[0]:g} {dash[1]:g}] 0 d " if dash else ""
        self.ops.append(
            f"{grey:g} G {pattern}{width:g} w {x0:.3f} {self._y(top):.3f} m {x1:.3f} "
            f"{self._y(bottom):.3f} l S 0 G [] 0 d"
        )

    def path(
        self,
        points: Sequence[tuple[float, float]],
        *,
        close: bool = False,
        fill: bool = False,
        width: float = 0.5,
    ) -> None:
        """One path through ``points`` (a polyline; closed back to its start with ``close``),
        stroked, or filled with ``fill``."""
        x, top = points[0]
        parts = [f"{width:g} w {x:.3f} {self._y(top):.3f} m"]
        parts += [f"{x:.3f} {self._y(top):.3f} l" for x, top in points[1:]]
        if close:
            parts.append("h")
        parts.append("f" if fill else "S")
        self.ops.append(" ".join(parts))

    def picture(self, dpi: int = 200) -> Any:
        """The page rendered as a greyscale picture (PIL), as a scanner gives it."""
        import pypdfium2 as pdfium

        document = pdfium.PdfDocument(self.pdf())
        try:
            return document[0].render(scale=dpi / 72).to_pil().convert("L")
        finally:
            document.close()

    def pdf(self) -> bytes:
        """The page as a complete PDF file."""
        content = "\n".join(self.ops).encode("latin-1")
        objects = [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            (
                f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {self.width:g} {self.height:g}] "
                "/Resources << /Font << /F1 4 0 R /F2 5 0 R >> >> /Contents 6 0 R >>"
            ).encode(),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold "
            b"/Encoding /WinAnsiEncoding >>",
            b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        ]
        out = bytearray(b"%PDF-1.4\n")
        offsets = []
        for number, body in enumerate(objects, 1):
            offsets.append(len(out))
            out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
        xref = len(out)
        out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
        out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
        out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
            len(objects) + 1,
            xref,
        )
        return bytes(out)
