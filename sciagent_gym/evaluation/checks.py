"""Comparison ops: ``fn(value, **params) -> (passed, detail)``, or ``(passed, detail, credit)``
for a graded check, whose credit in [0, 1] is the share of the criterion's weight it earns
(``sts_at_least`` with ``graded``); a pass/fail check earns all of it or nothing.

Details are short and human ("got 23, expected 24 ± 1") because they end up in episode reports
that task authors read to see why an agent lost points.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np

from sciagent_gym.errors import ParamError

Check = Callable[..., tuple[bool, str]]
Validator = Callable[[Mapping[str, Any]], None]
F = TypeVar("F", bound=Check)

CHECKS: dict[str, Check] = {}
VALIDATORS: dict[str, Validator] = {}

_HEX64 = re.compile(r"[0-9a-fA-F]{64}")


def register_check(name: str, validator: Validator | None = None) -> Callable[[F], F]:
    """Register a check; ``validator`` vets its params when a spec is loaded, not at scoring."""

    def deco(fn: F) -> F:
        if name in CHECKS and CHECKS[name] is not fn:
            raise ValueError(f"check {name!r} is already registered")
        CHECKS[name] = fn
        if validator is not None:
            VALIDATORS[name] = validator
        return fn

    return deco


# --- value helpers -------------------------------------------------------------------------


def _plain(v: Any) -> Any:
    """numpy scalars/arrays and tuples -> plain Python, so comparisons behave predictably."""
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    return v


def _is_number(v: Any) -> bool:
    v = _plain(v)
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _to_number(v: Any) -> tuple[float | None, str]:
    """Coerce to float, refusing booleans and None; the string says why it failed."""
    v = _plain(v)
    if isinstance(v, bool):
        return None, f"got boolean {v}, not a number"
    if v is None:
        return None, "got nothing (None), not a number"
    if isinstance(v, (int, float)):
        return float(v), ""
    if isinstance(v, str):
        try:
            return float(v.strip()), ""
        except ValueError:
            return None, f"got {fmt(v)}, not a number"
    return None, f"got {type(v).__name__} {fmt(v)}, not a number"


def fmt(v: Any, limit: int = 60) -> str:
    """Short display form: 24.0 -> "24", long strings/lists shortened."""
    v = _plain(v)
    if v is None or isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        text = str(v)
    elif isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        text = str(int(v)) if v.is_integer() and abs(v) < 1e15 else format(v, ".10g")
    elif isinstance(v, list):
        items = [fmt(x, 20) for x in v[:10]]
        text = "[" + ", ".join(items) + (", ..." if len(v) > 10 else "") + "]"
    elif isinstance(v, dict):
        items = [f"{k}: {fmt(x, 20)}" for k, x in list(v.items())[:10]]
        text = "{" + ", ".join(items) + (", ..." if len(v) > 10 else "") + "}"
    else:
        text = repr(v)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def normalize_text(s: str, case: bool = False) -> str:
    """Strip, collapse whitespace, NFC; casefold unless ``case``."""
    s = " ".join(unicodedata.normalize("NFC", s).split())
    return s if case else s.casefold()


def _as_text(v: Any) -> str | None:
    v = _plain(v)
    if v is None or isinstance(v, (list, dict)):
        return None
    if isinstance(v, str):
        return v
    return fmt(v, 10**6)


def _equal(a: Any, b: Any) -> bool:
    """Equality where 24 == 24.0 but True != 1, recursing into lists and dicts."""
    a, b = _plain(a), _plain(b)
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) and _is_number(b):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _close(got: float, expected: float, abs_tol: float, rel_tol: float) -> bool:
    """|got - expected| <= max(abs_tol, rel_tol * |expected|); NaN never matches."""
    if math.isnan(got) or math.isnan(expected):
        return False
    if got == expected:
        return True
    return abs(got - expected) <= max(abs_tol, rel_tol * abs(expected))


def _tol(abs_tol: float, rel_tol: float) -> str:
    rel = f"{fmt(rel_tol * 100)}%"
    if abs_tol and rel_tol:
        return f" ± max({fmt(abs_tol)}, {rel})"
    if abs_tol:
        return f" ± {fmt(abs_tol)}"
    if rel_tol:
        return f" ± {rel}"
    return ""


def _hash_key(v: Any, normalize: bool) -> Any:
    v = _plain(v)
    if isinstance(v, str) and normalize:
        return ("s", normalize_text(v))
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, (list, dict)):
        return ("j", json.dumps(v, sort_keys=True, default=str))
    return ("v", v)


def _seq(v: Any) -> list[Any] | None:
    v = _plain(v)
    if isinstance(v, (set, frozenset)):
        return sorted(v, key=repr)
    return v if isinstance(v, list) else None


# --- validators ------------------------------------------------------------------------------


def _need_number(params: Mapping[str, Any], name: str, minimum: float | None = None) -> None:
    if name not in params or params[name] is None:
        return
    v = params[name]
    num, _ = _to_number(v)
    if num is None or isinstance(v, str):
        raise ParamError(name, f"must be a number, got {fmt(v)}")
    if minimum is not None and num < minimum:
        raise ParamError(name, f"must be >= {fmt(minimum)}, got {fmt(v)}")


def _need_list(params: Mapping[str, Any], name: str) -> None:
    if params.get(name) is not None and not isinstance(params[name], (list, tuple)):
        raise ParamError(name, f"must be a list, got {type(params[name]).__name__}")


def _tolerances(params: Mapping[str, Any]) -> None:
    _need_number(params, "abs_tol", 0)
    _need_number(params, "rel_tol", 0)


def _v_numeric(params: Mapping[str, Any]) -> None:
    _need_number(params, "expected")
    _tolerances(params)


def _v_in_range(params: Mapping[str, Any]) -> None:
    _need_number(params, "min")
    _need_number(params, "max")
    lo, hi = params.get("min"), params.get("max")
    if lo is None and hi is None:
        raise ParamError("min", "give min, max or both")
    if lo is not None and hi is not None and float(lo) > float(hi):
        raise ParamError("min", f"min {fmt(lo)} is greater than max {fmt(hi)}")


def _v_regex(params: Mapping[str, Any]) -> None:
    try:
        re.compile(params.get("pattern", ""))
    except (re.error, TypeError) as exc:
        raise ParamError("pattern", f"invalid regular expression: {exc}") from None


def _v_text(params: Mapping[str, Any]) -> None:
    if "expected" in params and not isinstance(params["expected"], str):
        raise ParamError("expected", f"must be a string, got {type(params['expected']).__name__}")


def _v_table(params: Mapping[str, Any]) -> None:
    _need_list(params, "expected")
    rows = params.get("expected", [])
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise ParamError("expected", f"row {i} must be an object, got {type(row).__name__}")
    _need_list(params, "columns")
    _tolerances(params)


def _v_sha(params: Mapping[str, Any]) -> None:
    v = params.get("expected_sha256")
    if not isinstance(v, str) or not _HEX64.fullmatch(v.strip()):
        raise ParamError("expected_sha256", "must be 64 hex digits")


# --- checks ----------------------------------------------------------------------------------


@register_check("equals")
def equals(value: Any, expected: Any) -> tuple[bool, str]:
    """Exact equality (24 == 24.0, but True != 1)."""
    return _equal(value, expected), f"got {fmt(value)}, expected {fmt(expected)}"


@register_check("text", _v_text)
def text(value: Any, expected: str, case: bool = False) -> tuple[bool, str]:
    """Text equality after stripping, collapsing whitespace and (unless ``case``) casefolding."""
    got = _as_text(value)
    if got is None:
        return False, f"got {fmt(value)}, expected text {fmt(expected)}"
    ok = normalize_text(got, case) == normalize_text(expected, case)
    return ok, f"got {fmt(got)}, expected {fmt(expected)}"


@register_check("regex", _v_regex)
def regex(value: Any, pattern: str, fullmatch: bool = False) -> tuple[bool, str]:
    """re.search (or re.fullmatch) of ``pattern`` in the value's text."""
    got = _as_text(value)
    if got is None:
        return False, f"got {fmt(value)}, expected text matching /{pattern}/"
    match = re.fullmatch(pattern, got) if fullmatch else re.search(pattern, got)
    how = "fully matching" if fullmatch else "matching"
    return match is not None, f"got {fmt(got)}, expected text {how} /{pattern}/"


@register_check("numeric", _v_numeric)
def numeric(
    value: Any, expected: float, abs_tol: float = 0, rel_tol: float = 0
) -> tuple[bool, str]:
    """|value - expected| <= max(abs_tol, rel_tol*|expected|); booleans and NaN fail."""
    exp = float(expected)
    want = f"expected {fmt(exp)}{_tol(abs_tol, rel_tol)}"
    got, err = _to_number(value)
    if got is None:
        return False, f"{err}, {want}"
    return _close(got, exp, float(abs_tol), float(rel_tol)), f"got {fmt(got)}, {want}"


@register_check("in_range", _v_in_range)
def in_range(
    value: Any, min: float | None = None, max: float | None = None
) -> tuple[bool, str]:
    """min <= value <= max (inclusive; either bound may be omitted)."""
    if min is not None and max is not None:
        want = f"expected in [{fmt(min)}, {fmt(max)}]"
    elif min is not None:
        want = f"expected >= {fmt(min)}"
    else:
        want = f"expected <= {fmt(max)}"
    got, err = _to_number(value)
    if got is None:
        return False, f"{err}, {want}"
    ok = not math.isnan(got)
    ok = ok and (min is None or got >= float(min)) and (max is None or got <= float(max))
    return ok, f"got {fmt(got)}, {want}"


@register_check("is_true")
def is_true(value: Any) -> tuple[bool, str]:
    """The value is the boolean True (truthy strings or numbers do not count)."""
    v = _plain(value)
    return v is True, f"got {fmt(v)}, expected True"


@register_check("is_false")
def is_false(value: Any) -> tuple[bool, str]:
    """The value is the boolean False (None or 0 do not count)."""
    v = _plain(value)
    return v is False, f"got {fmt(v)}, expected False"


@register_check("one_of", lambda p: _need_list(p, "options"))
def one_of(value: Any, options: list[Any], normalize: bool = False) -> tuple[bool, str]:
    """The value equals one of ``options`` (strings normalised like ``text`` if ``normalize``)."""
    key = _hash_key(value, normalize) if normalize else None
    ok = any(
        _hash_key(o, True) == key if normalize else _equal(value, o) for o in options
    )
    return ok, f"got {fmt(value)}, expected one of {fmt(list(options))}"


@register_check("set_equal", lambda p: _need_list(p, "expected"))
def set_equal(value: Any, expected: list[Any], normalize: bool = False) -> tuple[bool, str]:
    """Same items regardless of order and duplicates (strings normalised if ``normalize``)."""
    items = _seq(value)
    if items is None:
        return False, f"got {fmt(value)}, expected a list like {fmt(list(expected))}"
    got = {_hash_key(x, normalize): x for x in items}
    want = {_hash_key(x, normalize): x for x in expected}
    missing = [want[k] for k in want if k not in got]
    extra = [got[k] for k in got if k not in want]
    if not missing and not extra:
        return True, f"got the {len(want)} expected items"
    parts = []
    if missing:
        parts.append(f"missing {fmt(missing)}")
    if extra:
        parts.append(f"unexpected {fmt(extra)}")
    return False, "; ".join(parts)


@register_check("list_equal", lambda p: (_need_list(p, "expected"), _tolerances(p)))
def list_equal(value: Any, expected: list[Any], abs_tol: float = 0) -> tuple[bool, str]:
    """Same items in the same order; numbers may differ by ``abs_tol``."""
    items = _seq(value)
    if items is None:
        return False, f"got {fmt(value)}, expected a list like {fmt(list(expected))}"
    if len(items) != len(expected):
        return False, f"got {len(items)} items, expected {len(expected)}"
    for i, (g, e) in enumerate(zip(items, expected, strict=True)):
        if _is_number(g) and _is_number(e):
            ok = _close(float(_plain(g)), float(_plain(e)), float(abs_tol), 0.0)
        else:
            ok = _equal(g, e)
        if not ok:
            return False, f"item {i}: got {fmt(g)}, expected {fmt(e)}{_tol(abs_tol, 0)}"
    return True, f"all {len(items)} items match"


@register_check("contains")
def contains(value: Any, item: Any) -> tuple[bool, str]:
    """Substring of a string, element of a list, or key of a dict."""
    v = _plain(value)
    if isinstance(v, str):
        ok = isinstance(item, str) and item in v
    elif isinstance(v, (list, set, frozenset)):
        ok = any(_equal(x, item) for x in v)
    elif isinstance(v, dict):
        ok = item in v
    else:
        return False, f"got {fmt(v)}, which cannot contain anything"
    return ok, f"{fmt(v)} {'contains' if ok else 'does not contain'} {fmt(item)}"


def _cell_mismatch(
    got: Mapping[str, Any], want: Mapping[str, Any], columns: list[str], abs_tol: float,
    rel_tol: float,
) -> str | None:
    for col in columns:
        if col not in want:
            continue
        if col not in got:
            return f"missing column {col!r}"
        g, e = got[col], want[col]
        if _is_number(e) and _is_number(g) and not isinstance(_plain(g), bool):
            if not _close(float(_plain(g)), float(_plain(e)), abs_tol, rel_tol):
                return f"column {col!r}: got {fmt(g)}, expected {fmt(e)}{_tol(abs_tol, rel_tol)}"
        elif isinstance(e, str) and isinstance(g, str):
            if g.strip() != e.strip():
                return f"column {col!r}: got {fmt(g)}, expected {fmt(e)}"
        elif not _equal(g, e):
            return f"column {col!r}: got {fmt(g)}, expected {fmt(e)}"
    return None


def _perfect_matching(ok: list[list[bool]]) -> list[int]:
    """Kuhn's augmenting paths: expected rows left unmatched (empty when a full match exists)."""
    n = len(ok)
    owner: list[int] = [-1] * n  # got row -> expected row

    def augment(e: int, seen: list[bool]) -> bool:
        for g in range(n):
            if ok[e][g] and not seen[g]:
                seen[g] = True
                if owner[g] == -1 or augment(owner[g], seen):
                    owner[g] = e
                    return True
        return False

    return [e for e in range(n) if not augment(e, [False] * n)]


@register_check("table_equal", _v_table)
def table_equal(
    value: Any,
    expected: list[dict[str, Any]],
    columns: list[str] | None = None,
    abs_tol: float = 0,
    rel_tol: float = 0,
    row_order: bool = True,
) -> tuple[bool, str]:
    """A list of row dicts matches ``expected`` on ``columns`` (default: the expected keys)."""
    rows = _seq(value)
    if rows is None or not all(isinstance(r, Mapping) for r in rows):
        return False, f"got {fmt(value)}, expected a list of rows"
    if columns is None:
        cols = list(dict.fromkeys(k for r in expected for k in r))
    else:
        cols = list(columns)
    if len(rows) != len(expected):
        return False, f"got {len(rows)} rows, expected {len(expected)}"
    tol = (float(abs_tol), float(rel_tol))
    if row_order:
        for i, (g, e) in enumerate(zip(rows, expected, strict=True)):
            why = _cell_mismatch(g, e, cols, *tol)
            if why:
                return False, f"row {i}: {why}"
        return True, f"all {len(rows)} rows match"
    ok = [[_cell_mismatch(g, e, cols, *tol) is None for g in rows] for e in expected]
    unmatched = _perfect_matching(ok)
    if unmatched:
        first = unmatched[0]
        return False, (
            f"{len(unmatched)} expected row(s) without a match, first: row {first} "
            f"{fmt(expected[first])}"
        )
    return True, f"all {len(rows)} rows match (any order)"


@register_check("ssim_at_least", lambda p: _need_number(p, "threshold"))
def ssim_at_least(value: Any, threshold: float) -> tuple[bool, str]:
    """An SSIM score (from image_ssim) of at least ``threshold``."""
    got, err = _to_number(value)
    if got is None:
        return False, f"{err}, expected SSIM >= {fmt(threshold)}"
    ok = not math.isnan(got) and got >= float(threshold)
    return ok, f"SSIM {format(got, '.4f')}, need >= {fmt(threshold)}"


@register_check("unchanged", _v_sha)
def unchanged(value: Any, expected_sha256: str) -> tuple[bool, str]:
    """A protected input still has its original SHA-256."""
    got = str(value).strip().lower()
    want = expected_sha256.strip().lower()
    if got == want:
        return True, "file unchanged"
    return False, f"file was modified (sha256 {got[:12]}..., expected {want[:12]}...)"
