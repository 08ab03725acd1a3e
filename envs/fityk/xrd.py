"""Powder patterns for the Fityk tasks: a seeded crystal's reflections (Cu Kalpha, pymatgen via
:mod:`sciagent_gym.datagen.crystals`) with pseudo-Voigt profiles, texture, a quadratic
background and counting noise (:func:`xrd_pattern`), and a LaB6 standard's scan beside it
(:func:`xrd_with_standard`); the Bragg and Scherrer relations the gold uses, and where a
reflection sits in Fityk's plot.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.fityk.profiles import _log_uniform, fit_reflection, pv_area

from sciagent_gym.sdk import crystals

CU_KA = 1.54184  # A: pymatgen's "CuKa", the weighted mean of Kalpha1 and Kalpha2
#: Families whose strongest reflection stands alone at this resolution (checked per seed too).
XRD_FAMILIES = ("rocksalt", "fluorite", "perovskite", "zincblende", "cesium-chloride")


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
