"""Gwyddion's native ``.gwy`` files: a bounded reader for agent-written files and a writer.

The format (Gwyddion user guide, "Gwyddion native data file format"): the magic ``GWYP``, then
one serialised object: its type name (NUL-terminated), a little-endian uint32 byte size, then
its components. A component is a name (NUL-terminated), a one-character type and the value:
``b`` bool and ``c`` char (1 byte), ``i`` int32, ``q`` int64, ``d`` double, ``s`` a
NUL-terminated UTF-8 string, ``o`` a nested object; the upper-case letters are arrays of those
(uint32 count, then the items). A file is a ``GwyContainer`` whose keys are paths:
``/0/data`` (a ``GwyDataField``), ``/0/data/title``, ``/0/data/log`` (Gwyddion's processing
log, a ``GwyStringList``), ``/0/mask``, ``/0/base/palette`` and so on.

The reader walks the bytes by offset (no copying of tails), caps the file size, the nesting
depth and the number of components, and raises :class:`GwyFormatError` for anything that is not
a well-formed file: an agent may hand it any bytes. The PyPI package ``gwyfile`` reads the same
format but slices the remaining buffer once per component (quadratic on a file of many small
components) and recurses without a depth limit, so the evaluator does not use it.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

MAX_GWY_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 24
MAX_COMPONENTS = 200_000
#: Pixels of one data field (a 4096 x 4096 scan is 16.7 M).
MAX_FIELD_PIXELS = 20_000_000

_SCALAR = {"b": ("<B", 1), "c": ("<B", 1), "i": ("<i", 4), "q": ("<q", 8), "d": ("<d", 8)}
_ARRAY = {"C": ("u1", 1), "I": ("<i4", 4), "Q": ("<i8", 8), "D": ("<f8", 8)}


class GwyFormatError(ValueError):
    """The bytes are not a well-formed Gwyddion native file (or exceed a limit)."""


@dataclass
class GwyObject:
    """A serialised Gwyddion object: its type name and components by name."""

    type: str
    items: dict[str, Any] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.items.get(key, default)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.buf = memoryview(data)
        self.components = 0

    def cstring(self, pos: int, end: int) -> tuple[str, int]:
        stop = _find_nul(self.buf, pos, end)
        if stop < 0:
            raise GwyFormatError(f"unterminated string at byte {pos}")
        raw = bytes(self.buf[pos:pos + stop])
        try:
            return raw.decode("utf-8"), pos + stop + 1
        except UnicodeDecodeError:
            return raw.decode("latin-1"), pos + stop + 1

    def obj(self, pos: int, end: int, depth: int) -> tuple[GwyObject, int]:
        if depth > MAX_DEPTH:
            raise GwyFormatError(f"objects nested deeper than {MAX_DEPTH}")
        name, pos = self.cstring(pos, end)
        if pos + 4 > end:
            raise GwyFormatError(f"object {name!r}: truncated size")
        (size,) = struct.unpack_from("<I", self.buf, pos)
        pos += 4
        stop = pos + size
        if stop > end:
            raise GwyFormatError(f"object {name!r}: size {size} runs past its parent")
        out = GwyObject(name)
        while pos < stop:
            self.components += 1
            if self.components > MAX_COMPONENTS:
                raise GwyFormatError(f"more than {MAX_COMPONENTS} components")
            key, pos = self.cstring(pos, stop)
            if pos >= stop:
                raise GwyFormatError(f"component {key!r}: no type")
            kind = chr(self.buf[pos])
            pos += 1
            out.items[key], pos = self.value(kind, key, pos, stop, depth)
        return out, stop

    def value(self, kind: str, key: str, pos: int, end: int, depth: int) -> tuple[Any, int]:
        if kind in _SCALAR:
            fmt, size = _SCALAR[kind]
            if pos + size > end:
                raise GwyFormatError(f"component {key!r}: truncated")
            (value,) = struct.unpack_from(fmt, self.buf, pos)
            return (bool(value) if kind == "b" else value), pos + size
        if kind == "s":
            return self.cstring(pos, end)
        if kind == "o":
            return self.obj(pos, end, depth + 1)
        if kind in _ARRAY or kind in ("S", "O"):
            if pos + 4 > end:
                raise GwyFormatError(f"component {key!r}: truncated array size")
            (count,) = struct.unpack_from("<I", self.buf, pos)
            pos += 4
            if kind in _ARRAY:
                dtype, size = _ARRAY[kind]
                if count > MAX_FIELD_PIXELS or pos + count * size > end:
                    raise GwyFormatError(f"component {key!r}: array of {count} items does not "
                                         "fit")
                arr = np.frombuffer(self.buf, dtype, count, pos).copy()
                return arr, pos + count * size
            if count > MAX_COMPONENTS:
                raise GwyFormatError(f"component {key!r}: array of {count} items")
            items = []
            for _ in range(count):
                if kind == "S":
                    item, pos = self.cstring(pos, end)
                else:
                    self.components += 1
                    if self.components > MAX_COMPONENTS:
                        raise GwyFormatError(f"more than {MAX_COMPONENTS} components")
                    item, pos = self.obj(pos, end, depth + 1)
                items.append(item)
            return items, pos
        raise GwyFormatError(f"component {key!r}: unknown type {kind!r}")


def _find_nul(buf: memoryview, pos: int, end: int) -> int:
    """Offset of the first NUL in buf[pos:end] from pos, or -1 (chunked, no full copy)."""
    chunk = 65536
    start = pos
    while pos < end:
        found = bytes(buf[pos:min(pos + chunk, end)]).find(b"\0")
        if found >= 0:
            return pos - start + found
        pos += chunk
    return -1


def parse_gwy(data: bytes) -> GwyObject:
    """The top-level object of a ``.gwy`` file (a GwyContainer); GwyFormatError otherwise."""
    if len(data) > MAX_GWY_BYTES:
        raise GwyFormatError(f"file of {len(data)} bytes exceeds the limit of {MAX_GWY_BYTES}")
    if data[:4] != b"GWYP":
        if data[:4] == b"GWYO":
            raise GwyFormatError("an old Gwyddion 1.x file (GWYO); save it with Gwyddion 2")
        raise GwyFormatError("not a Gwyddion native file (no GWYP magic)")
    reader = _Reader(data)
    top, end = reader.obj(4, len(data), 0)
    if top.type != "GwyContainer":
        raise GwyFormatError(f"the top-level object is a {top.type}, not a GwyContainer")
    return top


@dataclass
class Channel:
    """One image channel of a container: ``/N/data`` and what belongs to it."""

    id: int
    title: str
    data: np.ndarray  # (yres, xres), values in ``unit_z``
    xreal: float
    yreal: float
    xoff: float
    yoff: float
    unit_xy: str
    unit_z: str
    log: list[str]
    has_mask: bool
    palette: str


def _unit(obj: Any) -> str:
    return obj.get("unitstr", "") if isinstance(obj, GwyObject) else ""


def datafield_array(obj: Any, where: str) -> tuple[np.ndarray, dict[str, Any]]:
    if not isinstance(obj, GwyObject) or obj.type != "GwyDataField":
        raise GwyFormatError(f"{where} is not a GwyDataField")
    xres, yres = obj.get("xres"), obj.get("yres")
    data = obj.get("data")
    if not (isinstance(xres, int) and isinstance(yres, int) and 0 < xres and 0 < yres):
        raise GwyFormatError(f"{where}: bad resolution {xres} x {yres}")
    if not isinstance(data, np.ndarray) or data.dtype != np.float64 or data.size != xres * yres:
        raise GwyFormatError(f"{where}: data does not hold {xres} x {yres} doubles")
    meta = {k: obj.get(k, 0.0) for k in ("xreal", "yreal", "xoff", "yoff")}
    for key, value in meta.items():
        if not isinstance(value, float) or not np.isfinite(value):
            raise GwyFormatError(f"{where}: bad {key} {value!r}")
    meta["unit_xy"], meta["unit_z"] = _unit(obj.get("si_unit_xy")), _unit(obj.get("si_unit_z"))
    return data.reshape(yres, xres), meta


_DATA_KEY = re.compile(r"/(\d+)/data")


def channels(top: GwyObject) -> list[Channel]:
    """Every image channel in the container, by channel number."""
    out = []
    for key in sorted((k for k in top.items if _DATA_KEY.fullmatch(k)),
                      key=lambda k: int(k.split("/")[1])):
        n = int(key.split("/")[1])
        data, meta = datafield_array(top.items[key], key)
        log = top.get(f"/{n}/data/log")
        strings = log.get("strings", []) if isinstance(log, GwyObject) else []
        title = top.get(f"/{n}/data/title", "")
        palette = top.get(f"/{n}/base/palette", "")
        out.append(Channel(n, title if isinstance(title, str) else "", data,
                           meta["xreal"], meta["yreal"], meta["xoff"], meta["yoff"],
                           meta["unit_xy"], meta["unit_z"],
                           [s for s in strings if isinstance(s, str)],
                           f"/{n}/mask" in top.items,
                           palette if isinstance(palette, str) else ""))
    return out


def read_channels(path: str | Path) -> list[Channel]:
    """The channels of a ``.gwy`` file on disk (size checked before reading)."""
    p = Path(path)
    size = p.stat().st_size
    if size > MAX_GWY_BYTES:
        raise GwyFormatError(f"file of {size} bytes exceeds the limit of {MAX_GWY_BYTES}")
    return channels(parse_gwy(p.read_bytes()))


# -- writing -------------------------------------------------------------------------------


def _component(name: str, value: Any) -> bytes:
    key = name.encode() + b"\0"
    if isinstance(value, bool):
        return key + b"b" + struct.pack("<B", value)
    if isinstance(value, int):
        return key + b"i" + struct.pack("<i", value)
    if isinstance(value, float):
        return key + b"d" + struct.pack("<d", value)
    if isinstance(value, str):
        return key + b"s" + value.encode() + b"\0"
    if isinstance(value, GwyObject):
        return key + b"o" + _object(value)
    if isinstance(value, np.ndarray):
        arr = np.ascontiguousarray(value.ravel(), "<f8")
        return key + b"D" + struct.pack("<I", arr.size) + arr.tobytes()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return key + b"S" + struct.pack("<I", len(value)) + b"".join(
            v.encode() + b"\0" for v in value)
    raise TypeError(f"cannot serialise {name}: {type(value).__name__}")


def _object(obj: GwyObject) -> bytes:
    body = b"".join(_component(k, v) for k, v in obj.items.items())
    return obj.type.encode() + b"\0" + struct.pack("<I", len(body)) + body


def si_unit(unit: str) -> GwyObject:
    return GwyObject("GwySIUnit", {"unitstr": unit})


def datafield(z: np.ndarray, pixel: float, unit_z: str = "m") -> GwyObject:
    """A GwyDataField of ``z`` (rows top to bottom) with square pixels of ``pixel`` metres."""
    yres, xres = z.shape
    return GwyObject("GwyDataField", {
        "xres": int(xres), "yres": int(yres), "xreal": float(xres * pixel),
        "yreal": float(yres * pixel), "xoff": 0.0, "yoff": 0.0,
        "si_unit_xy": si_unit("m"), "si_unit_z": si_unit(unit_z),
        "data": np.asarray(z, float)})


def write_gwy(path: str | Path, fields: list[tuple[str, np.ndarray]], pixel: float,
              palette: str = "") -> None:
    """Write channels (title, heights in metres) as a ``.gwy`` file Gwyddion opens."""
    items: dict[str, Any] = {}
    for n, (title, z) in enumerate(fields):
        items[f"/{n}/data"] = datafield(z, pixel)
        items[f"/{n}/data/title"] = title
        if palette:
            items[f"/{n}/base/palette"] = palette
    Path(path).write_bytes(b"GWYP" + _object(GwyObject("GwyContainer", items)))
