"""A parser for DS9 region files (format "ds9", version 4.x), in pure Python.

DS9 writes (``regions save``, ``xpaget ds9 regions -format ds9``)::

    # Region file format: DS9 version 4.1
    global color=green dashlist=8 3 width=1 font="helvetica 10 normal roman" select=1 ...
    fk5
    circle(150.0899995,2.2050000,3.000") # color=red text={M1}
    image; box(50,50,10,20,30)

Lines hold comments (``#``), a ``global`` line, coordinate-system lines (``image``,
``physical``, ``fk5``, ``icrs``, ``galactic``, ...; a system also prefixes a shape as
``fk5;circle(...)``) and shapes ``[+-]name(arg,arg,...)`` (or with spaces instead of the
parentheses and commas) with properties after ``#``. Several items may share a line separated
by ``;``. Sky coordinates are degrees or sexagesimal (RA in hours); sizes carry a unit (``"``
arcsec, ``'`` arcmin, ``d`` degrees, ``r`` radians, ``p``/``i`` pixels) or, without one, are
pixels in image/physical systems and degrees in sky systems.

Anything else raises :class:`RegionError` (a ValueError) naming the line, so a getter can turn a
malformed file into a failed criterion.
"""

from __future__ import annotations

import math
import re
from typing import Any

PIXEL_SYSTEMS = {"image", "physical", "detector", "amplifier", "linear"}
SKY_SYSTEMS = {"fk5", "fk4", "icrs", "j2000", "b1950", "galactic", "ecliptic", "wcs"}
SKY_SYSTEMS |= {f"wcs{c}" for c in "abcdefghijklmnopqrstuvwxyz"}
# shapes and how many of their leading arguments are coordinate pairs (the rest are sizes or
# angles); None: every argument is a coordinate pair (polygon, line-like lists)
SHAPES = {"circle": 1, "ellipse": 1, "box": 1, "annulus": 1, "point": 1, "text": 1,
          "vector": 1, "projection": 2, "segment": None, "line": 2, "polygon": None,
          "panda": 1, "epanda": 1, "bpanda": 1, "ruler": 2, "compass": 1, "composite": 1}
_SHAPE = re.compile(r"^([+-]?)\s*([a-z]+)\s*(?:\((.*)\)|\s+(.*))?$", re.S)
_NUM = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")


class RegionError(ValueError):
    """A region file DS9 itself would not read."""


def _split_items(line: str) -> tuple[list[str], str]:
    """The ';'-separated items of a line and its '#' comment (outside parentheses)."""
    items, buf, depth = [], [], 0
    comment = ""
    for i, ch in enumerate(line):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "#" and depth <= 0:
            comment = line[i + 1:]
            break
        elif ch == ";" and depth <= 0:
            items.append("".join(buf).strip())
            buf = []
            continue
        buf.append(ch)
    items.append("".join(buf).strip())
    return [it for it in items if it], comment.strip()


def _sexagesimal(text: str, hours: bool) -> float:
    parts = text.split(":")
    if len(parts) != 3:
        raise ValueError(text)
    sign = -1.0 if parts[0].strip().startswith("-") else 1.0
    d, m, s = abs(float(parts[0])), float(parts[1]), float(parts[2])
    if not (0 <= m < 60 and 0 <= s < 60):
        raise ValueError(text)
    value = sign * (d + m / 60 + s / 3600)
    return value * 15.0 if hours else value


def _coordinate(text: str, axis: int, system: str) -> float:
    """One coordinate: pixels, or degrees for a sky system (RA hours when sexagesimal)."""
    t = text.strip()
    if ":" in t:
        if system not in SKY_SYSTEMS:
            raise ValueError(t)
        hours = axis == 0 and system not in ("galactic", "ecliptic")
        return _sexagesimal(t, hours)
    if t.endswith("d") and system in SKY_SYSTEMS:
        t = t[:-1]
    if not _NUM.match(t):
        raise ValueError(t)
    return float(t)


def _size(text: str, system: str) -> tuple[float, str]:
    """A length: (value, unit) with unit "pixel", "arcsec" or "deg"."""
    t = text.strip()
    units = {'"': ("arcsec", 1.0), "'": ("arcsec", 60.0), "d": ("deg", 1.0),
             "r": ("deg", 180.0 / math.pi), "p": ("pixel", 1.0), "i": ("pixel", 1.0)}
    if t and t[-1] in units:
        unit, factor = units[t[-1]]
        number = t[:-1]
    else:
        unit, factor = ("deg", 1.0) if system in SKY_SYSTEMS else ("pixel", 1.0)
        number = t
    if not _NUM.match(number):
        raise ValueError(t)
    return float(number) * factor, unit


def _properties(comment: str) -> dict[str, str]:
    """``key=value`` pairs after '#' (values in {}, "" or '' may hold spaces)."""
    props = {}
    for m in re.finditer(r"(\w+)\s*=\s*(\{[^}]*\}|\"[^\"]*\"|'[^']*'|\S+)", comment):
        value = m.group(2)
        if value[:1] in "{\"'":
            value = value[1:-1]
        props[m.group(1)] = value
    return props


def parse_regions(text: str) -> dict[str, Any]:
    """Parse a DS9 region file. Returns {"format", "version", "global": {...}, "shapes":
    [{"shape", "system", "exclude", "coords": [[a, b], ...], "sizes": [(value, unit)],
    "angles": [...], "props": {...}, "line"}]}; raises RegionError."""
    if not isinstance(text, str):
        raise RegionError("region data must be text")
    system = "physical"  # DS9's default when a file names no system
    out: dict[str, Any] = {"format": None, "version": None, "global": {}, "shapes": []}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            m = re.match(r"#\s*Region file format:\s*(\S+)\s+version\s+(\S+)", line, re.I)
            if m:
                out["format"], out["version"] = m.group(1).lower(), m.group(2)
            continue
        items, comment = _split_items(line)
        for item in items:
            low = item.lower()
            if low.startswith("global"):
                out["global"].update(_properties(item[6:]))
                continue
            if low in PIXEL_SYSTEMS or low in SKY_SYSTEMS:
                system = "fk5" if low in ("j2000", "wcs") else low
                continue
            out["shapes"].append(_shape(item, comment, system, lineno, raw))
    return out


def _shape(item: str, comment: str, system: str, lineno: int, raw: str) -> dict[str, Any]:
    m = _SHAPE.match(item.strip())
    if not m or m.group(2).lower() not in SHAPES:
        raise RegionError(f"line {lineno}: not a region shape or coordinate system: "
                          f"{raw.strip()[:80]!r}")
    exclude, name = m.group(1) == "-", m.group(2).lower()
    body = m.group(3) if m.group(3) is not None else (m.group(4) or "")
    if m.group(3) is None and item.count("(") != item.count(")"):
        raise RegionError(f"line {lineno}: unbalanced parentheses: {raw.strip()[:80]!r}")
    args = [a for a in re.split(r"[,\s]+", body.strip()) if a]
    n_pairs = SHAPES[name]
    if n_pairs is None:
        if len(args) < 2 or len(args) % 2:
            raise RegionError(f"line {lineno}: {name} needs coordinate pairs: {raw.strip()!r}")
        n_pairs = len(args) // 2
    if len(args) < 2 * n_pairs:
        raise RegionError(f"line {lineno}: {name} needs {2 * n_pairs} coordinates, got "
                          f"{len(args)}: {raw.strip()[:80]!r}")
    try:
        coords = [[_coordinate(args[2 * k], 0, system), _coordinate(args[2 * k + 1], 1, system)]
                  for k in range(n_pairs)]
        rest = args[2 * n_pairs:]
        sizes, angles = [], []
        n_sizes = {"circle": 1, "annulus": len(rest), "ellipse": 2, "box": 2, "vector": 1,
                   "projection": 1}.get(name, 0)
        for k, a in enumerate(rest):
            if k < n_sizes:
                sizes.append(_size(a, system))
            else:
                angles.append(float(a) if _NUM.match(a) else a)
    except ValueError as exc:
        raise RegionError(f"line {lineno}: bad number {exc} in {raw.strip()[:80]!r}") from None
    if name == "circle" and len(sizes) != 1:
        raise RegionError(f"line {lineno}: a circle needs a radius: {raw.strip()[:80]!r}")
    if any(v <= 0 for v, _ in sizes):
        raise RegionError(f"line {lineno}: sizes must be positive: {raw.strip()[:80]!r}")
    return {"shape": name, "system": system, "exclude": exclude, "coords": coords,
            "sizes": sizes, "angles": angles, "props": _properties(comment), "line": lineno}
