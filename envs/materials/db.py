"""The structure database behind the materials code env: templates built here with pymatgen.

Deterministic (no seed but :data:`SEED`, no network) and cached under the user's cache folder
(``$SCIAGENT_CACHE/materials/``, default ``~/.cache/sciagent-gym/materials/``) as one JSON file
named after :data:`DB_VERSION`: built on first use (2230 templates, about 20 s, with a
progress bar), rebuilt whenever the version changes. Bump :data:`DB_VERSION` with any change to
this module that changes a template.

No task serves this file as it is: every variant (seed) of a task stages its own database,
derived from these templates in a fraction of a second by
:mod:`sciagent_gym.envs.materials.variant` (a seeded subset, fresh toy energies and band gaps,
a seeded set of unanalysed entries, shuffled ids), and its gold values are computed from that
staged database. :func:`entries` is the *pristine* database, the core templates as database v1
served them to every seed (same ids and values); the matsci specs' entry parameters name
pristine ids, which a variant keeps where a task names them.

What is in it
-------------
Chemistries of five structure families of :data:`sciagent_gym.datagen.crystals.FAMILIES`,
their compounds plus charge-balanced substitutions (:data:`AX`, :data:`AX2`, :data:`ABX3`,
:data:`AB2X4`), each built as several polymorphs (the *core*, database v1):

- AX (1:1, e.g. ZnO, NaCl, GaAs): rock salt, caesium chloride, zinc blende and wurtzite, and
  rock salt and zinc blende under a tetragonal strain (c/a = 1.04 / 0.98: I4/mmm, I-4m2);
- AX2 (CaF2, TiO2, ...): fluorite and rutile;
- ABX3 (SrTiO3, CsPbBr3, ...): cubic perovskite and a tetragonally strained one (P4/mmm);
- AB2X4 (MgAl2O4, ...): spinel.

The *reserve* (database v2), of which each variant holds a seeded share: further
charge-balanced substitutions in the same families (:data:`RESERVE_AX`, :data:`RESERVE_AX2`,
:func:`reserve_abx3`, :func:`reserve_ab2x4`), and ordered substitutional solid solutions of the
AX compounds (:func:`ordered_recipes`): two isovalent cations (``CoNiO2``: (Co,Ni)O) or anions
(``Co2OS``: Co(O,S)) on alternate (001) layers of the rock salt or zinc blende conventional
cell (CuAu-type order: P4/mmm, P-4m2), lattice parameter the mean of the end members'
(Vegard's law).

Lattice parameters: the literature values of ``FAMILIES`` where the compound is listed there
in that family; otherwise from the cation-anion bond length ``d`` = sum of ionic radii
(:data:`RADII`, approximate Shannon values) through each family's ideal geometry (rock salt
a = 2d, CsCl a = 2d/sqrt3, zinc blende and fluorite a = 4d/sqrt3, wurtzite a = d sqrt(8/3),
c = a sqrt(8/3), u = 3/8; rutile a = d / (u sqrt2), c = 0.644 a; perovskite a = 2 d(B-X);
spinel a scaled from MgAl2O4 by d(B-O)). Space group, density and cell come from pymatgen
(:func:`sciagent_gym.datagen.crystals.describe`) on the stored, rounded structure. These
structures are what they are in every variant: only the toy values below and the analysis
flags vary.

Toy energies (documented, not physics)
--------------------------------------
``_sag_formation_energy_per_atom`` (eV/atom) =
``-0.9 * sum_c x_c * (chi_X - chi_c)**2``  (x_c: atom fraction of cation c, chi: Pauling
electronegativity from :data:`CHI`; an ionic-bond energy after Pauling)
``+ 0.06 * |log2(CN / CN_preferred)|`` (structure preference: the radius-ratio rule picks the
preferred coordination, 4 below r_c/r_a = 0.414, 6 below 0.732, else 8; among the
four-coordinated, wurtzite is preferred for |chi_X - chi_c| > 1.2 and zinc blende otherwise,
the other costing 0.01; a perovskite pays ``1.5 * (1 - t)**2`` for its tolerance factor t, and
its strained cell is preferred by 0.02 when t < 0.9; fluorite vs rutile: fluorite for
r_c/r_a > 0.65)
``+ 15 * strain**2`` (a strained cell) ``+ N(0, 0.01)`` noise, rounded to 4 decimals. An ordered
solid solution averages the ionic term over its cation-anion pairs, takes the structure
preference of its parent with the mean radii, and pays ``0.6 * ((r1 - r2) / (r1 + r2))**2`` for
the size mismatch of its mixed ions. Templates store the value without noise
(``energy_model``); every variant draws the noise afresh.

``_sag_band_gap`` (eV) is **synthetic** (marked ``_sag_band_gap_synthetic: true`` in every
entry): ``max(0, 1.6 * mean|chi_X - chi_c| - 0.9 + N(0, 0.15))`` (mean over the cation-anion
pairs), halved for open-d-shell cations (:data:`OPEN_D`), rounded to 3 decimals; the noise is
drawn afresh per variant too.

In the pristine database a seeded sixth of the entries is "unanalysed": their space group
(symbol and number), density and structure type are unknown (null), as in a database whose
analysis pipeline has not run on every entry (a variant draws its own unanalysed share). Ids
(``sag-1`` ...) follow a seeded shuffle of the build order (a variant shuffles again).
"""

from __future__ import annotations

import functools
import json
import math
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

DB_VERSION = "2"
SEED = 20261205
FILE_NAME = f"sag-structures-v{DB_VERSION}.json"
PROVIDER = {"name": "sciagent-gym structures", "prefix": "sag",
            "description": "Structures built with pymatgen for sciagent-gym's materials tasks "
                           "(toy formation energies, synthetic band gaps)",
            "homepage": None}
LAST_MODIFIED = "2026-11-{day:02d}T{hour:02d}:00:00Z"

#: Pauling electronegativities.
CHI = {"Li": 0.98, "Na": 0.93, "K": 0.82, "Rb": 0.82, "Cs": 0.79, "Tl": 1.62, "Ag": 1.93,
       "Cu": 1.90, "Be": 1.57, "Mg": 1.31, "Ca": 1.00, "Sr": 0.95, "Ba": 0.89, "Mn": 1.55,
       "Fe": 1.83, "Co": 1.88, "Ni": 1.91, "Zn": 1.65, "Cd": 1.69, "Pb": 2.33, "Sn": 1.96,
       "B": 2.04, "Al": 1.61, "Ga": 1.81, "In": 1.78, "Sc": 1.36, "Y": 1.22, "La": 1.10,
       "Nd": 1.14, "Cr": 1.66, "Si": 1.90, "Ge": 2.01, "Ti": 1.54, "Zr": 1.33, "Hf": 1.30,
       "Ce": 1.12, "Nb": 1.60, "Ta": 1.50, "C": 2.55, "N": 3.04, "P": 2.19, "As": 2.18,
       "Sb": 2.05, "O": 3.44, "S": 2.58, "Se": 2.55, "Te": 2.10, "F": 3.98, "Cl": 3.16,
       "Br": 2.96, "I": 2.66}
#: Approximate Shannon ionic radii (A, six-fold coordination) of the ions used.
RADII = {"Li": 0.76, "Na": 1.02, "K": 1.38, "Rb": 1.52, "Cs": 1.67, "Tl": 1.50, "Ag": 1.15,
         "Cu": 0.77, "Be": 0.45, "Mg": 0.72, "Ca": 1.00, "Sr": 1.18, "Ba": 1.35, "Mn": 0.83,
         "Fe": 0.78, "Co": 0.745, "Ni": 0.69, "Zn": 0.74, "Cd": 0.95, "Pb": 1.19, "Sn": 0.69,
         "B": 0.27, "Al": 0.535, "Ga": 0.62, "In": 0.80, "Sc": 0.745, "Y": 0.90, "La": 1.032,
         "Nd": 0.983, "Cr": 0.615, "Si": 0.40, "Ge": 0.53, "Ti": 0.605, "Zr": 0.72,
         "Hf": 0.71, "Ce": 0.87, "Nb": 0.64, "Ta": 0.64, "C": 1.49, "N": 1.46, "P": 2.12,
         "As": 2.22, "Sb": 2.45, "O": 1.40, "S": 1.84, "Se": 1.98, "Te": 2.21, "F": 1.33,
         "Cl": 1.81, "Br": 1.96, "I": 2.20}
#: Cations with an open d shell (their synthetic gaps are halved).
OPEN_D = {"Mn", "Fe", "Co", "Ni", "Cr", "Cu"}

#: 1:1 compounds (cation, anion).
AX = ([(a, x) for a in ("Li", "Na", "K", "Rb", "Cs", "Ag", "Tl") for x in ("F", "Cl", "Br", "I")]
      + [(a, x) for a in ("Be", "Mg", "Ca", "Sr", "Ba", "Mn", "Fe", "Co", "Ni", "Zn", "Cd",
                          "Pb") for x in ("O", "S", "Se", "Te")]
      + [(a, x) for a in ("B", "Al", "Ga", "In") for x in ("N", "P", "As", "Sb")]
      + [("Si", "C")])
#: 1:2 compounds (cation, anion).
AX2 = ([(a, "F") for a in ("Mg", "Ca", "Sr", "Ba", "Cd", "Pb", "Mn", "Fe", "Co", "Ni", "Zn")]
       + [(a, "O") for a in ("Ti", "Zr", "Hf", "Ce", "Sn", "Ge", "Si", "Mn", "Pb")])
#: Perovskites (A, B, X).
ABX3 = ([(a, b, "O") for a in ("Ca", "Sr", "Ba", "Pb") for b in ("Ti", "Zr", "Sn", "Hf")]
        + [(a, b, "O") for a in ("Na", "K") for b in ("Nb", "Ta")]
        + [(a, b, "O") for a in ("La", "Nd", "Y") for b in ("Al", "Ga", "Fe", "Cr", "Sc")]
        + [("Cs", b, x) for b in ("Pb", "Sn") for x in ("Cl", "Br", "I")]
        + [(a, b, "F") for a in ("K", "Rb") for b in ("Mg", "Zn", "Ni", "Mn")])
#: Spinels (A, B, X).
AB2X4 = [(a, b, "O") for a in ("Mg", "Zn", "Co", "Ni", "Fe", "Mn") for b in ("Al", "Cr", "Fe",
                                                                             "Ga")] \
    + [(a, b, "S") for a in ("Zn", "Cd") for b in ("Al", "In")]

#: Reserve (v2): the 1:1 compounds of the other trivalent cations with the pnictides.
RESERVE_AX = [(a, x) for a in ("Sc", "Y", "La", "Nd", "Cr") for x in ("N", "P", "As", "Sb")]
#: Reserve (v2): dichlorides and dibromides of the divalent cations, disulfides and
#: diselenides of the tetravalent ones (fluorite and rutile, as :data:`AX2`).
RESERVE_AX2 = ([(a, x) for a in ("Mg", "Ca", "Sr", "Ba", "Pb", "Cd", "Zn", "Mn", "Fe", "Co",
                                 "Ni") for x in ("Cl", "Br")]
               + [(a, x) for a in ("Ti", "Zr", "Hf", "Sn") for x in ("S", "Se")])
#: Cations and anions of the ordered solid solutions, by charge (cations of :data:`AX`).
ORDERED_IONS = {1: (("Li", "Na", "K", "Rb", "Cs", "Ag", "Tl"), ("F", "Cl", "Br", "I")),
                2: (("Be", "Mg", "Ca", "Sr", "Ba", "Mn", "Fe", "Co", "Ni", "Zn", "Cd", "Pb"),
                    ("O", "S", "Se", "Te")),
                3: (("B", "Al", "Ga", "In"), ("N", "P", "As", "Sb"))}
#: Parent structures of the ordered solid solutions.
ORDERED_PARENTS = ("rocksalt", "zincblende")


def _formula3(a: str, b: str, x: str, nb: int, nx: int) -> str:
    return f"{a}{b}{nb if nb > 1 else ''}{x}{nx}"


def reserve_abx3() -> list[tuple[str, str, str]]:
    """Reserve (v2) perovskites: the charge-balanced A-B-X combinations of these ions that
    :data:`ABX3` does not hold."""
    combos = ([(a, b, "O") for a in ("Ca", "Sr", "Ba", "Pb", "Cd")
               for b in ("Ti", "Zr", "Sn", "Hf", "Ce", "Ge", "Mn")]
              + [(a, b, "O") for a in ("Li", "Na", "K", "Rb", "Ag", "Tl") for b in ("Nb", "Ta")]
              + [(a, b, "O") for a in ("La", "Nd", "Y")
                 for b in ("Al", "Ga", "Fe", "Cr", "Sc", "Mn", "Co", "In")]
              + [(a, b, "F") for a in ("Na", "K", "Rb", "Cs", "Tl")
                 for b in ("Mg", "Zn", "Ni", "Mn", "Co", "Fe", "Ca", "Cd")]
              + [(a, b, x) for a in ("K", "Rb", "Cs") for b in ("Pb", "Sn", "Ge", "Ca", "Sr", "Cd")
                 for x in ("Cl", "Br", "I")])
    return [c for c in combos if c not in set(ABX3)]


def reserve_ab2x4() -> list[tuple[str, str, str]]:
    """Reserve (v2) spinels: A(2+) B(3+) oxides, sulfides and selenides :data:`AB2X4` does not
    hold (A and B different elements, so every spinel is a ternary)."""
    combos = ([(a, b, "O") for a in ("Mg", "Zn", "Co", "Ni", "Fe", "Mn", "Cd")
               for b in ("Al", "Cr", "Fe", "Ga", "In", "Mn", "Co", "Sc") if a != b]
              + [(a, b, "S") for a in ("Zn", "Cd", "Mn", "Fe", "Co", "Ni", "Mg")
                 for b in ("Al", "In", "Cr", "Ga")]
              + [(a, b, "Se") for a in ("Zn", "Cd", "Mn", "Fe", "Co") for b in ("Al", "In", "Cr",
                                                                                  "Ga")])
    return [c for c in combos if c not in set(AB2X4)]


#: Tetragonal strain of the strained polymorphs: c scaled by 1 + STRAIN, a and b by 1 - STRAIN/2.
STRAIN = 0.04
UNANALYSED_FRACTION = 1 / 6


@dataclass(frozen=True)
class Recipe:
    """One entry to build: a family's sites with these elements and lattice parameters."""

    family: str
    elements: dict[str, str]  # site label -> element
    params: dict[str, float]  # a (c, u)
    strain: float = 0.0
    label: str = ""  # structure type as stored, e.g. "rocksalt" or "rocksalt (strained)"
    order: str = ""  # ordered solid solution: "cation" (A, B on alternate layers) or "anion"

    @property
    def key(self) -> str:
        """A name unique among the recipes (the template's key)."""
        els = ",".join(f"{k}={v}" for k, v in sorted(self.elements.items()))
        return f"{self.label}|{els}"


def cache_dir() -> Path:
    """``$SCIAGENT_CACHE/materials`` (default ``~/.cache/sciagent-gym/materials``)."""
    base = os.environ.get("SCIAGENT_CACHE")
    root = Path(base) if base else Path.home() / ".cache" / "sciagent-gym"
    return root / "materials"


def _nominal(family: str, elements: dict[str, str]) -> dict[str, float] | None:
    from sciagent_gym.sdk import crystals

    for els, params in crystals.FAMILIES[family]["compounds"]:
        if els == elements:
            return dict(params)
    return None


def _ax_params(family: str, a_el: str, x_el: str) -> dict[str, float]:
    nominal = _nominal(family, {"A": a_el, "X": x_el})
    if nominal is not None:
        return nominal
    d = RADII[a_el] + RADII[x_el]
    if family == "rocksalt":
        return {"a": round(2 * d, 3)}
    if family == "cesium-chloride":
        return {"a": round(2 * d / math.sqrt(3), 3)}
    if family == "zincblende":
        return {"a": round(4 * d / math.sqrt(3), 3)}
    a = d * math.sqrt(8 / 3)  # wurtzite, ideal
    return {"a": round(a, 3), "c": round(a * math.sqrt(8 / 3), 3), "u": 0.375}


def _ax2_params(family: str, a_el: str, x_el: str) -> dict[str, float]:
    nominal = _nominal(family, {"A": a_el, "X": x_el})
    if nominal is not None:
        return nominal
    d = RADII[a_el] + RADII[x_el]
    if family == "fluorite":
        return {"a": round(4 * d / math.sqrt(3), 3)}
    u = 0.305
    a = d / (u * math.sqrt(2))
    return {"a": round(a, 3), "c": round(0.644 * a, 3), "u": u}


def _ax_recipes(pairs: list[tuple[str, str]]) -> list[Recipe]:
    out = []
    for a_el, x_el in pairs:
        els = {"A": a_el, "X": x_el}
        for family in ("rocksalt", "cesium-chloride", "zincblende", "wurtzite"):
            out.append(Recipe(family, els, _ax_params(family, a_el, x_el), label=family))
        for family in ("rocksalt", "zincblende"):
            out.append(Recipe(family, els, _ax_params(family, a_el, x_el), STRAIN,
                              f"{family} (strained)"))
    return out


def _ax2_recipes(pairs: list[tuple[str, str]]) -> list[Recipe]:
    out = []
    for a_el, x_el in pairs:
        els = {"A": a_el, "X": x_el}
        for family in ("fluorite", "rutile"):
            out.append(Recipe(family, els, _ax2_params(family, a_el, x_el), label=family))
    return out


def _abx3_recipes(triples: list[tuple[str, str, str]]) -> list[Recipe]:
    out = []
    for a_el, b_el, x_el in triples:
        els = {"A": a_el, "B": b_el, "X": x_el}
        params = _nominal("perovskite", els) or {"a": round(2 * (RADII[b_el] + RADII[x_el]), 3)}
        out.append(Recipe("perovskite", els, params, label="perovskite"))
        out.append(Recipe("perovskite", els, params, STRAIN, "perovskite (strained)"))
    return out


def _ab2x4_recipes(triples: list[tuple[str, str, str]]) -> list[Recipe]:
    out = []
    for a_el, b_el, x_el in triples:
        els = {"A": a_el, "B": b_el, "X": x_el}
        params = _nominal("spinel", els) or {
            "a": round(8.083 * (RADII[b_el] + RADII[x_el]) / (RADII["Al"] + RADII["O"]), 3),
            "u": 0.3874}
        out.append(Recipe("spinel", els, params, label="spinel"))
    return out


def recipes() -> list[Recipe]:
    """Every core entry (database v1) to build, in build order (before the id shuffle)."""
    return (_ax_recipes(AX) + _ax2_recipes(AX2) + _abx3_recipes(ABX3)
            + _ab2x4_recipes(AB2X4))


def ordered_recipes() -> list[Recipe]:
    """The ordered solid solutions: for each charge, every pair of its cations with each of
    its anions, and every pair of its anions with each of its cations, on each parent of
    :data:`ORDERED_PARENTS`; ``a`` the mean of the two end members' (Vegard's law)."""
    out = []
    for family in ORDERED_PARENTS:
        for cations, anions in ORDERED_IONS.values():
            for i, a_el in enumerate(cations):
                for b_el in cations[i + 1:]:
                    for x_el in anions:
                        a = (_ax_params(family, a_el, x_el)["a"]
                             + _ax_params(family, b_el, x_el)["a"]) / 2
                        out.append(Recipe(family, {"A": a_el, "B": b_el, "X": x_el},
                                          {"a": round(a, 3)}, label=f"{family} (ordered)",
                                          order="cation"))
            for a_el in cations:
                for j, x_el in enumerate(anions):
                    for y_el in anions[j + 1:]:
                        a = (_ax_params(family, a_el, x_el)["a"]
                             + _ax_params(family, a_el, y_el)["a"]) / 2
                        out.append(Recipe(family, {"A": a_el, "X": x_el, "Y": y_el},
                                          {"a": round(a, 3)}, label=f"{family} (ordered)",
                                          order="anion"))
    return out


def reserve_recipes() -> list[Recipe]:
    """Every reserve entry (database v2): substituted compounds and ordered solid solutions."""
    return (_ax_recipes(RESERVE_AX) + _ax2_recipes(RESERVE_AX2) + _abx3_recipes(reserve_abx3())
            + _ab2x4_recipes(reserve_ab2x4()) + ordered_recipes())


# -- building ----------------------------------------------------------------------------------

@functools.cache
def _ops(spacegroup: str) -> tuple[np.ndarray, np.ndarray]:
    """The space group's symmetry operations as rotations (n, 3, 3) and translations (n, 3)
    (pymatgen builds them slowly: once per group)."""
    from pymatgen.symmetry.groups import SpaceGroup

    ops = SpaceGroup(spacegroup).symmetry_ops
    return (np.array([op.rotation_matrix for op in ops]),
            np.array([op.translation_vector for op in ops]))


def _orbit(spacegroup: str, xyz: tuple[float, ...]) -> list[list[float]]:
    """The distinct images of one Wyckoff position in the cell (what pymatgen's
    ``Structure.from_spacegroup`` places), in the order the operations make them."""
    rot, trans = _ops(spacegroup)
    images = np.mod(rot @ np.array(xyz, float) + trans, 1.0)
    images[np.isclose(images, 1.0, atol=1e-8)] = 0.0
    out: list[np.ndarray] = []
    for image in images:
        if not out or np.abs(_wrap(np.array(out) - image)).max(axis=1).min() > 1e-5:
            out.append(image)
    return [[float(v) for v in image] for image in out]


def _wrap(d: np.ndarray) -> np.ndarray:
    return d - np.round(d)


def _site_element(recipe: Recipe, label: str, xyz: list[float]) -> str:
    """The element on one site: the family's label, or for an ordered solid solution the
    label's element of the site's (001) layer (z in [0, 1/2): the first, else the second)."""
    layer = int(math.floor(2 * xyz[2] + 1e-6)) % 2
    if recipe.order == "cation" and label == "A":
        return recipe.elements["B" if layer else "A"]
    if recipe.order == "anion" and label == "X":
        return recipe.elements["Y" if layer else "X"]
    return recipe.elements[label]


def _structure(recipe: Recipe) -> Any:
    """The pymatgen structure of a recipe (conventional cell), strained, rounded to 1e-6 A."""
    from pymatgen.core import Lattice, Structure

    from sciagent_gym.sdk import crystals

    fam = crystals.FAMILIES[recipe.family]
    p = recipe.params
    if fam["spacegroup"].startswith("P6"):
        lattice = Lattice.hexagonal(p["a"], p["c"])
    elif "c" in p:
        lattice = Lattice.tetragonal(p["a"], p["c"])
    else:
        lattice = Lattice.cubic(p["a"])
    species, frac = [], []
    for label, site in fam["sites"]:
        for xyz in _orbit(fam["spacegroup"], tuple(p["u"] if x == "u" else x for x in site)):
            species.append(_site_element(recipe, label, xyz))
            frac.append(xyz)
    s = Structure(lattice, species, frac)
    if recipe.strain:
        a, b, c = s.lattice.abc
        f = 1 - recipe.strain / 2
        strained = Lattice.from_parameters(a * f, b * f, c * (1 + recipe.strain),
                                           *s.lattice.angles)
        s = Structure(strained, s.species, s.frac_coords)
    # what the database stores (and every client reads back): Cartesian, rounded
    matrix = np.round(s.lattice.matrix, 6)
    cart = np.round(s.cart_coords, 6)
    return Structure(Lattice(matrix), [str(sp) for sp in s.species], cart,
                     coords_are_cartesian=True)


def reduced_formula(counts: dict[str, int]) -> str:
    """OPTIMADE's ``chemical_formula_reduced``: elements in alphabetical order, counts divided
    by their greatest common divisor, 1 omitted (``ClNa``, ``O3SrTi``)."""
    g = functools.reduce(math.gcd, counts.values())
    return "".join(f"{el}{'' if n // g == 1 else n // g}" for el, n in sorted(counts.items()))


def anonymous_formula(counts: dict[str, int]) -> str:
    """OPTIMADE's ``chemical_formula_anonymous``: counts in descending order named A, B, C."""
    g = functools.reduce(math.gcd, counts.values())
    ns = sorted((n // g for n in counts.values()), reverse=True)
    return "".join(f"{chr(65 + i)}{'' if n == 1 else n}" for i, n in enumerate(ns))


def descriptive_formula(recipe: Recipe, counts: dict[str, int]) -> str:
    """The chemist's formula, cation first (``ZnFe2O4``, ``SrTiO3``)."""
    order = list(dict.fromkeys(recipe.elements[k] for k in sorted(recipe.elements)))
    g = functools.reduce(math.gcd, counts.values())
    return "".join(f"{el}{'' if counts[el] // g == 1 else counts[el] // g}" for el in order)


_CN = {"rocksalt": 6, "cesium-chloride": 8, "zincblende": 4, "wurtzite": 4, "fluorite": 8,
       "rutile": 6}


def _ax_preference(family: str, r_cation: float, r_anion: float, chi_diff: float) -> float:
    """The structure-preference term of a 1:1 family (module docstring)."""
    ratio = r_cation / r_anion
    preferred = 4 if ratio < 0.414 else 6 if ratio < 0.732 else 8
    offset = 0.06 * abs(math.log2(_CN[family] / preferred))
    if _CN[family] == 4:
        wurtzite_first = chi_diff > 1.2
        offset += 0.01 * ((family == "zincblende") == wurtzite_first)
    return offset


def energy_model(recipe: Recipe, counts: dict[str, int]) -> float:
    """The toy formation energy (eV/atom) of the module docstring, without its noise."""
    if recipe.order:
        return _ordered_energy_model(recipe, counts)
    anion = recipe.elements["X"]
    total = sum(counts.values())
    ionic = -0.9 * sum(n / total * (CHI[anion] - CHI[el]) ** 2
                       for el, n in counts.items() if el != anion)
    fam = recipe.family
    offset = 0.0
    cation = recipe.elements["A"]
    ratio = RADII[cation] / RADII[anion]
    if fam in ("rocksalt", "cesium-chloride", "zincblende", "wurtzite"):
        preferred = 4 if ratio < 0.414 else 6 if ratio < 0.732 else 8
        offset = 0.06 * abs(math.log2(_CN[fam] / preferred))
        if _CN[fam] == 4:
            wurtzite_first = abs(CHI[anion] - CHI[cation]) > 1.2
            offset += 0.01 * ((fam == "zincblende") == wurtzite_first)
    elif fam in ("fluorite", "rutile"):
        offset = 0.05 * ((fam == "fluorite") != (ratio > 0.65))
    elif fam == "perovskite":
        b = recipe.elements["B"]
        t = (RADII[cation] + RADII[anion]) / (math.sqrt(2) * (RADII[b] + RADII[anion]))
        offset = 1.5 * (1 - t) ** 2
        if t < 0.9:
            offset += -0.02 if recipe.strain else 0.0
    strain = 15 * recipe.strain ** 2
    return ionic + offset + strain


def _ions(recipe: Recipe) -> tuple[list[str], list[str]]:
    anions = [recipe.elements[k] for k in ("X", "Y") if k in recipe.elements]
    cations = [recipe.elements[k] for k in sorted(recipe.elements) if k not in ("X", "Y")]
    return cations, anions


def _ordered_energy_model(recipe: Recipe, counts: dict[str, int]) -> float:
    cations, anions = _ions(recipe)
    total = sum(counts.values())
    n_anion = sum(counts[x] for x in anions)
    ionic = -0.9 * sum(counts[c] / total * sum(counts[x] / n_anion * (CHI[x] - CHI[c]) ** 2
                                               for x in anions) for c in cations)
    r_c = sum(RADII[c] for c in cations) / len(cations)
    r_a = sum(RADII[x] for x in anions) / len(anions)
    chi = sum(abs(CHI[x] - CHI[c]) for c in cations for x in anions) / (len(cations)
                                                                      * len(anions))
    mixed = cations if len(cations) == 2 else anions
    mismatch = (RADII[mixed[0]] - RADII[mixed[1]]) / (RADII[mixed[0]] + RADII[mixed[1]])
    return ionic + _ax_preference(recipe.family, r_c, r_a, chi) + 0.6 * mismatch ** 2


def gap_model(recipe: Recipe, counts: dict[str, int]) -> tuple[float, bool]:
    """The synthetic band gap's value before its noise (``1.6 * mean|dchi| - 0.9``) and whether
    it is halved (an open-d-shell cation)."""
    cations, anions = _ions(recipe)
    cations = [el for el in counts if el not in anions] if not recipe.order else cations
    mean = sum(abs(CHI[x] - CHI[el]) for el in cations for x in anions) / (len(cations)
                                                                         * len(anions))
    return 1.6 * mean - 0.9, any(el in OPEN_D for el in cations)


def toy_gap(base: float, open_d: bool, noise: float) -> float:
    """The synthetic band gap of the module docstring from :func:`gap_model`'s values."""
    gap = max(0.0, base + noise)
    if open_d:
        gap /= 2
    return round(gap, 3)


def build_template(recipe: Recipe, rng: np.random.Generator) -> dict[str, Any]:
    """One template: the entry's OPTIMADE attributes, fully analysed (without its id; energy,
    band gap and date drawn from ``rng`` as the pristine database has them) and the toy
    models' noise-free values."""
    from sciagent_gym.sdk import crystals

    s = _structure(recipe)
    species = [str(sp) for sp in s.species]
    counts = {el: species.count(el) for el in sorted(set(species))}
    crystal = crystals.describe(s, recipe.family)
    elements = sorted(counts)
    total = len(species)
    model = energy_model(recipe, counts)
    energy = round(model + float(rng.normal(0, 0.01)), 4)
    base, open_d = gap_model(recipe, counts)
    gap = toy_gap(base, open_d, float(rng.normal(0, 0.15)))
    day, hour = int(rng.integers(1, 29)), int(rng.integers(0, 24))
    cations, anions = _ions(recipe)
    entry = {
        "type": "structures",
        "elements": elements,
        "nelements": len(elements),
        "elements_ratios": [round(counts[el] / total, 6) for el in elements],
        "chemical_formula_reduced": reduced_formula(counts),
        "chemical_formula_descriptive": descriptive_formula(recipe, counts),
        "chemical_formula_anonymous": anonymous_formula(counts),
        "dimension_types": [1, 1, 1],
        "nperiodic_dimensions": 3,
        "lattice_vectors": [[float(v) for v in row] for row in s.lattice.matrix],
        "cartesian_site_positions": [[float(v) for v in row] for row in s.cart_coords],
        "nsites": total,
        "species_at_sites": species,
        "species": [{"name": el, "chemical_symbols": [el], "concentration": [1.0]}
                    for el in elements],
        "structure_features": [],
        "last_modified": LAST_MODIFIED.format(day=day, hour=hour),
        "_sag_formation_energy_per_atom": energy,
        "_sag_band_gap": gap,
        "_sag_band_gap_synthetic": True,
        "_sag_space_group_symbol": crystal.spacegroup,
        "_sag_space_group_number": crystal.spacegroup_number,
        "_sag_density": round(crystal.density, 4),
        "_sag_structure_type": recipe.label,
    }
    return {"key": recipe.key, "entry": entry, "energy_model": model, "gap_base": base,
            "open_d": open_d, "cations": cations, "anions": anions}


#: The fields an unanalysed entry leaves unknown (null).
ANALYSIS_FIELDS = ("_sag_space_group_symbol", "_sag_space_group_number", "_sag_density",
                   "_sag_structure_type")


def build(progress: bool = True) -> dict[str, Any]:
    """Every template (deterministic): ``{"version", "provider", "templates": [...]}``. Core
    templates (database v1, in its build order) carry ``pristine`` (their v1 id number) and
    ``analysed`` (their v1 analysis flag); reserve templates have ``pristine`` None."""
    rng = np.random.default_rng(SEED)
    core = recipes()
    order = rng.permutation(len(core))  # entry k of the build gets id sag-(order[k] + 1)
    analysed = rng.random(len(core)) >= UNANALYSED_FRACTION
    reserve = reserve_recipes()
    todo = [(r, np.random.default_rng([SEED, k]), int(order[k]) + 1, bool(analysed[k]))
            for k, r in enumerate(core)]
    todo += [(r, np.random.default_rng([SEED, 1, k]), None, True) for k, r in enumerate(reserve)]
    items: Iterator[int] = iter(range(len(todo)))
    if progress:
        from tqdm import tqdm

        items = tqdm(items, total=len(todo), desc="materials: building the structure database",
                     unit="entry")
    templates = []
    for k in items:
        recipe, entry_rng, pristine, flag = todo[k]
        templates.append({**build_template(recipe, entry_rng), "pristine": pristine,
                          "analysed": flag})
    return {"version": DB_VERSION, "provider": PROVIDER, "templates": templates}


def db_path(progress: bool = True) -> Path:
    """The cached template file, built first if it is not there yet."""
    path = cache_dir() / FILE_NAME
    if path.is_file():
        return path
    data = build(progress)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".building-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh, separators=(",", ":"))
        os.replace(tmp, path)  # atomic: a concurrent builder writes the same bytes
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


@functools.lru_cache(maxsize=1)
def load() -> dict[str, Any]:
    """The templates (built and cached on first use)."""
    return json.loads(db_path().read_text())


def templates() -> list[dict[str, Any]]:
    """Every template, core first (in build order), then the reserve."""
    return load()["templates"]


def public(entry: dict[str, Any], entry_id: str, analysed: bool) -> dict[str, Any]:
    """A template's entry as a database serves it: its id, its analysis fields null when it
    is unanalysed."""
    out = {"id": entry_id, **entry}
    if not analysed:
        out.update(dict.fromkeys(ANALYSIS_FIELDS))
    return out


@functools.lru_cache(maxsize=1)
def _pristine() -> tuple[dict[str, Any], ...]:
    core = [t for t in templates() if t["pristine"] is not None]
    core.sort(key=lambda t: t["pristine"])
    return tuple(public(t["entry"], f"sag-{t['pristine']}", t["analysed"]) for t in core)


def entries() -> list[dict[str, Any]]:
    """The pristine database (database v1's entries: the core with its v1 ids and values)."""
    return list(_pristine())


def by_id() -> dict[str, dict[str, Any]]:
    """The pristine database by id."""
    return {e["id"]: e for e in _pristine()}


def pristine_document() -> dict[str, Any]:
    """The pristine database as the OPTIMADE server reads a database file."""
    return {"version": DB_VERSION, "provider": PROVIDER, "entries": entries()}


def structure_of(entry: dict[str, Any]) -> Any:
    """The pymatgen structure of an entry, as a client rebuilds it from the served fields."""
    from pymatgen.core import Lattice, Structure

    return Structure(Lattice(entry["lattice_vectors"]), entry["species_at_sites"],
                     entry["cartesian_site_positions"], coords_are_cartesian=True)
