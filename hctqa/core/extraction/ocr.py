"""Pages without a text layer, read through OCR into the same ``PageLayout`` as a text page.

A scanned PDF page is rendered at ``OCR_DPI``; an image file is read at its own pixels. Then:

1. the ruling lines are found in the picture (``rules_image.find_rules``) and erased, since
   Tesseract reads the text of ruled cells far better without them;
2. Tesseract (Debian's ``tesseract-ocr`` and a language package such as
   ``tesseract-ocr-eng``) reads the words, each with its box and its confidence, as one block
   of text (page segmentation mode 6: table rows are lines across the page);
3. points and commas between a number's digits that Tesseract left out are put back from
   the picture (``restore_points``);
4. the words and the rules, in the page's own units (points for a PDF page, pixels for an
   image file), make a ``PageLayout`` with ``source="ocr"``, which the table rules read as they
   read a text page; its meta keeps the words the engine's dictionary knows.

The tables read from such a page get review marks (``review_marks``): a cell holding a word the
engine was unsure of, or a word that neither its dictionary nor the page's own words support
("oncentration"; "Ourestimates", two of the page's words run together), is marked for the
reviewer to check against the picture.

Nothing is downloaded: the engine and its language data come from the system's packages.
``language`` is Tesseract's code (``eng``, ``ara``, ``eng+ara``); a language whose data is not
installed is refused with the package to install.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hctqa.core.extraction.documents import DEFAULT_LANGUAGE, DocumentError
from hctqa.core.extraction.layout import Box, PageLayout, Rule, Word, layout_of_words
from hctqa.core.extraction.table import FLAG_LOW_CONFIDENCE, FLAG_UNKNOWN_WORD, Table

# A scanned page is read at its scan's own resolution, within these bounds: finer costs time
# and gains nothing; coarser text is enlarged first (Tesseract wants letters 20+ pixels high).
OCR_MIN_DPI = 200
OCR_DPI = 300
# A picture larger than this is scaled down before OCR (about an A4 page at 350 dpi).
OCR_MAX_PIXELS = 12_000_000
# Letters smaller than this (median height in pixels) are enlarged to GLYPH_PIXELS first:
# Tesseract misreads small print (a screenshot's 12-pixel text, a 100 dpi scan).
MIN_GLYPH_PIXELS = 14
GLYPH_PIXELS = 20
# An image file that does not say its resolution is taken to be a screenshot or a scan at
# this many dots per inch (it sets the length a ruling line needs).
ASSUMED_IMAGE_DPI = 150.0
# A layout's meta key: the words the OCR engine found in its language's dictionary.
DICTIONARY_WORDS = "dictionary_words"
LANGUAGE_PATTERN = re.compile(r"^[a-z][a-z_]{1,15}(\+[a-z][a-z_]{1,15}){0,4}$", re.ASCII)
TESSDATA_DIRS = (
    "/usr/share/tesseract-ocr/5/tessdata",
    "/usr/share/tesseract-ocr/4.00/tessdata",
    "/usr/share/tessdata",
    "/usr/local/share/tessdata",
    "/opt/homebrew/share/tessdata",
)


@dataclass(frozen=True)
class OcrWord:
    """A word as the engine read it, in the picture's pixels; ``confidence`` 0–1."""

    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    confidence: float
    # Each character's box (x0, top, x1, bottom), as the engine placed it; () when unknown.
    glyphs: tuple[tuple[float, float, float, float], ...] = ()
    # The engine found the word in its language's dictionary.
    in_dictionary: bool = False


def tessdata_dir() -> Path | None:
    """Where the installed language data is: ``TESSDATA_PREFIX`` if set, else the first of
    the usual system folders that holds any."""
    import os

    given = os.environ.get("TESSDATA_PREFIX")
    candidates = [given] if given else list(TESSDATA_DIRS)
    for folder in candidates:
        path = Path(folder)
        if path.is_dir() and any(path.glob("*.traineddata")):
            return path
    return None


def installed_languages() -> list[str]:
    folder = tessdata_dir()
    if folder is None:
        return []
    return sorted(p.stem for p in folder.glob("*.traineddata") if p.stem != "osd")


def check_language(language: str) -> Path:
    """The language data folder, or ``DocumentError`` saying what to install."""
    if not LANGUAGE_PATTERN.match(language):
        raise DocumentError(
            "ocr_language",
            f"{language!r} is not an OCR language code: use Tesseract's codes, such as eng, "
            "ara or eng+ara.",
        )
    folder = tessdata_dir()
    if folder is None:
        raise DocumentError(
            "ocr_missing",
            "OCR is not installed on the extraction worker: install Debian's "
            "tesseract-ocr-eng (apt-get install tesseract-ocr-eng), or run scripts/run once.",
        )
    missing = [
        code for code in language.split("+") if not (folder / f"{code}.traineddata").is_file()
    ]
    if missing:
        packages = " ".join(f"tesseract-ocr-{code.replace('_', '-')}" for code in missing)
        raise DocumentError(
            "ocr_language",
            f"The OCR language data for {', '.join(missing)} is not installed on the extraction "
            f"worker: install it (apt-get install {packages}) or change the collection's OCR "
            "language.",
        )
    return folder


_ENGINES: dict[tuple[str, str], Any] = {}


def _engine(language: str) -> Any:
    """One Tesseract instance per language, kept for the process's life (loading a language
    takes a moment; pages come one after another)."""
    folder = check_language(language)
    key = (str(folder), language)
    if key not in _ENGINES:
        import tesserocr

        _ENGINES[key] = tesserocr.PyTessBaseAPI(
            path=str(folder),
            lang=language,
            psm=tesserocr.PSM.SINGLE_BLOCK,
            oem=tesserocr.OEM.LSTM_ONLY,
        )
    return _ENGINES[key]


def _row_band(item: Any, level: Any) -> tuple[float, float] | None:
    """How far a line's text reaches above and below its baseline (ascenders, descenders),
    or None when the line was measured on noise (a tall block read as one line)."""
    attributes = item.RowAttributes() or {}
    box = item.BoundingBox(level)
    above = attributes.get("row_height", 0.0)
    below = -attributes.get("descenders", 0.0)
    ink = (box[3] - box[1]) if box else 0
    if not 0 < above <= 2.0 * max(ink, 1) or not 0 <= below <= above:
        return None
    return above, below


def _band(item: Any, level: Any, band: tuple[float, float] | None, ink: Any) -> tuple[float, float]:
    """The word's top and bottom as a text layer gives them: its line's band around the
    baseline, not just its own ink (a word of small letters, "and", or a dash would otherwise
    look much smaller than its neighbours)."""
    x0, top, x1, bottom = ink
    baseline = item.Baseline(level) if band else None
    if band is None or baseline is None:
        return top, bottom
    (bx0, by0), (bx1, by1) = baseline
    middle = (x0 + x1) / 2
    y = by0 if bx1 == bx0 else by0 + (by1 - by0) * (middle - bx0) / (bx1 - bx0)
    return min(top, y - band[0]), max(bottom, y + band[1])


def recognise(gray: Any, *, dpi: float, language: str = DEFAULT_LANGUAGE) -> list[OcrWord]:
    """The words of a greyscale picture (PIL ``L``), in its pixels."""
    import tesserocr

    api = _engine(language)
    api.SetImageBytes(gray.tobytes(), gray.width, gray.height, 1, gray.width)
    api.SetSourceResolution(max(70, round(dpi)))
    api.Recognize()
    symbol, word, line = tesserocr.RIL.SYMBOL, tesserocr.RIL.WORD, tesserocr.RIL.TEXTLINE
    words = []
    band = None
    current: OcrWord | None = None
    glyphs: list[tuple[float, float, float, float]] = []
    # Symbol by symbol: a word's characters keep their boxes (``restore_points`` reads them).
    for item in tesserocr.iterate_level(api.GetIterator(), symbol):
        if item.IsAtBeginningOf(line):
            band = _row_band(item, line)
        if item.IsAtBeginningOf(word):
            if current is not None:
                words.append(replace(current, glyphs=tuple(glyphs)))
            current, glyphs = None, []
            text = " ".join((item.GetUTF8Text(word) or "").split())
            box = item.BoundingBox(word)
            if text and box is not None:
                x0, _top, x1, _bottom = box
                top, bottom = _band(item, line, band, box)
                confidence = max(0.0, item.Confidence(word)) / 100
                known = bool(item.WordIsFromDictionary())
                current = OcrWord(text, x0, top, x1, bottom, confidence, in_dictionary=known)
        glyph = item.BoundingBox(symbol)
        if current is not None and glyph is not None:
            glyphs.append(tuple(float(v) for v in glyph))  # type: ignore[arg-type]
    if current is not None:
        words.append(replace(current, glyphs=tuple(glyphs)))
    api.Clear()
    return words


# --- Pages -------------------------------------------------------------------------------------

# A page whose text layer has fewer readable characters than this is read through OCR.
MIN_TEXT_CHARS = 20


def readable_chars(chars: Iterable[Any]) -> int:
    """How many characters of a text layer stand for real text: not a glyph without a
    Unicode mapping ("(cid:12)"), a private-use code point or the replacement character."""
    count = 0
    for char in chars:
        text = char.text if hasattr(char, "text") else char.get("text", "")
        if not text.strip() or text.startswith("(cid:") or "\ufffd" in text:
            continue
        if all(0xE000 <= ord(c) <= 0xF8FF or not c.isprintable() for c in text):
            continue
        count += 1
    return count


def needs_ocr(layout: Any) -> bool:
    """A page without usable text: its text layer is empty, or holds only a few readable
    characters (a page number stamped on a scan, glyphs without Unicode). Anything with
    ``.chars``: a PageLayout or a pdfplumber page."""
    return readable_chars(layout.chars) < MIN_TEXT_CHARS


# A page whose rendering has less ink than this share of its pixels is blank: nothing on it
# to read, so it is not sent through OCR (which took 0.8 s a page to find nothing on a PDF
# of 500 blank pages). A line of small type on a letter page is well above it.
BLANK_INK_SHARE = 0.0002
# Darker than this (0 black, 255 white) is ink.
INK_LEVEL = 160


def blank_image(image: Any) -> bool:
    """Whether a rendered page (a PIL image) is blank: almost no pixel is ink. One histogram,
    in C: far cheaper than OCR."""
    histogram = image.convert("L").histogram()
    total = sum(histogram)
    return total == 0 or sum(histogram[:INK_LEVEL]) / total < BLANK_INK_SHARE


def _keep(word: OcrWord) -> bool:
    """Drop what OCR makes of specks, shading and leftovers of lines: signs alone read
    unsure, and a few letters stretched over a width that would hold many."""
    if not any(c.isalnum() for c in word.text):
        return word.confidence >= 0.5
    height = max(word.bottom - word.top, 1.0)
    return word.x1 - word.x0 <= 1.2 * height * (len(word.text) + 2)


def glyph_height(ink: Any) -> float | None:
    """The median height in pixels of the picture's letters and digits: its connected
    pieces of ink of a letter's shape (rules erased first)."""
    import numpy as np
    from scipy import ndimage

    labels, count = ndimage.label(ink)
    if count == 0:
        return None
    boxes = ndimage.find_objects(labels)
    heights = np.fromiter((b[0].stop - b[0].start for b in boxes), dtype=np.int32, count=count)
    widths = np.fromiter((b[1].stop - b[1].start for b in boxes), dtype=np.int32, count=count)
    letters = (heights >= 4) & (heights <= 300) & (widths <= 3 * heights)
    return float(np.median(heights[letters])) if letters.any() else None


def _enlargement(ink: Any, pixels: int) -> float:
    """How much to enlarge a picture whose letters are smaller than ``MIN_GLYPH_PIXELS``
    (to ``GLYPH_PIXELS``), within ``OCR_MAX_PIXELS`` and four times."""
    height = glyph_height(ink)
    if height is None or height >= MIN_GLYPH_PIXELS:
        return 1.0
    room = (OCR_MAX_PIXELS / max(pixels, 1)) ** 0.5
    return max(1.0, min(4.0, GLYPH_PIXELS / height, room))


def _scaled(word: OcrWord, factor: float) -> OcrWord:
    if factor == 1:
        return word
    return OcrWord(
        word.text,
        word.x0 * factor,
        word.top * factor,
        word.x1 * factor,
        word.bottom * factor,
        word.confidence,
        tuple(tuple(v * factor for v in g) for g in word.glyphs),  # type: ignore[misc]
        word.in_dictionary,
    )


# A number as OCR reads it: digits, perhaps grouped or split by points and commas, with a
# sign, a bracket or a percent sign around them.
_NUMBER = re.compile(r"^[(\-\u2013\u2014+]?\d[\d,.]*\d[%)]?$")


def _points_seen(word: OcrWord, ink: Any, gray: Any) -> list[tuple[float, float, str]]:
    """The points and commas the picture shows between a number's digits: ``(x0, x1, "."
    or ",")`` in the picture's pixels. A point is a small solid blot on the digits'
    baseline, alone in a gap between them; a comma is one with a tail below the baseline
    (often too faint to be ink, hence read from the grey picture)."""
    import numpy as np
    from scipy import ndimage

    x0, top = max(0, int(word.x0) - 1), max(0, int(word.top))
    x1, bottom = int(word.x1) + 2, int(word.bottom) + 1
    height = bottom - top
    crop = ink[top : bottom + height // 3, x0:x1]
    if crop.size == 0:
        return []
    labels, _count = ndimage.label(crop)
    boxes = [(p[1].start, p[0].start, p[1].stop, p[0].stop) for p in ndimage.find_objects(labels)]
    tallest = max((b[3] - b[1] for b in boxes), default=0)
    digits = [b for b in boxes if b[3] - b[1] >= 0.6 * tallest]
    if tallest < 8 or len(digits) < 2:
        return []
    size = float(np.median([b[3] - b[1] for b in digits]))
    baseline = float(max(b[3] for b in digits))
    paper, darkest = int(gray[top:bottom, x0:x1].max()), int(gray[top:bottom, x0:x1].min())
    found = []
    for index, (bx0, btop, bx1, bbottom) in enumerate(boxes, 1):
        width, tall = bx1 - bx0, bbottom - btop
        middle = (bx0 + bx1) / 2
        if not (2 <= width <= 0.4 * size and 2 <= tall <= 0.5 * size):
            continue
        if not baseline - 0.2 * size <= bbottom <= baseline + 0.3 * size:
            continue
        if btop < baseline - 0.45 * size:
            continue
        if np.count_nonzero(labels[btop:bbottom, bx0:bx1] == index) < 0.5 * width * tall:
            continue
        # Alone in a gap between digits (not the foot of a digit broken in two), with digits
        # on both sides.
        if any(b[0] < bx1 and bx0 < b[2] and b[3] <= btop + 1 for b in boxes):
            continue
        if any(d[0] <= middle < d[2] for d in digits):
            continue
        if not any(d[2] <= middle for d in digits) or not any(d[0] > middle for d in digits):
            continue
        # Past the blot's own soft edge, a comma's tail is still dark.
        start = top + bbottom + 1
        below = gray[start : start + max(2, round(0.25 * size)), x0 + bx0 : x0 + bx1]
        dark = below.size and int(below.min()) < paper - 0.25 * (paper - darkest)
        comma = dark or bbottom > baseline + 0.12 * size
        found.append((x0 + bx0, x0 + bx1, "," if comma else "."))
    return found


def restore_points(word: OcrWord, ink: Any, gray: Any) -> OcrWord:
    """``word`` with the points and commas between its digits as the picture shows them
    (``_points_seen``): one OCR left out is put in, and a comma it read as a point is
    corrected. Any other word stays as it is."""
    text = word.text
    if not _NUMBER.match(text) or len(word.glyphs) != len(text):
        return word
    chars = list(text)
    inserts: list[tuple[int, str]] = []
    for bx0, bx1, mark in _points_seen(word, ink, gray):
        read = [
            i
            for i, (c, g) in enumerate(zip(text, word.glyphs, strict=True))
            if c in ",." and g[0] < bx1 + 1 and bx0 - 1 < g[2]
        ]
        if read:
            # A comma's tail is the surer sign: a comma read as a point is corrected, never
            # the other way round.
            if mark == ",":
                chars[read[0]] = mark
            continue
        at = sum((g[0] + g[2]) / 2 < (bx0 + bx1) / 2 for g in word.glyphs)
        if 0 < at < len(text) and text[at - 1].isdigit() and text[at].isdigit():
            inserts.append((at, mark))
    for at, mark in sorted(set(inserts), reverse=True):
        chars.insert(at, mark)
    fixed = "".join(chars)
    return word if fixed == text else replace(word, text=fixed)


def read_picture(
    gray: Any,
    *,
    number: int,
    dpi: float,
    scale: float,
    language: str = DEFAULT_LANGUAGE,
) -> PageLayout:
    """The layout of a greyscale picture (PIL ``L``) taken at ``dpi``; its coordinates are
    pixels times ``scale`` (72 / dpi for a PDF page: points; 1 for an image file)."""
    import numpy as np
    from PIL import Image

    from hctqa.core.extraction.rules_image import erase_rules, find_rules, reverse_bands

    width, height = gray.width * scale, gray.height * scale
    shrink = 1.0
    if gray.width * gray.height > OCR_MAX_PIXELS:
        shrink = (OCR_MAX_PIXELS / (gray.width * gray.height)) ** 0.5
        size = (max(1, round(gray.width * shrink)), max(1, round(gray.height * shrink)))
        gray = gray.resize(size, Image.Resampling.LANCZOS)
        dpi *= shrink
        scale /= shrink
    pixels = reverse_bands(np.asarray(gray), dpi)
    found = find_rules(pixels, dpi)
    erased = erase_rules(pixels, found.mask)
    # Light shading behind cells becomes paper: Tesseract takes its edges for text.
    clean = erased.copy()
    clean[clean > found.threshold] = 255
    # Small print (a screenshot, a coarse scan) is enlarged for Tesseract; the rules were
    # found at the picture's own size, and the words are measured back to it.
    ink = clean <= found.threshold
    enlarge = _enlargement(ink, gray.width * gray.height)
    picture = Image.fromarray(clean)
    if enlarge > 1:
        size = (round(gray.width * enlarge), round(gray.height * enlarge))
        picture = picture.resize(size, Image.Resampling.LANCZOS)
    words = [
        restore_points(_scaled(w, 1 / enlarge), ink, erased)
        for w in recognise(picture, dpi=dpi * enlarge, language=language)
        if _keep(w)
    ]
    placed = [
        Word(
            w.text,
            w.x0 * scale,
            w.top * scale,
            w.x1 * scale,
            w.bottom * scale,
            size=(w.bottom - w.top) * scale,
            confidence=round(w.confidence, 3),
        )
        for w in words
    ]
    layout = layout_of_words(
        number,
        width,
        height,
        placed,
        (Rule(r.x0 * scale, r.top * scale, r.x1 * scale, r.bottom * scale) for r in found.rules),
        source="ocr",
    )
    # The words the engine's dictionary knows, for the review marks (``review_marks``).
    known = frozenset(p for p, w in zip(placed, words, strict=True) if w.in_dictionary)
    return replace(layout, meta={DICTIONARY_WORDS: known})


def render_gray(page: Any, dpi: float = OCR_DPI) -> tuple[Any, float]:
    """A pdfplumber page as a greyscale picture at ``dpi`` (less for a very large page)."""
    from hctqa.core.extraction.pdf import render_page

    image, used = render_page(page, round(dpi))
    return image.convert("L"), float(used)


def scan_dpi(page: Any) -> float:
    """The resolution to read a scanned page at: its largest picture's, within
    ``OCR_MIN_DPI`` and ``OCR_DPI`` (``OCR_DPI`` for a page without pictures: text drawn
    as shapes)."""
    best, area = float(OCR_DPI), 0.0
    for image in page.images:
        width = float(image.get("width") or 0)
        height = float(image.get("height") or 0)
        pixels = image.get("srcsize") or (0, 0)
        if width > 1 and height > 1 and pixels[0] and width * height > area:
            best, area = pixels[0] * 72 / width, width * height
    return min(float(OCR_DPI), max(float(OCR_MIN_DPI), best))


def layout_from_scan(page: Any, number: int, language: str = DEFAULT_LANGUAGE) -> PageLayout:
    """A PDF page without a text layer, read through OCR; coordinates in points."""
    gray, dpi = render_gray(page, scan_dpi(page))
    layout = read_picture(gray, number=number, dpi=dpi, scale=72 / dpi, language=language)
    # The page's size as the PDF says, not as rounded to whole pixels.
    return replace(
        layout,
        width=float(page.width),
        height=float(page.height),
        meta={**layout.meta, "dpi": dpi, "language": language},
    )


def layout_from_image(
    gray: Any, dpi: float | None, language: str = DEFAULT_LANGUAGE, number: int = 1
) -> PageLayout:
    """An image file (one page), read through OCR; coordinates in the image's pixels."""
    used = dpi or ASSUMED_IMAGE_DPI
    layout = read_picture(gray, number=number, dpi=used, scale=1.0, language=language)
    return replace(layout, meta={**layout.meta, "dpi": used, "language": language})


# --- What the review page shows ----------------------------------------------------------------

# A word the engine was less sure of than this marks its cell.
UNSURE = 0.6
# An unknown word read at least this surely is taken as read right: a name, a code, a term the
# language's dictionary lacks ("Monoprix", "Chlorfenvinphos"); misreads of known words
# ("Treland", "iurnover") come out less sure. Measured on the EU scans:
# benchmarks/ingest_icdar.py --raster 200 --ocr-marks.
SURE = 0.9
# Runs of fewer letters (kg, n.a., Q1) are not looked up.
MIN_LETTERS = 3
_LETTERS = re.compile(r"[^\W\d_]+")


def _letter_runs(text: str) -> list[str]:
    return [run.casefold() for run in _LETTERS.findall(text) if len(run) >= MIN_LETTERS]


def page_vocabulary(layout: PageLayout) -> frozenset[str] | None:
    """The page's own dictionary: the runs of letters of the words the engine's dictionary
    knows, and every run two words of the page share (a name or a term used twice). None
    when the layout does not say which words the engine knows."""
    known = layout.meta.get(DICTIONARY_WORDS)
    if known is None:
        return None
    uses = Counter(run for word in layout.words for run in set(_letter_runs(word.text)))
    shared = {run for run, n in uses.items() if n >= 2}
    return frozenset({run for word in known for run in _letter_runs(word.text)} | shared)


def _glued(run: str, vocabulary: frozenset[str]) -> bool:
    """Two of the page's words read as one ("ourestimates", "salesin"): a split of the run
    into a word of the page's dictionary of four letters or more, and another word of it or
    three letters at most."""
    for cut in range(1, len(run)):
        parts = (run[:cut], run[cut:])
        if all(len(p) <= 3 or p in vocabulary for p in parts) and any(
            len(p) >= 4 and p in vocabulary for p in parts
        ):
            return True
    return False


def word_mark(word: Word, known: frozenset[Word], vocabulary: frozenset[str] | None) -> str:
    """Why a word deserves a second look ("" when it does not): the engine was unsure of it,
    or it has a run of letters that neither the engine's dictionary nor the page's own words
    support, read less than surely or made of two of the page's words run together."""
    confidence = 1.0 if word.confidence is None else word.confidence
    if confidence < UNSURE:
        return FLAG_LOW_CONFIDENCE
    if vocabulary is None or word in known:
        return ""
    unsupported = [run for run in _letter_runs(word.text) if run not in vocabulary]
    if unsupported and (confidence < SURE or any(_glued(r, vocabulary) for r in unsupported)):
        return FLAG_UNKNOWN_WORD
    return ""


def review_marks(table: Table, layout: PageLayout) -> Table:
    """The table with its cells' OCR marks (``word_mark`` of each word in the cell) in place
    of any it had; the other flags stay. A page with a text layer is left as it is."""
    if layout.source != "ocr":
        return table
    known = layout.meta.get(DICTIONARY_WORDS, frozenset())
    vocabulary = page_vocabulary(layout)
    cells = []
    for cell in table.cells:
        flags = set(cell.flags) - {FLAG_LOW_CONFIDENCE, FLAG_UNKNOWN_WORD}
        if cell.text and cell.bbox is not None:
            flags |= {word_mark(w, known, vocabulary) for w in layout.words_in(cell.bbox)} - {""}
        cells.append(replace(cell, flags=tuple(sorted(flags))))
    return table.with_cells(cells)


def ocr_text(layout: PageLayout, box: Box) -> str:
    """The words OCR read inside ``box``, line by line, as the review page shows them."""
    words = sorted(layout.words_in(box), key=lambda w: (w.middle, w.x0))
    lines: list[list[Word]] = []
    for word in words:
        if lines and abs(lines[-1][-1].middle - word.middle) <= 0.5 * max(word.height, 1.0):
            lines[-1].append(word)
        else:
            lines.append([word])
    return "\n".join(" ".join(w.text for w in sorted(line, key=lambda w: w.x0)) for line in lines)


__all__: Sequence[str] = (
    "OCR_DPI",
    "layout_from_image",
    "layout_from_scan",
    "needs_ocr",
    "ocr_text",
    "read_picture",
)
