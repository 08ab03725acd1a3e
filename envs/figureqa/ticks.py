"""Read a plot's axes off its pixels: the tick marks outside the frame and their labels (OCR).

Where a family's axes are scaled to its data (UTS, Arrhenius), a reader must read the tick
labels to turn pixels into values; so does the GUI oracle. Tick marks are the short black
lines just outside the frame (matplotlib's default, 1 px wide, about 5 px long). Each tick's
label is the ink next to it (left of a y tick, under an x tick), read alone with tesseract;
ticks are evenly spaced in value, so a line through the (pixel, value) pairs that most labels
agree with is the axis (an OCR slip on one label is outvoted by the others).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from sciagent_gym.sdk import StepError

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) of the runs of True in a 1-D array."""
    padded = np.concatenate([[0], flags.astype(int), [0]])
    edges = np.flatnonzero(np.diff(padded))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))


def _parse(text: str) -> float | None:
    text = (text.replace("\u2212", "-").replace("\u2013", "-").replace("\u2014", "-")
            .replace("~", "-").replace("O", "0").replace("o", "0").replace(",", ".")
            .replace(" ", ""))
    found = _NUMBER.search(text)
    return float(found.group()) if found else None


def _label(rgb: np.ndarray, rows: slice, cols: slice) -> float | None:
    from sciagent_gym.sdk import ocr_region

    crop = np.asarray(rgb)[rows, cols, :3]
    if crop.size == 0 or crop.mean(axis=2).min() > 160:
        return None
    return _parse(ocr_region(crop, psm=7, scale=3))


def _ink_span(ink: np.ndarray, start: int, step: int, gap: int = 7) -> tuple[int, int] | None:
    """The columns (lo, hi) of the first group of ink met walking from ``start`` by ``step``
    (+1 or -1), ending at a gap of ``gap`` blank columns."""
    cols = np.flatnonzero(ink.any(axis=0))
    if not len(cols):
        return None
    seq = cols[cols >= start] if step > 0 else cols[cols <= start][::-1]
    if not len(seq):
        return None
    out = [int(seq[0])]
    for c in seq[1:]:
        if abs(int(c) - out[-1]) > gap:
            break
        out.append(int(c))
    return min(out), max(out)


def _fit(pairs: list[tuple[float, float]], what: str) -> Callable[[float], float]:
    """value = a + b * pixel through the most labels (at least three within 5 % of a tick
    step of the line), refined by least squares on them."""
    pos = sorted(p for p, _ in pairs)
    gap = min((q - p for p, q in zip(pos, pos[1:], strict=False) if q > p), default=0.0)
    best: tuple[int, float, float, float] | None = None
    for i in range(len(pairs)):
        for j in range(i + 1, len(pairs)):
            (p1, v1), (p2, v2) = pairs[i], pairs[j]
            if p1 == p2 or v1 == v2:
                continue
            b = (v2 - v1) / (p2 - p1)
            a = v1 - b * p1
            tol = 0.05 * abs(b) * gap
            resid = [abs(a + b * p - v) for p, v in pairs]
            n = sum(r <= tol for r in resid)
            err = float(sum(r for r in resid if r <= tol))
            if best is None or (n, -err) > (best[0], -best[1]):
                best = (n, err, a, b)
    if best is None or best[0] < 3:
        raise StepError(f"perceive: the {what} axis's tick labels are not readable "
                        f"(read {pairs})")
    _, _, a, b = best
    keep = [(p, v) for p, v in pairs if abs(a + b * p - v) <= 0.05 * abs(b) * gap]
    b, a = np.polyfit([p for p, _ in keep], [v for _, v in keep], 1)
    return lambda px: float(a + b * px)


def y_axis(rgb: np.ndarray, frame: tuple[int, int, int, int]) -> Callable[[float], float]:
    """Row -> value of the y axis, from the tick marks left of the frame and their labels."""
    left, top, _, bottom = frame
    gray = np.asarray(rgb, float)[..., :3].mean(axis=2)
    marks = np.all(gray[:, left - 4:left] < 110, axis=1)
    marks[:max(0, top - 3)] = marks[bottom + 4:] = False
    pairs = []
    for lo, hi in _runs(marks):
        row = (lo + hi - 1) / 2
        r0, r1 = int(row) - 11, int(row) + 12
        ink = gray[r0:r1, :left - 6] < 160
        span = _ink_span(ink, left - 7, -1, gap=4)
        if span is None:
            continue
        value = _label(rgb, slice(r0, r1), slice(max(0, span[0] - 3), span[1] + 4))
        if value is not None:
            pairs.append((row, value))
    return _fit(pairs, "y")


def x_axis(rgb: np.ndarray, frame: tuple[int, int, int, int]) -> Callable[[float], float]:
    """Column -> value of the x axis, from the tick marks under the frame and their labels."""
    left, _, right, bottom = frame
    gray = np.asarray(rgb, float)[..., :3].mean(axis=2)
    marks = np.all(gray[bottom + 1:bottom + 5] < 110, axis=0)
    marks[:max(0, left - 3)] = marks[right + 4:] = False
    pairs = []
    r0, r1 = bottom + 6, bottom + 30
    ink = gray[r0:r1] < 160
    for lo, hi in _runs(marks):
        col = (lo + hi - 1) / 2
        spans = [s for s in (_ink_span(ink, int(col), -1), _ink_span(ink, int(col), 1)) if s]
        if not spans:
            continue
        # the label is centred on its tick: the ink group reaching the tick's column
        lo_c = min(s[0] for s in spans if s[1] >= col - 30)
        hi_c = max(s[1] for s in spans if s[0] <= col + 30)
        value = _label(rgb, slice(r0, r1), slice(max(0, lo_c - 3), hi_c + 4))
        if value is not None:
            pairs.append((col, value))
    return _fit(pairs, "x")
