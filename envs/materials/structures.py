"""Structure building from symmetry operations: a recipe (:mod:`.recipes`) as the pymatgen
structure its template stores (conventional cell, strained, Cartesian, rounded to 1e-6 A).

The sites are the Wyckoff orbits of the family's space group, generated from its symmetry
operations (pymatgen's ``SpaceGroup``, once per group) as ``Structure.from_spacegroup`` places
them but much faster; an ordered solid solution puts the second cation or anion on every other
(001) layer. Space group, density and cell are then read off the stored structure
(:func:`.template.build_template`). A change here changes templates: bump
:data:`.db.DB_VERSION`.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from sciagent_gym.envs.materials.recipes import Recipe


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


def build_structure(recipe: Recipe) -> Any:
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
