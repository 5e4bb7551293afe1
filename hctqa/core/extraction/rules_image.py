"""Ruling lines found in a picture of a page (a scan, a screenshot), with numpy.

A rule is a long, thin run of dark pixels. The page is made black and white (Otsu's
threshold), and each row is searched for horizontal runs at least ``MIN_RULE_POINTS`` long
(each column for vertical ones), after closing gaps of a pixel or two so that a scanned line
broken by noise stays one line. Runs in neighbouring rows that overlap become one rule, as
thick as the rows it covers; anything thicker than ``MAX_RULE_POINTS`` is a filled area, not
a rule. Letters make no runs that long, so what remains is the table's rules (and
underlines, which the text layer of a PDF reports as rules too).

A second pass finds what a scan loses: **faint** rules (light grey, or thin lines a scan
renders pale), with a lighter threshold than the text's, and **broken** ones (dashed, or worn
into pieces), with gaps of up to ``DASH_GAP_POINTS`` closed. It keeps only thin runs made of
dash-long pieces with paper on both sides (a row through letters meets short strokes, and
has ink above or below), and only rules the first pass did not find.

``reverse_bands`` makes text set light on a dark band (a header in white on colour) dark on
paper, before anything else reads the picture; ``erase_rules`` paints the rules' own pixels
white: OCR reads the text inside ruled cells far better without them (a lone "1" between two
rules is otherwise taken for part of the lines).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hctqa.core.extraction.layout import Rule

# Lengths in points (1/72 inch), turned into pixels with the picture's resolution.
MIN_RULE_POINTS = 16.0
MAX_RULE_POINTS = 3.5
GAP_POINTS = 0.8
# A rule is this solid along its length, and the strip of MARGIN_POINTS on one side of it at
# least is this clear of ink.
SOLID = 0.8
CLEAR = 0.5
MARGIN_POINTS = 0.7
# Faint rules: ink up to this much lighter than the paper (grey levels), at most this light.
FAINT_BELOW_PAPER = 25
FAINT_LEVEL = 235
# Broken rules: gaps up to this long closed; the pieces this solid together, and the strip
# on both sides this clear of ink.
DASH_GAP_POINTS = 3.5
DASH_SOLID = 0.4
DASH_CLEAR = 0.15
# Dark bands: filled areas at least this tall and wide (points), this solid.
BAND_MIN_HEIGHT = 8.0
BAND_MIN_WIDTH = 24.0
BAND_SOLID = 0.6


@dataclass(frozen=True)
class RuleMask:
    """The rules found (in pixels) and the mask of the pixels they are made of."""

    rules: tuple[Rule, ...]
    mask: Any  # numpy bool array, True on rule pixels
    threshold: int  # grey levels up to this one are ink


def otsu_threshold(gray: Any) -> int:
    """The grey level that best splits the picture into ink (this level and darker) and
    paper (Otsu's method)."""
    from PIL import Image

    # Pillow counts grey levels in C; numpy's bincount would first widen every pixel to 64 bits.
    hist = np.asarray(Image.fromarray(gray).histogram(), dtype=np.float64)
    total = hist.sum()
    levels = np.arange(256, dtype=np.float64)
    weight = np.cumsum(hist)
    mean = np.cumsum(hist * levels)
    paper = total - weight
    with np.errstate(divide="ignore", invalid="ignore"):
        between = (mean[-1] * weight - mean * total) ** 2 / (weight * paper)
    between[~np.isfinite(between)] = 0
    return int(np.argmax(between))


def _close_gaps(ink: Any, gap: int) -> Any:
    """Fill runs of at most ``gap`` paper pixels between ink along each row."""
    if gap <= 0:
        return ink
    left = ink.copy()  # ink within ``gap`` pixels on the left (itself included)
    right = ink.copy()
    for shift in range(1, gap + 1):
        left[:, shift:] |= ink[:, :-shift]
        right[:, :-shift] |= ink[:, shift:]
    return ink | (left & right)


def _runs(ink: Any, min_length: int) -> tuple[Any, Any, Any]:
    """Rows, starts and ends (exclusive) of the runs of ink at least ``min_length`` long."""
    height, width = ink.shape
    if width < min_length:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty, empty
    # Only the rows where some ``min_length`` pixels in a row are all ink can hold one: few.
    # ``full[:, i]``: all ink from i on for ``reach`` pixels, the reach doubling each step.
    full = ink.copy()
    reach = 1
    while reach < min_length:
        step = min(reach, min_length - reach)
        full[:, :-step] &= full[:, step:]
        full[:, -step:] = False
        reach += step
    candidates = np.flatnonzero(full.any(axis=1))
    padded = np.zeros((len(candidates), width + 2), dtype=np.int8)
    padded[:, 1:-1] = ink[candidates]
    edges = np.diff(padded, axis=1)
    rows_s, starts = np.nonzero(edges == 1)
    _rows_e, ends = np.nonzero(edges == -1)
    keep = ends - starts >= min_length
    return candidates[rows_s[keep]], starts[keep], ends[keep]


def _is_rule(
    raw: Any,
    r0: int,
    r1: int,
    x0: int,
    x1: int,
    margin: int,
    *,
    broken: bool = False,
    min_length: int = 0,
) -> bool:
    """A run of ink that is a line, not a row of letters: solid along its length (a row
    through a word meets the gaps inside and between letters), and with paper on at least
    one side (a row through a word has letters above and below it). A ``broken`` line
    (dashed, worn) is one pale solid run, or at least five dashes over three times
    ``min_length``; its pieces are at least two margins long (a row through letters meets
    their strokes' ends), and it has paper on both sides, twice as far."""
    rows = raw[r0 : r1 + 1, x0:x1]
    if rows.mean(axis=1).max() < (DASH_SOLID if broken else SOLID):
        return False
    if broken:
        line = rows[int(np.argmax(rows.mean(axis=1)))]
        edges = np.diff(np.concatenate(([0], line.astype(np.int8), [0])))
        pieces = np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)
        solid = len(pieces) == 1 and pieces[0] >= SOLID * len(line)
        # A pale solid line; or a long line of many dashes (the stems of a few letters
        # standing in a column are a handful of pieces over a short length).
        dashed = len(pieces) >= 5 and len(line) >= 3 * min_length
        if not (solid or dashed) or np.median(pieces) < 2 * margin:
            return False
        margin *= 2
    above = raw[max(0, r0 - margin) : r0, x0:x1]
    below = raw[r1 + 1 : r1 + 1 + margin, x0:x1]
    sides = (above.mean() if above.size else 0.0, below.mean() if below.size else 0.0)
    return max(sides) < DASH_CLEAR if broken else min(sides) < CLEAR


def _segments(
    ink: Any, raw: Any, min_length: int, max_thickness: int, margin: int, *, broken: bool = False
) -> tuple[list[tuple[int, ...]], Any]:
    """Horizontal rules of a black-and-white picture (``ink`` with its small gaps closed,
    ``raw`` as it is) as (row0, row1, x0, x1), rows inclusive, and the mask of their pixels."""
    rows, starts, ends = _runs(ink, min_length)
    mask = np.zeros(ink.shape, dtype=bool)
    # Group runs row by row: a run joins an open segment of the previous row it overlaps.
    open_: list[list[int]] = []  # [row0, row1, x0, x1]
    done: list[list[int]] = []
    order = np.lexsort((starts, rows))
    current_row = -1
    for i in order:
        row, x0, x1 = int(rows[i]), int(starts[i]), int(ends[i])
        if row != current_row:
            done += [s for s in open_ if s[1] < row - 1]
            open_ = [s for s in open_ if s[1] >= row - 1]
            current_row = row
        for seg in open_:
            if seg[1] == row - 1 and min(seg[3], x1) - max(seg[2], x0) >= min_length // 2:
                seg[1] = row
                seg[2] = min(seg[2], x0)
                seg[3] = max(seg[3], x1)
                break
        else:
            open_.append([row, row, x0, x1])
        mask[row, x0:x1] = True
    done += open_
    kept = []
    for r0, r1, x0, x1 in done:
        if r1 - r0 + 1 <= max_thickness and _is_rule(
            raw, r0, r1, x0, x1, margin, broken=broken, min_length=min_length
        ):
            kept.append((r0, r1, x0, x1))
        else:
            mask[r0 : r1 + 1, x0:x1] = False
    return kept, mask


def _faint_level(gray: Any, threshold: int) -> int:
    """The grey level up to which a long thin run is a rule even if text would not count as
    ink: ``FAINT_BELOW_PAPER`` under the paper's own level (its most common one), at most
    ``FAINT_LEVEL``."""
    from PIL import Image

    hist = Image.fromarray(gray).histogram()
    paper = max(range(threshold + 1, 256), key=lambda level: hist[level], default=255)
    return max(threshold, min(FAINT_LEVEL, paper - FAINT_BELOW_PAPER))


def _one_direction(
    passes: list[tuple[Any, int, bool]],
    min_length: int,
    max_thickness: int,
    margin: int,
) -> tuple[list[tuple[int, ...]], Any]:
    """Horizontal rules over several passes (ink, gap to close, broken), each adding only
    rules apart from those found before it; and the mask of their pixels."""
    found: list[tuple[int, ...]] = []
    mask = None
    for source, gap, broken in passes:
        segments, pixels = _segments(
            _close_gaps(source, gap), source, min_length, max_thickness, margin, broken=broken
        )
        if mask is None:
            found, mask = segments, pixels
            continue
        for r0, r1, x0, x1 in segments:
            if any(
                r0 <= f1 + 1 and f0 <= r1 + 1 and x0 < fx1 and fx0 < x1
                for f0, f1, fx0, fx1 in found
            ):
                continue
            found.append((r0, r1, x0, x1))
            mask[r0 : r1 + 1, x0:x1] |= source[r0 : r1 + 1, x0:x1]
    return found, mask


def find_rules(gray: Any, dpi: float) -> RuleMask:
    """The horizontal and vertical rules of a greyscale picture (a 2-D uint8 array) taken at
    ``dpi``, in pixels: solid ones, then faint or broken ones."""
    per_point = dpi / 72.0
    min_length = max(8, round(MIN_RULE_POINTS * per_point))
    max_thickness = max(2, round(MAX_RULE_POINTS * per_point))
    gap = max(1, round(GAP_POINTS * per_point))
    dash_gap = max(gap + 1, round(DASH_GAP_POINTS * per_point))
    threshold = min(otsu_threshold(gray), 200)
    ink = gray <= threshold
    light = gray <= _faint_level(gray, threshold)
    margin = max(1, round(MARGIN_POINTS * per_point))
    across, across_mask = _one_direction(
        [(ink, gap, False), (light, dash_gap, True)],
        min_length,
        max_thickness,
        margin,
    )
    standing, standing_light = np.ascontiguousarray(ink.T), np.ascontiguousarray(light.T)
    down, down_mask = _one_direction(
        [(standing, gap, False), (standing_light, dash_gap, True)],
        min_length,
        max_thickness,
        margin,
    )
    rules = [Rule(float(x0), float(r0), float(x1), float(r1 + 1)) for r0, r1, x0, x1 in across]
    rules += [Rule(float(c0), float(y0), float(c1 + 1), float(y1)) for c0, c1, y0, y1 in down]
    return RuleMask(tuple(rules), (across_mask | down_mask.T) & ink, threshold)


def reverse_bands(gray: Any, dpi: float) -> Any:
    """The picture with text set light on dark bands (a table's header in white on colour)
    made dark on paper: in each dark filled area at least ``BAND_MIN_HEIGHT`` by
    ``BAND_MIN_WIDTH`` points, what is much lighter than the band (its text) or much darker
    (a rule through it) becomes ink, the band itself paper. Light shading is left alone: the
    text on it is already darker than the paper."""
    from scipy import ndimage

    per_point = dpi / 72.0
    ink = gray <= min(otsu_threshold(gray), 200)
    size = max(3, round(4 * per_point))  # thicker than a rule, a letter's stroke
    solid = ndimage.binary_opening(ink, structure=np.ones((size, size), dtype=bool))
    if not solid.any():
        return gray
    labels, _count = ndimage.label(solid)
    out = None
    for index, box in enumerate(ndimage.find_objects(labels), 1):
        height, width = box[0].stop - box[0].start, box[1].stop - box[1].start
        if height < BAND_MIN_HEIGHT * per_point or width < BAND_MIN_WIDTH * per_point:
            continue
        region = labels[box] == index
        if region.mean() < BAND_SOLID:
            continue
        patch = gray[box]
        level = float(np.median(patch[region]))
        marks = (patch >= level + 0.5 * (255 - level)) | (patch <= 0.5 * level)
        out = gray.copy() if out is None else out
        out[box] = np.where(marks, 0, 255).astype(gray.dtype)
    return gray if out is None else out


def erase_rules(gray: Any, mask: Any) -> Any:
    """The picture with the rules' pixels (and the one pixel around them) made paper."""
    grown = mask.copy()
    grown[1:, :] |= mask[:-1, :]
    grown[:-1, :] |= mask[1:, :]
    grown[:, 1:] |= mask[:, :-1]
    grown[:, :-1] |= mask[:, 1:]
    out = gray.copy()
    out[grown] = 255
    return out
