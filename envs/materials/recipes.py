"""The recipes of the structure database (:mod:`.db`): which structures to build for the
compounds of :mod:`.chemistry`, with what lattice parameters.

Each recipe is one template: a structure family's sites with these elements, its lattice
parameters, a strain and the structure type it is stored as. Lattice parameters: the
literature values of ``FAMILIES`` where the compound is listed there in that family; otherwise
from the cation-anion bond length ``d`` = sum of ionic radii (:data:`.chemistry.RADII`,
approximate Shannon values) through each family's ideal geometry (rock salt a = 2d, CsCl
a = 2d/sqrt3, zinc blende and fluorite a = 4d/sqrt3, wurtzite a = d sqrt(8/3), c = a sqrt(8/3),
u = 3/8; rutile a = d / (u sqrt2), c = 0.644 a; perovskite a = 2 d(B-X); spinel a scaled from
MgAl2O4 by d(B-O)). An ordered solid solution (two isovalent cations, ``CoNiO2``: (Co,Ni)O, or
anions, ``Co2OS``: Co(O,S), on alternate (001) layers of the rock salt or zinc blende
conventional cell, CuAu-type order: P4/mmm, P-4m2) takes the mean of its end members' lattice
parameters (Vegard's law). A change here changes templates: bump :data:`.db.DB_VERSION`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sciagent_gym.envs.materials.chemistry import (
    AB2X4,
    ABX3,
    AX,
    AX2,
    ORDERED_IONS,
    ORDERED_PARENTS,
    RADII,
    RESERVE_AX,
    RESERVE_AX2,
    reserve_ab2x4,
    reserve_abx3,
)

#: Tetragonal strain of the strained polymorphs: c scaled by 1 + STRAIN, a and b by 1 - STRAIN/2.
STRAIN = 0.04


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
