"""Generators of the materials tasks: each variant's database staged for the server, and the
gold values computed from it.

Every generator takes ``(work_dir, rng, **args)`` and stages the variant's own structure
database (:func:`stage`: :mod:`.variant` derives it from the cached templates of :mod:`.db`
in a fraction of a second) into ``work_dir/.optimade/structures.json``, where the terminal's
OPTIMADE server reads it; the gold values are computed on the host, with the host's pymatgen,
from exactly the entries staged. So the entries, their ids, counts, toy energies and band
gaps and which entries are unanalysed all change with the seed, and with them the answers.

What a task's instruction names, the variant provides: a formula is held with all its
polymorphs, an id is filled with an entry of the kind the task needs (``unanalysed``, a space
group...), and a variant is drawn again (a handful of tries at most) until the task is
well-posed: a unique lowest-energy polymorph, candidates away from a threshold, at least one
unanalysed entry where the instruction says some are, and what each spec's negatives need in
order to be wrong (more matches than a first page holds...).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.materials import db
from sciagent_gym.envs.materials.adapter import DB_RELPATH
from sciagent_gym.envs.materials.variant import NoFit, Variant, build

#: XRD as the tasks define it: pymatgen's XRDCalculator, Cu K-alpha, 2-theta 10-90 degrees,
#: peaks of at least this relative intensity (the strongest is 100).
XRD_RANGE = (10.0, 90.0)
XRD_MIN_INTENSITY = 1.0
#: Variants drawn at most before a generator gives up on its conditions.
ATTEMPTS = 60
#: The lowest-energy polymorph's lead over the next (eV/atom) where a task asks for it.
LOWEST_MARGIN = 0.005
#: Consecutive polymorphs' energies apart (eV/atom) in the polymorph study's table.
STEP_MARGIN = 0.002
#: No candidate's band gap this close to the wide-gap screen's threshold (eV).
GAP_EDGE = 0.03
#: The widest band gap's lead over the next (eV).
GAP_MARGIN = 0.005
#: The densest screen candidate's lead over the next (g/cm^3).
DENSITY_MARGIN = 0.02


def stage(work: Path, rng: np.random.Generator | None, formulas: Iterable[str] = (),
          pristine: Iterable[str] = (),
          prepare: Callable[[Variant], None] | None = None,
          fits: Callable[[Variant], bool] | None = None) -> Variant:
    """Draw this variant's database (its seed from ``rng``; ``None``: seed 0), holding
    ``formulas`` and ``pristine`` ids; ``prepare`` makes requests on it (placements, toy values
    drawn again), ``fits`` says whether it suits the task; the first that does is written where
    the server reads it and returned."""
    base = 0 if rng is None else int(rng.integers(1 << 30))
    formulas, pristine = list(formulas), list(pristine)
    why = "its conditions never held"
    for k in range(ATTEMPTS):
        v = build(base + 7919 * k, formulas, pristine)
        try:
            if prepare is not None:
                prepare(v)
        except NoFit as exc:
            why = str(exc)
            continue
        if fits is None or fits(v):
            v.write(work / DB_RELPATH)
            return v
    raise ValueError(f"no database variant fits this task after {ATTEMPTS} tries: {why}")


def stage_database(work: Path, rng: np.random.Generator | None = None) -> Variant:
    """Stage a variant with no request (its seed from ``rng``)."""
    return stage(work, rng)


def _with(v: Variant, element: str, nelements: int | None = None) -> list[dict[str, Any]]:
    return [e for e in v.entries if element in e["elements"]
            and (nelements is None or e["nelements"] == nelements)]


def _energy(e: dict[str, Any]) -> float:
    return e["_sag_formation_energy_per_atom"]


def _separate(v: Variant, formula: str, lead: float = 0.0, step: float = 0.0,
              highest: float = 0.0, tries: int = 200) -> None:
    """Draw ``formula``'s energies again until the lowest leads the next by ``lead``, all
    consecutive ones are ``step`` apart and the highest is ``highest`` above the one below."""
    ids = [e["id"] for e in v.polymorphs(formula)]
    for _ in range(tries):
        es = [_energy(e) for e in v.polymorphs(formula)]
        gaps = [b - a for a, b in zip(es, es[1:], strict=False)]
        if len(es) < 2 or (gaps[0] >= lead - 1e-9 and min(gaps) >= step - 1e-9
                           and gaps[-1] >= highest - 1e-9):
            return
        v.redraw_energies(ids)
    raise NoFit(f"{formula}: energies not apart")


_FACTS: dict[str, dict[str, Any]] = {}
_GROUPS: dict[str, tuple[str, int]] = {}


def _facts(v: Variant, e: dict[str, Any]) -> dict[str, Any]:
    """:func:`structure_facts` of a staged entry (memoised by the template it comes from: its
    structure is that template's)."""
    key = v.template(e["id"])["key"]
    if key not in _FACTS:
        _FACTS[key] = structure_facts(e)
    return _FACTS[key]


def _space_group(v: Variant, e: dict[str, Any]) -> tuple[str, int]:
    """SpacegroupAnalyzer (symprec 0.01) on a staged entry's structure (memoised likewise)."""
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

    key = v.template(e["id"])["key"]
    if key not in _GROUPS:
        sga = SpacegroupAnalyzer(db.structure_of(e), symprec=0.01)
        _GROUPS[key] = (sga.get_space_group_symbol(), sga.get_space_group_number())
    return _GROUPS[key]


# -- generators ----------------------------------------------------------------------------------

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


def xrd_pattern(structure: Any) -> list[tuple[float, float, float]]:
    """The peaks (2-theta in degrees, intensity with the strongest 100, d-spacing in Å; Cu
    K-alpha, 10-90) of at least :data:`XRD_MIN_INTENSITY` % of the strongest. Reflections at
    one angle are merged (their intensities summed) first, as pymatgen 2022 (the sandbox's)
    does and 2024+ no longer does for some hexagonal families."""
    from pymatgen.analysis.diffraction.xrd import XRDCalculator

    pattern = XRDCalculator(wavelength="CuKa").get_pattern(structure, two_theta_range=XRD_RANGE)
    merged: list[list[float]] = []
    for x, y, d in zip(pattern.x, pattern.y, pattern.d_hkls, strict=True):
        if merged and abs(merged[-1][0] - x) < 1e-3:
            merged[-1][1] += float(y)
        else:
            merged.append([float(x), float(y), float(d)])
    top = max(y for _, y, _ in merged)
    return [(round(x, 4), round(100 * y / top, 3), round(d, 5)) for x, y, d in merged
            if 100 * y / top >= XRD_MIN_INTENSITY]


def xrd_peaks(structure: Any) -> list[float]:
    """Distinct peak positions (2-theta) of :func:`xrd_pattern`."""
    return [x for x, _, _ in xrd_pattern(structure)]


def closest_pairs(structure: Any, tol: float = 0.002) -> tuple[float, list[str]]:
    """The shortest interatomic distance (Å, periodic images included) and the element pairs
    (``"Cl-Na"``, alphabetical) at it within ``tol``: every pair an answer may name."""
    found = [(n.nn_distance, "-".join(sorted((site.specie.symbol, n.specie.symbol))))
             for site in structure for n in structure.get_neighbors(site, 6.0)]
    low = min(d for d, _ in found)
    return low, sorted({p for d, p in found if d <= low + tol})


def structure_facts(entry: dict[str, Any]) -> dict[str, Any]:
    """What pymatgen (host) computes for a stored entry: symmetry, density, volume per atom,
    nearest-neighbour distance and the XRD peaks of the tasks' definition."""
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

    s = db.structure_of(entry)
    sga = SpacegroupAnalyzer(s, symprec=0.01)
    pattern = xrd_pattern(s)
    peaks = [x for x, _, _ in pattern]
    ranked = sorted(pattern, key=lambda p: -p[1])
    nn, pairs = closest_pairs(s)
    return {"space_group_symbol": sga.get_space_group_symbol(),
            "space_group_number": sga.get_space_group_number(),
            "density": round(float(s.density), 5),
            "volume_per_atom": round(float(s.volume / len(s)), 5),
            "nsites": len(s), "peaks": peaks, "nearest_neighbour": round(float(nn), 5),
            "nn_pairs": pairs, "first_d": pattern[0][2], "strongest_peak": ranked[0][0],
            "strongest_lead": round(ranked[0][1] - ranked[1][1], 3) if len(ranked) > 1
            else 100.0,
            "composition": {str(el): int(n) for el, n in s.composition.items()},
            "lengths": sorted(round(float(x), 5) for x in s.lattice.abc),
            "volume": round(float(s.volume), 5)}


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


# -- long-horizon workflows ----------------------------------------------------------------------

def shortest_distance(structure: Any) -> float:
    """The shortest interatomic distance (Å), periodic images included."""
    return float(min(n.nn_distance for i in range(len(structure))
                     for n in structure.get_neighbors(structure[i], 6.0)))


def wide_gap_screen(work: Path, rng: np.random.Generator, element: str, gap: float
                    ) -> dict[str, Any]:
    """A screen of the binary entries with ``element`` and a band gap above ``gap`` eV: their
    ids, the table rows the analysis gives (space group, density, shortest distance, densest
    first), the densest candidate and the report's values. The variant has 5-14 candidates, at
    least one unanalysed, none within :data:`GAP_EDGE` of the threshold and a densest one
    ahead of the next by :data:`DENSITY_MARGIN`."""

    def prepare(v: Variant) -> None:
        for _ in range(50):
            near = [e["id"] for e in _with(v, element, 2)
                    if abs(e["_sag_band_gap"] - gap) < GAP_EDGE]
            if not near:
                return
            v.redraw_gaps(near)
        raise NoFit("band gaps on the threshold")

    def fits(v: Variant) -> bool:
        found = [e for e in _with(v, element, 2) if e["_sag_band_gap"] > gap]
        if not 5 <= len(found) <= 14 or all(v.analysed(e) for e in found):
            return False
        dens = sorted((v.template(e["id"])["entry"]["_sag_density"] for e in found),
                      reverse=True)
        return dens[0] - dens[1] > DENSITY_MARGIN + 1e-3

    v = stage(work, rng, prepare=prepare, fits=fits)
    found = [e for e in _with(v, element, 2) if e["_sag_band_gap"] > gap]
    rows = []
    for e in found:
        facts = _facts(v, e)
        rows.append({"id": e["id"], "formula": e["chemical_formula_descriptive"],
                     "space_group": facts["space_group_symbol"], "density": facts["density"],
                     "min_distance": facts["nearest_neighbour"],
                     "number": facts["space_group_number"],
                     "composition": facts["composition"], "lengths": facts["lengths"],
                     "analysed": v.analysed(e)})
    rows.sort(key=lambda r: (-r["density"], int(r["id"][4:])))
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
    state's 2 x 2 x 2 supercell and the report's values (incl. its first XRD peak). The variant
    holds all of them, at least one unanalysed, consecutive ones :data:`STEP_MARGIN` apart."""
    v = stage(work, rng, formulas=[formula],
              prepare=lambda v: _separate(v, formula, lead=STEP_MARGIN, step=STEP_MARGIN),
              fits=lambda v: any(not v.analysed(e) for e in v.polymorphs(formula)))
    found = v.polymorphs(formula)
    if len(found) < 2:
        raise ValueError(f"{formula}: fewer than two polymorphs in the database")
    e0 = _energy(found[0])
    rows = []
    for e in found:
        facts = _facts(v, e)
        rows.append({"id": e["id"], "space_group": facts["space_group_symbol"],
                     "e_above_min": round(1000 * (_energy(e) - e0), 1),
                     "volume_per_atom": facts["volume_per_atom"],
                     "min_distance": facts["nearest_neighbour"],
                     "analysed": v.analysed(e)})
    ground = found[0]
    gfacts = _facts(v, ground)
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


def strain_series(work: Path, rng: np.random.Generator, entry: str, step: float,
                  space_groups: list[str]) -> dict[str, Any]:
    """A uniaxial strain series of a cubic entry: its third lattice vector stretched by
    -2, -1, 0, 1 and 2 times ``step`` % (fractional coordinates kept); per strain the space
    group, density and first XRD peak, the most stretched cell (as a CIF reads it) and the
    report's values. The id holds a seeded entry of one of ``space_groups``."""
    from pymatgen.core import Lattice, Structure
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

    v = stage(work, rng, prepare=lambda v: v.place(
        entry, lambda e, t: t["entry"]["_sag_space_group_symbol"] in space_groups))
    s = db.structure_of(v.entry(entry))
    rows, cells = [], {}
    for k in (-2, -1, 0, 1, 2):
        e = round(k * step, 4)
        m = s.lattice.matrix.copy()
        m[2] = m[2] * (1 + e / 100)
        t = Structure(Lattice(m), s.species, s.frac_coords)
        sga = SpacegroupAnalyzer(t, symprec=0.01)
        rows.append({"strain": e, "space_group": sga.get_space_group_symbol(),
                     "number": sga.get_space_group_number(),
                     "density": round(float(t.density), 5), "first_peak": xrd_peaks(t)[0]})
        cells[k] = t
    top, zero = cells[2], rows[2]
    return {"rows_symmetry": [{k: r[k] for k in ("strain", "space_group")} for r in rows],
            "rows_density": [{k: r[k] for k in ("strain", "density")} for r in rows],
            "rows_peak": [{k: r[k] for k in ("strain", "first_peak")} for r in rows],
            "count": len(rows), "formula": v.entry(entry)["chemical_formula_descriptive"],
            "strained": {"composition": {str(el): int(n) for el, n in top.composition.items()},
                         "lengths": sorted(round(float(x), 5) for x in top.lattice.abc),
                         "number": rows[-1]["number"]},
            "report": {"unstrained_space_group": zero["space_group"],
                       "strained_space_group": rows[-1]["space_group"],
                       "peak_shift": round(rows[-1]["first_peak"] - zero["first_peak"], 4)}}


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
