"""Numbers as QuPath writes them in text, in measurement tables and GeoJSON measurement values:
decimal or exponent notation, and "NaN", "Infinity", "-Infinity" (also "inf") in any case."""

from __future__ import annotations

import math
import re

NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
SPECIAL = {"nan": math.nan, "infinity": math.inf, "-infinity": -math.inf, "inf": math.inf,
           "-inf": -math.inf}


def parse_number(text: str) -> float | None:
    """The number ``text`` spells (surrounding whitespace ignored), or None."""
    t = text.strip()
    if t.lower() in SPECIAL:
        return SPECIAL[t.lower()]
    if NUMBER.fullmatch(t):
        return float(t)
    return None
