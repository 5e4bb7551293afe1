"""Uploaded pictures (PNG, JPEG): recognised by their content, opened under a pixel limit.

``image_format`` tells a PNG or JPEG from its first bytes, and names the other picture formats
it sees so that the person uploading one is told what it is. ``open_image`` decodes the whole
picture, refusing (each with its own ``DocumentError``):

- more pixels than the limit: Pillow's decompression-bomb guard, with its limit set here for
  each call and its warning made an error (Pillow only warns between the limit and twice it);
- a truncated file (Pillow would otherwise fill the missing part with grey when told to);
- a damaged file, or content that is not the PNG or JPEG it starts as.

The picture is turned upright by its EXIF orientation (a photo from a phone), and a
transparent background becomes white.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from hctqa.core.extraction.documents import DocumentError

# Pillow's decompression-bomb limit when no other is given (INGEST_MAX_IMAGE_PIXELS in the app):
# an A4 page scanned at 600 dpi has 35 million.
DEFAULT_MAX_PIXELS = 40_000_000

PNG = "PNG"
JPEG = "JPEG"
_SUPPORTED = ((b"\x89PNG\r\n\x1a\n", PNG), (b"\xff\xd8\xff", JPEG))
# Other pictures, named in the refusal.
_OTHERS = (
    (b"GIF87a", "GIF"),
    (b"GIF89a", "GIF"),
    (b"II*\x00", "TIFF"),
    (b"MM\x00*", "TIFF"),
    (b"\x00\x00\x00\x0cjP  \r\n\x87\n", "JPEG 2000"),
    (b"\xff\x4f\xff\x51", "JPEG 2000"),
    (b"\x00\x00\x01\x00", "Windows icon"),
    (b"8BPS", "Photoshop"),
    (b"\x76\x2f\x31\x01", "OpenEXR"),
    (b"\xff\x0a", "JPEG XL"),
    (b"\x00\x00\x00\x0cJXL \r\n\x87\n", "JPEG XL"),
)


def image_format(head: bytes) -> str | None:
    """``"PNG"`` or ``"JPEG"`` from a file's first bytes, ``None`` if it is no picture;
    ``DocumentError`` (``image_format``) for a picture of another format."""
    for magic, name in _SUPPORTED:
        if head.startswith(magic):
            return name
    other = next((name for magic, name in _OTHERS if head.startswith(magic)), None)
    if other is None and head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        other = "WebP"
    if (
        other is None
        and head[4:8] == b"ftyp"
        and head[8:12] in (b"heic", b"heix", b"avif", b"mif1")
    ):
        other = "HEIF/AVIF"
    if (
        other is None
        and head[:2] == b"BM"
        and head[14:15] in (b"\x0c", b"(", b"4", b"8", b"l", b"|")
    ):
        other = "BMP"
    if other is not None:
        raise DocumentError(
            "image_format",
            f"This is a {other} image; only PNG and JPEG images can be read (besides PDFs and "
            "web pages). Save it as PNG and upload that.",
        )
    return None


def _too_many_pixels(max_pixels: int) -> DocumentError:
    return DocumentError(
        "too_many_pixels",
        f"This image has more pixels than the limit of {max_pixels:,} "
        "(INGEST_MAX_IMAGE_PIXELS). Scale it down (300 dpi is plenty for a page) and upload "
        "it again.",
    )


def open_image(path: Path | str, *, max_pixels: int) -> tuple[Any, float | None]:
    """The picture at ``path``, decoded whole, upright, as greyscale (``L``) on white, and
    the resolution it declares (None when it declares none worth believing)."""
    from PIL import Image, ImageFile

    with open(path, "rb") as handle:
        kind = image_format(handle.read(32))
    if kind is None:
        raise DocumentError("not_supported", "This file is not a PNG or JPEG image.")
    # Set for each call (and put back after): the worker serves requests with different
    # limits, and the process may open other pictures under limits of their own.
    saved = Image.MAX_IMAGE_PIXELS, ImageFile.LOAD_TRUNCATED_IMAGES
    Image.MAX_IMAGE_PIXELS = max_pixels
    ImageFile.LOAD_TRUNCATED_IMAGES = False
    try:
        return _decode(path, kind, max_pixels)
    finally:
        Image.MAX_IMAGE_PIXELS, ImageFile.LOAD_TRUNCATED_IMAGES = saved


def _decode(path: Path | str, kind: str, max_pixels: int) -> tuple[Any, float | None]:
    from PIL import Image, ImageOps, UnidentifiedImageError

    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            with Image.open(path, formats=[kind]) as picture:
                picture.load()
                dpi = _plausible_dpi(picture.info.get("dpi"))
                return _greyscale(ImageOps.exif_transpose(picture)), dpi
        except (Image.DecompressionBombWarning, Image.DecompressionBombError):
            raise _too_many_pixels(max_pixels) from None
        except UnidentifiedImageError:
            raise _damaged(kind, "not a picture after its first bytes") from None
        except (OSError, SyntaxError, ValueError) as exc:
            if "truncated" in str(exc).lower() or "premature end" in str(exc).lower():
                raise DocumentError(
                    "truncated_image",
                    f"This {kind} image is truncated: the file ends before the picture does, "
                    "as when a download or copy was cut short. Upload the complete file.",
                ) from None
            raise _damaged(kind, str(exc)) from None


def _damaged(kind: str, why: str) -> DocumentError:
    return DocumentError(
        "corrupt_image",
        f"This {kind} image is damaged and cannot be read ({why}). Save it again from the "
        "program that made it and upload that.",
    )


def _greyscale(picture: Any) -> Any:
    from PIL import Image

    if picture.mode in ("RGBA", "LA", "PA") or (
        picture.mode == "P" and "transparency" in picture.info
    ):
        rgba = picture.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        picture = Image.alpha_composite(white, rgba)
    if picture.mode in ("I;16", "I;16B", "I;16L", "I"):
        picture = picture.point(lambda v: v / 256)  # 16-bit grey to 8-bit
    return picture.convert("L")


def _plausible_dpi(dpi: Any) -> float | None:
    """The resolution the picture declares, when it is one a scan or screen would have; 72,
    what cameras and programs write when they know none, counts as none."""
    try:
        value = float(dpi[0])
    except (TypeError, ValueError, IndexError):
        return None
    return value if 50 <= value <= 1200 and round(value) != 72 else None
