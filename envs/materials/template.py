"""One template of the structure database: a recipe built into the OPTIMADE entry the
database serves (formulas, cell, sites, symmetry, toy values, date) and the toy models'
noise-free values a variant draws fresh noise around.

A change here changes templates: bump :data:`.db.DB_VERSION`.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from sciagent_gym.envs.materials.recipes import Recipe
from sciagent_gym.envs.materials.structures import build_structure
from sciagent_gym.envs.materials.toy_models import energy_model, gap_model, ions, toy_gap

LAST_MODIFIED = "2026-11-{day:02d}T{hour:02d}:00:00Z"


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


def build_template(recipe: Recipe, rng: np.random.Generator) -> dict[str, Any]:
    """One template: the entry's OPTIMADE attributes, fully analysed (without its id; energy,
    band gap and date drawn from ``rng`` as the pristine database has them) and the toy
    models' noise-free values."""
    from sciagent_gym.sdk import crystals

    s = build_structure(recipe)
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
    cations, anions = ions(recipe)
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
