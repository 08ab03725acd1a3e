"""Generators of the materials tasks: each variant's database staged for the server, and the
gold values computed from it.

Every generator takes ``(work_dir, rng, **args)`` and stages the variant's own structure
database (:func:`.staging.stage`) where the terminal's OPTIMADE server reads it; the gold values
are computed on the host, with the host's pymatgen, from exactly the entries staged. So the
entries, their ids, counts, toy energies and band gaps and which entries are unanalysed all
change with the seed, and with them the answers.

What a task's instruction names, the variant provides: a formula is held with all its
polymorphs, an id is filled with an entry of the kind the task needs (``unanalysed``, a space
group...), and a variant is drawn again (a handful of tries at most) until the task is
well-posed: a unique lowest-energy polymorph, candidates away from a threshold, at least one
unanalysed entry where the instruction says some are, and what each spec's negatives need in
order to be wrong (more matches than a first page holds...).

The per-structure facts (symmetry, XRD, closest pairs) are in :mod:`.facts`, the long-horizon
workflows' generators in :mod:`.workflows`; :data:`GENERATORS` names them all.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.materials import db

# structure_facts and _separate are imported from here by other code (tests, matsci)
from sciagent_gym.envs.materials.facts import (  # noqa: F401
    _facts,
    _space_group,
    structure_facts,
)
from sciagent_gym.envs.materials.staging import _energy, _separate, _with, stage
from sciagent_gym.envs.materials.variant import Variant
from sciagent_gym.envs.materials.workflows import (
    polymorph_study,
    strain_series,
    wide_gap_screen,
)

#: The lowest-energy polymorph's lead over the next (eV/atom) where a task asks for it.
LOWEST_MARGIN = 0.005
#: The widest band gap's lead over the next (eV).
GAP_MARGIN = 0.005


def database(work: Path, rng: np.random.Generator) -> dict[str, Any]:
    """Only the database (tasks whose gold needs nothing else)."""
    v = stage(work, rng)
    return {"entries": len(v)}


def count_with_elements(work: Path, rng: np.random.Generator, elements: list[str]
                        ) -> dict[str, Any]:
    """How many entries contain every one of ``elements`` (``count``) and how many contain
    any (``count_any``), with what the specs' negatives count instead."""
    want = set(elements)

    def tally(v: Variant) -> dict[str, Any]:
        every = [e for e in v.entries if want <= set(e["elements"])]
        anyof = [e for e in v.entries if want & set(e["elements"])]
        return {"count": len(every), "count_any": len(anyof),
                "formulas_any": len({e["chemical_formula_descriptive"] for e in anyof}),
                "first_only": sum(elements[0] in e["elements"] for e in v.entries),
                "sum": sum(len(want & set(e["elements"])) for e in v.entries)}

    def fits(v: Variant) -> bool:
        t = tally(v)
        return (0 < t["count"] < t["count_any"] and t["count_any"] > 5
                and t["formulas_any"] < t["count_any"] and t["first_only"] < t["count_any"]
                and t["count_any"] < t["sum"])

    return tally(stage(work, rng, fits=fits))


def count_unanalysed(work: Path, rng: np.random.Generator, element: str) -> dict[str, Any]:
    """Entries containing ``element`` whose space group is unknown (null)."""

    def tally(v: Variant) -> dict[str, Any]:
        mine = _with(v, element)
        unknown = sum(not v.analysed(e) for e in mine)
        return {"count": unknown, "total": len(mine), "known": len(mine) - unknown,
                "unknown_anywhere": sum(not v.analysed(e) for e in v.entries)}

    def fits(v: Variant) -> bool:
        t = tally(v)
        return 1 <= t["count"] < t["unknown_anywhere"] and t["count"] != t["known"]

    return tally(stage(work, rng, fits=fits))


def gap_window(work: Path, rng: np.random.Generator, element: str, nelements: int,
               gap_min: float, gap_max: float) -> dict[str, Any]:
    """Ids of entries with ``element``, ``nelements`` elements and gap_min < gap < gap_max."""

    def hits(v: Variant, inclusive: bool = False, others: bool = False) -> list[dict[str, Any]]:
        lo, hi = gap_min, gap_max
        return [e for e in _with(v, element) if (e["nelements"] != nelements) == others
                and ((lo <= e["_sag_band_gap"] <= hi) if inclusive
                     else (lo < e["_sag_band_gap"] < hi))]

    def fits(v: Variant) -> bool:
        above = [e for e in _with(v, element, nelements) if e["_sag_band_gap"] >= gap_max]
        return (len(hits(v)) >= 4 and len(hits(v)) == len(hits(v, True))
                and bool(hits(v, others=True)) and bool(above))

    v = stage(work, rng, fits=fits)
    found = hits(v)
    return {"ids": sorted(e["id"] for e in found), "count": len(found),
            "inclusive_count": len(hits(v, True))}


def lowest_polymorph(work: Path, rng: np.random.Generator, formula: str) -> dict[str, Any]:
    """The lowest-energy entry of ``formula``, its energy and the runner-up (the lowest ahead
    of the next by :data:`LOWEST_MARGIN`, the highest above the one below as much)."""
    v = stage(work, rng, formulas=[formula],
              prepare=lambda v: _separate(v, formula, lead=LOWEST_MARGIN,
                                          highest=LOWEST_MARGIN))
    found = v.polymorphs(formula)
    if len(found) < 2:
        raise ValueError(f"{formula}: fewer than two polymorphs in the database")
    best, second = found[0], found[1]
    return {"id": best["id"], "energy": _energy(best),
            "second_id": second["id"], "second_energy": _energy(second),
            "count": len(found),
            "ladder": {e["id"]: round(1000 * (_energy(e) - _energy(best)), 1) for e in found}}


def absent_formula(work: Path, rng: np.random.Generator, formula: str) -> dict[str, Any]:
    """An infeasible task's check: ``formula`` is not in the database."""
    v = stage(work, rng)
    if v.polymorphs(formula):
        raise ValueError(f"{formula} is in the database: the task would be feasible")
    return {"formula": formula}


def stable_compounds(work: Path, rng: np.random.Generator, element: str) -> dict[str, Any]:
    """For every binary formula containing ``element``: the id of its lowest-energy entry."""

    def formulas(v: Variant) -> list[str]:
        return sorted({e["chemical_formula_descriptive"] for e in _with(v, element, 2)})

    def prepare(v: Variant) -> None:
        for f in formulas(v):
            _separate(v, f, lead=0.001, highest=0.001)

    def fits(v: Variant) -> bool:
        return (any(len(v.polymorphs(f)) >= 2 for f in formulas(v))
                and any(e["nelements"] > 2 for e in _with(v, element)))

    v = stage(work, rng, prepare=prepare, fits=fits)
    mapping = {f: v.polymorphs(f)[0]["id"] for f in formulas(v)}
    aliases = {f: [v.polymorphs(f)[0]["chemical_formula_reduced"]] for f in formulas(v)}
    highest = {f: v.polymorphs(f)[-1]["id"] for f in formulas(v)}
    return {"mapping": mapping, "aliases": aliases, "highest": highest, "count": len(mapping)}


def widest_gap(work: Path, rng: np.random.Generator, element: str, nelements: int
               ) -> dict[str, Any]:
    """The entry with ``element`` and ``nelements`` elements with the widest band gap (ahead
    of the next by :data:`GAP_MARGIN`)."""

    def ranked(v: Variant) -> list[dict[str, Any]]:
        return sorted(_with(v, element, nelements), key=lambda e: (-e["_sag_band_gap"],
                                                                   int(e["id"][4:])))

    def fits(v: Variant) -> bool:
        r = ranked(v)
        return len(r) >= 3 and r[0]["_sag_band_gap"] - r[1]["_sag_band_gap"] >= GAP_MARGIN

    found = ranked(stage(work, rng, fits=fits))
    return {"id": found[0]["id"], "gap": found[0]["_sag_band_gap"],
            "second_id": found[1]["id"], "count": len(found)}


def entry_facts(work: Path, rng: np.random.Generator, entry: str, unanalysed: bool = False,
                types: list[str] | None = None, strongest_lead: float = 0.0) -> dict[str, Any]:
    """:func:`structure_facts` of one entry, plus what the database says about it; with
    ``unanalysed`` and/or ``types`` (structure types), the id holds a seeded entry that is
    unanalysed and of one of those types; with ``strongest_lead``, the variant is drawn again
    until the entry's strongest XRD peak is ahead of the next by that much (the strongest 100)
    so that which peak is the strongest is not a matter of rounding."""
    prepare = None
    if unanalysed or types:
        def prepare(v: Variant) -> None:
            v.place(entry, lambda e, t: (not unanalysed or not v.analysed(e)) and (
                not types or t["entry"]["_sag_structure_type"] in types))

    fits = None
    if strongest_lead > 0:
        def fits(v: Variant) -> bool:
            return _facts(v, v.entry(entry))["strongest_lead"] >= strongest_lead

    v = stage(work, rng, prepare=prepare, fits=fits)
    e = v.entry(entry)
    facts = dict(_facts(v, e))
    facts.update(first_peak=facts["peaks"][0], second_peak=facts["peaks"][1],
                 three_peaks=facts["peaks"][:3], formula=e["chemical_formula_descriptive"],
                 analysed=v.analysed(e))
    return facts


def polymorph_xrd(work: Path, rng: np.random.Generator, formula: str) -> dict[str, Any]:
    """The first XRD peak of the lowest- and of the highest-energy entry of ``formula``."""
    v = stage(work, rng, formulas=[formula],
              prepare=lambda v: _separate(v, formula, lead=LOWEST_MARGIN,
                                          highest=LOWEST_MARGIN))
    found = v.polymorphs(formula)
    low, high = found[0], found[-1]
    return {"results": {"lowest_id": low["id"],
                        "lowest_first_peak": _facts(v, low)["peaks"][0],
                        "highest_id": high["id"],
                        "highest_first_peak": _facts(v, high)["peaks"][0]}}


def supercell_facts(work: Path, rng: np.random.Generator, entry: str, na: int, nb: int,
                    nc: int) -> dict[str, Any]:
    """Composition and cell of the ``na x nb x nc`` supercell of an entry."""
    v = stage(work, rng)
    s = db.structure_of(v.entry(entry))
    s.make_supercell([na, nb, nc])
    return {"composition": {str(el): int(n) for el, n in s.composition.items()},
            "nsites": len(s), "lengths": sorted(round(float(x), 5) for x in s.lattice.abc),
            "volume": round(float(s.volume), 5), "density": round(float(s.density), 5)}


def strained_facts(work: Path, rng: np.random.Generator, entry: str, percent: float,
                   space_groups: list[str] | None = None) -> dict[str, Any]:
    """Space group and density of an entry with its third lattice vector stretched by
    ``percent`` % (fractional coordinates kept); with ``space_groups``, the id holds a seeded
    entry of one of those groups."""
    from pymatgen.core import Lattice, Structure
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

    prepare = None
    if space_groups:
        def prepare(v: Variant) -> None:
            v.place(entry, lambda e, t: t["entry"]["_sag_space_group_symbol"] in space_groups)

    v = stage(work, rng, prepare=prepare)
    s = db.structure_of(v.entry(entry))
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
            "original_density": round(float(s.density), 5),
            "formula": v.entry(entry)["chemical_formula_descriptive"]}


def space_group_census(work: Path, rng: np.random.Generator, element: str) -> dict[str, Any]:
    """Entries containing ``element`` per space group symbol, the unanalysed ones' groups
    computed with pymatgen; and the census of the database's own (analysed-only) values."""

    def fits(v: Variant) -> bool:
        mine = _with(v, element)
        return len(mine) > 20 and any(not v.analysed(e) for e in mine)

    v = stage(work, rng, fits=fits)
    full: Counter[str] = Counter()
    known: Counter[str] = Counter()
    for e in _with(v, element):
        if e["_sag_space_group_symbol"] is not None:
            full[e["_sag_space_group_symbol"]] += 1
            known[e["_sag_space_group_symbol"]] += 1
        else:
            full[_space_group(v, e)[0]] += 1
    return {"census": dict(sorted(full.items())), "known_only": dict(sorted(known.items())),
            "total": sum(full.values())}


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
    "strain_series": strain_series,
}
