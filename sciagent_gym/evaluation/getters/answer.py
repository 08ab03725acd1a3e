"""Getters on the agent's answer (the text of its last ``answer(...)`` action).

Reading a value must be as forgiving as a human grader about form and as strict about content:
"F1 = 742 Hz", "742Hz", "0.742 kHz" and "742" all read as 742 Hz; "1 or 2", "between 0.5 and
742" and "F1 is 742 Hz, F2 is 1200 Hz" are ambiguous and fail with the reason, so a policy can
not collect credit by answering every number it can think of. After ScienceBoard's ANS action.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..units import Unit, convert, lookup, unit_at
from .registry import GetterError, register

if TYPE_CHECKING:
    from ..state import FinalState

# A number not glued to a word before it: the 1 of "F1" or "x2" is part of a label. Thousands
# separators only in full groups ("12,345"); scientific notation as 1.5e3 or 1.5 x 10^3.
_NUMBER = re.compile(
    r"(?<![\w.])([-+−]?(?:[1-9]\d{0,2}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+−]?\.\d+)"
    r"(?:(?:[eE]([-+−]?\d+))|(?:\s*[x×]\s*10\^?([-+−]?\d+)))?"
)
# "0,742", "12,5", "3,14159": a decimal comma (or a list without spaces); never guessed.
_DECIMAL_COMMA = re.compile(r"(?<![\w.,])(?:0,\d+|\d+,\d{1,2}|\d+,\d{4,})(?![\d,])")


@dataclass(frozen=True)
class Quantity:
    value: float
    unit: Unit | None
    start: int


def _text(state: FinalState) -> str:
    if state.answer is None:
        raise GetterError("no answer was given (use the answer action, e.g. answer(\"742 Hz\"))")
    text = state.answer.strip()
    if not text:
        raise GetterError("the answer is empty")
    return text


def quantities(text: str) -> list[Quantity]:
    """Every number in ``text`` with the unit written right after it (if a known one)."""
    out = []
    for match in _NUMBER.finditer(text):
        mantissa = match.group(1).replace("−", "-").replace(",", "")
        exponent = match.group(2) or match.group(3)
        value = float(mantissa) * (10.0 ** int(exponent.replace("−", "-")) if exponent else 1.0)
        unit, _ = unit_at(text, match.end())
        out.append(Quantity(value, unit, match.start()))
    return out


def _expected_unit(unit: str | None) -> Unit | None:
    if unit is None:
        return None
    try:
        return lookup(unit)
    except ValueError as exc:
        raise GetterError(str(exc)) from None


def _candidates(text: str, unit: str | None, label: str | None) -> tuple[list[float], Unit | None]:
    """The values the answer states, converted to ``unit``, and that unit."""
    if _DECIMAL_COMMA.search(text):
        raise GetterError(f"answer {text!r}: a decimal comma is ambiguous; write 0.5, not 0,5 "
                          "(and separate list items with ', ')")
    if label is not None:
        match = re.search(rf"(?<!\w){re.escape(label)}(?!\w)\s*[:=]\s*", text, re.IGNORECASE)
        if match is None:
            raise GetterError(f"answer {text!r} has no '{label} = value'")
        found = quantities(text[match.end():])[:1]
        found = [q for q in found if q.start == 0]
        if not found:
            raise GetterError(f"answer {text!r}: no number right after '{label}'")
    else:
        found = quantities(text)
    if not found:
        raise GetterError(f"answer {text!r} holds no number")
    want = _expected_unit(unit)
    if want is None:
        return [q.value for q in found], None
    with_unit = [q for q in found if q.unit is not None and q.unit.dimension == want.dimension]
    if with_unit:
        return [convert(q.value, q.unit, want) for q in with_unit], want
    bare = [q for q in found if q.unit is None]
    if bare:
        return [q.value for q in bare], want
    units = sorted({q.unit.name for q in found if q.unit is not None})
    raise GetterError(f"answer {text!r} is in {', '.join(units)}, not in {want.name} "
                      f"({want.dimension})")


def _same(values: list[float]) -> bool:
    first = values[0]
    return all(abs(v - first) <= 1e-9 * max(1.0, abs(first)) for v in values)


@register("answer_given")
def answer_given(state: FinalState) -> bool:
    """Whether any non-empty answer was given: an infeasible task's "no value fabricated" check
    (the other answer getters fail when there is no answer, which a check cannot invert)."""
    return bool((state.answer or "").strip())


@register("answer_text")
def answer_text(state: FinalState) -> str:
    """The answer as given, stripped (for names, labels, yes/no)."""
    return _text(state)


@register("answer_number")
def answer_number(state: FinalState, unit: str | None = None, label: str | None = None) -> float:
    """The one number the answer states, converted to ``unit`` when it carries a unit.

    A bare number is taken to be in ``unit``. Numbers glued to a word are labels ("F1").
    With ``label``, the number after "label =" or "label:" is read. Several different values
    are ambiguous: the getter fails and says which it saw.
    """
    text = _text(state)
    values, _ = _candidates(text, unit, label)
    if not _same(values):
        shown = ", ".join(f"{v:g}" for v in values[:6])
        raise GetterError(f"answer {text!r} is ambiguous: it states several values ({shown}); "
                          "give one")
    return values[0]


@register("answer_numbers")
def answer_numbers(state: FinalState, unit: str | None = None) -> list[float]:
    """Every number the answer states, in order (for answers that are a list)."""
    values, _ = _candidates(_text(state), unit, None)
    return values
