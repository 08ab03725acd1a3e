"""Peak profiles as Fityk defines them, and the fits Fityk does, run on the host to derive gold
values from the noisy data a generator wrote: the pseudo-Voigt area, the Shirley background
(:func:`shirley_bg`, the same iteration as Fityk's), weighted least squares of Gaussians
(:func:`fit_gaussians`) and of one reflection (:func:`fit_reflection`).

A band's ``fwhm`` is the full width at half maximum (Fityk's Gaussian, Lorentzian and
PseudoVoigt parameter ``hwhm`` is half of it), ``area`` is the integral above the baseline.
"""

from __future__ import annotations

import math

import numpy as np

from sciagent_gym.sdk import crystals

SQRT_PI_LN2 = math.sqrt(math.pi / math.log(2))


def pv_area(height: float, fwhm: float, eta: float) -> float:
    """Integral of a pseudo-Voigt of this height, FWHM and Lorentzian fraction."""
    return height * fwhm / 2 * (eta * math.pi + (1 - eta) * SQRT_PI_LN2)


def _band(x: np.ndarray, height: float, center: float, fwhm: float, eta: float) -> np.ndarray:
    return height * crystals.pseudo_voigt(x, center, fwhm, eta)


def _log_uniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def shirley_bg(x: np.ndarray, y: np.ndarray, max_iter: int = 50, max_rdiff: float = 1e-6
               ) -> np.ndarray:
    """The Shirley background of (x, y) exactly as Fityk 1.3 computes it (``shirley_bg(@n)``,
    Data > Remove Shirley BG): anchored at the first and last point's y, the step at each x
    proportional to the (trapezoid) area above the background from the first point to x,
    iterated until that area changes by less than ``max_rdiff`` (at most ``max_iter`` times)."""
    y = np.asarray(y, float)
    ya, dy = float(y[0]), float(y[-1] - y[0])
    bg = np.full(len(y), ya)
    cum = np.zeros(len(y))
    old = 0.0
    for _ in range(max_iter):
        rest = y - bg
        cum[1:] = np.cumsum((rest[1:] + rest[:-1]) / 2 * np.diff(x))
        if old != 0 and abs(cum[-1] - old) / old < max_rdiff:
            break
        old = float(cum[-1])
        bg = ya + dy / cum[-1] * cum
    return bg


def fit_gaussians(x: np.ndarray, y: np.ndarray, sigma: np.ndarray,
                  start: list[dict[str, float]]) -> list[dict[str, float]]:
    """Weighted least squares of a sum of Fityk Gaussians (height, center, hwhm) to (x, y),
    started at ``start``: what Fityk's fit of that model finds (its default weights are
    1/sigma, sigma = sqrt(counts))."""
    from scipy.optimize import least_squares

    def model(p: np.ndarray) -> np.ndarray:
        out = np.zeros_like(x)
        for h, c, w in p.reshape(-1, 3):
            out = out + h * np.exp(-math.log(2) * ((x - c) / w) ** 2)
        return out

    p0 = np.array([[b["height"], b["center"], b["hwhm"]] for b in start]).ravel()
    res = least_squares(lambda p: (model(p) - y) / sigma, p0, method="lm", xtol=1e-12,
                        ftol=1e-12)
    out = []
    for h, c, w in res.x.reshape(-1, 3):
        out.append({"height": float(h), "center": float(c), "hwhm": float(abs(w)),
                    "fwhm": float(2 * abs(w)), "area": float(h * abs(w) * SQRT_PI_LN2)})
    return out


def fit_reflection(x: np.ndarray, y: np.ndarray, center: float, fwhm: float, eta: float,
                   height: float, half_window: float = 1.0) -> dict[str, float]:
    """Weighted least squares (Fityk's weights, sigma = sqrt(counts)) of a PseudoVoigt on a
    Linear background to the points within ``half_window`` degrees of ``center``, started at
    the generating profile: what Fityk's fit of that model over that range finds. The area
    is Fityk's PseudoVoigt area."""
    from scipy.optimize import least_squares

    inside = np.abs(x - center) < half_window
    xs, ys = x[inside], y[inside]
    sigma = np.sqrt(np.maximum(ys, 1.0))

    def model(p: np.ndarray) -> np.ndarray:
        h, c, w, e, a0, a1 = p
        return h * crystals.pseudo_voigt(xs, c, 2 * abs(w), e) + a0 + a1 * (xs - center)

    base = float(np.median(np.concatenate([ys[:5], ys[-5:]])))
    p0 = np.array([height, center, fwhm / 2, eta, base, 0.0])
    res = least_squares(lambda p: (model(p) - ys) / sigma, p0, method="lm", xtol=1e-12,
                        ftol=1e-12)
    h, c, w, e = res.x[:4]
    return {"height": float(h), "center": float(c), "fwhm": float(2 * abs(w)),
            "eta": float(e), "area": pv_area(float(h), float(2 * abs(w)), float(e))}
