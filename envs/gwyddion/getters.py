"""Gwyddion getters: the channels and masks of ``.gwy`` files the agent saved.

Imported by :func:`sciagent_gym.tools.load_tool_getters` as ``sciagent_gym.envs.gwyddion.getters``.
Files are read with the bounded reader of :mod:`.gwyfmt`; a missing, oversized or malformed
file raises GetterError, which the evaluator turns into a failed criterion. Reference arrays
(gold) are TIFF files on the host side, written when the task was staged.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

import numpy as np
from sciagent_gym.envs.gwyddion.gwyfmt import (
    Channel,
    GwyFormatError,
    GwyObject,
    channels,
    datafield_array,
    parse_gwy,
)

from sciagent_gym.sdk import GetterError, decode_text, looks_binary, pick_key, read_bytes, register

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState

MAX_GWY_BYTES = 64 * 1024 * 1024
NM = 1e-9


def _container(state: FinalState, path: str) -> GwyObject:
    data = read_bytes(state, path, MAX_GWY_BYTES)
    try:
        return parse_gwy(data)
    except GwyFormatError as exc:
        raise GetterError(f"{path}: {exc}") from None
    except (RecursionError, MemoryError, struct.error) as exc:
        raise GetterError(f"{path}: unreadable ({type(exc).__name__})") from None


def _channels(state: FinalState, path: str) -> list[Channel]:
    top = _container(state, path)
    try:
        found = channels(top)
    except GwyFormatError as exc:
        raise GetterError(f"{path}: {exc}") from None
    if not found:
        raise GetterError(f"{path}: holds no image channel")
    return found


def _reference(reference_path: str) -> np.ndarray:
    import tifffile

    try:
        return np.asarray(tifffile.imread(reference_path), float)
    except Exception as exc:
        raise GetterError(f"reference {reference_path}: cannot read: {exc}") from None


def _rel_diff(data: np.ndarray, ref: np.ndarray) -> float:
    """RMS of the difference (each without its mean) over the reference's standard deviation;
    inf when the shapes differ or the data are not finite."""
    if data.shape != ref.shape or not np.isfinite(data).all():
        return float("inf")
    diff = (data - data.mean()) - (ref - ref.mean())
    return float(np.sqrt(np.mean(diff**2)) / max(ref.std(), 1e-30))


@register("gwy_file")
def gwy_file(state: FinalState, path: str, key: str | None = None,
             reference_path: str | None = None) -> Any:
    """A saved ``.gwy`` file: ``n_channels``, ``titles``, ``units_z``; with a reference array,
    ``best`` (the channel closest to it) as {"rel_diff", "title", "shape", "xreal_nm",
    "yreal_nm", "unit_z", "log"} and ``rel_diff`` (its RMS difference, means removed, over
    the reference's standard deviation: 0 for the same heights; inf for another shape)."""
    found = _channels(state, path)
    info: dict[str, Any] = {"n_channels": len(found), "titles": [c.title for c in found],
                            "units_z": [c.unit_z for c in found]}
    if reference_path is not None:
        ref = _reference(reference_path)
        scored = [(_rel_diff(c.data, ref), c) for c in found]
        rel, best = min(scored, key=lambda pair: pair[0])
        info["rel_diff"] = rel
        info["best"] = {"rel_diff": rel, "title": best.title, "shape": list(best.data.shape),
                        "xreal_nm": best.xreal / NM, "yreal_nm": best.yreal / NM,
                        "unit_z": best.unit_z, "log": best.log}
    return pick_key(path, info, key)


def _components(mask: np.ndarray) -> tuple[np.ndarray, int]:
    from scipy import ndimage

    labels, count = ndimage.label(mask > 0.5)
    return labels, int(count)


@register("gwy_mask")
def gwy_mask(state: FinalState, path: str, particles: list[dict[str, float]],
             key: str | None = None) -> Any:
    """The grain mask saved with a channel of a ``.gwy`` file, against the particles the
    generator placed ({"x", "y", "r_px"}): ``n_grains`` (4-connected components), ``hit``
    (particles whose centre pixel is masked), ``one_each`` (particles whose centre lies in a
    grain of its own, no two sharing one), ``stray`` (grains that hold no particle centre) and
    ``fraction`` (masked share of the image; ``coverage_pct`` the same in percent)."""
    top = _container(state, path)
    masks = [(k, v) for k, v in top.items.items()
             if k.endswith("/mask") and isinstance(v, GwyObject)]
    if not masks:
        raise GetterError(f"{path}: no mask saved (mark the grains before saving)")
    try:
        found = channels(top)
        mask, _ = datafield_array(masks[0][1], masks[0][0])
    except GwyFormatError as exc:
        raise GetterError(f"{path}: {exc}") from None
    if found and mask.shape != found[0].data.shape:
        raise GetterError(f"{path}: the mask's shape {mask.shape} is not the data's")
    labels, count = _components(mask)
    centres = []
    for p in particles:
        x, y = int(p["x"]), int(p["y"])
        inside = 0 <= y < labels.shape[0] and 0 <= x < labels.shape[1]
        centres.append(int(labels[y, x]) if inside else 0)
    hit = [c for c in centres if c > 0]
    info = {"n_grains": count, "hit": len(hit), "one_each": len(set(hit)) == len(particles)
            and len(hit) == len(particles),
            "stray": count - len(set(hit)), "fraction": float((mask > 0.5).mean()),
            "coverage_pct": 100.0 * float((mask > 0.5).mean())}
    return pick_key(path, info, key)


def _poly_surface(z: np.ndarray, degree: int) -> np.ndarray:
    """The least-squares polynomial of ``z`` with x and y degrees up to ``degree`` each
    (degree 1 without the xy term: a plane)."""
    yres, xres = z.shape
    y, x = np.mgrid[0:yres, 0:xres].astype(float)
    x, y = x.ravel() / xres - 0.5, y.ravel() / yres - 0.5
    terms = [(i, j) for i in range(degree + 1) for j in range(degree + 1)]
    if degree == 1:
        terms = [(0, 0), (1, 0), (0, 1)]
    basis = np.stack([x**i * y**j for i, j in terms], axis=1)
    coef, *_ = np.linalg.lstsq(basis, z.ravel(), rcond=None)
    return (basis @ coef).reshape(z.shape)


def _detrended(z: np.ndarray, how: str) -> np.ndarray:
    if how == "plane":
        return z - _poly_surface(z, 1)
    if how == "poly2":
        return z - _poly_surface(z, 2)
    if how == "rows":
        return z - np.median(z, axis=1, keepdims=True)
    if how == "plane_rows":
        flat = z - _poly_surface(z, 1)
        return flat - np.median(flat, axis=1, keepdims=True)
    raise GetterError(
        f"gwy_surface: detrend must be plane, poly2, rows or plane_rows, not {how!r}")


def _slopes_nm_per_um(diff: np.ndarray, xreal: float, yreal: float) -> tuple[float, float]:
    """The x and y slopes (nm per µm) of the least-squares plane through ``diff``."""
    yres, xres = diff.shape
    y, x = np.mgrid[0:yres, 0:xres].astype(float)
    xs, ys = (x.ravel() + 0.5) * xreal / xres * 1e6, (y.ravel() + 0.5) * yreal / yres * 1e6
    basis = np.stack([np.ones(diff.size), xs, ys], axis=1)
    coef, *_ = np.linalg.lstsq(basis, diff.ravel(), rcond=None)
    return float(coef[1] / NM), float(coef[2] / NM)


@register("gwy_surface")
def gwy_surface(state: FinalState, path: str, reference_path: str, detrend: str = "plane",
                key: str | None = None) -> Any:
    """How a saved channel differs from a reference surface, part by part. The channel is the
    one closest to the reference (plain ``rel_diff``, as :func:`gwy_file`); keys:
    ``shape_diff`` (the rel_diff once each has its own ``detrend`` removed: "plane", "poly2"
    (x^i y^j, i, j <= 2), "rows" (each row's median) or "plane_rows" (the plane, then each
    row's median): small when the channel shows the same surface whatever background it still
    carries), ``tilt_nm`` (the rise across the scan of the channel's least-squares plane),
    ``bow_nm`` (RMS of its degree-2 polynomial beyond that plane), ``row_spread_nm`` (standard
    deviation of its row medians), ``row_jump_nm`` (standard deviation of the steps between
    neighbouring rows' medians: line offsets left, whatever tilt) and ``slope_err_x`` /
    ``slope_err_y`` (the x and y slopes, nm per µm, of the plane through channel minus
    reference: what of a given tilt is left or was overdone). Of channel minus reference
    without its plane: ``row_offset_rms_nm`` (RMS of its row means: offsets per scan line that
    differ from the reference's) and ``within_row_nm`` (RMS of the rest: changes that are not
    an offset of a whole line)."""
    found = _channels(state, path)
    ref = _reference(reference_path)
    rel, best = min(((_rel_diff(c.data, ref), c) for c in found), key=lambda pair: pair[0])
    z = best.data
    if z.shape != ref.shape or not np.isfinite(z).all():
        raise GetterError(f"{path}: no channel of the reference's shape {ref.shape}")
    plane = _poly_surface(z, 1)
    yres, xres = z.shape
    rise_x, rise_y = plane[0, -1] - plane[0, 0], plane[-1, 0] - plane[0, 0]
    bow = _poly_surface(z, 2) - plane
    sx, sy = _slopes_nm_per_um(z - ref, best.xreal, best.yreal)
    diff = z - ref
    diff = diff - _poly_surface(diff, 1)
    offsets = diff.mean(axis=1, keepdims=True)
    info = {"rel_diff": rel,
            "shape_diff": _rel_diff(_detrended(z, detrend), _detrended(ref, detrend)),
            "tilt_nm": float(np.hypot(rise_x * xres / max(xres - 1, 1),
                                      rise_y * yres / max(yres - 1, 1)) / NM),
            "bow_nm": float(np.sqrt(np.mean((bow - bow.mean()) ** 2)) / NM),
            "row_spread_nm": float(np.median(z, axis=1).std() / NM),
            "row_jump_nm": float(np.diff(np.median(z, axis=1)).std() / NM),
            "slope_err_x": sx, "slope_err_y": sy,
            "row_offset_rms_nm": float(np.sqrt(np.mean(offsets**2)) / NM),
            "within_row_nm": float(np.sqrt(np.mean((diff - offsets) ** 2)) / NM)}
    return pick_key(path, info, key)


MAX_TABLE_BYTES = 1024 * 1024
MAX_TABLE_ROWS = 10000


def _number_rows(path: str, text: str) -> np.ndarray:
    """The rows of numbers of a text table (``#`` comment lines and blank lines skipped), as a
    (rows, columns) array; a GetterError when a row is not all numbers or the rows differ in
    length."""
    rows: list[list[float]] = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            rows.append([float(tok) for tok in line.replace(",", " ").split()])
        except ValueError:
            raise GetterError(f"{path}: line {n} is not a row of numbers") from None
        if len(rows[-1]) != len(rows[0]):
            raise GetterError(f"{path}: line {n} has {len(rows[-1])} values, the first row "
                              f"{len(rows[0])}")
        if len(rows) > MAX_TABLE_ROWS:
            raise GetterError(f"{path}: more than {MAX_TABLE_ROWS} rows")
    if not rows or not rows[0]:
        raise GetterError(f"{path}: holds no row of numbers")
    return np.asarray(rows, float)


@register("grain_values")
def grain_values(state: FinalState, path: str, areas_nm2: list[float], pixel_nm: float,
                 key: str | None = None) -> Any:
    """A table of per-grain values, as Grain Distributions' "Export raw data" writes it (one
    row per grain, one column per quantity, SI units: m² and m), against the grains'
    projected areas ``areas_nm2``: ``n_rows``, ``n_cols``, ``area_err_px`` (of the column
    closest to the areas, the largest difference between its sorted values and the sorted
    areas, in pixels of ``pixel_nm``: 0 for Gwyddion's own projected areas; inf when the
    row count differs) and ``radius_err`` (the same for the equivalent disc radii
    sqrt(A/π), as a relative difference)."""
    raw = read_bytes(state, path, MAX_TABLE_BYTES)
    if looks_binary(raw):
        raise GetterError(f"{path}: not a text file")
    table = _number_rows(path, decode_text(raw))
    gold = np.sort(np.asarray(areas_nm2, float)) * NM * NM
    pixel_area = (pixel_nm * NM) ** 2
    area_err = radius_err = float("inf")
    if table.shape[0] == gold.size and gold.size:
        radii = np.sqrt(gold / np.pi)
        for column in table.T:
            values = np.sort(column)
            if not np.isfinite(values).all():
                continue
            area_err = min(area_err, float(np.max(np.abs(values - gold)) / pixel_area))
            radius_err = min(radius_err, float(np.max(np.abs(values / radii - 1))))
    info = {"n_rows": int(table.shape[0]), "n_cols": int(table.shape[1]),
            "area_err_px": area_err, "radius_err": radius_err}
    return pick_key(path, info, key)
