"""Seeded figure generators of SciGUI-FigureQA-v0 (CSMBench-style cross-scale perception).

Every generator takes ``(work_dir, rng, item, path="figure.png")``, writes one 900x700 PNG
figure into the work directory and returns its gold: ``value`` (open items: the number the
question asks for), or ``letter`` and ``options`` (multiple-choice items: the right letter of
four options that differ in one scientific attribute), plus ``wrong`` / ``wrong_letter`` for
negatives and ``scale`` (atomic, micro, meso, macro). The figure depends on the family and
``item`` alone (:func:`~.common.item_rng`), so a query pool's items are stable whatever seed
the core passes; ``rng`` is unused. ``choices(family, item)`` gives an MC item's option text
without drawing the figure (the spec builder puts it in the query's params).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from . import figures_macro as macro
from . import figures_micro as micro
from .common import (
    BOX,
    balanced_slot,
    caption,
    image_figure,
    item_rng,
    mc_gold,
    options,
    save,
    spread,
)
from .gen_atomic import (
    _hrtem_symmetry_draw,
    _lattice_type_draw,
    hrtem_spacing,
    hrtem_symmetry,
    lattice_description,
    lattice_parameter,
    lattice_type,
)

BAR_VALUES_UM = (1, 2, 5, 10, 20, 50, 100, 200, 500)


def _bar(px_per_unit: float, values: tuple[float, ...], lo: float = 90, hi: float = 330
         ) -> tuple[float, int]:
    """The scale-bar value (from ``values``) whose length in pixels falls in [lo, hi]."""
    for v in values:
        if lo <= v * px_per_unit <= hi:
            return v, int(round(v * px_per_unit))
    v = min(values, key=lambda v: abs(v * px_per_unit - (lo + hi) / 2))
    return v, int(round(v * px_per_unit))


# -- micro -------------------------------------------------------------------------------------

def _grain_draw(family: str, item: int) -> dict[str, Any]:
    """30-140 grains in the field; the mean grain size spread log-evenly over 2.5-400 µm
    (ASTM grain size numbers about 14 to 0: fine-grained steels to cast or annealed
    coarse-grained metals)."""
    r = item_rng(family, item)
    n = int(r.integers(30, 140))
    d_um = spread(family, item, 2.5, 400.0, log=True)
    return {"rng": r, "n": n, "d_um": d_um}


def grain_size(work: Path, rng: Any, item: int, path: str = "figure.png",
               bar: bool = True) -> dict[str, Any]:
    """A Voronoi grain micrograph; open: the mean grain size (equivalent-circle diameter of
    the mean grain area) in micrometres. Without ``bar`` the figure has no scale: the
    question cannot be answered (an infeasible item)."""
    p = _grain_draw("grain-size" if bar else "grain-size-no-scale", item)
    content, n = micro.grains(p["rng"], p["n"])
    _, _, w, h = BOX
    d_px = math.sqrt(4 * w * h / (math.pi * n))
    ppu = d_px / p["d_um"]
    bar_spec = _bar(ppu, BAR_VALUES_UM) if bar else None
    label = f"FQ-GS-{item:02d}" if bar else f"FQ-GN-{item:02d}"
    save(image_figure(content, bar_spec, "µm", label), work, path)
    ppu_drawn = bar_spec[1] / bar_spec[0] if bar_spec else ppu
    value = d_px / ppu_drawn
    return {"value": round(value, 2), "grains": n, "pixels": round(d_px, 1),
            "wrong": round(value * 1.6, 2), "scale": "micro"}


def _phase_draw(item: int) -> dict[str, Any]:
    """Options 10 points apart (the lowest 5-40 %); the truth's rank among them is dealt like
    the letter, so neither the option values nor their order say which one is right."""
    r = item_rng("phase-fraction", item)
    low = int(r.choice(np.arange(5, 45, 5)))
    rank = balanced_slot("phase-fraction", item, 4, "rank")
    values = [low + 10 * j for j in range(4)]
    f = values[rank]
    opts = options(r, f, [v for v in values if v != f],
                   lambda v: f"about {v} % of the area is the dark phase",
                   balanced_slot("phase-fraction", item, 4))
    return {"rng": r, "f": f, "sigma": float(r.uniform(5, 14)), **opts}


def phase_fraction(work: Path, rng: Any, item: int, path: str = "figure.png"
                   ) -> dict[str, Any]:
    """A two-phase micrograph; MC: the dark phase's area fraction (options differ in it)."""
    p = _phase_draw(item)
    content, frac = micro.phases(p["rng"], p["f"] / 100, p["sigma"])
    _, _, w, _ = BOX
    save(image_figure(content, _bar(w / 120.0, BAR_VALUES_UM), "µm", f"FQ-PF-{item:02d}"),
         work, path)
    wrong = min((k for k in p["options"] if k != p["letter"]),
                key=lambda k: abs(p["option_values"][k] - p["f"]))
    return {**mc_gold(p), "fraction": round(frac * 100, 2), "wrong_letter": wrong,
            "scale": "micro"}


# -- meso --------------------------------------------------------------------------------------

def porosity(work: Path, rng: Any, item: int, path: str = "figure.png") -> dict[str, Any]:
    """A porous ceramic cross-section; open: the porosity (pore area fraction) in %, spread
    over 2-65 % (a nearly dense sintered part to a porous filter ceramic)."""
    r = item_rng("porosity", item)
    content, frac = micro.pores(r, spread("porosity", item, 0.02, 0.65))
    _, _, w, _ = BOX
    save(image_figure(content, _bar(w / float(r.uniform(200, 800)), BAR_VALUES_UM), "µm",
                       f"FQ-PO-{item:02d}"), work, path)
    value = round(frac * 100, 2)
    # the matrix's share read as the pores' (near 50 %, a reading 8 points off)
    wrong = 100 - value if abs(100 - 2 * value) >= 8 else value + 8
    return {"value": value, "wrong": round(wrong, 2), "scale": "meso"}


ANGLES = tuple(range(0, 180, 15))


def _fibre_draw(item: int) -> dict[str, Any]:
    r = item_rng("fibre-orientation", item)
    angle = int(ANGLES[balanced_slot("fibre-orientation", item, len(ANGLES), "angle")])
    others = [(angle + d) % 180 for d in (45, 90, 135)]
    opts = options(r, angle, others, lambda v: f"fibres inclined about {v}° counter-clockwise "
                                               "from the horizontal",
                   balanced_slot("fibre-orientation", item, 4))
    return {"rng": r, "angle": angle, **opts}


def fibre_orientation(work: Path, rng: Any, item: int, path: str = "figure.png"
                      ) -> dict[str, Any]:
    """A fibre composite's section; MC: the fibres' angle (options differ in it alone)."""
    p = _fibre_draw(item)
    content = micro.fibres(p["rng"], p["angle"])
    _, _, w, _ = BOX
    save(image_figure(content, _bar(w / 600.0, BAR_VALUES_UM), "µm", f"FQ-FO-{item:02d}"),
         work, path)
    perpendicular = next(k for k, v in p["option_values"].items()
                         if (v - p["angle"]) % 180 == 90)
    return {**mc_gold(p), "wrong_letter": perpendicular, "scale": "meso"}


def particle_count(work: Path, rng: Any, item: int, path: str = "figure.png"
                   ) -> dict[str, Any]:
    """A particle-reinforced composite; open: the number of particles in the field (10-75,
    spread evenly)."""
    r = item_rng("particle-count", item)
    content, n = micro.particles(r, int(round(spread("particle-count", item, 10, 75))))
    _, _, w, _ = BOX
    save(image_figure(content, _bar(w / 400.0, BAR_VALUES_UM), "µm", f"FQ-PC-{item:02d}"),
         work, path)
    return {"value": n, "wrong": n + 3, "scale": "meso"}


# -- macro -------------------------------------------------------------------------------------

def uts(work: Path, rng: Any, item: int, path: str = "figure.png") -> dict[str, Any]:
    """One stress-strain curve; open: its ultimate tensile strength in MPa, spread log-evenly
    over 150-1500 MPa (annealed aluminium or copper to high-strength steels). The axes are
    scaled to the curve (their limits are not round numbers: read the ticks)."""
    r = item_rng("uts", item)
    u = float(round(spread("uts", item, 150.0, 1500.0, log=True)))
    sy = u * float(r.uniform(0.55, 0.85))
    eu = float(r.uniform(6, 30))
    ef = eu + float(r.uniform(4, 20))
    strain, stress = macro.stress_strain(float(r.uniform(70, 210)), sy, u, eu, ef)
    img = macro.plot_stress_strain([{"label": "", "colour": "blue", "strain": strain,
                                     "stress": stress}], legend=False,
                                   xlim=(0.0, ef * float(r.uniform(1.08, 1.5))),
                                   ylim=(0.0, u * float(r.uniform(1.12, 1.45))))
    save(caption(img, f"FQ-UT-{item:02d}", (780, 675)), work, path)
    return {"value": u, "yield": round(sy, 1), "wrong": round(sy, 0), "scale": "macro"}


ALLOYS = ("P", "Q", "R", "S")


def _ductile_draw(item: int) -> dict[str, Any]:
    r = item_rng("ductile-curve", item)
    ef = np.sort(r.choice(np.arange(8, 56, 7), 4, replace=False)).astype(float)
    ef += r.uniform(-1.5, 1.5, 4)
    strengths = np.sort(r.uniform(300, 900, 4))[::-1]  # the strongest is the least ductile
    colours = [str(c) for c in r.permutation(list(macro.COLOURS))]
    alloys = [str(a) for a in r.permutation(list(ALLOYS))]
    curves = [{"label": f"Alloy {alloys[i]}", "colour": colours[i], "ef": float(ef[i]),
               "uts": float(strengths[i])} for i in range(4)]
    best = curves[3]
    opts = options(r, best, [c for c in curves if c is not best],
                   lambda c: f"Alloy {c['label'][-1]} (the {c['colour']} curve)",
                   balanced_slot("ductile-curve", item, 4))
    return {"rng": r, "curves": curves, **opts}


def ductile_curve(work: Path, rng: Any, item: int, path: str = "figure.png"
                  ) -> dict[str, Any]:
    """Four alloys' stress-strain curves; MC: the most ductile (largest elongation at
    fracture). The strongest alloy is the least ductile, as in most alloy series."""
    p = _ductile_draw(item)
    r = p["rng"]
    drawn = []
    for c in p["curves"]:
        eu = c["ef"] * float(r.uniform(0.55, 0.8))
        strain, stress = macro.stress_strain(float(r.uniform(70, 210)),
                                             c["uts"] * float(r.uniform(0.6, 0.85)),
                                             c["uts"], eu, c["ef"])
        drawn.append({**c, "strain": strain, "stress": stress})
    img = macro.plot_stress_strain(drawn, legend=True)
    save(caption(img, f"FQ-DC-{item:02d}", (780, 675)), work, path)
    strongest = next(k for k, v in p["option_values"].items() if v is p["curves"][0])
    return {**mc_gold(p), "wrong_letter": strongest, "scale": "macro"}


def eutectic(work: Path, rng: Any, item: int, path: str = "figure.png") -> dict[str, Any]:
    """A binary eutectic phase diagram of a model system A-B (no real system's textbook
    values to recall); open: the eutectic composition in wt% of B, spread over 8-92 wt%
    (as real eutectics lie, from Sn-Zn's 9 to Au-Si's 97 wt% Au)."""
    r = item_rng("eutectic", item)
    a, b = "A", "B"
    ta, tb = float(r.uniform(900, 1120)), float(r.uniform(750, 1050))
    te = float(r.uniform(420, 650))
    xe = round(spread("eutectic-composition", item, 8.0, 92.0), 1)
    # the terminal solid solutions dissolve less than the eutectic liquid holds
    xa = min(float(r.uniform(3, 10)), 0.4 * xe)
    xb = max(float(r.uniform(90, 97)), 100 - 0.4 * (100 - xe))
    lines = macro.eutectic_lines(ta, tb, te, xe, xa, xb, float(r.uniform(0.0, 0.25)))
    img = macro.plot_eutectic(lines, a, b, ta, tb, te, xe, xa, xb)
    save(caption(img, f"FQ-EU-{item:02d}", (780, 675)), work, path)
    wrong = xe + 15 if xe < 50 else xe - 15
    return {"value": xe, "temperature": round(te, 1), "wrong": round(wrong, 1), "B": b,
            "scale": "macro"}


def arrhenius(work: Path, rng: Any, item: int, path: str = "figure.png") -> dict[str, Any]:
    """An Arrhenius plot of diffusion data; open: the activation energy in kJ/mol (from the
    slope of the drawn least-squares line, -Ea/R per unit of 1000/T). The true Ea is spread
    log-evenly over 40-400 kJ/mol (interstitial hydrogen to self-diffusion in refractory
    metals), D0 over 1e-7-1e-3 m2/s, and the temperatures are where such a D is measurable
    (Ea / RT of 18-28 at the middle, a window of 20-40 % in 1000/T); the points scatter by
    0.25 in ln D about the line, without a trend of their own. The axes are scaled to the
    data."""
    r = item_rng("arrhenius", item)
    ea = spread("arrhenius-activation-energy", item, 40.0, 400.0, log=True)
    ln_d0 = math.log(10 ** float(r.uniform(-7, -3)))
    x_mid = float(r.uniform(18, 28)) * macro.R_GAS / ea
    span = x_mid * float(r.uniform(0.2, 0.4))
    x = np.sort(x_mid + span * (r.uniform(-0.5, 0.5, int(r.integers(6, 10)))))
    x[0], x[-1] = x_mid - span / 2, x_mid + span / 2  # the window's ends are measured
    scatter = r.normal(0, 0.25, len(x))
    scatter -= np.polyval(np.polyfit(x, scatter, 1), x)  # no trend: the fit's slope is Ea's
    y = ln_d0 - ea / macro.R_GAS * x + scatter
    fit = np.polyfit(x, y, 1)
    pad_x, pad_y = r.uniform(0.06, 0.2, 2)
    xlim = (x.min() - pad_x * span, x.max() + pad_x * span)
    ylim = (y.min() - pad_y * np.ptp(y), y.max() + pad_y * np.ptp(y))
    img = macro.plot_arrhenius(x, y, (float(fit[0]), float(fit[1])), xlim, ylim)
    save(caption(img, f"FQ-AR-{item:02d}", (780, 675)), work, path)
    value = round(-float(fit[0]) * macro.R_GAS, 1)
    return {"value": value, "wrong": round(value / 2.303, 1), "scale": "macro"}


# -- helpers -----------------------------------------------------------------------------------

CHOICES: dict[str, Callable[[int], dict[str, Any]]] = {
    "lattice_type": lambda i: _lattice_type_draw(i)[1],
    "hrtem_symmetry": _hrtem_symmetry_draw,
    "phase_fraction": _phase_draw,
    "fibre_orientation": _fibre_draw,
    "ductile_curve": _ductile_draw,
}


def choices(fn: str, item: int) -> str:
    """An MC item's options as the instruction lists them (no figure drawn)."""
    return CHOICES[fn](item)["options_text"]


def grain_size_no_scale(work: Path, rng: Any, item: int, path: str = "figure.png"
                        ) -> dict[str, Any]:
    """The grain micrograph without a scale bar (infeasible: no length in µm can be read)."""
    return grain_size(work, rng, item, path, bar=False)


GENERATORS = {
    "lattice_type": lattice_type,
    "lattice_parameter": lattice_parameter,
    "lattice_description": lattice_description,
    "hrtem_spacing": hrtem_spacing,
    "hrtem_symmetry": hrtem_symmetry,
    "grain_size": grain_size,
    "grain_size_no_scale": grain_size_no_scale,
    "phase_fraction": phase_fraction,
    "porosity": porosity,
    "fibre_orientation": fibre_orientation,
    "particle_count": particle_count,
    "uts": uts,
    "ductile_curve": ductile_curve,
    "eutectic": eutectic,
    "arrhenius": arrhenius,
}
