"""Input data for the Fityk tasks, and the gold values that made it.

Every generator takes ``(work_dir, rng, **args)``, writes two-column text files (x, y) into the
task's working directory, as diffractometers and spectrometers export them, and returns the
parameters that generated them, so the gold is what the data really holds, not what one fit of
it found:

- :func:`xrd_pattern`: a powder pattern of a seeded crystal (rock salt, fluorite, perovskite,
  ...) from :mod:`sciagent_gym.datagen.crystals` (pymatgen's kinematic XRD calculator, Cu Kalpha
  at 1.54184 A, the Kalpha1/Kalpha2 weighted mean, without a separate Kalpha2 component), with
  pseudo-Voigt profiles of one seeded FWHM, a quadratic background and Poisson counting noise.
- :func:`spectrum`: a measured-looking spectrum with known bands (Raman D/D'/G bands of a
  disordered carbon, an XPS C 1s envelope, a photoluminescence doublet) on a sloped linear
  baseline, with counting noise.

Where a task defines its answer by a procedure whose result the generating parameters do not
give exactly (an XPS share after Fityk's Shirley subtraction, the area ratio of two reflections
each fitted over ±1°), the generator also runs that procedure on the noisy data it wrote
(:func:`shirley_bg`, the same iteration as Fityk's; :func:`fit_gaussians`,
:func:`fit_reflection`, weighted least squares as Fityk fits) and the gold is its result.

Peak conventions are Fityk's: a band's ``fwhm`` is the full width at half maximum (Fityk's
Gaussian, Lorentzian and PseudoVoigt parameter ``hwhm`` is half of it), ``area`` is the
integral above the baseline.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np

from sciagent_gym.sdk import crystals

CU_KA = 1.54184  # A: pymatgen's "CuKa", the weighted mean of Kalpha1 and Kalpha2
SQRT_PI_LN2 = math.sqrt(math.pi / math.log(2))
#: Families whose strongest reflection stands alone at this resolution (checked per seed too).
XRD_FAMILIES = ("rocksalt", "fluorite", "perovskite", "zincblende", "cesium-chloride")


def pv_area(height: float, fwhm: float, eta: float) -> float:
    """Integral of a pseudo-Voigt of this height, FWHM and Lorentzian fraction."""
    return height * fwhm / 2 * (eta * math.pi + (1 - eta) * SQRT_PI_LN2)


def bragg_d(two_theta: float, wavelength: float = CU_KA) -> float:
    """d-spacing (A) of a reflection at ``two_theta`` degrees (first order)."""
    return wavelength / (2 * math.sin(math.radians(two_theta / 2)))


def scherrer_nm(two_theta: float, fwhm_deg: float, k: float = 0.9,
                wavelength: float = CU_KA) -> float:
    """Crystallite size (nm) from the Scherrer equation, FWHM in degrees 2theta."""
    beta = math.radians(fwhm_deg)
    return k * wavelength / (beta * math.cos(math.radians(two_theta / 2))) / 10


def _hkl(hkl: tuple[int, ...]) -> str:
    return "(" + "".join(str(abs(i)) for i in hkl) + ")"


def _isolated(peaks: list[crystals.Peak], peak: crystals.Peak, window: float) -> bool:
    return all(p is peak or abs(p.two_theta - peak.two_theta) > window or p.intensity < 2
               for p in peaks)


def _cubic_equivalents(hkl: tuple[int, ...]) -> list[np.ndarray]:
    """The distinct directions of a cubic {hkl} family (permutations and signs)."""
    out = {tuple(s * v for s, v in zip(signs, perm, strict=True))
           for perm in itertools.permutations(hkl)
           for signs in itertools.product((1, -1), repeat=3)}
    return [np.array(v, dtype=float) for v in sorted(out)]


def march_dollase(hkl: tuple[int, ...], axis: tuple[int, ...], r: float) -> float:
    """The March-Dollase preferred-orientation factor of a cubic {hkl} family for texture
    ``axis`` and March parameter ``r`` (1: random powder; below 1: crystallites lying with
    ``axis`` along the specimen normal, as in a pressed pellet or a film), averaged over the
    family's directions."""
    a = np.array(axis, dtype=float) / np.linalg.norm(axis)
    total = 0.0
    vs = _cubic_equivalents(hkl)
    for v in vs:
        cos2 = float(np.dot(v, a) / np.linalg.norm(v)) ** 2
        total += (r * r * cos2 + (1 - cos2) / r) ** -1.5
    return total / len(vs)


def _textured(peaks: list[crystals.Peak], axis: tuple[int, ...], r: float
              ) -> list[crystals.Peak]:
    scaled = [(p, p.intensity * march_dollase(p.hkl, axis, r)) for p in peaks]
    top = max(i for _, i in scaled)
    return [dataclasses.replace(p, intensity=round(100 * i / top, 3)) for p, i in scaled]


#: Fityk's main plot in its 1278x751 window on the 1280x800 screen, showing a dataset whole
#: (as after loading, zoomed out to all of it): window x of the first and last point's x, measured
#: with the status bar's cursor read-out on a 10-90 deg pattern (46.2 and 975.2 px).
PLOT_X = (46.17, 975.17)


def plot_x(x: float, lo: float, hi: float) -> int:
    """Window pixel column of ``x`` in Fityk's main plot showing data from ``lo`` to ``hi``."""
    return int(round(PLOT_X[0] + (x - lo) * (PLOT_X[1] - PLOT_X[0]) / (hi - lo)))


#: Preferred-orientation axes a pressed cubic powder or film commonly shows.
TEXTURE_AXES = ((1, 0, 0), (1, 1, 0), (1, 1, 1))


def xrd_pattern(work: Path, rng: np.random.Generator, path: str = "pattern.xy",
                families: list[str] | None = None, window: float = 1.2,
                two_theta: list[float] | None = None, strongest_hkl: str | None = None,
                crop: list[float] | None = None, fwhm: list[float] | None = None,
                step: float = 0.02, texture: list[float] | None = None,
                instrument: float | None = None, inst_ratio: list[float] | None = None
                ) -> dict[str, Any]:
    """A powder pattern whose two strongest reflections each stand alone within ``window``
    degrees (the strongest indexed ``strongest_hkl`` when given, e.g. "(200)"); gold: the
    crystal, the profile, those two reflections and, with ``crop`` [lo, hi], the points and
    summed counts inside that 2theta range.

    ``fwhm`` [lo, hi]: the profile's FWHM drawn log-uniformly in that range (degrees; the
    sample's crystallite size), the isolation window widened to at least 1 + 4 FWHM. ``step``:
    the scan step (degrees). ``texture`` [lo, hi]: preferred orientation along a random
    cubic axis with a March-Dollase parameter drawn log-uniformly in that range (relative
    intensities then differ from the powder file's; the second-strongest reflection then keeps
    at least 10 % of the strongest). ``instrument``: the diffractometer's own FWHM b (degrees,
    e.g. from a LaB6 standard) with ``inst_ratio`` [lo, hi]: b / B drawn uniformly there and the
    observed FWHM B set from it (instead of ``fwhm``); the gold then also holds the sample's
    FWHM corrected for the instrument, sqrt(B^2 - b^2) (Gaussian, quadratic rule), and the
    Scherrer size from it (``strongest.scherrer_corr_nm``)."""
    lo, hi = two_theta or (10.0, 90.0)
    choices = list(families or XRD_FAMILIES)
    width = None
    if fwhm is not None:
        width = float(math.exp(rng.uniform(math.log(fwhm[0]), math.log(fwhm[1]))))
        window = max(window, 1 + 4 * width)
    inst_r = None
    if instrument is not None:
        inst_r = float(rng.uniform(*(inst_ratio or (0.35, 0.5))))
        width = float(instrument) / inst_r
        window = max(window, 1 + 4 * width)
    for _ in range(100):
        crystal = crystals.make_crystal(rng, str(rng.choice(choices)))
        peaks = [p for p in crystals.xrd_peaks(crystal, two_theta=(lo, hi))]
        if texture is not None:
            axis = TEXTURE_AXES[int(rng.integers(len(TEXTURE_AXES)))]
            march = float(math.exp(rng.uniform(math.log(texture[0]), math.log(texture[1]))))
            peaks = [p for p in _textured(peaks, axis, march) if p.intensity >= 1.0]
        ranked = sorted(peaks, key=lambda p: -p.intensity)
        if len(ranked) >= 3 and ranked[1].intensity < 90 and (
                texture is None or ranked[1].intensity >= 10) and all(
                _isolated(peaks, p, window) for p in ranked[:2]) and (
                strongest_hkl is None or _hkl(ranked[0].hkl) == strongest_hkl):
            break
    else:  # pragma: no cover - the families above always give one within a few draws
        raise RuntimeError("no crystal with isolated strong reflections")
    pattern = crystals.powder_pattern(rng, peaks, two_theta=(lo, hi), step=step, fwhm=width)
    header = (f"{crystal.formula} ({crystal.family}) powder pattern, Cu Kalpha "
              f"(lambda = {CU_KA} A)\ncolumns: 2theta (degrees), counts")
    (work / path).write_text(pattern.xy_text(header))

    sample_fwhm = math.sqrt(max(pattern.fwhm ** 2 - float(instrument or 0) ** 2, 0.0))

    def describe(p: crystals.Peak) -> dict[str, Any]:
        height = pattern.height * p.intensity / 100
        return {"two_theta": p.two_theta, "theta": p.two_theta / 2, "d": bragg_d(p.two_theta),
                "hkl": _hkl(p.hkl), "h2k2l2": int(sum(i * i for i in p.hkl)),
                "intensity": p.intensity, "height": height,
                "area": pv_area(height, pattern.fwhm, pattern.eta),
                "lo": round(p.two_theta - 1.0, 1), "hi": round(p.two_theta + 1.0, 1),
                # where 2theta -/+ 1 deg fall in Fityk's main plot, window pixels, as the
                # GUI shows the whole pattern (see plot_x): the GUI oracle drags that range
                "plot_lo": plot_x(p.two_theta - 1.0, lo, hi),
                "plot_hi": plot_x(p.two_theta + 1.0, lo, hi),
                "scherrer_nm": scherrer_nm(p.two_theta, pattern.fwhm),
                **({"scherrer_corr_nm": scherrer_nm(p.two_theta, sample_fwhm)}
                   if instrument is not None else {})}

    strongest, second = describe(ranked[0]), describe(ranked[1])
    x = pattern.two_theta
    gold = {
        **crystal.gold(), "wavelength": CU_KA, "step": step, "points": int(len(x)),
        "sum_y": float(pattern.counts.sum()),
        "fwhm": pattern.fwhm, "hwhm": pattern.fwhm / 2, "eta": pattern.eta,
        "strongest": strongest, "second": second, "n_peaks": len(peaks),
        "area_ratio_pct": 100 * second["area"] / strongest["area"],
    }
    if texture is not None:  # the two reflections as Fityk fits them (PseudoVoigt + Linear)
        fits = [fit_reflection(x, pattern.counts, r["two_theta"], pattern.fwhm, pattern.eta,
                               r["height"]) for r in (strongest, second)]
        gold["fit_areas"] = [f["area"] for f in fits]
        gold["fit_area_ratio_pct"] = 100 * fits[1]["area"] / fits[0]["area"]
    if instrument is not None:
        gold["instrument"] = {"fwhm": float(instrument), "ratio": inst_r,
                              "sample_fwhm": sample_fwhm}
    if texture is not None:
        gold["texture"] = {"axis": "[" + "".join(map(str, axis)) + "]", "march_r": march}
    if crop is not None:
        inside = (x >= float(crop[0]) - 1e-9) & (x <= float(crop[1]) + 1e-9)
        outside_lo, outside_hi = x < float(crop[0]) - 1e-9, x > float(crop[1]) + 1e-9
        gold["crop"] = {"points": int(np.count_nonzero(inside)),
                        "sum_y": float(pattern.counts[inside].sum()),
                        "x_min": float(x[inside].min()), "x_max": float(x[inside].max()),
                        "points_low_cut_only": int(np.count_nonzero(~outside_lo)),
                        "points_high_cut_only": int(np.count_nonzero(~outside_hi))}
    return gold


#: LaB6 (NIST SRM 660 line-profile standard): cubic Pm-3m, a = 4.15689 A, B at (x, 1/2, 1/2).
LAB6_A, LAB6_X = 4.15689, 0.1996


def lab6_peaks(two_theta: tuple[float, float] = (10.0, 90.0)) -> list[crystals.Peak]:
    """The LaB6 standard's powder reflections (pymatgen, Cu Kalpha)."""
    from pymatgen.core import Lattice, Structure

    structure = Structure.from_spacegroup("Pm-3m", Lattice.cubic(LAB6_A), ["La", "B"],
                                          [[0, 0, 0], [LAB6_X, 0.5, 0.5]])
    lab6 = crystals.Crystal(family="lab6", structure=structure, formula="LaB6",
                            spacegroup="Pm-3m", spacegroup_number=221)
    return crystals.xrd_peaks(lab6, two_theta=two_theta)


def xrd_with_standard(work: Path, rng: np.random.Generator, path: str = "sample.xy",
                      standard_path: str = "lab6.xy", families: list[str] | None = None,
                      strongest_hkl: str | None = None, instrument: list[float] | None = None,
                      inst_ratio: list[float] | None = None, step: float = 0.01
                      ) -> dict[str, Any]:
    """A sample's powder pattern (:func:`xrd_pattern`) and the same diffractometer's scan of
    the LaB6 line-profile standard, whose reflections have the instrument's own FWHM b (drawn
    log-uniformly in ``instrument`` [lo, hi] degrees; the sample's observed FWHM is b / ratio,
    ``inst_ratio`` as there). Gold: the sample's (``xrd_pattern``'s gold) and under
    ``standard`` the LaB6 reflection nearest in 2theta to the sample's strongest one (its 2theta,
    hkl, the pixels of 2theta -/+ 1 deg in Fityk's plot) and b."""
    lo_b, hi_b = instrument or (0.03, 0.15)
    b = round(_log_uniform(rng, lo_b, hi_b), 4)
    gold = xrd_pattern(work, rng, path=path, families=families, strongest_hkl=strongest_hkl,
                       instrument=b, inst_ratio=inst_ratio, step=step)
    peaks = lab6_peaks()
    pattern = crystals.powder_pattern(rng, peaks, step=step, fwhm=b,
                                      height=float(rng.uniform(20000, 50000)))
    header = (f"LaB6 (SRM 660) line-profile standard, Cu Kalpha (lambda = {CU_KA} A)\n"
              "columns: 2theta (degrees), counts")
    (work / standard_path).write_text(pattern.xy_text(header))
    target = gold["strongest"]["two_theta"]
    near = min(peaks, key=lambda p: abs(p.two_theta - target))
    gold["standard"] = {
        "two_theta": near.two_theta, "hkl": _hkl(near.hkl), "intensity": near.intensity,
        "fwhm": pattern.fwhm, "eta": pattern.eta, "points": int(len(pattern.two_theta)),
        "plot_lo": plot_x(near.two_theta - 1.0, 10.0, 90.0),
        "plot_hi": plot_x(near.two_theta + 1.0, 10.0, 90.0)}
    return gold


# -- spectra -----------------------------------------------------------------------------------

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


GENERATORS = {"xrd_pattern": xrd_pattern, "xrd_with_standard": xrd_with_standard,
              "spectrum": spectrum}
