"""Seeded crystal structures of common families, their CIF text and their powder patterns.

A :class:`Crystal` is a real compound of a structure family (rock salt, perovskite, wurtzite,
spinel, ...) with its lattice parameters jittered by a seeded factor, built with pymatgen from
the family's space group and Wyckoff positions, so that symmetry, density, neighbour distances
and diffraction peaks are exactly what pymatgen computes for it. Nominal parameters are room
temperature literature values, rounded; the jitter makes each variant a structure of its own.

pymatgen is a tool requirement (``"pip"`` in the tool's ``tool.json``), imported on first use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: family -> (space group, sites as (label, fractional coords), compounds with their elements
#: per label and nominal lattice parameters; for hexagonal/tetragonal ones also c and u).
FAMILIES: dict[str, dict[str, Any]] = {
    "rocksalt": {
        "spacegroup": "Fm-3m", "sites": [("A", (0, 0, 0)), ("X", (0.5, 0.5, 0.5))],
        "compounds": [({"A": "Na", "X": "Cl"}, {"a": 5.640}), ({"A": "K", "X": "Cl"}, {"a": 6.293}),
                      ({"A": "Mg", "X": "O"}, {"a": 4.212}), ({"A": "Li", "X": "F"}, {"a": 4.027}),
                      ({"A": "Ni", "X": "O"}, {"a": 4.177}), ({"A": "Ca", "X": "O"}, {"a": 4.811}),
                      ({"A": "K", "X": "Br"}, {"a": 6.600})]},
    "cesium-chloride": {
        "spacegroup": "Pm-3m", "sites": [("A", (0, 0, 0)), ("X", (0.5, 0.5, 0.5))],
        "compounds": [({"A": "Cs", "X": "Cl"}, {"a": 4.123}),
                      ({"A": "Cs", "X": "Br"}, {"a": 4.286}),
                      ({"A": "Tl", "X": "Cl"}, {"a": 3.840})]},
    "zincblende": {
        "spacegroup": "F-43m", "sites": [("A", (0, 0, 0)), ("X", (0.25, 0.25, 0.25))],
        "compounds": [({"A": "Zn", "X": "S"}, {"a": 5.409}), ({"A": "Ga", "X": "As"}, {"a": 5.653}),
                      ({"A": "In", "X": "P"}, {"a": 5.869}), ({"A": "Si", "X": "C"}, {"a": 4.360}),
                      ({"A": "Cd", "X": "Te"}, {"a": 6.482})]},
    "fluorite": {
        "spacegroup": "Fm-3m", "sites": [("A", (0, 0, 0)), ("X", (0.25, 0.25, 0.25))],
        "compounds": [({"A": "Ca", "X": "F"}, {"a": 5.463}), ({"A": "Ce", "X": "O"}, {"a": 5.411}),
                      ({"A": "Zr", "X": "O"}, {"a": 5.070}),
                      ({"A": "Sr", "X": "F"}, {"a": 5.800})]},
    "perovskite": {
        "spacegroup": "Pm-3m",
        "sites": [("A", (0, 0, 0)), ("B", (0.5, 0.5, 0.5)), ("X", (0.5, 0.5, 0))],
        "compounds": [({"A": "Sr", "B": "Ti", "X": "O"}, {"a": 3.905}),
                      ({"A": "Ba", "B": "Zr", "X": "O"}, {"a": 4.193}),
                      ({"A": "K", "B": "Nb", "X": "O"}, {"a": 4.022}),
                      ({"A": "Cs", "B": "Pb", "X": "Br"}, {"a": 5.874}),
                      ({"A": "La", "B": "Al", "X": "O"}, {"a": 3.790})]},
    "wurtzite": {
        "spacegroup": "P6_3mc", "sites": [("A", (1 / 3, 2 / 3, 0)), ("X", (1 / 3, 2 / 3, "u"))],
        "compounds": [({"A": "Zn", "X": "O"}, {"a": 3.250, "c": 5.207, "u": 0.382}),
                      ({"A": "Ga", "X": "N"}, {"a": 3.189, "c": 5.185, "u": 0.377}),
                      ({"A": "Al", "X": "N"}, {"a": 3.112, "c": 4.982, "u": 0.382}),
                      ({"A": "Cd", "X": "S"}, {"a": 4.137, "c": 6.716, "u": 0.377})]},
    "rutile": {
        "spacegroup": "P4_2/mnm", "sites": [("A", (0, 0, 0)), ("X", ("u", "u", 0))],
        "compounds": [({"A": "Ti", "X": "O"}, {"a": 4.594, "c": 2.959, "u": 0.305}),
                      ({"A": "Sn", "X": "O"}, {"a": 4.737, "c": 3.186, "u": 0.307}),
                      ({"A": "Mg", "X": "F"}, {"a": 4.621, "c": 3.052, "u": 0.303})]},
    "spinel": {  # origin choice 1, as pymatgen's Fd-3m: A 8a, B 16d, O 32e (u = u2 + 1/8)
        "spacegroup": "Fd-3m",
        "sites": [("A", (0, 0, 0)), ("B", (5 / 8, 5 / 8, 5 / 8)), ("X", ("u", "u", "u"))],
        "compounds": [({"A": "Mg", "B": "Al", "X": "O"}, {"a": 8.083, "u": 0.3874}),
                      ({"A": "Zn", "B": "Fe", "X": "O"}, {"a": 8.441, "u": 0.3856}),
                      ({"A": "Co", "B": "Al", "X": "O"}, {"a": 8.104, "u": 0.3890}),
                      ({"A": "Mg", "B": "Cr", "X": "O"}, {"a": 8.333, "u": 0.3862})]},
}


@dataclass
class Crystal:
    """One seeded structure and what is known about it (all computed by pymatgen)."""

    family: str
    structure: Any  # pymatgen Structure, conventional cell
    formula: str  # reduced formula, e.g. "SrTiO3"
    spacegroup: str  # Hermann-Mauguin symbol as spglib reports it, e.g. "Pm-3m"
    spacegroup_number: int
    lattice: dict[str, float] = field(default_factory=dict)  # a, b, c (A), alpha, beta, gamma
    density: float = 0.0  # g/cm^3
    volume: float = 0.0  # A^3 of the conventional cell
    nsites: int = 0

    def gold(self) -> dict[str, Any]:
        """Plain values for a task's gold (no pymatgen objects)."""
        return {"family": self.family, "formula": self.formula, "spacegroup": self.spacegroup,
                "spacegroup_number": self.spacegroup_number, **self.lattice,
                "density": self.density, "volume": self.volume, "nsites": self.nsites}


def make_crystal(rng: np.random.Generator, family: str | None = None,
                 jitter: float = 0.02, formula: str | None = None) -> Crystal:
    """A compound of ``family`` (or a random family) with lattice lengths scaled by a factor in
    [1 - jitter, 1 + jitter], rounded to 1 mA. ``formula`` ("SrTiO3", digits ignored) names
    the family's compound instead of drawing one (then only the jitter is drawn)."""
    from pymatgen.core import Lattice, Structure

    family = family or str(rng.choice(sorted(FAMILIES)))
    fam = FAMILIES[family]
    if formula is None:
        elements, params = fam["compounds"][int(rng.integers(len(fam["compounds"])))]
    else:
        bare = re.sub(r"[0-9]", "", formula)
        found = [(els, prm) for els, prm in fam["compounds"]
                 if "".join(dict.fromkeys(els[label] for label, _ in fam["sites"])) == bare]
        if not found:
            raise ValueError(f"no compound {formula!r} in family {family!r}")
        elements, params = found[0]
    scale = 1 + float(rng.uniform(-jitter, jitter))
    a = round(params["a"] * scale, 3)
    c = round(params["c"] * scale, 3) if "c" in params else None
    if fam["spacegroup"].startswith("P6"):
        lattice = Lattice.hexagonal(a, c)
    elif c is not None:
        lattice = Lattice.tetragonal(a, c)
    else:
        lattice = Lattice.cubic(a)
    species, coords = [], []
    for label, frac in fam["sites"]:
        species.append(elements[label])
        coords.append([params["u"] if x == "u" else x for x in frac])
    structure = Structure.from_spacegroup(fam["spacegroup"], lattice, species, coords)
    return describe(structure, family, order=species)


def formula_of(structure: Any, order: list[str] | None = None) -> str:
    """The reduced formula with elements in ``order`` (cation first, as chemists write
    ZnFe2O4; pymatgen's own would be "Zn(FeO2)2"), else pymatgen's."""
    comp = structure.composition.reduced_composition
    if not order:
        return structure.composition.reduced_formula
    amounts = {str(el): comp[el] for el in comp}
    return "".join(f"{el}{'' if amounts[el] == 1 else f'{amounts[el]:g}'}"
                   for el in dict.fromkeys(order))


def describe(structure: Any, family: str = "", order: list[str] | None = None) -> Crystal:
    """The :class:`Crystal` of a pymatgen structure, its symmetry found by spglib."""
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

    sga = SpacegroupAnalyzer(structure, symprec=1e-3)
    lat = structure.lattice
    return Crystal(
        family=family, structure=structure, formula=formula_of(structure, order),
        spacegroup=sga.get_space_group_symbol(), spacegroup_number=sga.get_space_group_number(),
        lattice={"a": round(lat.a, 4), "b": round(lat.b, 4), "c": round(lat.c, 4),
                 "alpha": round(lat.alpha, 3), "beta": round(lat.beta, 3),
                 "gamma": round(lat.gamma, 3)},
        density=float(structure.density), volume=float(lat.volume), nsites=len(structure))


def cif_text(crystal: Crystal, symmetrized: bool = True) -> str:
    """The structure as CIF; ``symmetrized`` writes the space group and the asymmetric unit
    (what visualisers show as the named group), else P1 with every site."""
    from pymatgen.io.cif import CifWriter

    return str(CifWriter(crystal.structure, symprec=1e-3 if symmetrized else None))


def nearest_neighbour(crystal: Crystal, site: int = 0, cutoff: float = 4.0) -> float:
    """The shortest distance (A) from site ``site`` to any other atom, periodic images
    included."""
    neighbours = crystal.structure.get_neighbors(crystal.structure[site], cutoff)
    if not neighbours:
        raise ValueError(f"no neighbour within {cutoff} A")
    return float(min(n.nn_distance for n in neighbours))


# -- powder diffraction ----------------------------------------------------------------------

@dataclass(frozen=True)
class Peak:
    two_theta: float  # degrees
    intensity: float  # relative, the strongest 100
    hkl: tuple[int, ...]
    d: float  # A


def xrd_peaks(crystal: Crystal, wavelength: str | float = "CuKa",
              two_theta: tuple[float, float] = (10.0, 90.0), min_intensity: float = 1.0,
              ) -> list[Peak]:
    """The powder peaks pymatgen computes (kinematic, Lorentz-polarisation corrected), merged
    families, those of at least ``min_intensity`` % of the strongest."""
    from pymatgen.analysis.diffraction.xrd import XRDCalculator

    pattern = XRDCalculator(wavelength=wavelength).get_pattern(crystal.structure,
                                                              two_theta_range=two_theta)
    peaks = []
    for x, y, hkls, d in zip(pattern.x, pattern.y, pattern.hkls, pattern.d_hkls, strict=True):
        if y >= min_intensity:
            peaks.append(Peak(round(float(x), 4), round(float(y), 3),
                              tuple(hkls[0]["hkl"]), round(float(d), 5)))
    return peaks


def pseudo_voigt(x: np.ndarray, center: float, fwhm: float, eta: float) -> np.ndarray:
    """Unit-height pseudo-Voigt: ``eta`` Lorentzian + (1 - eta) Gaussian of one FWHM."""
    dx = x - center
    gauss = np.exp(-4 * np.log(2) * dx**2 / fwhm**2)
    lorentz = 1 / (1 + 4 * dx**2 / fwhm**2)
    return eta * lorentz + (1 - eta) * gauss


@dataclass
class Pattern:
    """A measured-looking powder pattern and the parameters that made it."""

    two_theta: np.ndarray
    counts: np.ndarray
    peaks: list[Peak]
    fwhm: float
    eta: float
    height: float  # counts at the top of the strongest peak, above background
    background: tuple[float, float, float]  # b0 + b1 * x + b2 * x^2

    def xy_text(self, header: str = "") -> str:
        """Two columns (2theta, counts), as diffractometers export them."""
        lines = [f"# {line}" for line in header.splitlines()] if header else []
        lines += [f"{x:.3f} {y:.1f}" for x, y in zip(self.two_theta, self.counts, strict=True)]
        return "\n".join(lines) + "\n"


def powder_pattern(rng: np.random.Generator, peaks: list[Peak],
                   two_theta: tuple[float, float] = (10.0, 90.0), step: float = 0.02,
                   fwhm: float | None = None, height: float | None = None,
                   noise: bool = True) -> Pattern:
    """Peaks as pseudo-Voigts of one seeded width on a slowly varying background, with
    Poisson counting noise: what a lab diffractometer's scan looks like."""
    x = np.round(np.arange(two_theta[0], two_theta[1] + step / 2, step), 4)
    fwhm = float(fwhm if fwhm is not None else rng.uniform(0.10, 0.25))
    eta = float(rng.uniform(0.2, 0.6))
    height = float(height if height is not None else rng.uniform(2000, 8000))
    b = (float(rng.uniform(40, 120)), float(rng.uniform(-0.8, 0.2)), float(rng.uniform(0, 0.01)))
    y = b[0] + b[1] * x + b[2] * x**2
    for p in peaks:
        y = y + height * p.intensity / 100 * pseudo_voigt(x, p.two_theta, fwhm, eta)
    y = np.clip(y, 1, None)
    counts = rng.poisson(y).astype(float) if noise else y
    return Pattern(x, counts, peaks, fwhm, eta, height, b)
