"""Checks for CSMBench-style answers: a multiple-choice pick (``choice``) and an open answer's
semantic similarity to a reference (``sts_at_least``).

``choice`` is CSMBench's accuracy made strict against a policy that games it: the answer must
name exactly one option, by its letter (``B``, ``(B)``, ``B)``, ``B.``, ``Answer: B``) or by
the option's text (or both, agreeing: ``(B) text``, ``B. text``, ``B - text``), and that option
must be the expected one. Several letters, no option, or the whole option list pasted back
fail, each with the reason. ``expected`` is the right option's letter or its text (never an
index: 0- or 1-based would be a guess).

``sts_at_least`` passes when the cosine of the all-MiniLM-L6-v2 vectors of the answer and the
reference reaches ``min`` (see :mod:`.sentence_model`); the detail carries the score so a report
can average it. With ``floor`` it is scored continuously, as CSMBench scores open answers by their
STS: the criterion earns ``(STS - floor) / (min - floor)`` of its weight, clipped to [0, 1], so
an answer no closer than ``floor`` (a bare keyword, an unrelated sentence) earns nothing, and
one that reaches ``min`` earns all of it and counts as a success.
"""

from __future__ import annotations

import re
import string
from builtins import min as min_  # ``min`` is a check parameter below
from collections.abc import Mapping
from typing import Any

from sciagent_gym.errors import ParamError
from sciagent_gym.evaluation.checks import _as_text, _to_number, fmt, normalize_text, register_check

LETTERS = string.ascii_uppercase
_MAX_ANSWER = 4000  # longer answers are not one option's text; never embedded either
_LEAD = r"(?:(?:the\s+)?(?:correct\s+)?(?:answer|option|choice)(?:\s+is)?\s*[:=]?\s*)?"
_LETTER_ONLY = re.compile(rf"^{_LEAD}[(\[]?\s*([A-Za-z])\s*[)\].:]?$", re.I)
_LETTER_TEXT = re.compile(
    rf"^{_LEAD}(?:\(([A-Za-z])\)|\[([A-Za-z])\]|([A-Za-z])(?:[).:]|\s+[-–—]))\s*(.+)$",
    re.I | re.S)
_LETTER_MARK = re.compile(r"(?:^|[\s,;/(\[])([A-Z])(?=$|[\s,;/.:)\]])")


def _norm(s: str) -> str:
    """Casefolded, whitespace collapsed, outer quotes and a final full stop dropped."""
    s = normalize_text(s).strip("\"'`“”‘’ ")
    return s[:-1].rstrip() if s.endswith(".") else s


def _letter_index(letter: str, n: int) -> int | None:
    i = LETTERS.find(letter.upper())
    return i if 0 <= i < n else None


def expected_index(expected: Any, options: list[str]) -> int:
    """The expected option's index: ``expected`` is its letter or its exact text."""
    if not isinstance(expected, str) or not expected.strip():
        raise ParamError("expected", f"must be an option's letter or text, got {fmt(expected)}")
    e = expected.strip()
    if len(e) == 1 and e.upper() in LETTERS:
        i = _letter_index(e, len(options))
        if i is None:
            raise ParamError("expected", f"letter {e} is past the {len(options)} options")
        return i
    matches = [i for i, o in enumerate(options) if _norm(o) == _norm(e)]
    if not matches:
        raise ParamError("expected", f"{fmt(e)} is neither a letter nor one of the options")
    return matches[0]


def _v_choice(params: Mapping[str, Any]) -> None:
    options = params.get("options")
    if not isinstance(options, list) or not 2 <= len(options) <= len(LETTERS) \
            or not all(isinstance(o, str) and o.strip() for o in options):
        raise ParamError("options", f"must be a list of 2-{len(LETTERS)} non-empty strings "
                                    "(the options in order, lettered A, B, ...)")
    normed = [_norm(o) for o in options]
    dup = next((o for o in normed if normed.count(o) > 1), None)
    if dup is not None:
        raise ParamError("options", f"option text {fmt(dup)} appears twice")
    expected_index(params.get("expected"), options)


def pick(answer: str, options: list[str]) -> tuple[int | None, str]:
    """The one option ``answer`` names, or None and why not."""
    text = " ".join(answer.split())
    if not text:
        return None, "an empty answer names no option"
    if len(text) > _MAX_ANSWER:
        return None, f"a {len(text)}-character answer is not one option"
    normed = [_norm(o) for o in options]
    m = _LETTER_ONLY.match(text)
    if m:
        i = _letter_index(m.group(1), len(options))
        return (i, "") if i is not None else (None, f"letter {m.group(1).upper()} is past the "
                                                    f"{len(options)} options")
    if _norm(text) in normed:
        return normed.index(_norm(text)), ""
    m = _LETTER_TEXT.match(text)
    if m:
        letter = next(g for g in m.groups()[:3] if g)
        i = _letter_index(letter, len(options))
        rest = _norm(m.group(4))
        if i is not None and rest == normed[i]:
            return i, ""
        if rest in normed and i is not None:
            return None, (f"letter {letter.upper()} and the text of option "
                          f"{LETTERS[normed.index(rest)]} disagree")
    low = _norm(text)
    named = [LETTERS[i] for i, o in enumerate(normed) if o and o in low]
    if len(named) > 1:
        return None, f"names {len(named)} options ({', '.join(named)}), not one"
    letters = sorted({x for x in _LETTER_MARK.findall(text)
                      if _letter_index(x, len(options)) is not None})
    if len(letters) > 1 and len(text) <= 12 * len(letters):
        return None, f"names several letters ({', '.join(letters)}), not one"
    return None, "names no option (give its letter, e.g. B, or its exact text)"


@register_check("choice", _v_choice)
def choice(value: Any, options: list[str], expected: str) -> tuple[bool, str]:
    """The answer names exactly one of ``options`` and it is the ``expected`` one."""
    want = expected_index(expected, options)
    got = _as_text(value)
    if got is None:
        return False, f"got {fmt(value)}, expected option {LETTERS[want]}"
    i, why = pick(got, options)
    if i is None:
        return False, f"got {fmt(got)}: {why}; expected option {LETTERS[want]}"
    verdict = "right" if i == want else "wrong"
    return i == want, f"got {fmt(got)} = option {LETTERS[i]} ({verdict}), expected {LETTERS[want]}"


def _v_sts(params: Mapping[str, Any]) -> None:
    ref = params.get("reference")
    if not isinstance(ref, str) or not ref.strip():
        raise ParamError("reference", "must be the reference answer's text")
    low = params.get("min")
    num, _ = _to_number(low)
    if num is None or isinstance(low, str) or not -1.0 <= num <= 1.0:
        raise ParamError("min", f"must be a cosine in [-1, 1], got {fmt(low)}")
    if "floor" in params:
        floor, _ = _to_number(params["floor"])
        if floor is None or isinstance(params["floor"], str) or not -1.0 <= floor < num:
            raise ParamError("floor", f"must be a cosine below min ({fmt(low)}), got "
                                      f"{fmt(params['floor'])}")


@register_check("sts_at_least", _v_sts)
def sts_at_least(value: Any, reference: str, min: float,  # noqa: A002
                 floor: float | None = None) -> tuple[bool, str] | tuple[bool, str, float]:
    """CSMBench's STS of the answer against ``reference`` is at least ``min``; with ``floor``
    a graded check, whose third value is the credit earned on the way from ``floor`` to
    ``min`` (see the module docstring).

    The detail starts ``STS 0.8123``: reports read the score back from it."""
    def out(ok: bool, detail: str, score: float | None = None):
        if floor is None:
            return ok, detail
        earned = 0.0 if score is None else (score - float(floor)) / (float(min) - float(floor))
        return ok, detail, max(0.0, min_(1.0, earned))

    got = _as_text(value)
    if got is None or not got.strip():
        return out(False, f"STS n/a: got {fmt(value)}, not an answer text (min {fmt(min)})")
    if len(got) > _MAX_ANSWER:
        return out(False, f"STS n/a: a {len(got)}-character answer is over {_MAX_ANSWER}")
    from sciagent_gym.evaluation.sentence_model import sts

    score = sts([got], [reference])[0]
    ok = score >= float(min)
    return out(ok, f"STS {score:.4f} {'>=' if ok else '<'} {fmt(min)} against the reference",
               score)


def sts_of(detail: str) -> float | None:
    """The STS score an ``sts_at_least`` detail reports (None when there was none)."""
    m = re.match(r"STS (-?\d+\.\d+)", detail or "")
    return float(m.group(1)) if m else None
