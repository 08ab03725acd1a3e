"""Seeded CFD-like flow fields for ParaView, written as legacy VTK (``STRUCTURED_POINTS``).

A field is a plane (one layer in z) sampled on a uniform grid: a uniform stream plus a sum of
Lamb-Oseen vortices, whose tangential velocity is ``G / (2 pi r) (1 - exp(-r^2 / rc^2))`` and
whose vorticity is ``G / (pi rc^2) exp(-r^2 / rc^2)``. The ``pressure`` scalar has a Gaussian
well of depth ``rho G^2 / (8 pi^2 rc^2)`` at each vortex core (the Lamb-Oseen core pressure
drop, up to its constant), so the lowest pressure marks the strongest vortex. Every vortex
centre lies on a grid point. Gold values (ranges, the minimum's location, samples along lines,
threshold counts) are computed here from the very arrays written to the file, in float64 and
then rounded as the file stores them, so ParaView reads exactly these numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

RHO = 1.2      # kg/m^3
P0 = 101.3     # kPa-like reference, written as is


def _field(rng: np.random.Generator, nx: int, ny: int, spacing: float, n_vortices: int,
           u0: float, strong_row: int | None = None) -> dict[str, Any]:
    xs = np.arange(nx) * spacing
    ys = np.arange(ny) * spacing
    gx, gy = np.meshgrid(xs, ys)               # shape (ny, nx): row j is y, column i is x
    u = np.full_like(gx, u0)
    v = np.zeros_like(gx)
    vort = np.zeros_like(gx)
    p = np.full_like(gx, P0)
    vortices = []
    # vortex centres on grid points, well inside the domain and apart from each other
    margin = 8
    for _ in range(200):
        if len(vortices) == n_vortices:
            break
        i = int(rng.integers(margin, nx - margin))
        j = int(rng.integers(margin, ny - margin))
        if strong_row is not None and not vortices:
            j = int(strong_row)  # the first vortex, made the strongest below
        if any(abs(i - a["i"]) + abs(j - a["j"]) < 18 for a in vortices):
            continue
        gamma = float(rng.uniform(3.0, 9.0)) * (1 if rng.random() < 0.5 else -1)
        rc = float(rng.uniform(0.35, 0.6))
        vortices.append({"i": i, "j": j, "x": round(i * spacing, 6), "y": round(j * spacing, 6),
                         "gamma": round(gamma, 4), "rc": round(rc, 4)})
    # the deepest pressure well (rho G^2 / (8 pi^2 rc^2)) clearly the deepest, so "the
    # strongest vortex" is well defined and is where the pressure is lowest
    def depth(vx: dict[str, Any]) -> float:
        return RHO * vx["gamma"] ** 2 / (8 * np.pi**2 * vx["rc"] ** 2)

    ranked = sorted(vortices, key=depth, reverse=True)
    if strong_row is not None and ranked[0] is not vortices[0]:
        ranked.remove(vortices[0])
        ranked.insert(0, vortices[0])
    if len(ranked) > 1 and depth(ranked[0]) < 1.3 * depth(ranked[1]):
        top = ranked[0]
        scale = float(np.sqrt(1.3 * depth(ranked[1]) / depth(top))) * 1.05
        scale = max(scale, 1.0)
        top["gamma"] = round(top["gamma"] * scale, 4)
    for vx in vortices:
        vx["depth"] = round(depth(vx), 6)
    for vx in vortices:
        dx, dy = gx - vx["x"], gy - vx["y"]
        r2 = dx * dx + dy * dy
        g, rc = vx["gamma"], vx["rc"]
        with np.errstate(invalid="ignore", divide="ignore"):
            ut = np.where(r2 > 0, g / (2 * np.pi * r2) * (1 - np.exp(-r2 / rc**2)), 0.0)
        u += -ut * dy
        v += ut * dx
        vort += g / (np.pi * rc**2) * np.exp(-r2 / rc**2)
        p -= RHO * g**2 / (8 * np.pi**2 * rc**2) * np.exp(-r2 / rc**2)
    return {"xs": xs, "ys": ys, "u": np.round(u, 6), "v": np.round(v, 6),
            "vort": np.round(vort, 6), "p": np.round(p, 6), "vortices": vortices}


def _write_vtk(path: Path, nx: int, ny: int, spacing: float, arrays: dict[str, np.ndarray],
               vectors: dict[str, tuple[np.ndarray, np.ndarray]], title: str) -> None:
    lines = ["# vtk DataFile Version 3.0", title, "ASCII", "DATASET STRUCTURED_POINTS",
             f"DIMENSIONS {nx} {ny} 1", "ORIGIN 0 0 0", f"SPACING {spacing:g} {spacing:g} 1",
             f"POINT_DATA {nx * ny}"]
    for name, arr in arrays.items():
        lines += [f"SCALARS {name} double 1", "LOOKUP_TABLE default"]
        lines += [" ".join(f"{x:.6f}" for x in row) for row in arr]
    for name, (a, b) in vectors.items():
        lines.append(f"VECTORS {name} double")
        for ra, rb in zip(a, b, strict=True):
            lines.append(" ".join(f"{x:.6f} {y:.6f} 0" for x, y in zip(ra, rb, strict=True)))
    path.write_text("\n".join(lines) + "\n")


def _kept_cells(values: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """The cells Threshold keeps (all four corners in [lo, hi]), as a (ny-1, nx-1) mask."""
    inside = (values >= lo) & (values <= hi)
    return inside[:-1, :-1] & inside[1:, :-1] & inside[:-1, 1:] & inside[1:, 1:]


def _threshold(values: np.ndarray, lo: float, hi: float) -> tuple[int, int]:
    """Cells (pixels between four grid points) that ParaView's Threshold keeps on a point
    array with its defaults (method Between, All Scalars on): all four corners in [lo, hi];
    and the points of its output (those of the kept cells)."""
    inside = (values >= lo) & (values <= hi)
    kept = inside[:-1, :-1] & inside[1:, :-1] & inside[:-1, 1:] & inside[1:, 1:]
    used = np.zeros_like(inside)
    used[:-1, :-1] |= kept
    used[1:, :-1] |= kept
    used[:-1, 1:] |= kept
    used[1:, 1:] |= kept
    return int(kept.sum()), int(used.sum())


#: Points Plot Over Line samples by default (its Resolution, 1000 segments, plus one).
PLOT_LINE_SAMPLES = 1001


def flow_field(work: Path, rng: np.random.Generator, path: str = "flow.vtk",
               n_vortices: int = 3, nx: int = 81, ny: int = 61, spacing: float = 0.1,
               u0: float | None = None, level: float | None = None,
               strong_row: int | None = None) -> dict[str, Any]:
    """A plane flow with ``n_vortices`` Lamb-Oseen vortices, written to ``work/path``; with
    ``strong_row``, the strongest one sits on that grid row (y = row * spacing).

    Point arrays: ``pressure``, ``vorticity`` (scalars) and ``velocity`` (vector, z = 0).
    Gold: ``p_min``/``p_max``, ``vort_min``/``vort_max``, ``speed_max``/``speed_mean``,
    ``min_x``/``min_y`` (where the pressure is lowest), ``n_points``, ``strongest`` (the vortex
    with the deepest pressure well) and ``weakest``, ``line_y`` (the row through it),
    ``profile_min``/``profile_min_x`` (the lowest pressure along that row and its x),
    ``threshold`` (``level``, or a low quantile of the pressure)
    and ``threshold_cells``/``threshold_points``, ``isobar_points`` (the points of the
    contour at that level), ``p_cell_mean`` (the mean of Point Data to Cell Data's pressure)
    (the cells whose four corners are all below it), ``circulation`` (the vorticity integrated
    over the plane as Integrate Variables does), ``core_circulation``/``core_area`` (the same
    integral, and the area, over the threshold's cells only), ``vorticity_sum`` and
    ``vortices``.
    """
    if u0 is None:
        u0 = round(float(rng.uniform(0.5, 2.0)), 3)
    f = _field(rng, nx, ny, spacing, n_vortices, u0, strong_row)
    _write_vtk(work / path, nx, ny, spacing, {"pressure": f["p"], "vorticity": f["vort"]},
               {"velocity": (f["u"], f["v"])}, "Lamb-Oseen vortices in a uniform stream")
    p, vort = f["p"], f["vort"]
    speed = np.hypot(f["u"], f["v"])
    jm, im = np.unravel_index(int(np.argmin(p)), p.shape)
    strongest = max(f["vortices"], key=lambda vx: vx["depth"])
    row = p[strongest["j"]]
    if level is None:
        level = round(float(np.quantile(p, 0.06)), 2)
    cells, points = _threshold(p, float(p.min()) - 1.0, level)
    kept = _kept_cells(p, float(p.min()) - 1.0, level)
    # Contour on a 2-D grid: one output point per grid edge that the level crosses
    above = p >= level
    isobar_points = int((above[:, :-1] != above[:, 1:]).sum()
                        + (above[:-1, :] != above[1:, :]).sum())
    # the integral of the vorticity over the plane (ParaView's Integrate Variables: bilinear
    # cells, i.e. each cell's area times the mean of its four corners)
    cell_mean = (vort[:-1, :-1] + vort[1:, :-1] + vort[:-1, 1:] + vort[1:, 1:]) / 4.0
    return {
        "n_points": nx * ny, "n_cells": (nx - 1) * (ny - 1), "nx": nx, "ny": ny,
        "x_max": round((nx - 1) * spacing, 6), "y_max": round((ny - 1) * spacing, 6),
        "u0": u0,
        "p_min": float(p.min()), "p_max": float(p.max()), "p_sum": float(p.sum()),
        "vort_min": float(vort.min()), "vort_max": float(vort.max()),
        "speed_max": float(speed.max()), "speed_mean": float(speed.mean()),
        "min_x": round(float(f["xs"][im]), 6), "min_y": round(float(f["ys"][jm]), 6),
        "strongest": strongest, "line_y": strongest["y"],
        "weakest": min(f["vortices"], key=lambda vx: vx["depth"]),
        "profile_min": float(row.min()), "profile_max": float(row.max()),
        # Plot Over Line's default 1000 segments sample x = 0.008 m apart, so a minimum on
        # an odd node is seen only between nodes, higher: a profile's minimum is accepted
        # from the node's (0.01 below) to the default sampling's (0.01 above)
        "profile_min_lo": float(row.min()) - 0.01,
        "profile_min_hi": float(np.interp(np.linspace(0.0, float(f["xs"][-1]),
                                                      PLOT_LINE_SAMPLES), f["xs"], row).min())
        + 0.01,
        "profile_min_x": round(float(f["xs"][int(np.argmin(row))]), 6),
        "threshold": float(level),
        "threshold_cells": cells, "threshold_points": points, "isobar_points": isobar_points,
        "p_cell_mean": float(((p[:-1, :-1] + p[1:, :-1] + p[:-1, 1:] + p[1:, 1:]) / 4).mean()),
        "circulation": float(cell_mean.sum() * spacing * spacing),
        "circulation_cells": float(cell_mean.sum()),
        # Integrate Variables over the Threshold's output: the kept cells only
        "core_circulation": float((cell_mean * kept).sum() * spacing * spacing),
        "core_area": float(kept.sum() * spacing * spacing),
        "vorticity_sum": float(vort.sum()),
        "vortices": f["vortices"],
    }


GENERATORS = {"flow_field": flow_field}
