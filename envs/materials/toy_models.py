"""The toy energy and band-gap models of the structure database (documented, not physics).

``_sag_formation_energy_per_atom`` (eV/atom) =
``-0.9 * sum_c x_c * (chi_X - chi_c)**2``  (x_c: atom fraction of cation c, chi: Pauling
electronegativity from :data:`.chemistry.CHI`; an ionic-bond energy after Pauling)
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
pairs), halved for open-d-shell cations (:data:`.chemistry.OPEN_D`), rounded to 3 decimals; the
noise is drawn afresh per variant too (:mod:`.variant`).

A change here changes templates: bump :data:`.db.DB_VERSION`.
"""

from __future__ import annotations

import math

from sciagent_gym.envs.materials.chemistry import CHI, OPEN_D, RADII
from sciagent_gym.envs.materials.recipes import Recipe

_CN = {"rocksalt": 6, "cesium-chloride": 8, "zincblende": 4, "wurtzite": 4, "fluorite": 8,
       "rutile": 6}


def _ax_preference(family: str, r_cation: float, r_anion: float, chi_diff: float) -> float:
    """The structure-preference term of a 1:1 family (the module docstring)."""
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


def ions(recipe: Recipe) -> tuple[list[str], list[str]]:
    anions = [recipe.elements[k] for k in ("X", "Y") if k in recipe.elements]
    cations = [recipe.elements[k] for k in sorted(recipe.elements) if k not in ("X", "Y")]
    return cations, anions


def _ordered_energy_model(recipe: Recipe, counts: dict[str, int]) -> float:
    cations, anions = ions(recipe)
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
    cations, anions = ions(recipe)
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
