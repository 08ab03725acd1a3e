"""Perceivers: read a FigureQA answer off the displayed pixels (the GUI oracle's ``perceive``).

Each ``PERCEIVERS[fn](rgb, **args) -> str`` gets the viewer window's pixels (the figure shown
at 100 %, its top-left at the window's) and measures what the question asks: it finds the image
box or the plot frame, the scale bar, the atoms, grains, pores, fibres or curves in the pixels,
and answers with a number and unit or, for a multiple-choice item, the letter of the option
closest to the measurement. ``args`` carry the options' texts and the family's fixed
conventions (some plots' fixed axis limits, the scale bar's unit), never the gold nor anything
that varies per item: scale-bar values and data-scaled axes are read off the figure with OCR
(:func:`_bar_label`, :mod:`.ticks`). A right answer proves the displayed figure carries it.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
from scipy import ndimage

from sciagent_gym.sdk import StepError

from . import ticks
from .common import BAR_H, BAR_X, BAR_Y, BOX
from .figures_macro import COLOURS, R_GAS

TO_METRES = {"Å": 1e-10, "nm": 1e-9, "µm": 1e-6, "mm": 1e-3}


def _gray(rgb: np.ndarray) -> np.ndarray:
    return np.asarray(rgb, float)[..., :3].mean(axis=2)


def _offset(gray: np.ndarray) -> tuple[int, int]:
    """Where the figure's top-left is in ``gray``: the shift (within 12 px) that puts the
    image box's black frame on dark pixels."""
    x, y, w, h = BOX
    best, where = -1.0, (0, 0)
    for dy in range(-12, 13):
        for dx in range(-12, 13):
            top, left = y - 1 + dy, x - 1 + dx
            if top < 0 or left < 0 or top + h + 1 >= gray.shape[0] or left + w + 1 >= gray.shape[1]:
                continue
            score = (np.mean(gray[top, left:left + w] < 60) + np.mean(gray[top + h + 1,
                     left:left + w] < 60) + np.mean(gray[top:top + h, left] < 60))
            if score > best:
                best, where = score, (dx, dy)
    if best < 2.4:
        raise StepError("perceive: no image box with a black frame on screen")
    return where


def _box(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    """(box RGB, whole grey image, offset) of an image-like figure."""
    gray = _gray(rgb)
    dx, dy = _offset(gray)
    x, y, w, h = BOX
    return np.asarray(rgb)[y + dy:y + dy + h, x + dx:x + dx + w, :3], gray, (dx, dy)


def _bar_px(gray: np.ndarray, offset: tuple[int, int]) -> int:
    """The scale bar's length: the longest run of black in its row band below the box."""
    dx, dy = offset
    band = gray[BAR_Y + dy - 4:BAR_Y + dy + BAR_H + 4] < 60
    rows = band[band.sum(axis=1) > 0]
    if not len(rows):
        raise StepError("perceive: no scale bar under the image")
    best = 0
    for row in rows:
        padded = np.concatenate([[0], row.astype(int), [0]])
        edges = np.flatnonzero(np.diff(padded))
        runs = edges[1::2] - edges[::2]
        best = max(best, int(runs.max()) if len(runs) else 0)
    if best < 20:
        raise StepError("perceive: the scale bar is too short to read")
    return best


def _bar_label(rgb: np.ndarray, offset: tuple[int, int], bar_px: int) -> float:
    """The scale bar's value, read with OCR from its label (right of the bar)."""
    from sciagent_gym.sdk import ocr_region

    dx, dy = offset
    x0 = BAR_X + dx + bar_px + 6
    crop = np.asarray(rgb)[BAR_Y + dy - 14:BAR_Y + dy + BAR_H + 14, x0:x0 + 140, :3]
    text = ocr_region(crop, psm=7, scale=3)
    found = re.search(r"(\d+(?:\.\d+)?)", text.replace("O", "0").replace("o", "0"))
    if found is None:
        raise StepError(f"perceive: the scale bar's label is not readable (OCR saw {text!r})")
    return float(found.group(1))


def _convert(px: float, bar_px: int, bar: float, bar_unit: str, unit: str) -> float:
    return px / bar_px * bar * TO_METRES[bar_unit] / TO_METRES[unit]


def _centroids(box: np.ndarray, dark_below: float = 170) -> np.ndarray:
    """Centres of the atoms (dark blobs) that the box's edge does not cut."""
    mask = _gray(box) < dark_below
    label, n = ndimage.label(mask)
    objs = ndimage.find_objects(label)
    h, w = mask.shape
    keep = [i + 1 for i, s in enumerate(objs) if s is not None and s[0].start > 0
            and s[1].start > 0 and s[0].stop < h and s[1].stop < w]
    if len(keep) < 6:
        raise StepError(f"perceive: only {len(keep)} whole atoms on screen")
    return np.array(ndimage.center_of_mass(mask, label, keep))[:, ::-1]


def _shells(xy: np.ndarray) -> tuple[float, int, int]:
    """Median nearest distance and the median counts of the first two neighbour shells over
    atoms far from the edge."""
    d = np.hypot(*(xy[:, None, :] - xy[None, :, :]).transpose(2, 0, 1))
    np.fill_diagonal(d, np.inf)
    d1 = float(np.median(d.min(axis=1)))
    lo, hi = xy.min(axis=0) + 2.2 * d1, xy.max(axis=0) - 2.2 * d1
    inner = np.all((xy > lo) & (xy < hi), axis=1)
    n1, n2 = [], []
    for row in d[inner]:
        first = row < 1.12 * d1
        rest = np.sort(row[~first])
        n1.append(int(first.sum()))
        n2.append(int((rest < 1.08 * rest[0]).sum()) if len(rest) else 0)
    if not n1:
        raise StepError("perceive: no atom far enough from the edge")
    return d1, int(np.median(n1)), int(np.median(n2))


def _lettered(options: dict[str, str] | list[str]) -> dict[str, str]:
    """Options by letter, from a list in letter order (as the task lists them) or a dict."""
    if isinstance(options, dict):
        return dict(options)
    return {chr(ord("A") + i): str(o) for i, o in enumerate(options)}


def _pick(options: dict[str, str] | list[str], value: float, circular: float | None = None) -> str:
    """The letter of the option whose first number is closest to ``value``."""
    def dist(text: str) -> float:
        v = float(re.search(r"-?\d+(?:\.\d+)?", text).group())
        diff = abs(v - value)
        return min(diff, circular - diff) if circular else diff
    options = _lettered(options)
    return min(options, key=lambda k: dist(options[k]))


# -- atomic ------------------------------------------------------------------------------------

def lattice_type(rgb: np.ndarray, options: dict[str, str] | list[str]) -> str:
    """The option naming the lattice the atoms' neighbour shells show: 6 nearest (hexagonal),
    4 (square), 2 then 2 at the next distance (rectangular) or 2 then 4 (centred rectangular)."""
    box, _, _ = _box(rgb)
    _, n1, n2 = _shells(_centroids(box))
    kind = {6: "hexagonal", 4: "square"}.get(n1) or ("rectangular" if n2 <= 2 else
                                                      "centred rectangular")
    for letter, text in _lettered(options).items():
        if text == f"a {kind} lattice":
            return letter
    raise StepError(f"perceive: saw a {kind} lattice, which no option names")


def lattice_sentence(rgb: np.ndarray) -> str:
    """One sentence on the lattice the neighbour shells show (the open item's answer)."""
    box, _, _ = _box(rgb)
    _, n1, n2 = _shells(_centroids(box))
    if n1 == 6:
        return "The atoms form a hexagonal lattice: each atom has six nearest neighbours."
    if n1 == 4:
        return "The atoms form a square lattice: each atom has four nearest neighbours."
    if n2 <= 2:
        return ("The atoms form a rectangular lattice: each atom has two nearest neighbours "
                "along the short side and two more along the long side.")
    return ("The atoms form a centred rectangular lattice: a rectangular cell with one more "
            "atom at its centre.")


def _bar(rgb: np.ndarray, gray: np.ndarray, off: tuple[int, int], bar: float | None
         ) -> tuple[int, float]:
    """(length in px, value) of the scale bar, the value read off its label unless given."""
    bar_px = _bar_px(gray, off)
    return bar_px, (_bar_label(rgb, off, bar_px) if bar is None else bar)


def nn_spacing(rgb: np.ndarray, bar: float | None = None, bar_unit: str = "nm",
               unit: str = "Å") -> str:
    """The nearest-neighbour distance of the atoms, through the scale bar."""
    box, gray, off = _box(rgb)
    d1, _, _ = _shells(_centroids(box))
    return f"{_convert(d1, *_bar(rgb, gray, off, bar), bar_unit, unit):.2f} {unit}"


def fringe_spacing(rgb: np.ndarray, bar: float | None = None, bar_unit: str = "nm",
                   unit: str = "nm") -> str:
    """The period of the strongest lattice fringes: the highest peak of the image's power
    spectrum (Hann window, zero-padded to 2048, centroid-refined), through the scale bar."""
    power, _, f, (gray, off) = _spectrum(rgb)
    n = len(f)
    ky, kx = np.unravel_index(int(np.argmax(power)), power.shape)
    ys, xs = (np.arange(ky - 3, ky + 4) % n), (np.arange(kx - 3, kx + 4) % n)
    patch = power[np.ix_(ys, xs)]
    fy = float((patch.sum(axis=1) * f[ys]).sum() / patch.sum())
    fx = float((patch.sum(axis=0) * f[xs]).sum() / patch.sum())
    period = 1 / math.hypot(fx, fy)
    return f"{_convert(period, *_bar(rgb, gray, off, bar), bar_unit, unit):.3f} {unit}"


def _spectrum(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any]:
    """(power spectrum of the box, zero-padded to 2048 with a Hann window and the slow
    background removed; its radial frequency; the frequencies; (grey, offset))."""
    box, gray, off = _box(rgb)
    img = _gray(box)
    img = img - ndimage.gaussian_filter(img, 30)
    h, w = img.shape
    img = img * np.outer(np.hanning(h), np.hanning(w))
    n = 2048
    power = np.abs(np.fft.fft2(img, (n, n))) ** 2
    f = np.fft.fftfreq(n)
    fr = np.hypot(f[:, None], f[None, :])
    power[(fr < 1 / 80) | (fr > 1 / 5)] = 0
    return power, fr, f, (gray, off)


def fringe_symmetry(rgb: np.ndarray, options: dict[str, str] | list[str]) -> str:
    """The option naming the spot pattern's symmetry: how many spectrum peaks (at least a
    third of the strongest) lie at the strongest peak's radius: 2 twofold, 4 fourfold, 6
    sixfold (3 would be threefold)."""
    power, fr, _, _ = _spectrum(rgb)
    top = float(power.max())
    # wrap: the spectrum is periodic (fringes near 0 or 90° peak on both edges of the array)
    peaks = (power == ndimage.maximum_filter(power, size=15, mode="wrap")) & (power >= top / 3)
    r0 = float(fr.flat[int(np.argmax(power))])
    n = int((peaks & (np.abs(fr - r0) < 0.08 * r0)).sum())
    fold = {2: "twofold", 3: "threefold", 4: "fourfold", 6: "sixfold"}.get(n)
    for letter, text in _lettered(options).items():
        if fold and text.startswith(f"a {fold} "):
            return letter
    raise StepError(f"perceive: {n} equal spectrum peaks, a symmetry no option names")


# -- micro / meso ------------------------------------------------------------------------------

def grain_size(rgb: np.ndarray, bar: float | None = None, bar_unit: str = "µm",
               unit: str = "µm") -> str:
    """The equivalent-circle diameter of the mean grain area: grains are the bright regions
    the dark boundaries enclose, counted with the field's edge grains."""
    box, gray, off = _box(rgb)
    label, n = ndimage.label(_gray(box) > 90)
    sizes = np.bincount(label.ravel())[1:]
    count = int((sizes >= 40).sum())
    h, w = label.shape
    d_px = math.sqrt(4 * w * h / (math.pi * count))
    return f"{_convert(d_px, *_bar(rgb, gray, off, bar), bar_unit, unit):.2f} {unit}"


def dark_fraction(rgb: np.ndarray, below: float = 128,
                  options: dict[str, str] | list[str] | None = None
                  ) -> str:
    """The dark area fraction of the image box in %, or the option closest to it."""
    box, _, _ = _box(rgb)
    value = float(np.mean(_gray(box) < below) * 100)
    return _pick(options, value) if options else f"{value:.1f} %"


def fibre_angle(rgb: np.ndarray, options: dict[str, str] | list[str]) -> str:
    """The option closest to the fibres' direction: perpendicular to the dominant gradient of
    the structure tensor (angles counter-clockwise from the horizontal, modulo 180)."""
    box, _, _ = _box(rgb)
    img = ndimage.gaussian_filter(_gray(box), 1.5)
    gx = ndimage.sobel(img, axis=1)
    gy = -ndimage.sobel(img, axis=0)  # y up
    theta = 0.5 * math.degrees(math.atan2(2 * (gx * gy).sum(), (gx * gx - gy * gy).sum()))
    return _pick(options, (theta + 90) % 180, circular=180)


def count_particles(rgb: np.ndarray, below: float = 120) -> str:
    """How many separate dark particles the field holds."""
    box, _, _ = _box(rgb)
    label, _ = ndimage.label(_gray(box) < below)
    sizes = np.bincount(label.ravel())[1:]
    return str(int((sizes >= 50).sum()))


# -- macro -------------------------------------------------------------------------------------

def _frame(rgb: np.ndarray) -> tuple[int, int, int, int]:
    """The plot frame (left, top, right, bottom): the outermost long black lines."""
    dark = np.all(np.asarray(rgb)[..., :3] < 90, axis=2)
    rows = np.flatnonzero(dark.sum(axis=1) > 300)
    cols = np.flatnonzero(dark.sum(axis=0) > 250)
    if len(rows) < 2 or len(cols) < 2:
        raise StepError("perceive: no plot frame on screen")
    return int(cols.min()), int(rows.min()), int(cols.max()), int(rows.max())


def _colour_mask(rgb: np.ndarray, colour: str, frame: tuple[int, int, int, int]) -> np.ndarray:
    target = np.array([int(COLOURS[colour][i:i + 2], 16) for i in (1, 3, 5)], float)
    near = np.abs(np.asarray(rgb, float)[..., :3] - target).sum(axis=2) < 70
    left, top, right, bottom = frame
    out = np.zeros_like(near)
    out[top + 2:bottom - 1, left + 2:right - 1] = near[top + 2:bottom - 1, left + 2:right - 1]
    return out


def _to_data(col: float, row: float, frame: tuple[int, int, int, int], xlim: list[float],
             ylim: list[float]) -> tuple[float, float]:
    left, top, right, bottom = frame
    x = xlim[0] + (col - left) / (right - left) * (xlim[1] - xlim[0])
    y = ylim[0] + (bottom - row) / (bottom - top) * (ylim[1] - ylim[0])
    return x, y


def curve_max(rgb: np.ndarray, xlim: list[float] | None = None,
              ylim: list[float] | None = None, colour: str = "blue", unit: str = "MPa") -> str:
    """The highest value a curve of ``colour`` reaches (a stress-strain curve's UTS), on the
    given axis limits or, without them, on the y axis read off its tick labels."""
    frame = _frame(rgb)
    rows, _ = np.nonzero(_colour_mask(rgb, colour, frame))
    if not len(rows):
        raise StepError(f"perceive: no {colour} curve in the plot")
    row = rows.min() + 1.0  # the centre of the 3-px line's top
    y = _to_data(0, row, frame, xlim, ylim)[1] if xlim and ylim else ticks.y_axis(rgb, frame)(row)
    return f"{y:.0f} {unit}"


def most_ductile(rgb: np.ndarray, options: dict[str, str] | list[str], xlim: list[float],
                 ylim: list[float]) -> str:
    """The option whose curve (named by its colour) reaches the largest strain."""
    frame = _frame(rgb)
    reach = {}
    for letter, text in _lettered(options).items():
        colour = next((c for c in COLOURS if c in text), None)
        cols = np.nonzero(_colour_mask(rgb, colour, frame))[1] if colour else []
        if not len(cols):
            raise StepError(f"perceive: no curve for option {letter} ({text!r})")
        reach[letter] = int(cols.max())
    return max(reach, key=reach.get)


def eutectic_point(rgb: np.ndarray, xlim: list[float], ylim: list[float], unit: str = "wt%"
                   ) -> str:
    """The eutectic composition: where the two liquidus branches meet the eutectic isotherm
    (the long horizontal line inside the frame), by extrapolating each branch's crossings of
    the rows just above it."""
    frame = _frame(rgb)
    left, top, right, bottom = frame
    dark = np.all(np.asarray(rgb)[..., :3] < 110, axis=2)
    inner = dark[top + 3:bottom - 2, left + 3:right - 2]
    long_rows = np.flatnonzero(inner.sum(axis=1) > 0.4 * inner.shape[1])
    if not len(long_rows):
        raise StepError("perceive: no eutectic isotherm in the plot")
    iso = int(long_rows.min())
    pairs = []
    for d in range(6, 22, 2):
        row = inner[iso - d]
        cols = np.flatnonzero(row)
        if not len(cols):
            continue
        groups = np.split(cols, np.flatnonzero(np.diff(cols) > 2) + 1)
        centres = [float(g.mean()) for g in groups]
        if len(centres) >= 4:
            mid = len(centres) // 2
            pairs.append((d, centres[mid - 1], centres[mid]))
    if len(pairs) < 3:
        raise StepError("perceive: the liquidus branches are not found above the isotherm")
    arr = np.array(pairs)
    fl, fr = np.polyfit(arr[:, 0], arr[:, 1], 1), np.polyfit(arr[:, 0], arr[:, 2], 1)
    d0 = (fr[1] - fl[1]) / (fl[0] - fr[0]) if fl[0] != fr[0] else 0.0
    col = float(np.polyval(fl, d0)) + left + 3
    x, _ = _to_data(col, 0, frame, xlim, ylim)
    return f"{x:.1f} {unit}"


def arrhenius_energy(rgb: np.ndarray) -> str:
    """The activation energy from the red fit line's slope, Ea = -R d(ln D)/d(1000/T), both
    axes read off their tick labels."""
    frame = _frame(rgb)
    rows, cols = np.nonzero(_colour_mask(rgb, "red", frame))
    if len(cols) < 50:
        raise StepError("perceive: no red fit line in the plot")
    a = np.polyfit(cols.astype(float), rows.astype(float), 1)[0]  # rows per column
    fy, fx = ticks.y_axis(rgb, frame), ticks.x_axis(rgb, frame)
    slope = a * (fy(1.0) - fy(0.0)) / (fx(1.0) - fx(0.0))
    return f"{-slope * R_GAS:.1f} kJ/mol"


PERCEIVERS: dict[str, Any] = {
    "lattice_type": lattice_type,
    "lattice_sentence": lattice_sentence,
    "nn_spacing": nn_spacing,
    "fringe_spacing": fringe_spacing,
    "fringe_symmetry": fringe_symmetry,
    "grain_size": grain_size,
    "dark_fraction": dark_fraction,
    "fibre_angle": fibre_angle,
    "count_particles": count_particles,
    "curve_max": curve_max,
    "most_ductile": most_ductile,
    "eutectic_point": eutectic_point,
    "arrhenius_energy": arrhenius_energy,
}
