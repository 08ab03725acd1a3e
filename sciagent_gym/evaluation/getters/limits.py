"""Limits on what a parse of an agent-written file may build, checked before it is built.

A hostile agent writes small files that declare huge contents: a 262 KB TIFF whose pixels
decode to gigabytes, a sparse WAV declaring hours of audio, JSON made of millions of empty
lists. The frozen final state caps each file at 256 MiB on disk; these caps bound the memory
and time a getter spends on one. Every refusal is a GetterError naming the file and the
limit, so the criterion fails cleanly.
"""

from __future__ import annotations

import contextlib
import math
import struct
import warnings
import wave
from collections.abc import Iterator
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import IO, TYPE_CHECKING

import numpy as np

from sciagent_gym.errors import LimitError

from .registry import GetterError

if TYPE_CHECKING:
    from PIL import Image

MiB = 1 << 20
#: Pixels in one image file, all frames and planes together.
MAX_PIXELS = 50_000_000
#: Bytes of one decoded array: an image as read, or a sound's samples as float64.
MAX_DECODED_BYTES = 256 * MiB
#: TIFF pages (IFDs) or animation frames walked.
MAX_FRAMES = 10_000
#: Bytes of one TIFF tag's value, and of all tag values of a file.
MAX_TIFF_TAG_BYTES = 8 * MiB
MAX_TIFF_TAGS_TOTAL = 64 * MiB
#: A text file decoded into one string (a str may take 4 bytes per character).
MAX_TEXT_BYTES = 32 * MiB
#: Lines of a text file split into a list (str.splitlines makes one object per line).
MAX_TEXT_LINES = 2_000_000
#: A JSON document, and the values in it (a parsed value takes 30-70 bytes, its text 2).
MAX_JSON_BYTES = 64 * MiB
MAX_JSON_ITEMS = 4_000_000
#: Rows and cells of one table (a parsed cell takes about 100 bytes).
MAX_TABLE_ROWS = 500_000
MAX_TABLE_CELLS = 2_000_000
#: Members of a zip archive (each one is parsed into an object when it is opened).
MAX_ZIP_MEMBERS = 1_000
#: Header cards of a FITS file.
MAX_FITS_CARDS = 100_000
#: What PIL may open: the formats tasks use. Never EPS (PIL runs Ghostscript on it) or any
#: other plugin PIL would otherwise try on an unknown file.
IMAGE_FORMATS = ("PNG", "JPEG", "TIFF", "GIF", "BMP", "PPM")


def refuse(label: str, what: str, value: int, limit: int) -> LimitError:
    return LimitError(f"{label}: {what} {value} exceeds the evaluator's limit of {limit}")


def check_size(label: str, size: int, limit: int, what: str = "file size in bytes") -> None:
    if size > limit:
        raise refuse(label, what, size, limit)


def file_size(p: Path, label: str) -> int:
    try:
        return p.stat().st_size
    except OSError as exc:
        raise GetterError(f"{label}: cannot read: {exc.strerror or exc}") from None


def check_pixels(label: str, pixels: int, nbytes: int) -> None:
    """Refuse an image declaring more than :data:`MAX_PIXELS` or :data:`MAX_DECODED_BYTES`."""
    if pixels < 0 or nbytes < 0:
        raise GetterError(f"{label}: negative image size")
    check_size(label, pixels, MAX_PIXELS, "declared pixel count")
    check_size(label, nbytes, MAX_DECODED_BYTES, "declared decoded size in bytes")


def check_array(label: str, shape: tuple[int, ...], dtype: np.dtype,
                samples_axis: int | None = None) -> None:
    """Refuse an array of this shape and dtype before allocating it."""
    count = math.prod(int(n) for n in shape)
    samples = int(shape[samples_axis]) if samples_axis is not None and shape else 1
    check_pixels(label, count // max(samples, 1), count * np.dtype(dtype).itemsize)


# -- images (PIL) ------------------------------------------------------------------------
_MODE_BYTES = {"1": 1, "L": 1, "P": 1, "LA": 2, "PA": 2, "I;16": 2, "I;16B": 2, "I;16L": 2,
               "I;16N": 2}


def _pil_pixel_bytes(mode: str) -> int:
    """Bytes per pixel PIL keeps in memory (RGB and most others are padded to 4)."""
    return _MODE_BYTES.get(mode, 4)


@contextlib.contextmanager
def open_image(source: Path | bytes, label: str) -> Iterator[Image.Image]:
    """PIL's ``Image.open`` restricted to :data:`IMAGE_FORMATS`, with the declared size of
    the first frame checked before any pixel is decoded (PIL decodes lazily)."""
    from PIL import Image

    fp: Path | BytesIO = BytesIO(source) if isinstance(source, bytes) else source
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            im = Image.open(fp, formats=IMAGE_FORMATS)
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise LimitError(f"{label}: {exc}") from None
        except Exception as exc:  # PIL raises anything on junk input
            raise GetterError(f"{label}: cannot read image: {type(exc).__name__}: {exc}") \
                from None
    with im:
        w, h = im.size
        check_pixels(label, w * h, w * h * _pil_pixel_bytes(im.mode))
        yield im


def iter_frames(im: Image.Image, label: str) -> Iterator[Image.Image]:
    """The frames of a multi-frame image, refusing more than :data:`MAX_FRAMES` frames or
    more than :data:`MAX_PIXELS` pixels in all (each frame is checked before it decodes)."""
    from PIL import ImageSequence

    pixels = nbytes = 0
    for n, frame in enumerate(ImageSequence.Iterator(im), start=1):
        check_size(label, n, MAX_FRAMES, "frame count")
        w, h = frame.size
        pixels += w * h
        nbytes += w * h * _pil_pixel_bytes(frame.mode)
        check_pixels(label, pixels, nbytes)
        yield frame


# -- TIFF structure -----------------------------------------------------------------------
_TIFF_TYPE_BYTES = {1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8,
                    13: 4, 16: 8, 17: 8, 18: 8}
_TIFF_INT = {3: "H", 4: "I", 16: "Q", 13: "I", 18: "Q"}
_WIDTH, _HEIGHT, _BITS, _COMPRESSION, _SAMPLES, _DEPTH = 256, 257, 258, 259, 277, 32997


@dataclass(frozen=True)
class TiffLayout:
    """What a TIFF's IFD chain declares: pages, pixels and decoded bytes in all, and whether
    any page is compressed (tifffile's pure-Python codecs do not bound their output)."""

    pages: int
    pixels: int
    nbytes: int
    compressed: bool


def tiff_layout(p: Path, label: str) -> TiffLayout:
    """Walk the IFD chain of a TIFF (classic or BigTIFF) and check what it declares against
    the limits: at most :data:`MAX_FRAMES` pages, no IFD loop, tag values within
    :data:`MAX_TIFF_TAG_BYTES` (PIL and tifffile turn them into Python objects), and the
    pages' pixels within :func:`check_pixels`. Reads only the IFDs, never pixel data."""
    try:
        with p.open("rb") as fh:
            return _walk_tiff(fh, label)
    except (OSError, struct.error) as exc:
        raise GetterError(f"{label}: cannot read TIFF: {exc}") from None


def _walk_tiff(fh: IO[bytes], label: str) -> TiffLayout:
    head = fh.read(16)
    order = {b"II": "<", b"MM": ">"}.get(head[:2])
    if order is None or len(head) < 8:
        raise GetterError(f"{label}: cannot read TIFF: not a TIFF file")
    magic = struct.unpack(order + "H", head[2:4])[0]
    if magic == 42:
        offset, count_fmt, entry, word_fmt = struct.unpack(order + "I", head[4:8])[0], "H", 12, "I"
    elif magic == 43 and len(head) == 16:
        offset, count_fmt, entry, word_fmt = struct.unpack(order + "Q", head[8:16])[0], "Q", 20, "Q"
    else:
        raise GetterError(f"{label}: cannot read TIFF: not a TIFF file")
    word = struct.calcsize(word_fmt)
    count_size = struct.calcsize(count_fmt)
    seen: set[int] = set()
    pages = pixels = nbytes = tag_bytes = 0
    compressed = False
    while offset:
        if offset in seen:
            raise GetterError(f"{label}: cannot read TIFF: its pages form a loop")
        seen.add(offset)
        pages += 1
        check_size(label, pages, MAX_FRAMES, "TIFF page count")
        fh.seek(offset)
        raw = fh.read(count_size)
        if len(raw) < count_size:
            raise GetterError(f"{label}: cannot read TIFF: truncated (page {pages})")
        n = struct.unpack(order + count_fmt, raw)[0]
        check_size(label, n, 65535, "TIFF tag count of one page")
        raw = fh.read(n * entry + word)
        if len(raw) < n * entry + word:
            raise GetterError(f"{label}: cannot read TIFF: truncated (page {pages})")
        values = {_WIDTH: 0, _HEIGHT: 0, _BITS: 1, _COMPRESSION: 1, _SAMPLES: 1, _DEPTH: 1}
        for i in range(n):
            tag, typ, count = struct.unpack_from(order + "HH" + word_fmt, raw, i * entry)
            size = _TIFF_TYPE_BYTES.get(typ, 1) * count
            check_size(label, size, MAX_TIFF_TAG_BYTES, f"size of TIFF tag {tag}")
            if size > word:
                tag_bytes += size
            if tag in values and typ in _TIFF_INT and count >= 1:
                fmt = order + _TIFF_INT[typ]
                at = i * entry + 4 + word
                if size <= word:
                    values[tag] = struct.unpack_from(fmt, raw, at)[0]
                else:  # the first of several values, stored elsewhere
                    here = fh.tell()
                    fh.seek(struct.unpack_from(order + word_fmt, raw, at)[0])
                    values[tag] = struct.unpack(fmt, fh.read(struct.calcsize(fmt)))[0]
                    fh.seek(here)
        check_size(label, tag_bytes, MAX_TIFF_TAGS_TOTAL, "size of all TIFF tags")
        page_pixels = values[_WIDTH] * values[_HEIGHT] * max(values[_DEPTH], 1)
        pixels += page_pixels
        nbytes += page_pixels * max(values[_SAMPLES], 1) * max(math.ceil(values[_BITS] / 8), 1)
        check_pixels(label, pixels, nbytes)
        compressed = compressed or values[_COMPRESSION] != 1
        offset = struct.unpack_from(order + word_fmt, raw, n * entry)[0]
    if pages == 0:
        raise GetterError(f"{label}: cannot read TIFF: no pages")
    return TiffLayout(pages, pixels, nbytes, compressed)


# -- sound --------------------------------------------------------------------------------
def check_wav(p: Path, label: str) -> None:
    """Refuse a WAV whose header declares more samples than :data:`MAX_DECODED_BYTES` holds
    as float64 (a sparse file can declare hours of audio in a few bytes)."""
    try:
        with wave.open(str(p), "rb") as w:
            frames, channels = w.getnframes(), w.getnchannels()
    except Exception as exc:  # wave raises several types on junk input
        raise GetterError(f"{label}: cannot read as a WAV file: {type(exc).__name__}: {exc}") \
            from None
    check_size(label, frames * channels * 8, MAX_DECODED_BYTES,
               "declared decoded sound size in bytes")


# -- text formats -------------------------------------------------------------------------
def check_json(data: bytes | str, label: str) -> None:
    """Refuse JSON larger than :data:`MAX_JSON_BYTES` or with more than
    :data:`MAX_JSON_ITEMS` values (counted as commas and opening brackets, an upper bound),
    before parsing: each value becomes a Python object many times the size of its text."""
    check_size(label, len(data), MAX_JSON_BYTES, "JSON size")
    if isinstance(data, str):
        items = data.count(",") + data.count("[") + data.count("{")
    else:
        items = data.count(b",") + data.count(b"[") + data.count(b"{")
    check_size(label, items, MAX_JSON_ITEMS, "number of JSON values")


_LINE_BREAKS = ("\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def check_lines(text: str, label: str) -> None:
    """Refuse text with more than :data:`MAX_TEXT_LINES` lines (every break ``splitlines``
    knows is counted, an upper bound) before it is split into a list."""
    check_size(label, sum(text.count(c) for c in _LINE_BREAKS), MAX_TEXT_LINES,
               "number of lines")


def check_table(label: str, rows: int, cells: int) -> None:
    check_size(label, rows, MAX_TABLE_ROWS, "number of table rows")
    check_size(label, cells, MAX_TABLE_CELLS, "number of table cells")


def check_zip(data: bytes, label: str) -> None:
    """Refuse an archive with more than :data:`MAX_ZIP_MEMBERS` central directory entries
    (counted by signature, an upper bound) before ``zipfile`` builds one object per entry."""
    check_size(label, data.count(b"PK\x01\x02"), MAX_ZIP_MEMBERS, "number of zip members")


def check_fits(data: bytes, label: str) -> None:
    """Refuse a FITS file whose primary header declares more than :data:`MAX_PIXELS` pixels
    or more than :data:`MAX_DECODED_BYTES` as float64 (how it is decoded), before reading."""
    cards: dict[str, str] = {}
    for n, pos in enumerate(range(0, len(data) - 79, 80)):
        check_size(label, n, MAX_FITS_CARDS, "number of FITS header cards")
        card = data[pos:pos + 80].decode("ascii", errors="replace")
        key = card[:8].strip()
        if key == "END":
            break
        if card[8:10] == "= ":
            cards[key] = card[10:].split("/", 1)[0].strip()

    def integer(key: str, default: int | None = None) -> int:
        text = cards.get(key)
        if text is None and default is not None:
            return default
        try:
            value = float(text or "")
        except ValueError:
            raise GetterError(f"{label}: malformed FITS header value {key} = {text!r}") from None
        if not value.is_integer() or value < 0:
            raise GetterError(f"{label}: malformed FITS header value {key} = {text!r}")
        return int(value)

    naxis = integer("NAXIS", 0)
    check_size(label, naxis, 999, "FITS NAXIS")
    pixels = math.prod(integer(f"NAXIS{i}") for i in range(1, naxis + 1)) if naxis else 0
    check_pixels(label, pixels, pixels * 8)
