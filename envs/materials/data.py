"""Generators of the materials tasks: the database staged for the server, and the gold values.

Every generator takes ``(work_dir, rng, **args)``, stages the structure database
(:mod:`.db`, the cached pristine copy) into ``work_dir/.optimade/structures.json`` where the
terminal's OPTIMADE server reads it, and returns the task's gold values computed on the host
from the pristine database with the host's pymatgen. The tasks' seeded parameters (which
elements, thresholds, which entry) come from their specs, so each variant asks something else
of the same database; the parameter lists name entries and formulas of database version
:data:`.db.DB_VERSION` (``tests/specs/test_materials_specs.py`` checks that they still fit).
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.materials import db
from sciagent_gym.envs.materials.adapter import DB_RELPATH

#: XRD as the tasks define it: pymatgen's XRDCalculator, Cu K-alpha, 2-theta 10-90 degrees,
#: peaks of at least this relative intensity (the strongest is 100).
XRD_RANGE = (10.0, 90.0)
XRD_MIN_INTENSITY = 1.0


def stage_database(work: Path) -> None:
    """Copy the pristine database to where the server reads it (once per staging)."""
    dest = work / DB_RELPATH
    if dest.is_file():
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(db.db_path(), dest)


def _entries() -> list[dict[str, Any]]:
    return db.entries()


def _entry(entry_id: str) -> dict[str, Any]:
    found = db.by_id().get(entry_id)
    if found is None:
        raise ValueError(f"no entry {entry_id!r} in the structure database v{db.DB_VERSION}")
    return found


def polymorphs(formula: str) -> list[dict[str, Any]]:
    """Entries whose descriptive (chemist's) formula is ``formula``, lowest energy first."""
    found = [e for e in _entries() if e["chemical_formula_descriptive"] == formula]
    return sorted(found, key=lambda e: (e["_sag_formation_energy_per_atom"], e["id"]))


# -- generators ----------------------------------------------------------------------------------

def database(work: Path, rng: np.random.Generator) -> dict[str, Any]:
    """Only the database (tasks whose gold needs nothing else)."""
    stage_database(work)
    return {"entries": len(_entries())}


def count_with_elements(work: Path, rng: np.random.Generator, elements: list[str]
                        ) -> dict[str, Any]:
    """How many entries contain every one of ``elements`` (and how many contain any)."""
    stage_database(work)
    want = set(elements)
    every = [e["id"] for e in _entries() if want <= set(e["elements"])]
    anyof = [e["id"] for e in _entries() if want & set(e["elements"])]
    return {"count": len(every), "count_any": len(anyof)}


def count_unanalysed(work: Path, rng: np.random.Generator, element: str) -> dict[str, Any]:
    """Entries containing ``element`` whose space group is unknown (null)."""
    stage_database(work)
    mine = [e for e in _entries() if element in e["elements"]]
    unknown = [e for e in mine if e["_sag_space_group_number"] is None]
    return {"count": len(unknown), "total": len(mine)}


def gap_window(work: Path, rng: np.random.Generator, element: str, nelements: int,
               gap_min: float, gap_max: float) -> dict[str, Any]:
    """Ids of entries with ``element``, ``nelements`` elements and gap_min < gap < gap_max."""
    stage_database(work)
    hits = [e for e in _entries() if element in e["elements"] and e["nelements"] == nelements
            and gap_min < e["_sag_band_gap"] < gap_max]
    inclusive = [e for e in _entries() if element in e["elements"]
                 and e["nelements"] == nelements and gap_min <= e["_sag_band_gap"] <= gap_max]
    return {"ids": sorted(e["id"] for e in hits), "count": len(hits),
            "inclusive_count": len(inclusive)}


def lowest_polymorph(work: Path, rng: np.random.Generator, formula: str) -> dict[str, Any]:
    """The lowest-energy entry of ``formula``, its energy and the runner-up."""
    stage_database(work)
    found = polymorphs(formula)
    if len(found) < 2:
        raise ValueError(f"{formula}: fewer than two polymorphs in the database")
    best, second = found[0], found[1]
    return {"id": best["id"], "energy": best["_sag_formation_energy_per_atom"],
            "second_id": second["id"], "second_energy": second["_sag_formation_energy_per_atom"],
            "count": len(found),
            "ladder": {e["id"]: round(1000 * (e["_sag_formation_energy_per_atom"]
                                              - best["_sag_formation_energy_per_atom"]), 1)
                       for e in found}}


def absent_formula(work: Path, rng: np.random.Generator, formula: str) -> dict[str, Any]:
    """An infeasible task's check: ``formula`` is not in the database."""
    stage_database(work)
    if polymorphs(formula):
        raise ValueError(f"{formula} is in the database: the task would be feasible")
    return {"formula": formula}


def stable_compounds(work: Path, rng: np.random.Generator, element: str) -> dict[str, Any]:
    """For every binary formula containing ``element``: the id of its lowest-energy entry."""
    stage_database(work)
    formulas = sorted({e["chemical_formula_descriptive"] for e in _entries()
                       if element in e["elements"] and e["nelements"] == 2})
    mapping = {f: polymorphs(f)[0]["id"] for f in formulas}
    aliases = {f: [polymorphs(f)[0]["chemical_formula_reduced"]] for f in formulas}
    highest = {f: polymorphs(f)[-1]["id"] for f in formulas}
    return {"mapping": mapping, "aliases": aliases, "highest": highest, "count": len(mapping)}


def widest_gap(work: Path, rng: np.random.Generator, element: str, nelements: int
               ) -> dict[str, Any]:
    """The entry with ``element`` and ``nelements`` elements with the widest band gap."""
    stage_database(work)
    found = sorted((e for e in _entries() if element in e["elements"]
                    and e["nelements"] == nelements),
                   key=lambda e: (-e["_sag_band_gap"], e["id"]))
    return {"id": found[0]["id"], "gap": found[0]["_sag_band_gap"],
            "second_id": found[1]["id"], "count": len(found)}


def xrd_peaks(structure: Any) -> list[float]:
    """Distinct peak positions (2-theta, degrees, Cu K-alpha, 10-90) of at least
    :data:`XRD_MIN_INTENSITY` % of the strongest. Reflections at one angle are merged (their
    intensities summed) first, as pymatgen 2022 (the sandbox's) does and 2024+ no longer does
    for some hexagonal families."""
    from pymatgen.analysis.diffraction.xrd import XRDCalculator

    pattern = XRDCalculator(wavelength="CuKa").get_pattern(structure, two_theta_range=XRD_RANGE)
    merged: list[list[float]] = []
    for x, y in zip(pattern.x, pattern.y, strict=True):
        if merged and abs(merged[-1][0] - x) < 1e-3:
            merged[-1][1] += float(y)
        else:
            merged.append([float(x), float(y)])
    top = max(y for _, y in merged)
    return [round(x, 4) for x, y in merged if 100 * y / top >= XRD_MIN_INTENSITY]


def structure_facts(entry: dict[str, Any]) -> dict[str, Any]:
    """What pymatgen (host) computes for a stored entry: symmetry, density, volume per atom,
    nearest-neighbour distance and the XRD peaks of the tasks' definition."""
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

    s = db.structure_of(entry)
    sga = SpacegroupAnalyzer(s, symprec=0.01)
    peaks = xrd_peaks(s)
    nn = min(n.nn_distance for i in range(len(s)) for n in s.get_neighbors(s[i], 6.0))
    return {"space_group_symbol": sga.get_space_group_symbol(),
            "space_group_number": sga.get_space_group_number(),
            "density": round(float(s.density), 5),
            "volume_per_atom": round(float(s.volume / len(s)), 5),
            "nsites": len(s), "peaks": peaks, "nearest_neighbour": round(float(nn), 5),
            "composition": {str(el): int(n) for el, n in s.composition.items()},
            "lengths": sorted(round(float(x), 5) for x in s.lattice.abc),
            "volume": round(float(s.volume), 5)}


def entry_facts(work: Path, rng: np.random.Generator, entry: str) -> dict[str, Any]:
    """:func:`structure_facts` of one entry, plus what the database says about it."""
    stage_database(work)
    e = _entry(entry)
    facts = structure_facts(e)
    facts.update(first_peak=facts["peaks"][0], second_peak=facts["peaks"][1],
                 three_peaks=facts["peaks"][:3], formula=e["chemical_formula_descriptive"],
                 analysed=e["_sag_space_group_number"] is not None)
    return facts


def polymorph_xrd(work: Path, rng: np.random.Generator, formula: str) -> dict[str, Any]:
    """The first XRD peak of the lowest- and of the highest-energy entry of ``formula``."""
    stage_database(work)
    found = polymorphs(formula)
    low, high = found[0], found[-1]
    return {"results": {"lowest_id": low["id"],
                        "lowest_first_peak": xrd_peaks(db.structure_of(low))[0],
                        "highest_id": high["id"],
                        "highest_first_peak": xrd_peaks(db.structure_of(high))[0]}}


def supercell_facts(work: Path, rng: np.random.Generator, entry: str, na: int, nb: int,
                    nc: int) -> dict[str, Any]:
    """Composition and cell of the ``na x nb x nc`` supercell of an entry."""
    stage_database(work)
    s = db.structure_of(_entry(entry))
    s.make_supercell([na, nb, nc])
    return {"composition": {str(el): int(n) for el, n in s.composition.items()},
            "nsites": len(s), "lengths": sorted(round(float(x), 5) for x in s.lattice.abc),
            "volume": round(float(s.volume), 5), "density": round(float(s.density), 5)}


def strained_facts(work: Path, rng: np.random.Generator, entry: str, percent: float
                   ) -> dict[str, Any]:
    """Space group and density of an entry with its third lattice vector stretched by
    ``percent`` % (fractional coordinates kept)."""
    from pymatgen.core import Lattice, Structure
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

    stage_database(work)
    s = db.structure_of(_entry(entry))
    m = s.lattice.matrix.copy()
    m[2] = m[2] * (1 + percent / 100)
    strained = Structure(Lattice(m), s.species, s.frac_coords)
    sga = SpacegroupAnalyzer(strained, symprec=0.01)
    before = SpacegroupAnalyzer(s, symprec=0.01)
    return {"space_group_symbol": sga.get_space_group_symbol(),
            "space_group_number": sga.get_space_group_number(),
            "density": round(float(strained.density), 5),
            "original_number": before.get_space_group_number(),
            "original_symbol": before.get_space_group_symbol(),
            "original_density": round(float(s.density), 5)}


def space_group_census(work: Path, rng: np.random.Generator, element: str) -> dict[str, Any]:
    """Entries containing ``element`` per space group symbol, the unanalysed ones' groups
    computed with pymatgen; and the census of the database's own (analysed-only) values."""
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

    stage_database(work)
    full: Counter[str] = Counter()
    known: Counter[str] = Counter()
    for e in _entries():
        if element not in e["elements"]:
            continue
        if e["_sag_space_group_symbol"] is not None:
            full[e["_sag_space_group_symbol"]] += 1
            known[e["_sag_space_group_symbol"]] += 1
        else:
            sga = SpacegroupAnalyzer(db.structure_of(e), symprec=0.01)
            full[sga.get_space_group_symbol()] += 1
    return {"census": dict(sorted(full.items())), "known_only": dict(sorted(known.items())),
            "total": sum(full.values())}


# -- long-horizon workflows ----------------------------------------------------------------------

def shortest_distance(structure: Any) -> float:
    """The shortest interatomic distance (Å), periodic images included."""
    return float(min(n.nn_distance for i in range(len(structure))
                     for n in structure.get_neighbors(structure[i], 6.0)))


def wide_gap_screen(work: Path, rng: np.random.Generator, element: str, gap: float
                    ) -> dict[str, Any]:
    """A screen of the binary entries with ``element`` and a band gap above ``gap`` eV: their
    ids, the table rows the analysis gives (space group, density, shortest distance, densest
    first), the densest candidate and the report's values."""
    stage_database(work)
    found = [e for e in _entries() if element in e["elements"] and e["nelements"] == 2
             and e["_sag_band_gap"] > gap]
    rows = []
    for e in found:
        facts = structure_facts(e)
        rows.append({"id": e["id"], "formula": e["chemical_formula_descriptive"],
                     "space_group": facts["space_group_symbol"], "density": facts["density"],
                     "min_distance": facts["nearest_neighbour"],
                     "number": facts["space_group_number"],
                     "composition": facts["composition"], "lengths": facts["lengths"],
                     "analysed": e["_sag_space_group_number"] is not None})
    rows.sort(key=lambda r: (-r["density"], r["id"]))
    top = rows[0]
    return {"ids": sorted(r["id"] for r in rows), "count": len(rows),
            "unanalysed": sum(not r["analysed"] for r in rows),
            "rows_symmetry": [{k: r[k] for k in ("id", "formula", "space_group")} for r in rows],
            "rows_density": [{k: r[k] for k in ("id", "density")} for r in rows],
            "rows_distance": [{k: r[k] for k in ("id", "min_distance")} for r in rows],
            "densest_id": top["id"], "densest_space_group": top["space_group"],
            "densest_number": top["number"], "densest_density": top["density"],
            "densest_composition": top["composition"], "densest_lengths": top["lengths"],
            "density_margin": round(top["density"] - rows[1]["density"], 5),
            "mean_density": round(sum(r["density"] for r in rows) / len(rows), 5),
            "report": {"candidates": len(rows),
                       "unanalysed": sum(not r["analysed"] for r in rows),
                       "densest_id": top["id"], "densest_space_group": top["space_group"],
                       "densest_density": top["density"],
                       "mean_density": round(sum(r["density"] for r in rows) / len(rows), 5)}}


def polymorph_study(work: Path, rng: np.random.Generator, formula: str) -> dict[str, Any]:
    """Every polymorph of ``formula``, lowest energy first: ids, the table rows (space group,
    energy above the lowest in meV/atom, volume per atom, shortest distance), the ground
    state's 2 x 2 x 2 supercell and the report's values (incl. its first XRD peak)."""
    stage_database(work)
    found = polymorphs(formula)
    if len(found) < 2:
        raise ValueError(f"{formula}: fewer than two polymorphs in the database")
    e0 = found[0]["_sag_formation_energy_per_atom"]
    rows = []
    for e in found:
        facts = structure_facts(e)
        rows.append({"id": e["id"], "space_group": facts["space_group_symbol"],
                     "e_above_min": round(1000 * (e["_sag_formation_energy_per_atom"] - e0), 1),
                     "volume_per_atom": facts["volume_per_atom"],
                     "min_distance": facts["nearest_neighbour"],
                     "analysed": e["_sag_space_group_number"] is not None})
    ground = found[0]
    gfacts = structure_facts(ground)
    cell = db.structure_of(ground)
    cell.make_supercell([2, 2, 2])
    gap_next = rows[1]["e_above_min"]
    return {"ids": [r["id"] for r in rows], "count": len(rows),
            "unanalysed": sum(not r["analysed"] for r in rows),
            "order": [r["id"] for r in rows],
            "rows_symmetry": [{k: r[k] for k in ("id", "space_group")} for r in rows],
            "rows_energy": [{k: r[k] for k in ("id", "e_above_min")} for r in rows],
            "rows_volume": [{k: r[k] for k in ("id", "volume_per_atom")} for r in rows],
            "rows_distance": [{k: r[k] for k in ("id", "min_distance")} for r in rows],
            "ground_id": ground["id"], "ground_space_group": gfacts["space_group_symbol"],
            "ground_number": gfacts["space_group_number"],
            "min_step": min(b["e_above_min"] - a["e_above_min"]
                            for a, b in zip(rows, rows[1:], strict=False)),
            "supercell": {"composition": {str(el): int(n) for el, n in
                                          cell.composition.items()},
                          "nsites": len(cell),
                          "lengths": sorted(round(float(x), 5) for x in cell.lattice.abc),
                          "volume": round(float(cell.volume), 5)},
            "report": {"ground_state_id": ground["id"],
                       "ground_state_space_group": gfacts["space_group_symbol"],
                       "gap_to_next": gap_next, "first_peak": gfacts["peaks"][0]}}


GENERATORS = {
    "database": database,
    "count_with_elements": count_with_elements,
    "count_unanalysed": count_unanalysed,
    "gap_window": gap_window,
    "lowest_polymorph": lowest_polymorph,
    "absent_formula": absent_formula,
    "stable_compounds": stable_compounds,
    "widest_gap": widest_gap,
    "entry_facts": entry_facts,
    "supercell_facts": supercell_facts,
    "polymorph_xrd": polymorph_xrd,
    "strained_facts": strained_facts,
    "space_group_census": space_group_census,
    "wide_gap_screen": wide_gap_screen,
    "polymorph_study": polymorph_study,
}
