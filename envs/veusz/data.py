"""Seeded data for the Veusz tasks, with the values a materials scientist would extract.

- Tensile tests (:func:`tensile`): engineering stress-strain curves of real alloy classes built
  from the Ramberg-Osgood law ``e = s/E + 0.002 (s/Sy)^n``, so that the 0.2 % offset yield
  strength is ``Sy`` by construction, up to the ultimate strength and a necking drop, with
  load-cell noise.
- Ionic conductivity against temperature (:func:`arrhenius`): ``sigma = sigma0 exp(-Ea/kT)``
  for known solid electrolytes, each pellet with its own apparent Ea drawn from the range
  reported for its composition, logged in degrees Celsius as furnaces report it.
- Powder diffraction (:func:`xrd`): patterns of ``sciagent_gym.datagen.crystals`` structures
  (pymatgen peaks, pseudo-Voigt profiles, Poisson noise) and peak-width tables with
  uncertainties (:func:`peak_widths`).
- Thermal analysis (:func:`tga_dsc`): a hydrate's mass loss and heat flow against temperature,
  two quantities of different units for a two-axis plot.

Each generator writes its files into the work folder and returns the gold values; documents
(``.vsz``) it writes use only Veusz's safe commands, as Veusz itself saves them.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

K_B = 8.617333262e-5  # eV/K
CU_KA = 1.54184  # A, pymatgen's "CuKa" (the Ka1/Ka2 weighted mean)

#: alloy -> (E in GPa, 0.2 % yield strength in MPa, Ramberg-Osgood exponent, strain at UTS %)
ALLOYS: dict[str, tuple[float, float, float, float]] = {
    "AISI 1018 steel": (200.0, 370.0, 12.0, 14.0),
    "AISI 304 stainless steel": (193.0, 290.0, 6.0, 40.0),
    "6061-T6 aluminium": (68.9, 276.0, 25.0, 9.0),
    "2024-T3 aluminium": (73.1, 345.0, 14.0, 12.0),
    "Ti-6Al-4V": (113.8, 880.0, 30.0, 8.0),
    "C11000 copper (half hard)": (117.0, 250.0, 10.0, 10.0),
    "AZ31B magnesium": (45.0, 200.0, 12.0, 12.0),
}

#: electrolyte -> (Ea range in eV, conductivity in S/cm at the middle of the temperature range,
#: temperature range in degC). A pellet's apparent (total) activation energy depends on its
#: grain-boundary share, dopant level, density and impurities, so reported values of one
#: composition spread over the range given (bulk to grain-boundary dominated); each specimen
#: draws its own, and its sigma0 follows from the conductivity at mid-range (Meyer-Neldel-like
#: compensation keeps the conductivities realistic).
ELECTROLYTES: dict[str, tuple[tuple[float, float], float, tuple[int, int]]] = {
    "8YSZ (8 mol% yttria-stabilised zirconia)": ((0.85, 1.20), 8.0e-3, (400, 900)),
    "GDC (Ce0.9Gd0.1O1.95)": ((0.55, 0.95), 1.5e-2, (300, 750)),
    "LSGM (La0.9Sr0.1Ga0.8Mg0.2O3)": ((0.65, 1.05), 4.0e-2, (350, 800)),
    "LLZO (Al-doped Li7La3Zr2O12)": ((0.28, 0.52), 2.0e-3, (25, 300)),
    "Na-beta''-alumina": ((0.12, 0.35), 2.0e-2, (25, 350)),
}


#: Experimental alloys (development heats, the composition not stated), by base metal: ranges
#: of E (GPa), 0.2 % yield strength (MPa), Ramberg-Osgood exponent and strain at UTS (%). One
#: base metal's alloys span these moduli (beta-titanium 55-80 GPa against alpha-beta 110-120,
#: Al-Li 75-82 against 68-72, Invar-type Fe-Ni near 150 against steels near 210, W heavy
#: alloys 320-410 by tungsten content), so the modulus comes from the test, not a handbook.
#: ``limit`` (% strain) stays below half of the lowest yield strain of the base's range.
ALLOY_BASES: dict[str, dict[str, tuple[float, float]]] = {
    "magnesium": {"E": (40.0, 47.0), "Sy": (150.0, 300.0), "n": (8, 16), "uts": (8, 15)},
    "aluminium": {"E": (66.0, 82.0), "Sy": (200.0, 500.0), "n": (10, 30), "uts": (8, 14)},
    "zirconium": {"E": (85.0, 100.0), "Sy": (300.0, 550.0), "n": (8, 16), "uts": (10, 18)},
    "titanium": {"E": (55.0, 120.0), "Sy": (500.0, 1000.0), "n": (15, 30), "uts": (7, 12)},
    "niobium": {"E": (80.0, 115.0), "Sy": (200.0, 450.0), "n": (6, 12), "uts": (12, 20)},
    "copper": {"E": (100.0, 150.0), "Sy": (250.0, 600.0), "n": (8, 14), "uts": (8, 16)},
    "iron (steel)": {"E": (150.0, 240.0), "Sy": (320.0, 900.0), "n": (8, 16), "uts": (8, 16)},
    "nickel": {"E": (170.0, 230.0), "Sy": (300.0, 1100.0), "n": (6, 14), "uts": (15, 30)},
    "cobalt": {"E": (200.0, 250.0), "Sy": (420.0, 900.0), "n": (6, 12), "uts": (12, 25)},
    "molybdenum": {"E": (280.0, 330.0), "Sy": (450.0, 900.0), "n": (10, 20), "uts": (6, 12)},
    "tungsten": {"E": (320.0, 410.0), "Sy": (550.0, 1000.0), "n": (10, 20), "uts": (5, 10)},
}


def _jitter(rng: np.random.Generator, value: float, frac: float) -> float:
    return value * (1 + float(rng.uniform(-frac, frac)))


def _write_csv(path: Path, header: list[str], columns: list[np.ndarray],
               fmts: list[str]) -> None:
    lines = [",".join(header)]
    for row in zip(*columns, strict=True):
        lines.append(",".join(f.format(v) for f, v in zip(fmts, row, strict=True)))
    path.write_text("\n".join(lines) + "\n")


def _col(values: np.ndarray) -> dict[str, float]:
    """The summary the state dump gives of a column (see inside/state_dump.py)."""
    v = np.asarray(values, dtype=float)
    return {"n": int(len(v)), "sum": float(v.sum()), "mean": float(v.mean()),
            "min": float(v.min()), "max": float(v.max()), "first": float(v[0]),
            "last": float(v[-1])}


def _parsed(text_values: list[str]) -> np.ndarray:
    return np.array([float(t) for t in text_values])


# -- tensile tests ------------------------------------------------------------------------------

def tensile_curve(rng: np.random.Generator, alloy: str) -> dict[str, Any]:
    """Strain (%) and engineering stress (MPa) of one seeded test of ``alloy``, as written."""
    e_gpa, sy, n, e_uts = ALLOYS[alloy]
    e_gpa = round(_jitter(rng, e_gpa, 0.04), 2)
    sy = round(_jitter(rng, sy, 0.06), 1)
    n = _jitter(rng, n, 0.1)
    return _ramberg_osgood_test(rng, alloy, e_gpa, sy, n, e_uts)


def experimental_curve(rng: np.random.Generator, base: str, limit: float) -> dict[str, Any]:
    """One test of an experimental ``base``-metal alloy (:data:`ALLOY_BASES`): E drawn
    log-uniformly over the base's range, the yield strength uniformly but at least 2.2 times
    the stress at ``limit`` % strain (the fit range stays linear-elastic)."""
    b = ALLOY_BASES[base]
    e_gpa = round(math.exp(float(rng.uniform(*np.log(b["E"])))), 2)
    sy_lo = max(b["Sy"][0], 2.2 * e_gpa * 1000 * limit / 100)
    sy = round(float(rng.uniform(sy_lo, max(sy_lo, b["Sy"][1]))), 1)
    n = float(rng.uniform(*b["n"]))
    e_uts = float(rng.uniform(*b["uts"]))
    return _ramberg_osgood_test(rng, f"experimental {base} alloy", e_gpa, sy, n, e_uts)


def _ramberg_osgood_test(rng: np.random.Generator, alloy: str, e_gpa: float, sy: float,
                         n: float, e_uts: float) -> dict[str, Any]:
    e_mpa = e_gpa * 1000
    # the Ramberg-Osgood curve, strain as a function of stress, inverted on a dense grid
    s_grid = np.linspace(0, sy * 3, 200_001)
    strain_grid = s_grid / e_mpa + 0.002 * (s_grid / sy) ** n
    e_uts_frac = _jitter(rng, e_uts, 0.1) / 100
    e_break = e_uts_frac * float(rng.uniform(1.25, 1.45))
    # the extensometer logs densely through the elastic part, then at a constant rate
    elastic_end = 1.2 * sy / e_mpa
    strain = np.concatenate([np.linspace(0, elastic_end, 60, endpoint=False),
                             np.linspace(elastic_end, e_break, 540)])
    stress = np.interp(np.minimum(strain, e_uts_frac), strain_grid, s_grid)
    uts = float(np.interp(e_uts_frac, strain_grid, s_grid))
    # necking: the engineering stress falls after the ultimate strength, faster near fracture
    past = np.clip((strain - e_uts_frac) / (e_break - e_uts_frac), 0, 1)
    drop = float(rng.uniform(0.10, 0.20))
    stress = np.where(strain > e_uts_frac, uts * (1 - drop * past ** 2), stress)
    stress = stress + rng.normal(0, 0.0015 * sy, len(stress))
    stress[0] = abs(stress[0])
    strain_pct = [f"{v:.5f}" for v in strain * 100]
    stress_txt = [f"{v:.2f}" for v in stress]
    return {"alloy": alloy, "E": e_gpa, "Sy": sy, "n": n, "strain_text": strain_pct,
            "stress_text": stress_txt, "strain": _parsed(strain_pct),
            "stress": _parsed(stress_txt), "elastic_end_pct": elastic_end * 100}


def _tensile_gold(curve: dict[str, Any], elastic_limit_pct: float) -> dict[str, Any]:
    strain, stress = curve["strain"], curve["stress"]
    mask = strain <= elastic_limit_pct + 1e-12
    slope, icpt = np.polyfit(strain[mask], stress[mask], 1)  # MPa per %
    # the 0.2 % offset yield strength of the data: where stress crosses E (e - 0.2 %)
    e_fit = slope  # MPa per %
    offset_line = e_fit * (strain - 0.2)  # the offset line through 0.2 % strain
    diff = stress - offset_line
    after = np.where((diff[:-1] > 0) & (diff[1:] <= 0))[0]
    i = int(after[0])
    t = diff[i] / (diff[i] - diff[i + 1])
    yield_offset = float(stress[i] + t * (stress[i + 1] - stress[i]))
    true_strain = np.log1p(strain / 100)
    true_stress = stress * (1 + strain / 100)
    i_uts = int(np.argmax(stress))
    return {"alloy": curve["alloy"], "E_nominal": curve["E"], "Sy_nominal": curve["Sy"],
            "E": float(slope / 10.0),  # MPa/% -> GPa: x 100 / 1000
            "elastic_limit": elastic_limit_pct, "fit_points": int(mask.sum()),
            "yield_offset": yield_offset, "uts": float(stress[i_uts]),
            "strain_at_uts": float(strain[i_uts]),
            "true_stress_at_uts": float(true_stress[i_uts]),
            "strain_col": _col(strain), "stress_col": _col(stress),
            "true_strain_col": _col(true_strain), "true_stress_col": _col(true_stress),
            "true_strain_pct_col": _col(100 * true_strain),
            "elastic_strain_col": _col(strain[mask]),
            "offset_col": _col(offset_line),
            "points": int(len(strain))}


def tensile(work: Path, rng: np.random.Generator, alloy: str = "", path: str = "tensile.csv",
            limit: float | None = None, base: str = "") -> dict[str, Any]:
    """One tensile test as CSV (``strain`` in %, engineering ``stress`` in MPa). Gold: the
    Young's modulus E (GPa; ``E_slope`` in MPa per %) of a straight-line fit over strain <=
    ``limit`` % (default: a round strain where the stress is about half the yield strength),
    the 0.2 % offset yield strength, the ultimate tensile strength, true-stress columns.
    ``base`` (with ``limit``): an experimental alloy of that base metal instead of ``alloy``."""
    if base:
        if limit is None:
            raise ValueError("an experimental alloy's test needs the fit's strain limit")
        curve = experimental_curve(rng, base, float(limit))
    else:
        alloy = alloy or str(rng.choice(sorted(ALLOYS)))
        curve = tensile_curve(rng, alloy)
    if limit is None:
        limit = float(f"{0.5 * curve['Sy'] / (curve['E'] * 1000) * 100:.2g}")
    _write_csv(work / path, ["strain", "stress"], [curve["strain_text"], curve["stress_text"]],
               ["{}", "{}"])
    gold = _tensile_gold(curve, float(limit))
    return {**gold, "E_slope": gold["E"] * 10, "path": path}


def tensile_set(work: Path, rng: np.random.Generator, alloys: list[str],
                files: list[str]) -> dict[str, Any]:
    """One test per alloy, each in its own CSV (columns strain %, stress MPa). Gold per file
    stem: the columns' summaries and the ultimate tensile strength."""
    out: dict[str, Any] = {"best_uts": 0.0}
    for alloy, name in zip(alloys, files, strict=True):
        curve = tensile_curve(rng, alloy)
        _write_csv(work / name, ["strain", "stress"], [curve["strain_text"],
                                                       curve["stress_text"]], ["{}", "{}"])
        out[Path(name).stem] = {"alloy": alloy, "strain_col": _col(curve["strain"]),
                                "stress_col": _col(curve["stress"]),
                                "uts": float(curve["stress"].max())}
        out["best_uts"] = max(out["best_uts"], float(curve["stress"].max()))
    return out


# -- Arrhenius conductivity ---------------------------------------------------------------------

def arrhenius(work: Path, rng: np.random.Generator, material: str = "",
              path: str = "conductivity.csv", step: int = 25) -> dict[str, Any]:
    """Conductivity of a solid electrolyte against furnace temperature: columns ``T`` (degC)
    and ``sigma`` (S/cm), 2 % multiplicative noise. Gold: Ea (eV) of the least-squares line of
    ln(sigma) against 1/T (K), and summaries of the derived columns 1000/T (1/K), ln(sigma),
    log10(sigma) and T in K."""
    material = material or str(rng.choice(sorted(ELECTROLYTES)))
    (ea_lo, ea_hi), s_mid, (t_lo, t_hi) = ELECTROLYTES[material]
    ea = round(float(rng.uniform(ea_lo, ea_hi)), 3)
    t_mid = (t_lo + t_hi) / 2 + 273.15
    s0 = _jitter(rng, s_mid, 0.3) * math.exp(ea / (K_B * t_mid))
    t_c = np.arange(t_lo, t_hi + 1, step, dtype=float)
    t_k = t_c + 273.15
    sigma = s0 * np.exp(-ea / (K_B * t_k)) * np.exp(rng.normal(0, 0.02, len(t_k)))
    t_txt = [f"{v:.0f}" for v in t_c]
    s_txt = [f"{v:.5e}" for v in sigma]
    _write_csv(work / path, ["T", "sigma"], [t_txt, s_txt], ["{}", "{}"])
    t_c, sigma = _parsed(t_txt), _parsed(s_txt)
    t_k = t_c + 273.15
    inv = 1000.0 / t_k
    slope, _ = np.polyfit(inv, np.log(sigma), 1)  # per 1000/T
    slope_c, _ = np.polyfit(1000.0 / t_c, np.log(sigma), 1) if t_c.min() > 0 else (0.0, 0.0)
    return {"material": material, "Ea_nominal": ea, "Ea": float(-slope * 1000 * K_B),
            "slope": float(slope), "Ea_kjmol": float(-slope * 1000 * K_B * 96.485332),
            "Ea_celsius_mistake": float(-slope_c * 1000 * K_B), "path": path,
            "T_col": _col(t_c), "sigma_col": _col(sigma), "TK_col": _col(t_k),
            "invT_col": _col(inv), "invT1_col": _col(1.0 / t_k), "ln_col": _col(np.log(sigma)),
            "log10_col": _col(np.log10(sigma)), "points": int(len(t_c))}


# -- powder diffraction -------------------------------------------------------------------------

#: cubic compounds whose strongest reflection stands clear of its neighbours
XRD_COMPOUNDS = {"NaCl": "rocksalt", "MgO": "rocksalt", "KCl": "rocksalt", "NiO": "rocksalt",
                 "CaF2": "fluorite", "CeO2": "fluorite", "GaAs": "zincblende",
                 "ZnS": "zincblende", "CsCl": "cesium-chloride", "SrTiO3": "perovskite"}


def _crystal(rng: np.random.Generator, formula: str) -> Any:
    from sciagent_gym.sdk import crystals

    family = XRD_COMPOUNDS[formula]
    for _ in range(200):
        c = crystals.make_crystal(rng, family)
        if c.formula == formula:
            return c
    raise ValueError(f"no {formula} in family {family}")


def xrd(work: Path, rng: np.random.Generator, formula: str, path: str = "pattern.csv",
        two_theta: tuple[float, float] = (20.0, 90.0)) -> dict[str, Any]:
    """A Cu Ka powder pattern of ``formula`` as CSV (``two_theta`` in degrees, ``counts``).
    Gold: the strongest reflection's position, hkl and d spacing (Bragg's law with pymatgen's
    Cu Ka, 1.54184 A), the profile FWHM, and the columns' summaries."""
    from sciagent_gym.sdk import crystals

    crystal = _crystal(rng, formula)
    peaks = crystals.xrd_peaks(crystal, two_theta=tuple(two_theta))
    pattern = crystals.powder_pattern(rng, peaks, two_theta=tuple(two_theta))
    x_txt = [f"{v:.3f}" for v in pattern.two_theta]
    y_txt = [f"{v:.0f}" for v in pattern.counts]
    _write_csv(work / path, ["two_theta", "counts"], [x_txt, y_txt], ["{}", "{}"])
    top = max(peaks, key=lambda p: p.intensity)
    others = [abs(p.two_theta - top.two_theta) for p in peaks if p is not top]
    d = CU_KA / (2 * math.sin(math.radians(top.two_theta / 2)))
    return {"formula": crystal.formula, "a": crystal.lattice["a"], "peak": top.two_theta,
            "hkl": "".join(str(abs(i)) for i in top.hkl), "d": d, "d_pymatgen": top.d,
            "fwhm": pattern.fwhm, "fwhm_lo": pattern.fwhm * 0.5, "fwhm_hi": pattern.fwhm * 2,
            "d_wrong": CU_KA / (2 * math.sin(math.radians(top.two_theta))),
            "clearance": min(others) if others else 90.0,
            "x_col": _col(_parsed(x_txt)), "y_col": _col(_parsed(y_txt)), "path": path}


def peak_widths(work: Path, rng: np.random.Generator, formula: str,
                path: str = "peaks.csv") -> dict[str, Any]:
    """A peak table of ``formula``'s reflections (20-120 deg, Cu Ka) as a profile fit reports
    it: ``two_theta`` (deg), ``fwhm`` (deg) broadened by crystallite size and microstrain
    (Williamson-Hall: beta cos(theta) = K lambda / D + 4 eps sin(theta), K = 0.9) and
    ``fwhm_err``, its standard uncertainty (deg). Gold: size D (nm), strain, columns."""
    from sciagent_gym.sdk import crystals

    crystal = _crystal(rng, formula)
    peaks = [p for p in crystals.xrd_peaks(crystal, two_theta=(20.0, 120.0)) if p.intensity >= 3]
    size_nm = round(float(rng.uniform(20, 80)), 1)
    strain = float(rng.uniform(0.0005, 0.002))
    tt = np.array([p.two_theta for p in peaks])
    theta = np.radians(tt / 2)
    beta = 0.9 * CU_KA / (size_nm * 10) / np.cos(theta) + 4 * strain * np.tan(theta)  # rad
    fwhm = np.degrees(beta)
    rel = rng.uniform(0.03, 0.08, len(tt))
    err = fwhm * rel
    fwhm = fwhm + rng.normal(0, 1, len(tt)) * err * 0.5
    x_txt = [f"{v:.3f}" for v in tt]
    y_txt = [f"{v:.4f}" for v in fwhm]
    e_txt = [f"{v:.4f}" for v in err]
    _write_csv(work / path, ["two_theta", "fwhm", "fwhm_err"], [x_txt, y_txt, e_txt],
               ["{}", "{}", "{}"])
    return {"formula": crystal.formula, "size_nm": size_nm, "strain": strain,
            "x_col": _col(_parsed(x_txt)), "y_col": _col(_parsed(y_txt)),
            "err_col": _col(_parsed(e_txt)), "peaks": int(len(tt)), "path": path}


# -- thermal analysis -----------------------------------------------------------------------------

#: hydrate -> (formula weight g/mol, [(onset degC, end degC, waters lost)])
HYDRATES: dict[str, tuple[float, list[tuple[float, float, float]]]] = {
    "CuSO4.5H2O": (249.69, [(60, 110, 2), (110, 150, 2), (200, 260, 1)]),
    "CaC2O4.H2O": (146.11, [(110, 200, 1)]),
    "BaCl2.2H2O": (244.26, [(80, 140, 2)]),
    "MgSO4.7H2O": (246.47, [(40, 120, 6), (250, 320, 1)]),
}


def tga_dsc(work: Path, rng: np.random.Generator, hydrate: str,
            path: str = "thermal.csv") -> dict[str, Any]:
    """Simultaneous TGA/DSC of a hydrate at 10 K/min: ``T`` (degC), ``mass`` (% of the
    initial mass) stepping down by each dehydration's water loss, and ``heat_flow`` (mW,
    endothermic down) with a peak at each step. Gold: the columns and the total mass loss."""
    mw, steps = HYDRATES[hydrate]
    t = np.arange(30.0, 400.0 + 0.1, 1.0)
    mass = np.full_like(t, 100.0)
    flow = -0.2 - 0.001 * (t - 30) + rng.normal(0, 0.01, len(t))
    for lo, hi, waters in steps:
        lo, hi = lo + float(rng.uniform(-5, 5)), hi + float(rng.uniform(-5, 5))
        loss = 100 * waters * 18.015 / mw
        centre, width = (lo + hi) / 2, (hi - lo) / 6
        mass -= loss / (1 + np.exp(-(t - centre) / width))
        flow -= loss * 0.4 * np.exp(-0.5 * ((t - centre) / width) ** 2)
    mass += rng.normal(0, 0.02, len(t))
    t_txt = [f"{v:.1f}" for v in t]
    m_txt = [f"{v:.3f}" for v in mass]
    f_txt = [f"{v:.4f}" for v in flow]
    _write_csv(work / path, ["T", "mass", "heat_flow"], [t_txt, m_txt, f_txt], ["{}"] * 3)
    return {"hydrate": hydrate, "T_col": _col(_parsed(t_txt)), "mass_col": _col(_parsed(m_txt)),
            "flow_col": _col(_parsed(f_txt)),
            "loss": float(100 * sum(w for _, _, w in steps) * 18.015 / mw), "path": path}


# -- documents ------------------------------------------------------------------------------------

def _document(lines: list[str]) -> str:
    return ("# Veusz saved document (version 3.6.2)\n\nSetCompatLevel(1)\n"
            + "\n".join(lines) + "\n")


def plot_document(work: Path, rng: np.random.Generator, data: str, x: str, y: str,
                  path: str, xlabel: str = "", ylabel: str = "", marker: str = "circle",
                  xlog: bool = False, ylog: bool = False) -> dict[str, Any]:
    """A Veusz document that imports ``data`` (a CSV in the work folder, linked by a path
    relative to the document) and plots ``y`` against ``x`` in /page1/graph1 (the xy widget
    'data'), as Veusz itself saves one."""
    lines = [f"ImportFileCSV({data!r}, linked=True)",
             "Add('page', name='page1', autoadd=False)", "To('page1')",
             "Add('graph', name='graph1', autoadd=False)", "To('graph1')",
             "Add('axis', name='x', autoadd=False)", "To('x')", f"Set('label', {xlabel!r})",
             f"Set('log', {xlog!r})", "To('..')",
             "Add('axis', name='y', autoadd=False)", "To('y')", f"Set('label', {ylabel!r})",
             "Set('direction', 'vertical')", f"Set('log', {ylog!r})", "To('..')",
             "Add('xy', name='data', autoadd=False)", "To('data')",
             f"Set('xData', {x!r})", f"Set('yData', {y!r})", f"Set('marker', {marker!r})",
             "To('..')", "To('..')", "To('..')"]
    (work / path).write_text(_document(lines))
    return {"path": path}


GENERATORS = {
    "tensile": tensile,
    "tensile_set": tensile_set,
    "arrhenius": arrhenius,
    "xrd": xrd,
    "peak_widths": peak_widths,
    "tga_dsc": tga_dsc,
    "plot_document": plot_document,
}
