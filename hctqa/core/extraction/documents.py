"""What an uploaded file is, judged by its content, and whether a PDF can be read at all.

Each problem has its own message, written for the person who uploaded the file.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path

# The OCR language a document is read in unless its collection says otherwise (Tesseract's
# code); here, not in ocr, so the command reads it without loading the OCR path.
DEFAULT_LANGUAGE = "eng"

KIND_PDF = "pdf"
KIND_HTML = "html"
KIND_IMAGE = "image"

_HTML_START = re.compile(
    rb"\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body|meta|title|table|div|p|!--)\b",
    re.IGNORECASE | re.DOTALL,
)


class DocumentError(ValueError):
    """A file that cannot be ingested. ``code`` names the case for the API and tests."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def sniff(head: bytes) -> str:
    """``"pdf"``, ``"html"`` or ``"image"`` (PNG, JPEG) from the file's first bytes (its name
    is not trusted); a picture of another format is refused, naming it."""
    from hctqa.core.extraction.images import image_format

    if image_format(head):
        return KIND_IMAGE
    if b"%PDF-" in head[:1024]:
        return KIND_PDF
    text = head
    if text[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        text = text.decode("utf-16", errors="ignore").encode("utf-8")
    text = text.removeprefix(codecs.BOM_UTF8)
    if _HTML_START.match(text[:4096]):
        return KIND_HTML
    raise DocumentError(
        "not_supported",
        "This file is neither a PDF, a web page (HTML) nor a PNG or JPEG image, judging by its "
        "content; only those can be ingested.",
    )


def check_pdf_bytes_end(tail: bytes) -> None:
    """A PDF ends with ``%%EOF``; one cut short while copying or downloading does not."""
    if b"%%EOF" not in tail[-2048:]:
        raise DocumentError(
            "truncated",
            "This PDF is truncated: it ends before the end of the file (no %%EOF marker), "
            "as when a download or copy was cut short. Download it again and upload the "
            "complete file.",
        )


def check_pdf_file_end(path: Path) -> None:
    """``check_pdf_bytes_end`` on the last 2 KB of the file at ``path``."""
    with open(path, "rb") as handle:
        handle.seek(0, 2)
        handle.seek(max(0, handle.tell() - 2048))
        check_pdf_bytes_end(handle.read())


def pdf_page_count(path: Path) -> int:
    """The number of pages, or ``DocumentError`` for an encrypted or unreadable PDF.

    A PDF with only an owner password (printing or copying restricted) opens without one and
    is read as usual; one that needs a password to open is refused.
    """
    import pypdfium2 as pdfium

    check_pdf_file_end(path)
    try:
        document = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise DocumentError(
                "encrypted",
                "This PDF is encrypted: it needs a password to open. Save an unprotected copy "
                "(or ask its publisher for one) and upload that.",
            ) from None
        raise DocumentError(
            "corrupt",
            "This PDF is damaged and cannot be read (the PDF reader says: "
            f"{str(exc).removeprefix('Failed to load document ')}). Try downloading it again.",
        ) from None
    try:
        pages = len(document)
    finally:
        document.close()
    if pages < 1:
        raise DocumentError("corrupt", "This PDF has no pages.")
    return pages
