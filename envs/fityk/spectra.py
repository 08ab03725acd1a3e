"""Measured-looking spectra for the Fityk tasks (:func:`spectrum`): known bands (Raman D/D'/G
of a disordered carbon, an XPS C 1s envelope, a photoluminescence doublet) on a sloped
baseline with counting noise, and gold values from the generating bands (or, for an XPS share
after Shirley subtraction, from the fit Fityk would do).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.fityk.profiles import (
    _band,
    _log_uniform,
    fit_gaussians,
    pv_area,
    shirley_bg,
)

#: kind -> axis (lo, hi, step), unit, bands (name, centre range, FWHM range, relative height
#: range, Lorentzian fraction), baseline (offset range, slope range per axis unit), peak
#: height range (counts) and the profile Fityk fits it with.
SPECTRA: dict[str, dict[str, Any]] = {
    "raman-carbon": {
        "axis": (1000.0, 1900.0, 1.0), "unit": "cm-1", "label": "Raman shift (cm-1)",
        "bands": [("D", (1335, 1360), (60, 110), (0.55, 1.0), 1.0),
                  ("G", (1578, 1595), (45, 70), (0.8, 1.0), 1.0),
                  ("D'", (1612, 1625), (25, 35), (0.15, 0.3), 1.0)],
        "baseline": ((150, 400), (0.05, 0.25)), "height": (1500, 4000),
        "profile": "Lorentzian", "noise": "poisson"},
    "xps-c1s": {
        "axis": (280.0, 294.0, 0.05), "unit": "eV", "label": "binding energy (eV)",
        "bands": [("C-C", (284.6, 285.0), (1.0, 1.4), (1.0, 1.0), 0.0),
                  ("C-O", (286.2, 286.6), (1.1, 1.5), (0.25, 0.45), 0.0),
                  ("O-C=O", (288.6, 289.0), (1.1, 1.5), (0.12, 0.25), 0.0)],
        "baseline": ((300, 700), (-20, 20)), "height": (3000, 9000),
        "profile": "Gaussian", "noise": "poisson"},
    "pl-doublet": {
        "axis": (450.0, 750.0, 0.5), "unit": "nm", "label": "wavelength (nm)",
        "bands": [("green", (550, 570), (18, 32), (1.0, 1.0), 0.0),
                  ("red", (595, 630), (40, 60), (0.4, 0.8), 0.0)],
        "baseline": ((50, 150), (-0.1, 0.1)), "height": (800, 2000),
        "profile": "Gaussian", "noise": "poisson"},
}


def spectrum(work: Path, rng: np.random.Generator, kind: str, path: str = "spectrum.dat",
             axis: list[float] | None = None, fwhm: dict[str, list[float]] | None = None,
             ratio: list[float] | None = None, shares: dict[str, list[float]] | None = None,
             shirley: list[float] | None = None) -> dict[str, Any]:
    """A spectrum of ``kind`` (:data:`SPECTRA`); gold: its bands by name and sorted by
    centre, and the baseline.

    Per-sample overrides: ``axis`` [lo, hi] (the scan range); ``fwhm`` {band: [lo, hi]}: that
    band's FWHM drawn log-uniformly (a band listed second in it is kept at least 1.25 times as
    broad as the first); ``ratio`` [lo, hi]: the D/G area ratio of a Raman carbon spectrum
    drawn log-uniformly, the D band's height set by it and its width growing with it (more
    disorder, broader D band); ``shares`` {band: [lo, hi]}: those bands' shares of the total
    area in percent drawn uniformly, the first band taking the rest, tallest band at the
    drawn peak height (draws where the first band keeps under 5 %, or a share is within 5
    points of the first band's or within 3 points of its ratio to it in percent, are drawn
    again); ``shirley`` [lo, hi]: the baseline is flat below the bands and rises by an
    inelastic (Shirley) step, drawn uniformly as that fraction of the tallest band's height,
    proportional at each x to the band area below it (an XPS core level on increasing binding
    energy); the gold then also holds Fityk's Shirley background of the noisy data
    (``shirley``) and the three-Gaussian fit of the data with it subtracted (``shirley_fit``:
    its components' areas and shares, the measurement the task defines)."""
    spec = SPECTRA[kind]
    lo, hi, step = spec["axis"]
    if axis is not None:
        lo, hi = float(axis[0]), float(axis[1])
    x = np.round(np.arange(lo, hi + step / 2, step), 4)
    top = float(rng.uniform(*spec["height"]))
    b0, b1 = (float(rng.uniform(*r)) for r in spec["baseline"])
    if shirley is not None:
        b1 = 0.0
        step_frac = float(rng.uniform(*shirley))
    mid = (lo + hi) / 2
    y = b0 + b1 * (x - mid)
    bands = []
    for name, c_range, w_range, h_range, eta in spec["bands"]:
        center = round(float(rng.uniform(*c_range)), 3)
        if fwhm and name in fwhm:
            width = round(_log_uniform(rng, *fwhm[name]), 4)
        else:
            width = round(float(rng.uniform(*w_range)), 4)
        height = top * float(rng.uniform(*h_range))
        bands.append({"name": name, "center": center, "fwhm": width, "hwhm": width / 2,
                      "height": height, "eta": eta})
    named = {b["name"]: b for b in bands}
    if fwhm and len(fwhm) > 1:
        narrow, broad = (named[n] for n in list(fwhm)[:2])
        if broad["fwhm"] < 1.25 * narrow["fwhm"]:
            narrow["fwhm"] = round(broad["fwhm"] / 1.25, 4)
            narrow["hwhm"] = narrow["fwhm"] / 2
    if ratio is not None:
        d_band, g_band = named["D"], named["G"]
        r = _log_uniform(rng, *ratio)
        d_band["fwhm"] = round((40 + 20 * math.sqrt(r)) * float(rng.uniform(0.85, 1.15)), 4)
        d_band["hwhm"] = d_band["fwhm"] / 2
        g_area = pv_area(g_band["height"], g_band["fwhm"], g_band["eta"])
        d_band["height"] = r * g_area / pv_area(1.0, d_band["fwhm"], d_band["eta"])
    if shares:
        rest = next(b["name"] for b in bands if b["name"] not in shares)
        for _ in range(200):
            pct = {n: float(rng.uniform(*shares[n])) for n in shares}
            pct[rest] = 100 - sum(pct.values())
            # a share must not be mistakable for the rest band's share or for its ratio to it
            # (a C-O share equal to the C-C share, or to C-O/C-C, would let a wrong reading pass)
            if pct[rest] >= 5 and all(abs(pct[n] - pct[rest]) > 5
                                      and pct[n] * (100 / pct[rest] - 1) > 3 for n in shares):
                break
        unit = {b["name"]: pct[b["name"]] / pv_area(1.0, b["fwhm"], b["eta"])
                for b in bands if b["name"] in pct}
        scale = top / max(unit.values())
        for b in bands:
            if b["name"] in unit:
                b["height"] = scale * unit[b["name"]]
    signal = np.zeros_like(x)
    for b in bands:
        b["area"] = pv_area(b["height"], b["fwhm"], b["eta"])
        signal = signal + _band(x, b["height"], b["center"], b["fwhm"], b["eta"])
    y = y + signal
    step_bg = np.zeros_like(x)
    if shirley is not None:
        below = np.concatenate([[0.0], np.cumsum((signal[1:] + signal[:-1]) / 2 * np.diff(x))])
        step_bg = step_frac * top * below / below[-1]
        y = y + step_bg
    y = np.clip(y, 1, None)
    counts = rng.poisson(y).astype(float)
    lines = [f"# {kind} spectrum, {spec['label']} vs counts"]
    lines += [f"{a:.4f} {c:.0f}" for a, c in zip(x, counts, strict=True)]
    (work / path).write_text("\n".join(lines) + "\n")
    ordered = sorted(bands, key=lambda b: b["center"])
    total = sum(b["area"] for b in bands)
    clean = b0 + b1 * (x - mid) + step_bg + signal
    named = {b["name"]: b for b in bands}
    extra: dict[str, Any] = {}
    if shirley is not None:
        bg = shirley_bg(x, counts)
        net = counts - bg
        fitted = fit_gaussians(x, net, np.sqrt(np.maximum(counts, 1.0)), ordered)
        fit_total = sum(f["area"] for f in fitted)
        extra = {
            "shirley": {"step": step_frac * top, "step_frac": step_frac,
                        "sum_y": float(net.sum()), "sum_y_raw": float(counts.sum()),
                        "bg_lo": float(bg[0]), "bg_hi": float(bg[-1])},
            "shirley_fit": {"centers": [f["center"] for f in fitted],
                            "fwhms": [f["fwhm"] for f in fitted],
                            "areas": [f["area"] for f in fitted],
                            "area_pcts": [100 * f["area"] / fit_total for f in fitted],
                            "names": [b["name"] for b in ordered]},
            "true_area_pcts": [100 * b["area"] / total for b in ordered],
        }
        # what Fityk's fitted model of the Shirley-subtracted counts is: this fit's curve
        clean = np.zeros_like(x)
        for f in fitted:
            clean = clean + f["height"] * np.exp(-math.log(2) * ((x - f["center"])
                                                                 / f["hwhm"]) ** 2)
    ratios = {}
    if "D" in named and "G" in named:  # Raman carbon: the D/G intensity ratios
        d_band, g_band = named["D"], named["G"]
        ratios = {"area_d_g": d_band["area"] / g_band["area"],
                 "height_d_g": d_band["height"] / g_band["height"],
                 "area_g_d": g_band["area"] / d_band["area"],
                 "area_dprime_g": named["D'"]["area"] / g_band["area"]}
    return {"kind": kind, "unit": spec["unit"], "profile": spec["profile"],
            "bands": {b["name"]: b for b in bands}, "sorted": ordered,
            "centers": [b["center"] for b in ordered], "fwhms": [b["fwhm"] for b in ordered],
            "areas": [b["area"] for b in ordered],
            "area_fractions": [b["area"] / total for b in ordered],
            "area_pcts": [100 * b["area"] / total for b in ordered],
            "baseline_offset": b0 - b1 * mid, "baseline_slope": b1, "points": int(len(x)),
            "n_bands": len(bands), "lo": lo, "hi": hi, **ratios, **extra,
            # the noiseless curve (x; baseline plus bands; with ``shirley``, the fit of the
            # subtracted counts), kept host-side to judge an exported model by content
            "curve": np.vstack([x, clean]).astype(np.float64)}
