"""Seeded functions with known roots, extrema and values for KAlgebra's tasks.

Every generator takes ``(work_dir, rng, **args)``, writes the task's input files (KAlgebra
console scripts, ``.kal``: one Analitza expression a line) into the work directory and returns
its gold values, computed here on the host with numpy (closed forms where there are any).

A function is described by a small spec that :func:`evaluate` computes on the host, so a
saved plot can be compared with the function point by point:
``{"kind": "poly", "coeffs": [...]}`` (highest power first) or
``{"kind": "damped", "A": .., "g": .., "w": ..}`` for ``A*exp(-g*x)*cos(w*x)``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

# The 2D Graph's plot area in the main window's coordinates (measured: KAlgebra opens a
# 900x500 client area at (190, 157) of the 1280x800 screen under openbox), and its default
# view: x in [-XSPAN, XSPAN] and y in [-10, 10], the aspect ratio kept.
PLOT_LEFT, PLOT_TOP, PLOT_WIDTH, PLOT_HEIGHT = 2, 46, 604, 429
XSPAN = 14.0793


def evaluate(spec: dict[str, Any], x: np.ndarray) -> np.ndarray:
    """The function ``spec`` describes, at ``x``."""
    kind = spec.get("kind")
    x = np.asarray(x, float)
    if kind == "poly":
        return np.polyval(np.asarray(spec["coeffs"], float), x)
    if kind == "damped":
        return float(spec["A"]) * np.exp(-float(spec["g"]) * x) * np.cos(float(spec["w"]) * x)
    if kind == "envelope":
        return float(spec["A"]) * np.exp(-float(spec["g"]) * x)
    raise ValueError(f"unknown function kind {kind!r}")


def _num(v: float, digits: int = 4) -> str:
    """A number as KAlgebra reads it (no exponent, no trailing zeros)."""
    text = f"{v:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def poly_text(coeffs: list[float]) -> str:
    """The polynomial with ``coeffs`` (highest first) as KAlgebra input: ``2*x^3-3*x+1``."""
    n = len(coeffs) - 1
    parts: list[str] = []
    for i, c in enumerate(coeffs):
        if c == 0:
            continue
        p = n - i
        mag = _num(abs(c))
        term = ("" if (mag == "1" and p) else mag) + ("*" if mag != "1" and p else "")
        term += "x" if p == 1 else (f"x^{p}" if p > 1 else "")
        sign = "-" if c < 0 else "+"
        parts.append(("-" if sign == "-" else "") + term if not parts else f"{sign}{term}")
    return "".join(parts) or "0"


# -- generators ---------------------------------------------------------------------------------


def polynomial(work: Path, rng: np.random.Generator, coeffs: list[float],
               x0: float = 0.0, signs: list[int] | None = None) -> dict[str, Any]:
    """Values of the polynomial with ``coeffs`` (each times its ``signs`` entry, when given)
    at ``x0`` (value, slope, curvature), its real roots and its critical points with their
    values (no file)."""
    c = np.asarray(coeffs, float) * (np.asarray(signs, float) if signs else 1.0)
    d1, d2 = np.polyder(c), np.polyder(c, 2)
    crit = sorted(float(r.real) for r in np.roots(d1) if abs(r.imag) < 1e-9) if len(d1) > 1 \
        else []
    roots = sorted(float(r.real) for r in np.roots(c) if abs(r.imag) < 1e-9)
    return {"value": float(np.polyval(c, x0)), "slope": float(np.polyval(d1, x0)),
            "curvature": float(np.polyval(d2, x0)), "roots": roots,
            "critical": crit, "critical_values": [float(np.polyval(c, x)) for x in crit],
            "spec": {"kind": "poly", "coeffs": [float(v) for v in c]},
            "derivative_spec": {"kind": "poly", "coeffs": [float(v) for v in d1]},
            "text": poly_text(list(c))}


def series(work: Path, rng: np.random.Generator, kind: str, n: int,
           c: float = 0.0) -> dict[str, Any]:
    """A partial sum or product to ``n`` (and to ``n - 1``, the off-by-one a wrong bound gives).

    ``basel``: sum 1/(k^2 + c); ``alternating``: sum (-1)^(k+1)/(k + c); ``wallis``: product
    4k^2/(4k^2 - 1) (tends to pi/2); ``sine``: Euler's product k^2/(k^2 - c^2) (0 < c < 1,
    tends to pi c / sin(pi c); c = 1/2 is Wallis's); ``geometric``: sum c^k from k = 0.
    """
    k = np.arange(1, int(n) + 1, dtype=float)
    if kind == "basel":
        terms = 1.0 / (k**2 + c)
    elif kind == "alternating":
        terms = (-1.0) ** (k + 1) / (k + c)
    elif kind == "wallis":
        terms = 4 * k**2 / (4 * k**2 - 1)
        return {"value": float(np.prod(terms)), "short": float(np.prod(terms[:-1]))}
    elif kind == "sine":
        terms = k**2 / (k**2 - float(c) ** 2)
        return {"value": float(np.prod(terms)), "short": float(np.prod(terms[:-1])),
                "limit": float(math.pi * c / math.sin(math.pi * c))}
    elif kind == "geometric":
        terms = float(c) ** np.arange(0, int(n) + 1, dtype=float)
        return {"value": float(terms.sum()), "short": float(terms[:-1].sum())}
    else:
        raise ValueError(f"unknown series kind {kind!r}")
    return {"value": float(terms.sum()), "short": float(terms[:-1].sum())}


def depressed_cubic(work: Path, rng: np.random.Generator, p: float,
                    q: float, h: float = 0.0, sign: int = 1) -> dict[str, Any]:
    """f(x) = u^3 + p u - q with u = x - ``sign`` * ``h`` (the instruction's x - h, or x + h
    for ``sign`` -1) and p > 0: one real root, the shift plus the
    depressed cubic's (Cardano), and where it lies on the 2D Graph's default view (the main
    window's coordinates of the curve's point there; ``px_far`` is 0.3 to its right, where a
    careless reading would land). The spec's coefficients are those of the expanded cubic."""
    s = math.sqrt(q**2 / 4 + p**3 / 27)
    root = math.copysign(abs(q / 2 + s) ** (1 / 3), q / 2 + s) + \
        math.copysign(abs(q / 2 - s) ** (1 / 3), q / 2 - s) + float(sign) * float(h)
    h = float(sign) * float(h)
    coeffs = [1.0, -3.0 * h, 3.0 * h * h + float(p), -h**3 - float(p) * h - float(q)]
    return {"root": root, "spec": {"kind": "poly", "coeffs": coeffs},
            **plot_point(root, 0.0), "px_far": plot_point(root + 0.3, 0.0)["px"]}


def plot_point(x: float, y: float) -> dict[str, int]:
    """Where (x, y) is drawn on the 2D Graph's default view, in main-window coordinates."""
    scale = PLOT_WIDTH / (2 * XSPAN)
    return {"px": int(round(PLOT_LEFT + PLOT_WIDTH / 2 + x * scale)),
            "py": int(round(PLOT_TOP + PLOT_HEIGHT / 2 - y * scale))}


def damped(work: Path, rng: np.random.Generator, A: float, g: float,
           w: float) -> dict[str, Any]:
    """The damped oscillation ``A exp(-g x) cos(w x)`` given in an instruction (no file), its
    envelope curves ``±A exp(-g x)``, and the undamped one a plot that forgot the damping would
    show."""
    return {"spec": {"kind": "damped", "A": float(A), "g": float(g), "w": float(w)},
            "undamped_spec": {"kind": "damped", "A": float(A), "g": 0.0, "w": float(w)},
            "envelope_spec": {"kind": "envelope", "A": float(A), "g": float(g)},
            "lower_envelope_spec": {"kind": "envelope", "A": -float(A), "g": float(g)}}


def fixed_point(work: Path, rng: np.random.Generator, c: float) -> dict[str, Any]:
    """The root of cos(x) = x / c (c > 0: one root, in (0, pi/2)), by bisection to 1e-13."""
    lo, hi = 0.0, math.pi / 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if math.cos(mid) - mid / c > 0:
            lo = mid
        else:
            hi = mid
    return {"root": (lo + hi) / 2}


def logistic(work: Path, rng: np.random.Generator, K: float, P0: float, r: float,
             t1: float) -> dict[str, Any]:
    """The logistic growth P(t) = K / (1 + (K - P0)/P0 exp(-r t)) at t1, and the time it
    reaches half the capacity, ln((K - P0)/P0) / r."""
    value = K / (1 + (K - P0) / P0 * math.exp(-r * t1))
    return {"value": value, "half_time": math.log((K - P0) / P0) / r}


def damped_script(work: Path, rng: np.random.Generator, path: str = "oscillator.kal",
                  t0: float = 1.0, name: str = "y") -> dict[str, Any]:
    """A console script defining a damped oscillation ``y(t) = A exp(-g t) cos(w t)`` from its
    amplitude, damping rate and angular frequency, drawn per seed; gold: y(t0), the period,
    the first zero crossing and the envelope at t0."""
    amp = float(np.round(rng.uniform(2.0, 8.0), 2))
    g = float(np.round(rng.uniform(0.08, 0.35), 3))
    w = float(np.round(rng.uniform(1.2, 3.5), 3))
    lines = [f"A := {_num(amp, 2)}", f"g := {_num(g, 3)}", f"w := {_num(w, 3)}",
             f"{name} := t -> A*exp(-g*t)*cos(w*t)"]
    (work / path).write_text("\n".join(lines) + "\n")
    value = amp * math.exp(-g * t0) * math.cos(w * t0)
    return {"A": amp, "g": g, "w": w, "value": value, "period": 2 * math.pi / w,
            "first_zero": math.pi / (2 * w), "envelope": amp * math.exp(-g * t0),
            "spec": {"kind": "damped", "A": amp, "g": g, "w": w},
            "envelope_spec": {"kind": "envelope", "A": amp, "g": g}}


def study_script(work: Path, rng: np.random.Generator, path: str = "study.kal",
                 c: int = 0) -> dict[str, Any]:
    """A console script defining a cubic ``f`` with two turning points, drawn per seed as
    f(x) = a (x^3/3 - (r1 + r2) x^2/2 + r1 r2 x) + c, so f'(x) = a (x - r1)(x - r2): a local
    maximum at r1 < 0 and a local minimum at r2 > 0 (a > 0)."""
    r1 = int(rng.integers(-4, 0))
    r2 = int(rng.integers(1, 5))
    a = float(rng.choice([0.5, 0.25, 0.2]))
    c = float(c)
    coeffs = [a / 3, -a * (r1 + r2) / 2, a * r1 * r2, c]
    text = (f"f := x -> {_num(a, 2)}*(x^3/3 - ({r1 + r2})*x^2/2 + ({r1 * r2})*x)"
            f" + ({int(c)})")
    (work / path).write_text(text + "\n")
    gold = polynomial(work, rng, coeffs, 0.0)
    values = [float(np.polyval(coeffs, r)) for r in (r1, r2)]
    # the inflection point, where f''(x) = a (2x - r1 - r2) vanishes: halfway between the
    # turning points, and f there is the mean of f at them (a cubic is point-symmetric)
    x_infl = (r1 + r2) / 2
    return {**gold, "r1": r1, "r2": r2, "f_r1": values[0], "f_r2": values[1],
            "max_value": max(values), "min_value": min(values),
            "inflection": x_infl, "f_inflection": float(np.polyval(coeffs, x_infl)),
            "second_derivative_spec": {"kind": "poly",
                                       "coeffs": [float(v) for v in np.polyder(coeffs, 2)]}}


GRAVITY = {"Earth": 9.81, "Mars": 3.71, "the Moon": 1.62}


def projectile_script(work: Path, rng: np.random.Generator, path: str = "projectile.kal",
                      planet: str = "Earth") -> dict[str, Any]:
    """A script defining a projectile's launch speed v0 (m/s) and angle theta (rad), drawn per
    seed, the surface gravity of ``planet`` and the range R and apex height H it derives from
    them (no drag)."""
    gr = GRAVITY[planet]
    v0 = float(np.round(rng.uniform(8.0, 40.0), 1))
    theta = float(np.round(rng.uniform(0.25, 1.3), 3))
    lines = [f"v0 := {_num(v0, 1)}", f"theta := {_num(theta, 3)}", f"gr := {gr}",
             "R := v0^2*sin(2*theta)/gr", "H := (v0*sin(theta))^2/(2*gr)"]
    (work / path).write_text("\n".join(lines) + "\n")
    return {"v0": v0, "theta": theta, "R": v0**2 * math.sin(2 * theta) / gr,
            "H": (v0 * math.sin(theta)) ** 2 / (2 * gr)}


def integrand_script(work: Path, rng: np.random.Generator, path: str = "integrand.kal",
                     a: int = 2, b: int = 2) -> dict[str, Any]:
    """A script defining f(x) = a x^2 exp(-x/b) (whose antiderivative KAlgebra cannot find)."""
    (work / path).write_text(f"f := x -> {a}*x^2*exp(-x/{b})\n")
    return {"a": a, "b": b}


def decoy_script(work: Path, rng: np.random.Generator, path: str = "notes.kal") -> dict[str, Any]:
    """A script that defines other things than the task asks for (a missing-input task)."""
    k = float(np.round(rng.uniform(0.5, 2.0), 2))
    (work / path).write_text(f"k := {_num(k, 2)}\nh := x -> k*x^2\n")
    return {"k": k}


GENERATORS = {
    "polynomial": polynomial,
    "series": series,
    "depressed_cubic": depressed_cubic,
    "damped": damped,
    "fixed_point": fixed_point,
    "logistic": logistic,
    "damped_script": damped_script,
    "study_script": study_script,
    "projectile_script": projectile_script,
    "integrand_script": integrand_script,
    "decoy_script": decoy_script,
}
