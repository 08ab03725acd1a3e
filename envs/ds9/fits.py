"""A minimal FITS writer and reader, numpy alone: one primary HDU, 2880-byte blocks,
80-character header cards, BITPIX -32 big-endian floats written (and the common BITPIX read).
Pixel coordinates follow FITS and DS9: the first pixel's centre is (1, 1); ``array[j, i]`` is
image pixel (x = i + 1, y = j + 1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

BLOCK = 2880
CARD = 80


def _card(key: str, value: Any = None, comment: str = "") -> str:
    """One 80-character header card (fixed format for numbers, logicals and strings)."""
    if key in ("END", "COMMENT", "HISTORY", ""):
        return f"{key:<8}{value or ''}"[:CARD].ljust(CARD)
    if isinstance(value, bool):
        text = f"{'T' if value else 'F':>20}"
    elif isinstance(value, (int, np.integer)):
        text = f"{int(value):>20d}"
    elif isinstance(value, (float, np.floating)):
        text = f"{float(value):>20.12G}"
        if "." not in text and "E" not in text:
            text = f"{float(value):>20.1f}"
    else:
        quoted = "'" + str(value).replace("'", "''").ljust(8) + "'"
        text = f"{quoted:<20}"
    card = f"{key:<8}= {text}"
    if comment:
        card += f" / {comment}"
    if len(card) > CARD:
        raise ValueError(f"FITS card {key} is longer than 80 characters")
    return card.ljust(CARD)


def fits_bytes(data: np.ndarray, header: list[tuple] | None = None) -> bytes:
    """A one-HDU FITS file: a 2-D float image (BITPIX -32) and extra ``(key, value[,
    comment])`` cards."""
    data = np.asarray(data, dtype=">f4")
    if data.ndim != 2:
        raise ValueError("only 2-D images")
    ny, nx = data.shape
    cards = [_card("SIMPLE", True, "conforms to FITS standard"),
             _card("BITPIX", -32, "32-bit IEEE floats"), _card("NAXIS", 2),
             _card("NAXIS1", nx), _card("NAXIS2", ny)]
    cards += [_card(*c) for c in (header or [])]
    cards.append(_card("END"))
    head = "".join(cards).encode("ascii")
    head += b" " * (-len(head) % BLOCK)
    body = data.tobytes()
    body += b"\0" * (-len(body) % BLOCK)
    return head + body


def write_fits(path: Path, data: np.ndarray, header: list[tuple] | None = None) -> None:
    Path(path).write_bytes(fits_bytes(data, header))


def _parse_value(raw: str) -> Any:
    raw = raw.strip()
    if raw.startswith("'"):
        end, i = None, 1
        while i < len(raw):
            if raw[i] == "'":
                if i + 1 < len(raw) and raw[i + 1] == "'":
                    i += 2
                    continue
                end = i
                break
            i += 1
        if end is None:
            raise ValueError(f"unterminated string {raw!r}")
        return raw[1:end].replace("''", "'").rstrip()
    value = raw.split("/", 1)[0].strip()
    if value in ("T", "F"):
        return value == "T"
    if value == "":
        return None
    try:
        return int(value)
    except ValueError:
        return float(value.replace("D", "E"))


def read_fits(data: bytes) -> tuple[dict[str, Any], np.ndarray | None]:
    """The primary HDU of a FITS file: (header dict, image array or None). Raises ValueError
    for anything that is not a readable FITS image."""
    if not data.startswith(b"SIMPLE  ="):
        raise ValueError("not a FITS file (no SIMPLE card)")
    header: dict[str, Any] = {}
    pos = 0
    while True:
        if pos + CARD > len(data):
            raise ValueError("truncated FITS header (no END card)")
        card = data[pos:pos + CARD].decode("ascii", errors="replace")
        pos += CARD
        key = card[:8].strip()
        if key == "END":
            break
        if card[8:10] == "= " and key:
            header[key] = _parse_value(card[10:])
    pos += -pos % BLOCK
    naxis = int(header.get("NAXIS", 0))
    if naxis == 0:
        return header, None
    shape = [int(header[f"NAXIS{i}"]) for i in range(naxis, 0, -1)]
    dtypes = {8: ">u1", 16: ">i2", 32: ">i4", 64: ">i8", -32: ">f4", -64: ">f8"}
    bitpix = int(header["BITPIX"])
    if bitpix not in dtypes:
        raise ValueError(f"unsupported BITPIX {bitpix}")
    count = int(np.prod(shape))
    nbytes = count * abs(bitpix) // 8
    if pos + nbytes > len(data):
        raise ValueError("truncated FITS data")
    arr = np.frombuffer(data, dtypes[bitpix], count, pos).reshape(shape).astype(float)
    arr = arr * float(header.get("BSCALE", 1.0)) + float(header.get("BZERO", 0.0))
    while arr.ndim > 2 and arr.shape[0] == 1:
        arr = arr[0]
    return header, arr
