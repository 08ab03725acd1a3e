"""Macro-scale figures drawn with matplotlib (Agg, 900x700 px at 100 dpi): engineering
stress-strain curves, binary eutectic phase diagrams and Arrhenius plots.

The ductility and phase-diagram families have fixed axis limits (:data:`LIMITS`); the UTS and
Arrhenius plots are scaled to their data, as a plotting program would. Either way the limits
are printed as tick labels: a reader turns plotted pixels into values with them, and so do the
perceivers (which read the tick labels with OCR where the axes vary, :mod:`.ticks`).

- Stress-strain: linear elastic up to the yield strength, then work hardening
  ``sy + (uts - sy) (1 - (1 - t)^2.5)`` up to the uniform elongation (its maximum is the UTS),
  then necking, a quadratic fall to the fracture strain (the elongation at fracture).
- Phase diagram: a simple eutectic A-B system: liquidus lines from each melting point to the
  eutectic point (slightly bowed), solidus and solvus lines of the terminal solid solutions
  alpha and beta, the eutectic isotherm between them.
- Arrhenius: ln D against 1000/T for diffusion data ``D = D0 exp(-Ea / RT)`` with scatter, and
  its least-squares line (whose slope gives the gold activation energy).
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

LIMITS = {"stress": {"x": (0.0, 60.0), "y": (0.0, 1000.0)},
          "eutectic": {"x": (0.0, 100.0), "y": (300.0, 1200.0)}}
AXES = (0.11, 0.12, 0.84, 0.80)
AXES_LEGEND = (0.11, 0.12, 0.64, 0.80)
COLOURS = {"blue": "#1f77b4", "orange": "#ff7f0e", "green": "#2ca02c", "red": "#d62728"}
R_GAS = 8.314


def _figure(axes: tuple[float, float, float, float] = AXES):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 7), dpi=100)
    ax = fig.add_axes(axes)
    return fig, ax


def _rgb(fig) -> np.ndarray:
    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return np.asarray(Image.open(buf).convert("RGB")).copy()


def stress_strain(e_gpa: float, sy: float, uts: float, eu: float, ef: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(strain in %, stress in MPa) of the model curve described in the module docstring."""
    ey = sy / (e_gpa * 1e3) * 100
    el = np.linspace(0, ey, 20)
    t = np.linspace(0, 1, 300)
    hard = sy + (uts - sy) * (1 - (1 - t) ** 2.5)
    s = np.linspace(0, 1, 200)[1:]
    neck = uts - 0.18 * uts * s ** 2
    strain = np.concatenate([el, ey + t * (eu - ey), eu + s * (ef - eu)])
    stress = np.concatenate([el / 100 * e_gpa * 1e3, hard, neck])
    return strain, stress


def plot_stress_strain(curves: list[dict[str, Any]], legend: bool,
                       xlim: tuple[float, float] = LIMITS["stress"]["x"],
                       ylim: tuple[float, float] = LIMITS["stress"]["y"]) -> np.ndarray:
    """Curves ``{"label", "colour", "strain", "stress"}`` on the given axes (by default the
    ductility family's fixed ones)."""
    fig, ax = _figure(AXES_LEGEND if legend else AXES)
    for c in curves:
        ax.plot(c["strain"], c["stress"], color=COLOURS[c["colour"]], lw=2.2, label=c["label"])
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_xlabel("Engineering strain (%)", fontsize=14)
    ax.set_ylabel("Engineering stress (MPa)", fontsize=14)
    ax.tick_params(labelsize=13)
    if legend:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=13, frameon=False)
    return _rgb(fig)


def eutectic_lines(ta: float, tb: float, te: float, xe: float, xa: float, xb: float,
                   bow: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """The phase boundaries of a simple eutectic system as (x in wt% B, T in C) polylines."""
    t = np.linspace(0, 1, 120)
    liq_l = (t * xe, ta + (te - ta) * t + bow * t * (1 - t) * (ta - te))
    liq_r = (xe + t * (100 - xe), te + (tb - te) * t + bow * t * (1 - t) * (tb - te))
    sol_l = (t * xa, ta + (te - ta) * t ** 0.8)
    sol_r = (xb + t * (100 - xb), te + (tb - te) * (t ** 1.25))
    tmin = LIMITS["eutectic"]["y"][0]
    solv_l = (xa * (1 - 0.6 * t ** 1.5), te + (tmin - te) * t)
    solv_r = (xb + (100 - xb) * 0.6 * t ** 1.5, te + (tmin - te) * t)
    iso = (np.array([xa, xb]), np.array([te, te]))
    return [liq_l, liq_r, sol_l, sol_r, solv_l, solv_r, iso]


def plot_eutectic(lines: list[tuple[np.ndarray, np.ndarray]], a: str, b: str, ta: float,
                  tb: float, te: float, xe: float, xa: float, xb: float) -> np.ndarray:
    fig, ax = _figure()
    for x, y in lines:
        ax.plot(x, y, color="black", lw=1.8)
    ax.set_xlim(*LIMITS["eutectic"]["x"])
    ax.set_ylim(*LIMITS["eutectic"]["y"])
    ax.set_xlabel(f"Composition (wt% {b})", fontsize=14)
    ax.set_ylabel("Temperature (°C)", fontsize=14)
    ax.tick_params(labelsize=12)
    ax.text(50, 0.5 * (max(ta, tb) + 1200) + 30, "L", fontsize=16, ha="center", va="center")
    mid = te + 0.45 * (min(ta, tb) - te)
    ax.text(xa + 0.45 * (xe - xa) * 0.6, te + 0.3 * (ta - te) + 25, "α + L", fontsize=13,
            ha="center", va="bottom")
    ax.text(xe + 0.55 * (xb - xe) * 1.25, te + 0.3 * (tb - te) + 25, "L + β", fontsize=13,
            ha="center", va="bottom")
    ax.text(50, (te + 300) / 2, "α + β", fontsize=14, ha="center", va="center")
    ax.text(1.5, 340, "α", fontsize=13)
    ax.text(96.5, 340, "β", fontsize=13)
    ax.set_title(f"{a}-{b} phase diagram", fontsize=14)
    del mid
    return _rgb(fig)


def plot_arrhenius(x: np.ndarray, y: np.ndarray, fit: tuple[float, float],
                   xlim: tuple[float, float], ylim: tuple[float, float]) -> np.ndarray:
    """Points (1000/T, ln D) as black squares and the fit line ``y = fit[0] x + fit[1]`` in
    red a little beyond the data's range, on the given axes."""
    fig, ax = _figure()
    ax.plot(x, y, "s", color="black", ms=7)
    pad = 0.04 * float(np.ptp(x))
    xs = np.array([x.min() - pad, x.max() + pad])
    ax.plot(xs, fit[0] * xs + fit[1], color=COLOURS["red"], lw=2.0)
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_xlabel("1000 / T  (K$^{-1}$)", fontsize=14)
    ax.set_ylabel("ln D  (D in m$^2$ s$^{-1}$)", fontsize=14)
    ax.tick_params(labelsize=13)
    return _rgb(fig)
