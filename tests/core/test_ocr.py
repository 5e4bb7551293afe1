"""Pages without a text layer: pictures checked and opened, ruling lines found in them, and
real OCR (Debian's Tesseract language data) on rendered pages of the ICDAR 2013 EU set."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from hctqa.core.extraction import images, ocr
from hctqa.core.extraction.documents import DocumentError
from hctqa.core.extraction.extract import tables_of
from hctqa.core.extraction.icdar import read_document
from hctqa.core.extraction.layout import Char, PageLayout, layout_from_pdfplumber
from hctqa.core.extraction.rules_image import erase_rules, find_rules
from hctqa.core.extraction.table import FLAG_LOW_CONFIDENCE, FLAG_UNKNOWN_WORD
from tests.conftest import DATA_DIR, REPO

ICDAR = DATA_DIR / "icdar2013-eu"


def png(picture: Image.Image, **options: object) -> bytes:
    out = io.BytesIO()
    picture.save(out, format="PNG", **options)
    return out.getvalue()


def jpeg(picture: Image.Image, **options: object) -> bytes:
    out = io.BytesIO()
    picture.convert("RGB").save(out, format="JPEG", **options)
    return out.getvalue()


def ruled_grid(dpi: int = 200) -> tuple[Image.Image, list[int], list[int]]:
    """A white page with a 3 × 4 ruled grid (rules 2 px thick) and a word in each cell."""
    page = Image.new("L", (1000, 700), 255)
    draw = ImageDraw.Draw(page)
    font = ImageFont.load_default(size=28)
    ys, xs = [100, 250, 400, 550], [100, 400, 700, 900]
    for y in ys:
        draw.rectangle((xs[0], y, xs[-1] + 1, y + 1), fill=0)
    for x in xs:
        draw.rectangle((x, ys[0], x + 1, ys[-1] + 1), fill=0)
    for r in range(3):
        for c in range(3):
            draw.text((xs[c] + 20, ys[r] + 50), f"cell{r}{c}", fill=0, font=font)
    return page, ys, xs


# --- Ruling lines from the picture -------------------------------------------------------------


def test_a_ruled_grid_gives_its_rules_and_the_text_gives_none() -> None:
    page, ys, xs = ruled_grid()
    found = find_rules(np.asarray(page), 200)
    across = sorted((r for r in found.rules if r.horizontal), key=lambda r: r.top)
    down = sorted((r for r in found.rules if not r.horizontal), key=lambda r: r.x0)
    assert [round(r.top) for r in across] == ys
    assert all(r.x0 == xs[0] and r.x1 == xs[-1] + 2 for r in across)
    assert [round(r.x0) for r in down] == xs
    assert all(r.top == ys[0] and r.bottom == ys[-1] + 2 for r in down)


def test_filled_shading_and_text_alone_are_not_rules() -> None:
    page = Image.new("L", (800, 400), 255)
    draw = ImageDraw.Draw(page)
    draw.rectangle((50, 50, 350, 200), fill=90)  # a shaded block, thick
    draw.text((400, 60), "Total population 2019", fill=0, font=ImageFont.load_default(size=40))
    draw.text((400, 160), "llllllll IIIIIIII", fill=0, font=ImageFont.load_default(size=40))
    assert find_rules(np.asarray(page), 200).rules == ()


def test_erasing_the_rules_keeps_the_text() -> None:
    page, ys, xs = ruled_grid()
    pixels = np.asarray(page)
    clean = erase_rules(pixels, find_rules(pixels, 200).mask)
    assert (clean[ys[0] : ys[0] + 2, xs[0] : xs[-1]] == 255).all()
    assert (clean[ys[0] : ys[-1], xs[1] : xs[1] + 2] == 255).all()
    inside = (slice(ys[0] + 20, ys[1] - 20), slice(xs[0] + 10, xs[1] - 10))
    assert (clean[inside] == pixels[inside]).all()
    assert (pixels[inside] < 128).any()  # the word is still there


def test_a_broken_scanned_line_stays_one_rule() -> None:
    page = Image.new("L", (900, 200), 255)
    draw = ImageDraw.Draw(page)
    for x in range(100, 800, 50):  # a line with a one-pixel gap every 50 px
        draw.rectangle((x, 100, x + 48, 102), fill=20)
    rules = find_rules(np.asarray(page), 200).rules
    assert len(rules) == 1
    assert (rules[0].x0, rules[0].x1) == (100, 799)


# --- Pictures: format by content, limits, damage -----------------------------------------------


@pytest.mark.parametrize(
    ("head", "name"),
    [
        (b"GIF89a\x01\x00\x01\x00", "GIF"),
        (b"II*\x00\x08\x00\x00\x00", "TIFF"),
        (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "WebP"),
        (b"BM\x36\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00\x28\x00", "BMP"),
        (b"\x00\x00\x00\x1cftypheic\x00\x00", "HEIF/AVIF"),
    ],
)
def test_another_picture_format_is_named_and_refused(head: bytes, name: str) -> None:
    with pytest.raises(DocumentError) as refused:
        images.image_format(head)
    assert refused.value.code == "image_format"
    assert f"This is a {name} image; only PNG and JPEG" in refused.value.message


def test_png_and_jpeg_are_told_by_content() -> None:
    picture = Image.new("L", (20, 10), 255)
    assert images.image_format(png(picture)) == "PNG"
    assert images.image_format(jpeg(picture)) == "JPEG"
    assert images.image_format(b"%PDF-1.7\n") is None
    assert images.image_format(b"<!doctype html>") is None


def test_an_image_over_the_pixel_limit_is_refused_in_both_of_pillows_zones(tmp_path: Path) -> None:
    path = tmp_path / "big.png"
    path.write_bytes(png(Image.new("L", (1500, 1000), 255)))  # 1.5 million pixels
    # Over the limit but under twice it Pillow only warns: here that is an error too.
    for limit in (1_000_000, 500_000):
        with pytest.raises(DocumentError) as refused:
            images.open_image(path, max_pixels=limit)
        assert refused.value.code == "too_many_pixels"
        assert f"more pixels than the limit of {limit:,}" in refused.value.message
    gray, _dpi = images.open_image(path, max_pixels=2_000_000)
    assert gray.size == (1500, 1000)


@pytest.mark.parametrize("encode", [png, jpeg])
def test_a_truncated_image_is_refused(tmp_path: Path, encode) -> None:  # type: ignore[no-untyped-def]
    noise = Image.fromarray(np.random.default_rng(1).integers(0, 255, (400, 400), dtype=np.uint8))
    data = encode(noise)
    path = tmp_path / "cut"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(DocumentError) as refused:
        images.open_image(path, max_pixels=10_000_000)
    assert refused.value.code == "truncated_image"
    assert "is truncated" in refused.value.message


def test_a_damaged_image_is_refused(tmp_path: Path) -> None:
    data = png(Image.new("L", (100, 100), 255))
    path = tmp_path / "damaged.png"
    path.write_bytes(data[:16] + b"\x00" * 200 + data[216:])
    with pytest.raises(DocumentError) as refused:
        images.open_image(path, max_pixels=10_000_000)
    assert refused.value.code == "corrupt_image"
    assert "damaged" in refused.value.message


def test_a_picture_is_made_upright_and_grey_on_white(tmp_path: Path) -> None:
    clear = Image.new("RGBA", (40, 20), (0, 0, 0, 0))  # a transparent screenshot background
    ImageDraw.Draw(clear).rectangle((0, 0, 9, 19), fill=(0, 0, 0, 255))
    path = tmp_path / "clear.png"
    path.write_bytes(png(clear, dpi=(300, 300)))
    gray, dpi = images.open_image(path, max_pixels=10_000)
    assert gray.mode == "L" and dpi == pytest.approx(300, abs=0.5)
    assert gray.getpixel((30, 10)) == 255 and gray.getpixel((5, 10)) == 0
    exif = Image.Exif()
    exif[0x0112] = 6  # taken sideways: turn 90° clockwise to show
    path = tmp_path / "photo.jpg"
    path.write_bytes(jpeg(Image.new("L", (40, 20), 255), exif=exif))
    gray, dpi = images.open_image(path, max_pixels=10_000)
    assert gray.size == (20, 40) and dpi is None


# --- OCR: languages, usable text ---------------------------------------------------------------


def test_an_ocr_language_that_is_not_installed_says_which_package_to_install() -> None:
    with pytest.raises(DocumentError) as refused:
        ocr.check_language("eng+zzz")
    assert refused.value.code == "ocr_language"
    assert "apt-get install tesseract-ocr-zzz" in refused.value.message
    with pytest.raises(DocumentError) as refused:
        ocr.check_language("eng; rm -rf /")
    assert "is not an OCR language code" in refused.value.message
    assert ocr.check_language("eng").is_dir()


def test_a_page_without_usable_text_needs_ocr() -> None:
    import pdfplumber

    with pdfplumber.open(ICDAR / "eu-001.pdf") as document:
        assert not ocr.needs_ocr(layout_from_pdfplumber(document.pages[0], 1))
    stamped = [Char(t, 0, 0, 5, 5) for t in ("1", "2", *["(cid:7)"] * 50, *["\ue001"] * 30)]
    assert ocr.needs_ocr(PageLayout(1, 600, 800, (), chars=tuple(stamped)))
    assert ocr.needs_ocr(PageLayout(1, 600, 800, ()))


# --- Real OCR on a real page ------------------------------------------------------------------


def _pesticides() -> tuple[object, list[list[str]]]:
    """eu-001's table on page 2 ("Pesticides") and its body rows as the ground truth has them."""
    table = next(t for t in read_document(ICDAR / "eu-001.pdf") if t.regions[0].page == 2)
    grid = table.grid
    rows = [[""] * grid.n_cols for _ in range(grid.n_rows)]
    for cell in grid.cells:
        rows[cell.row][cell.col] = cell.text
    body = [
        r
        for r in rows
        if r[0] and all(r[1:]) and r[0] != "1,2,3,4,5,6- hexachlorocyclohexane (HCH)"
    ]
    return table, body


def _rows(table_json: dict) -> list[list[str]]:
    rows = [[""] * table_json["cols"] for _ in range(table_json["rows"])]
    for cell in table_json["cells"]:
        rows[cell["row"]][cell["col"]] = cell["text"]
    return rows


def _command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - this interpreter, our own module
        [sys.executable, "-m", "hctqa.core.extraction", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )


@pytest.fixture(scope="module")
def page_png(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """eu-001 page 2 rendered at 200 dpi, as a scanner would give it."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(ICDAR / "eu-001.pdf"))
    picture = document[1].render(scale=200 / 72).to_pil()
    document.close()
    path = tmp_path_factory.mktemp("scan") / "eu-001-p2.png"
    picture.save(path, dpi=(200, 200))
    return path


def test_real_ocr_reads_a_rendered_real_table_cell_for_cell(page_png: Path) -> None:
    truth, body = _pesticides()
    scale = 200 / 72
    box = [round(v * scale) for v in truth.regions[0].bbox]  # type: ignore[attr-defined]
    done = _command(str(page_png), "--box", "1:" + ",".join(map(str, box)))
    assert done.returncode == 0, done.stderr
    assert "read through OCR (eng): page 1" in done.stderr
    (table,) = json.loads(done.stdout)["tables"]
    assert table["bbox"] == pytest.approx(box, abs=1)  # pixels of the image
    rows = _rows(table)
    assert len(body) == 21
    for expected in body:
        assert expected in rows, f"{expected} not read: {rows}"


def test_a_scanned_pdf_page_is_read_through_ocr_in_points(page_png: Path, tmp_path: Path) -> None:
    scan = tmp_path / "scan.pdf"
    Image.open(page_png).convert("RGB").save(scan, "PDF", resolution=200)
    truth, body = _pesticides()
    box = truth.regions[0].bbox  # type: ignore[attr-defined]
    done = _command(str(scan), "--box", "1:" + ",".join(f"{v:.1f}" for v in box))
    assert done.returncode == 0, done.stderr
    (table,) = json.loads(done.stdout)["tables"]
    assert table["bbox"] == pytest.approx(list(box), abs=0.5)  # points, as the PDF's
    rows = _rows(table)
    assert sum(expected in rows for expected in body) >= 20


def test_ocr_words_carry_their_confidence_into_the_layout(page_png: Path) -> None:
    gray, dpi = images.open_image(page_png, max_pixels=10_000_000)
    layout = ocr.layout_from_image(gray, dpi)
    assert layout.source == "ocr" and (layout.width, layout.height) == gray.size
    assert all(0 <= w.confidence <= 1 for w in layout.words)  # type: ignore[operator]
    assert sum(w.confidence > 0.9 for w in layout.words) > 0.8 * len(layout.words)  # type: ignore[operator]
    assert sum(1 for r in layout.rules if r.horizontal) >= 40  # both tables' row rules
    found = tables_of(layout, [(300, 250, 1400, 1050)])
    assert found.source == "ocr"
    assert "Alachlor - 1 1" in found.ocr_texts[0]


def test_the_command_refuses_other_pictures_and_damaged_ones(tmp_path: Path) -> None:
    gif = tmp_path / "table.png"  # named .png, a GIF inside
    Image.new("L", (50, 50), 255).save(gif, format="GIF")
    done = _command(str(gif))
    assert done.returncode == 1
    assert "This is a GIF image; only PNG and JPEG images can be read" in done.stderr
    cut = tmp_path / "cut.jpg"
    noise = Image.fromarray(np.random.default_rng(2).integers(0, 255, (300, 300), dtype=np.uint8))
    data = jpeg(noise)
    cut.write_bytes(data[: len(data) // 3])
    done = _command(str(cut))
    assert done.returncode == 1
    assert "is truncated" in done.stderr
    assert done.stdout == ""


def test_a_word_ocr_was_unsure_of_marks_its_cell_for_review(page_png: Path) -> None:
    gray, dpi = images.open_image(page_png, max_pixels=10_000_000)
    layout = ocr.layout_from_image(gray, dpi)
    # As if Tesseract had hesitated over "Aldrin": only its cell is marked.
    unsure = tuple(
        replace(w, confidence=0.3) if w.text == "Aldrin" else replace(w, confidence=0.99)
        for w in layout.words
    )
    (table,) = tables_of(replace(layout, words=unsure), [(250, 250, 1400, 1050)]).tables
    flagged = {c.text for c in table.cells if FLAG_LOW_CONFIDENCE in c.flags}
    assert flagged == {"Aldrin"}
    cell = next(c for c in table.as_json()["cells"] if c["text"] == "Aldrin")
    assert cell["flags"] == [FLAG_LOW_CONFIDENCE]  # in the command's output too


# --- Points and commas between digits ---------------------------------------------------------


def _number_picture(
    marks: dict[int, str], digits: int = 3, broken_foot: int | None = None
) -> tuple[np.ndarray, np.ndarray, ocr.OcrWord]:
    """Digits 20 px tall and 10 wide, 6 px apart on a baseline at y = 30, as ink and grey;
    ``marks`` puts a point or a comma (with a faint tail) in the gap after digit i;
    ``broken_foot`` draws digit i as a body and a detached foot (as a thin stroke binarises).
    The word is read without any mark, each digit a glyph."""
    ink = np.zeros((50, 120), dtype=bool)
    gray = np.full(ink.shape, 255, dtype=np.uint8)
    glyphs = []
    for i in range(digits):
        x = 4 + 16 * i
        if i == broken_foot:
            ink[10:26, x : x + 10] = True
            ink[27:30, x : x + 5] = True
        else:
            ink[10:30, x : x + 10] = True
        glyphs.append((float(x), 10.0, float(x + 10), 30.0))
        if i in marks:
            ink[27:30, x + 12 : x + 15] = True
            if marks[i] == ",":
                gray[31:34, x + 12 : x + 14] = 160  # the tail: too faint to be ink
    gray[ink] = 0
    word = ocr.OcrWord("1" * digits, 4, 6, 4 + 16 * digits - 4, 33, 0.9, tuple(glyphs))
    return ink, gray, word


def test_a_point_ocr_left_out_between_digits_is_put_back() -> None:
    ink, gray, word = _number_picture({1: "."})
    assert ocr.restore_points(word, ink, gray).text == "11.1"
    ink, gray, word = _number_picture({0: "."}, digits=2)
    assert ocr.restore_points(word, ink, gray).text == "1.1"


def test_a_comma_is_told_from_a_point_by_its_tail() -> None:
    ink, gray, word = _number_picture({0: ",", 2: "."}, digits=4)
    assert ocr.restore_points(word, ink, gray).text == "1,11.1"
    # Read as a point, corrected; a comma read as such is left alone.
    ink, gray, word = _number_picture({0: ","}, digits=2)
    read = replace(word, text="1.1", glyphs=(word.glyphs[0], (16, 27, 19, 30), word.glyphs[1]))
    assert ocr.restore_points(read, ink, gray).text == "1,1"
    ink, gray, word = _number_picture({0: "."}, digits=2)
    read = replace(word, text="1,1", glyphs=(word.glyphs[0], (16, 27, 19, 30), word.glyphs[1]))
    assert ocr.restore_points(read, ink, gray).text == "1,1"


def test_the_foot_of_a_broken_digit_and_words_are_no_points() -> None:
    ink, gray, word = _number_picture({}, broken_foot=1)
    assert ocr.restore_points(word, ink, gray).text == "111"
    ink, gray, word = _number_picture({1: "."})
    for text in ("abc", "1a1", "Q12"):
        assert ocr.restore_points(replace(word, text=text), ink, gray).text == text
    # Glyphs that do not match the text's characters one to one: nothing to place a point by.
    assert ocr.restore_points(replace(word, glyphs=word.glyphs[:2]), ink, gray).text == "111"


def test_decimal_points_of_a_real_200_dpi_scan_are_read() -> None:
    """eu-012 page 4 at 200 dpi: Tesseract alone drops about one point in six ("9.8" read
    "98"); with the picture's points put back, nearly every decimal of both tables is right."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(ICDAR / "eu-012.pdf"))
    picture = document[3].render(scale=200 / 72).to_pil().convert("L")
    document.close()
    layout = ocr.layout_from_image(picture, 200)
    decimals = right = 0
    for truth in read_document(ICDAR / "eu-012.pdf"):
        if truth.regions[0].page != 4:
            continue
        box = [v * 200 / 72 for v in truth.regions[0].bbox]
        (table,) = tables_of(layout, [box]).tables
        read = [c.text for c in table.cells]
        wanted = [c.text for c in truth.grid.cells if re.fullmatch(r"\d+\.\d", c.text)]
        decimals += len(wanted)
        right += sum(text in read for text in wanted)
    assert decimals == 68
    assert right >= 62  # 57 without the points put back


# --- Review marks ------------------------------------------------------------------------------


def _marked_table(known: set[str] | None) -> dict[str, tuple[str, ...]]:
    """A table read through OCR: each line's label with the confidence the engine gave it;
    ``known``: the labels its dictionary knows (None: the engine said nothing of that).
    Each label's cell flags."""
    from hctqa.core.extraction.extract import extract_box
    from tests.core.test_extraction_rules import box_of, page, words

    labels = [
        ("Concentration", 0.95),  # in the dictionary
        ("oncentration", 0.88),  # "C oncentration": the engine split the word
        ("Estimates", 0.96),  # in the dictionary
        ("Ourestimates", 0.93),  # two words read as one, and sure of it
        ("Monoprix", 0.95),  # a name, read cleanly: no dictionary has it
        ("Eroski", 0.8),  # a name the page uses twice
        ("Eroski,", 0.82),
        ("1S", 0.35),  # the engine was unsure
    ]
    lines = [words(100, (10, "Item"), (100, "2019"), (160, "2020"), confidence=0.96)]
    for k, (label, confidence) in enumerate(labels):
        lines.append(
            [
                *words(114 + 14 * k, (10, label), confidence=confidence),
                *words(114 + 14 * k, (100, f"{10 + k}"), (160, f"{20 + k}"), confidence=0.96),
            ]
        )
    layout = page(*lines, source="ocr")
    if known is not None:
        dictionary = frozenset(w for w in layout.words if w.text in known)
        layout = replace(layout, meta={ocr.DICTIONARY_WORDS: dictionary})
    table = extract_box(layout, box_of(layout))
    return {c.text: c.flags for c in table.cells if c.text in dict(labels) or c.text == "Item"}


def test_ocr_marks_low_confidence_and_words_no_dictionary_supports() -> None:
    marks = _marked_table({"Item", "Concentration", "Estimates"})
    assert marks == {
        "Item": (),
        "Concentration": (),
        "Estimates": (),
        "oncentration": (FLAG_UNKNOWN_WORD,),
        "Ourestimates": (FLAG_UNKNOWN_WORD,),
        "Monoprix": (),  # read surely: a name, not a misread
        "Eroski": (),  # the page's own words support it
        "Eroski,": (),
        "1S": (FLAG_LOW_CONFIDENCE,),
    }


def test_without_the_engines_dictionary_only_low_confidence_marks() -> None:
    marks = _marked_table(None)
    assert {text for text, flags in marks.items() if flags} == {"1S"}


def test_real_ocr_says_which_words_its_dictionary_knows(page_png: Path) -> None:
    gray, dpi = images.open_image(page_png, max_pixels=10_000_000)
    layout = ocr.layout_from_image(gray, dpi)
    known = layout.meta[ocr.DICTIONARY_WORDS]
    assert known and known < set(layout.words)
    assert {"Pesticides", "compounds", "water"} <= {w.text for w in known}
    assert not {"kg/year", "Chlorpyrifos"} & {w.text for w in known}
