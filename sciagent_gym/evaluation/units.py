"""Units an answer may carry, and conversion between units of one dimension.

Agents answer as scientists write ("742 Hz", "0.74 kHz", "12.5 µm²"); a criterion names the
unit its expected value is in, and the answer is converted to it. Only units of the same
dimension convert; pixels are their own dimension (their size in µm is a task's business).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Unit:
    name: str
    dimension: str
    factor: float  # value in this unit * factor = value in the dimension's base unit


def _units() -> dict[str, Unit]:
    table: list[tuple[str, str, float, tuple[str, ...]]] = [
        ("Hz", "frequency", 1.0, ("hz", "hertz")),
        ("kHz", "frequency", 1e3, ("khz",)),
        ("MHz", "frequency", 1e6, ("mhz",)),
        ("s", "time", 1.0, ("sec", "secs", "second", "seconds")),
        ("ms", "time", 1e-3, ("msec", "millisecond", "milliseconds")),
        ("µs", "time", 1e-6, ("us", "μs", "microsecond", "microseconds")),
        ("min", "time", 60.0, ("mins", "minute", "minutes")),
        ("h", "time", 3600.0, ("hr", "hrs", "hour", "hours")),
        ("m", "length", 1.0, ("meter", "meters", "metre", "metres")),
        ("km", "length", 1e3, ()),
        ("cm", "length", 1e-2, ()),
        ("mm", "length", 1e-3, ()),
        ("µm", "length", 1e-6, ("um", "μm", "micron", "microns", "micrometer", "micrometers",
                                "micrometre", "micrometres")),
        ("nm", "length", 1e-9, ()),
        ("Å", "length", 1e-10, ("Å", "angstrom", "angstroms", "ångström")),
        ("px", "pixels", 1.0, ("pixel", "pixels", "pix")),
        ("deg", "angle", math.pi / 180, ("°", "degree", "degrees")),
        ("arcmin", "angle", math.pi / 180 / 60, ("′",)),
        ("arcsec", "angle", math.pi / 180 / 3600, ("″",)),
        ("rad", "angle", 1.0, ("radian", "radians")),
        ("dB", "level", 1.0, ("db", "decibel", "decibels")),
        ("%", "fraction", 0.01, ("percent", "per cent")),
        ("ha", "area", 1e4, ("hectare", "hectares")),
        # materials science and spectroscopy
        ("eV", "energy", 1.0, ("ev", "electronvolt", "electronvolts", "electron volts")),
        ("meV", "energy", 1e-3, ()),
        ("keV", "energy", 1e3, ()),
        ("cm⁻¹", "wavenumber", 1.0, ("cm-1", "cm^-1", "1/cm", "wavenumbers")),
        ("Pa", "pressure", 1.0, ("pascal", "pascals")),
        ("kPa", "pressure", 1e3, ()),
        ("MPa", "pressure", 1e6, ()),
        ("GPa", "pressure", 1e9, ()),
        ("K", "temperature", 1.0, ("kelvin",)),
        ("g/cm³", "density", 1.0, ("g/cm3", "g/cm^3", "g cm-3", "g cm^-3", "g cm⁻³",
                                  "g/cc")),
        ("kg/m³", "density", 1e-3, ("kg/m3", "kg/m^3", "kg m-3", "kg m^-3", "kg m⁻³")),
        ("Å³", "volume", 1.0, ("Å3", "Å^3", "A^3", "A3", "angstrom^3", "cubic angstroms")),
        ("nm³", "volume", 1e3, ("nm3", "nm^3")),
    ]
    out: dict[str, Unit] = {}
    for name, dim, factor, aliases in table:
        unit = Unit(name, dim, factor)
        for alias in (name, *aliases):
            out[alias] = unit
    # areas: every length unit squared, written m², m2, m^2 or "sq m"
    for name in ("m", "km", "cm", "mm", "µm", "nm"):
        length = out[name]
        unit = Unit(f"{name}²", "area", length.factor ** 2)
        spellings = [a for a, u in out.items() if u == length and len(a) <= 2] + [name]
        for base in set(spellings):
            for suffix in ("²", "2", "^2"):
                out[base + suffix] = unit
            out["sq " + base] = unit
    return out


UNITS: dict[str, Unit] = _units()
# Longest spelling first, so "kHz" wins over "h", "µm²" over "µm", "ms" over "m".
_SPELLINGS = sorted(UNITS, key=len, reverse=True)
_UNIT_RE = re.compile(
    r"\s*(" + "|".join(re.escape(s) for s in _SPELLINGS) + r")(?![A-Za-z0-9_²³^µμ])",
    re.IGNORECASE,
)
# Case matters where two units differ only by case (ms / Ms do not both exist, but mHz / MHz,
# m / M would): an exact-case match is preferred, then a case-insensitive one.
_EXACT_RE = re.compile(
    r"\s*(" + "|".join(re.escape(s) for s in _SPELLINGS) + r")(?![A-Za-z0-9_²³^µμ])"
)


def lookup(name: str) -> Unit:
    """The unit spelt ``name``; ValueError for an unknown one."""
    unit = UNITS.get(name) or UNITS.get(name.lower())
    if unit is None:
        raise ValueError(f"unknown unit {name!r} (known: {', '.join(sorted(_canonical()))})")
    return unit


def _canonical() -> set[str]:
    return {u.name for u in UNITS.values()}


def unit_at(text: str, pos: int) -> tuple[Unit | None, int]:
    """The unit written at ``text[pos:]`` (after optional spaces) and where it ends."""
    match = _EXACT_RE.match(text, pos) or _UNIT_RE.match(text, pos)
    if match is None:
        return None, pos
    spelled = match.group(1)
    unit = UNITS.get(spelled) or UNITS.get(spelled.lower())
    if unit is None:  # a case-insensitive match of a spelling listed in another case
        unit = next(u for s, u in UNITS.items() if s.lower() == spelled.lower())
    return unit, match.end()


def convert(value: float, unit: Unit, to: Unit) -> float:
    """``value`` in ``unit`` expressed in ``to`` (same dimension; ValueError otherwise)."""
    if unit.dimension != to.dimension:
        raise ValueError(f"{unit.name} ({unit.dimension}) cannot be converted to {to.name} "
                         f"({to.dimension})")
    return value * unit.factor / to.factor
