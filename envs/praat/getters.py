"""Praat-specific getters: TextGrids in Praat's text formats, saved WAV files and answer files.

Imported by :func:`sciagent_gym.tools.load_tool_getters` as ``sciagent_gym.envs.praat.getters``.
Every missing or malformed file raises GetterError, which the evaluator turns into a failed
criterion.

Praat writes TextGrids as a "long" text file (``xmin = 0``, ``intervals [1]:``, ...) or a
"short" one (the same values in order, without names); both start with
``File type = "ooTextFile"`` and ``Object class = "TextGrid"``, in UTF-8 or (when a label needs
it) UTF-16. Strings are double-quoted with inner quotes doubled. Comments after ``!`` are
ignored, and in the long form the names before ``=`` are skipped, so both forms are read by one
tokenizer.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

import numpy as np

from sciagent_gym.sdk import (
    GetterError,
    check_size,
    check_wav,
    existing_file,
    pick_key,
    read_bytes,
    register,
)

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState

_MAX_TEXTGRID_BYTES = 8 * 1024 * 1024
#: Tokens kept in a list while parsing (about 90 bytes each; real TextGrids have thousands).
_MAX_TOKENS = 1_000_000
_TOKEN = re.compile(r'"((?:[^"]|"")*)"'
                    r"|([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
                    r"|<(exists|absent)>|(!.*)|(\S+)")


def _decode(data: bytes, label: str) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise GetterError(f"{label}: not a text file Praat can read (not UTF-8/UTF-16)") from None


def _tokens(text: str, label: str = "TextGrid") -> list[tuple[str, Any]]:
    """Strings and numbers in order ("s", str) / ("n", float); names, '=', brackets skipped."""
    out: list[tuple[str, Any]] = []
    for m in _TOKEN.finditer(text):
        if len(out) >= _MAX_TOKENS:
            check_size(label, len(out) + 1, _MAX_TOKENS, "number of TextGrid tokens")
        string, number, flag = m.group(1), m.group(2), m.group(3)
        if string is not None:
            out.append(("s", string.replace('""', '"')))
        elif number is not None:
            # "intervals [1]:" and "item [2]:" carry an index inside brackets: not data
            before = text[max(0, m.start() - 1):m.start()]
            after = text[m.end():m.end() + 1]
            if before == "[" and after == "]":
                continue
            out.append(("n", float(number)))
        elif flag is not None:
            out.append(("f", flag))
    return out


class _Reader:
    def __init__(self, tokens: list[tuple[str, Any]], label: str) -> None:
        self.tokens, self.i, self.label = tokens, 0, label

    def take(self, kind: str, what: str) -> Any:
        if self.i >= len(self.tokens):
            raise GetterError(f"{self.label}: truncated TextGrid (expected {what})")
        got_kind, value = self.tokens[self.i]
        if got_kind != kind:
            raise GetterError(f"{self.label}: malformed TextGrid: expected {what}, "
                              f"found {value!r}")
        self.i += 1
        return value

    def number(self, what: str) -> float:
        value = self.take("n", what)
        if not math.isfinite(value):
            raise GetterError(f"{self.label}: malformed TextGrid: {what} is {value}")
        return value

    def count(self, what: str) -> int:
        value = self.number(what)
        if value < 0 or value != int(value) or value > 10_000_000:
            raise GetterError(f"{self.label}: malformed TextGrid: bad {what} {value}")
        return int(value)


def parse_textgrid(data: bytes | str, label: str = "TextGrid") -> dict[str, Any]:
    """Parse a TextGrid in Praat's long or short text format.

    Returns {"xmin", "xmax", "n_tiers", "tier_names", "tiers": [{"name", "class", "xmin",
    "xmax", "intervals": [{"xmin", "xmax", "text"}], "boundaries", "texts", "labels"} |
    {..., "points":
    [{"time", "mark"}], "times", "marks"}]}; ``boundaries`` are an interval tier's inner
    boundaries, ``texts`` every interval's label (stripped) and ``labels`` only the
    non-empty ones, in order. Raises GetterError for anything
    that is not a complete TextGrid.
    """
    text = data if isinstance(data, str) else _decode(data, label)
    head = text.lstrip()[:200]
    if not re.match(r'File type = "ooTextFile"\s+Object class = "TextGrid"', head):
        if head.startswith("ooBinaryFile"):
            raise GetterError(f"{label}: a binary TextGrid; save it as a text file")
        raise GetterError(f"{label}: not a Praat TextGrid text file")
    body = text.lstrip().split("\n", 2)[2] if text.count("\n") >= 2 else ""
    r = _Reader(_tokens(body, label), label)
    xmin, xmax = r.number("xmin"), r.number("xmax")
    if r.i < len(r.tokens) and r.tokens[r.i] == ("f", "absent"):
        return {"xmin": xmin, "xmax": xmax, "n_tiers": 0, "tier_names": [], "tiers": []}
    if r.i < len(r.tokens) and r.tokens[r.i][0] == "f":
        r.i += 1
    n_tiers = r.count("the number of tiers")
    tiers = []
    for t in range(n_tiers):
        cls = r.take("s", f"tier {t + 1}'s class")
        name = r.take("s", f"tier {t + 1}'s name")
        txmin, txmax = r.number("tier xmin"), r.number("tier xmax")
        n = r.count(f"tier {t + 1}'s size")
        tier: dict[str, Any] = {"name": name, "class": cls, "xmin": txmin, "xmax": txmax}
        if cls == "IntervalTier":
            intervals = []
            for _ in range(n):
                a, b = r.number("interval xmin"), r.number("interval xmax")
                if b < a:
                    raise GetterError(f"{label}: malformed TextGrid: interval {a}-{b} in tier "
                                      f"{name!r} ends before it starts")
                intervals.append({"xmin": a, "xmax": b, "text": r.take("s", "interval text")})
            tier["intervals"] = intervals
            tier["n_intervals"] = len(intervals)
            tier["boundaries"] = [iv["xmax"] for iv in intervals[:-1]]
            tier["texts"] = [iv["text"].strip() for iv in intervals]
            tier["labels"] = [text for text in tier["texts"] if text]
        elif cls in ("TextTier", "PointTier"):
            points = [{"time": r.number("point time"), "mark": r.take("s", "point mark")}
                      for _ in range(n)]
            tier["points"] = points
            tier["n_points"] = len(points)
            tier["times"] = [p["time"] for p in points]
            tier["marks"] = [p["mark"] for p in points]
        else:
            raise GetterError(f"{label}: malformed TextGrid: unknown tier class {cls!r}")
        tiers.append(tier)
    return {"xmin": xmin, "xmax": xmax, "n_tiers": n_tiers,
            "tier_names": [t["name"] for t in tiers], "tiers": tiers}


@register("praat_textgrid")
def praat_textgrid(state: FinalState, path: str, key: str | None = None,
                   tier: str | None = None) -> Any:
    """A saved TextGrid as a dict (see :func:`parse_textgrid`) or one dotted key; with
    ``tier``, the dict of the tier of that name (a GetterError if there is none)."""
    grid = parse_textgrid(read_bytes(state, path, _MAX_TEXTGRID_BYTES), path)
    if tier is not None:
        found = [t for t in grid["tiers"] if t["name"] == tier]
        if not found:
            raise GetterError(f"{path}: no tier named {tier!r} (tiers: {grid['tier_names']})")
        grid = found[0]
    return pick_key(path, grid, key)


def _read_wav(state: FinalState, path: str) -> tuple[np.ndarray, int, int]:
    from sciagent_gym.envs.praat.data import read_wav

    p = existing_file(state, path)
    check_wav(p, path)
    try:
        return read_wav(p)
    except Exception as exc:  # wave raises several types on junk input
        raise GetterError(f"{path}: cannot read as a 16-bit WAV file: "
                          f"{type(exc).__name__}: {exc}") from None


@register("praat_wav")
def praat_wav(state: FinalState, path: str, key: str | None = None) -> Any:
    """A saved WAV file's duration (s), sampling_frequency, channels, n_samples and
    intensity_db (as Praat's Get intensity (dB) computes it)."""
    from sciagent_gym.envs.praat.data import intensity_db

    samples, rate, channels = _read_wav(state, path)
    if len(samples) == 0:
        raise GetterError(f"{path}: the WAV file holds no samples")
    info = {"duration": len(samples) / rate, "sampling_frequency": rate, "channels": channels,
            "n_samples": len(samples), "intensity_db": intensity_db(samples)}
    return pick_key(path, info, key)


@register("praat_wav_similarity")
def praat_wav_similarity(state: FinalState, path: str, reference_path: str,
                         max_lag: int = 4) -> float:
    """Correlation of a saved WAV's samples with a reference array (best over small lags, so
    a one-sample difference in where Praat cuts does not matter); 0 when the lengths differ by
    more than 1 %."""
    import tifffile

    samples, _, _ = _read_wav(state, path)
    try:
        ref = np.asarray(tifffile.imread(reference_path), float).ravel()
    except Exception as exc:
        raise GetterError(f"reference {reference_path}: cannot read: {exc}") from None
    if abs(len(samples) - len(ref)) > max(2 * max_lag, 0.01 * len(ref)):
        return 0.0
    best = 0.0
    for lag in range(-max_lag, max_lag + 1):
        a = samples[max(0, lag):]
        b = ref[max(0, -lag):]
        n = min(len(a), len(b))
        if n < 10:
            continue
        a, b = a[:n], b[:n]
        denom = float(np.linalg.norm(a) * np.linalg.norm(b))
        if denom > 0:
            best = max(best, float(np.dot(a, b) / denom))
    return best


@register("praat_objects")
def praat_objects(state: FinalState, type: str, key: str) -> list[Any]:  # noqa: A002
    """``key`` of every object of class ``type`` in Praat's Objects list at the end (from the
    state dump), in list order; objects without that field are skipped. Fails when the list
    holds no object of that class."""
    if state.app_state is None:
        raise GetterError(f"app state unavailable: {state.app_state_error or 'no reason given'}")
    objects = state.app_state.get("objects") if isinstance(state.app_state, dict) else None
    if not isinstance(objects, list):
        raise GetterError("app state has no Objects list")
    found = [o for o in objects if isinstance(o, dict) and o.get("type") == type]
    if not found:
        raise GetterError(f"no {type} object in the Objects list")
    return [o[key] for o in found if key in o]
