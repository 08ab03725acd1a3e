"""Inputs and gold values of the workstation's cross-tool tasks.

Every generator takes ``(work_dir, rng, **args)`` and first stages the variant's own structure
database (:func:`sciagent_gym.envs.materials.data.stage`: a seeded subset of the templates,
fresh toy values, shuffled ids) where the terminal's OPTIMADE server reads it; gold values are
computed on the host from exactly that staged database, with pymatgen. Powder patterns are
simulated from a database entry's structure with :mod:`sciagent_gym.datagen.crystals`
(pymatgen's kinematic XRD, Cu K-alpha, seeded pseudo-Voigt width, background and counting
noise), so a pattern, its entry and the peaks Fityk should find are one thing.

Entries a task names come two ways. A parameter ``e`` naming an id and its formula (and the
reflection the instruction indexes) names an entry of the *pristine* database
(:func:`sciagent_gym.envs.materials.db.entries`; ``envs/matsci/tests/test_matsci_specs.py`` checks
that they still fit), which the variant keeps at that id: cubic, analysed-type entries whose
stored cell is the conventional one, so "the cell" means one thing in the database, in a CIF
written from it and in Jmol. An id alone (``sag-{n}``) is filled by the variant with a seeded
entry of the ``kind`` the task asks for (:data:`KINDS`), so what the instruction names does not
decide the answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.fityk.data import CU_KA, bragg_d
from sciagent_gym.envs.jmol.data import pair_distances
from sciagent_gym.envs.materials import data as mdata
from sciagent_gym.envs.materials import db
from sciagent_gym.envs.materials.variant import Variant

from sciagent_gym.sdk import crystals

#: Structure types whose stored cell is the cubic conventional cell.
CUBIC_TYPES = ("rocksalt", "cesium-chloride", "zincblende", "fluorite", "perovskite")


def _cubic(v: Variant, e: dict[str, Any], t: dict[str, Any]) -> bool:
    return t["entry"]["_sag_structure_type"] in CUBIC_TYPES and v.analysed(e)


#: Binary structure types whose shortest cation-anion distance :func:`_bond` knows.
BOND_TYPES = ("rocksalt", "rocksalt (strained)", "cesium-chloride", "zincblende",
              "zincblende (strained)", "fluorite")
#: Width (A) of the bond-length bins a ``binary-bond`` placement draws uniformly from.
BOND_BIN = 0.02


def _bond(e: dict[str, Any], t: dict[str, Any]) -> float:
    """The shortest cation-anion distance of a :data:`BOND_TYPES` entry, from its cell (the
    ideal positions of its family; the tetragonal strain keeps them fractional)."""
    lv = np.array(e["lattice_vectors"], float)
    a, c = float(np.linalg.norm(lv[0])), float(np.linalg.norm(lv[2]))
    return {"rocksalt": a / 2, "rocksalt (strained)": min(a, c) / 2,
            "cesium-chloride": np.sqrt(3) * a / 2, "zincblende": np.sqrt(3) * a / 4,
            "zincblende (strained)": np.sqrt(2 * a * a + c * c) / 4,
            "fluorite": np.sqrt(3) * a / 4}[t["entry"]["_sag_structure_type"]]


#: What an id the instruction names may hold (``kind`` of :func:`entry_structure`), as
#: (fits, group): an analysed entry of a cubic type (``cubic``); an analysed binary entry of
#: :data:`BOND_TYPES` whose shortest cation-anion distance (its shortest interatomic one) falls
#: in a bin of :data:`BOND_BIN` drawn first, each bin as likely (``binary-bond``: bond lengths
#: are sums of ionic radii and cluster); a cubic one whose site count (2, 5, 8 or 12) is drawn
#: first, each as likely (``cubic-sites``).
KINDS = {
    "cubic": (_cubic, None),
    "binary-bond": (lambda v, e, t: v.analysed(e) and e["nelements"] == 2
                    and t["entry"]["_sag_structure_type"] in BOND_TYPES,
                    lambda v, e, t: int(_bond(e, t) / BOND_BIN)),
    "cubic-sites": (_cubic, lambda v, e, t: e["nsites"]),
}


def entry(entry_id: str) -> dict[str, Any]:
    """An entry of the pristine database (what the specs' ``e`` parameters name)."""
    found = db.by_id().get(entry_id)
    if found is None:
        raise ValueError(f"no entry {entry_id!r} in the pristine structure database")
    return found


def cubic_entries(types: tuple[str, ...] = CUBIC_TYPES, nelements: int | None = None
                  ) -> list[str]:
    """Ids of analysed cubic entries of ``types`` in the pristine database (the specs'
    parameter lists come from here; the spec tests check them)."""
    return [e["id"] for e in db.entries()
            if e.get("_sag_structure_type") in types and e["_sag_space_group_number"]
            and (nelements is None or e["nelements"] == nelements)]


def _crystal(e: dict[str, Any], structure_type: str = "") -> crystals.Crystal:
    return crystals.describe(db.structure_of(e), structure_type or e.get("_sag_structure_type")
                             or "")


def _facts(e: dict[str, Any], structure_type: str = "") -> dict[str, Any]:
    c = _crystal(e, structure_type)
    s = c.structure
    formula = e["chemical_formula_descriptive"]
    return {"id": e["id"], "formula": formula, "a": round(float(s.lattice.a), 5),
            "lengths": sorted(round(float(x), 5) for x in s.lattice.abc),
            "volume": round(float(s.volume), 4), "density": round(float(s.density), 5),
            "nsites": len(s), "spacegroup": c.spacegroup,
            "spacegroup_number": c.spacegroup_number,
            "counts": {str(el): int(n) for el, n in s.composition.items()},
            "pairs": pair_distances(c)}


def _vfacts(v: Variant, e: dict[str, Any]) -> dict[str, Any]:
    return _facts(e, v.structure_type(e["id"]))


# -- generators ----------------------------------------------------------------------------------

def entry_structure(work: Path, rng: np.random.Generator, entry_id: str,
                    cation: str | None = None, anion: str | None = None, cells: int = 1,
                    kind: str | None = None) -> dict[str, Any]:
    """One entry's cell, volume, density, composition and pair distances; with ``cation`` and
    ``anion`` (or a binary ``kind``: its own), also their shortest distance (``nn``);
    ``block_sites``: the atoms of a block of ``cells`` unit cells. Without ``kind``,
    ``entry_id`` names a pristine entry, which the variant keeps there; with it, the variant
    puts a seeded entry of that kind (:data:`KINDS`) at ``entry_id``."""
    if kind is None:
        v = mdata.stage(work, rng, pristine=[entry_id])
    else:
        fits, group = KINDS[kind]
        v = mdata.stage(work, rng, prepare=lambda v: v.place(
            entry_id, lambda e, t: fits(v, e, t),
            None if group is None else (lambda e, t: group(v, e, t))))
    e = v.entry(entry_id)
    facts = _vfacts(v, e)
    if kind is not None and e["nelements"] == 2:
        tpl = v.template(entry_id)
        cation, anion = tpl["cations"][0], tpl["anions"][0]
    facts["cation"], facts["anion"] = cation, anion
    if cation and anion:
        facts["nn"] = facts["pairs"][f"{cation}-{anion}"]
    facts["block_sites"] = facts["nsites"] * int(cells)
    # another entry, of another compound and another cell (a negative opens it instead)
    facts["other"] = next(o["id"] for o in v.entries if o["chemical_formula_descriptive"]
                          != e["chemical_formula_descriptive"]
                          and abs(db.structure_of(o).volume - facts["volume"]) > 1.0)
    return facts


def _lowest(v: Variant, formula: str) -> dict[str, Any]:
    found = v.polymorphs(formula)
    if len(found) < 2:
        raise ValueError(f"{formula}: fewer than two polymorphs in the database")
    facts = _vfacts(v, found[0])
    facts["others"] = [e["id"] for e in found[1:]]
    facts["second"] = _vfacts(v, found[1])
    return facts


def _stage_formula(work: Path, rng: np.random.Generator, formula: str,
                   unanalysed: bool = False) -> Variant:
    """A variant holding every polymorph of ``formula``, the lowest ahead of the next (with
    ``unanalysed``, at least one of them unanalysed)."""
    fits = None
    if unanalysed:
        def fits(v: Variant) -> bool:
            return any(not v.analysed(e) for e in v.polymorphs(formula))

    return mdata.stage(work, rng, formulas=[formula], fits=fits,
                       prepare=lambda v: mdata._separate(v, formula, lead=mdata.LOWEST_MARGIN))


def lowest_polymorph(work: Path, rng: np.random.Generator, formula: str) -> dict[str, Any]:
    """The lowest-energy entry of ``formula``: its facts, and the other polymorphs' ids."""
    return _lowest(_stage_formula(work, rng, formula), formula)


def _isolated_top(peaks: list[crystals.Peak], n: int, window: float = 1.0) -> bool:
    """The ``n`` strongest peaks stand alone within ``window`` degrees (of peaks over 2 %)."""
    top = sorted(peaks, key=lambda p: -p.intensity)[:n]
    return len(top) == n and all(
        all(q is p or abs(q.two_theta - p.two_theta) > window or q.intensity < 2 for q in peaks)
        for p in top)


def pattern_peaks(e: dict[str, Any] | str, scale: float = 1.0) -> list[crystals.Peak]:
    """The powder peaks (Cu K-alpha, 10-90 degrees, >= 1 %) of an entry (or of the pristine
    entry of this id), its lattice scaled by ``scale``."""
    s = db.structure_of(entry(e) if isinstance(e, str) else e)
    if scale != 1.0:
        s = s.copy()
        s.scale_lattice(s.volume * scale ** 3)
    return crystals.xrd_peaks(crystals.describe(s))


def _pattern(work: Path, rng: np.random.Generator, peaks: list[crystals.Peak], path: str,
             title: str, n: int) -> dict[str, Any]:
    pattern = crystals.powder_pattern(rng, peaks)
    (work / path).write_text(pattern.xy_text(f"{title}, Cu Kalpha (lambda = {CU_KA} A)\n"
                                             "columns: 2theta (degrees), counts"))
    top = sorted(peaks, key=lambda p: -p.intensity)[:n]
    rows = [{"two_theta": p.two_theta, "hkl": "(" + "".join(str(abs(i)) for i in p.hkl) + ")",
             "h2k2l2": int(sum(i * i for i in p.hkl)), "intensity": p.intensity,
             "height": pattern.height * p.intensity / 100, "d": bragg_d(p.two_theta)}
            for p in top]
    by_angle = sorted(rows, key=lambda r: r["two_theta"])
    return {"top": rows, "by_angle": by_angle,
            "centers": [r["two_theta"] for r in by_angle], "fwhm": pattern.fwhm,
            "hwhm": pattern.fwhm / 2, "eta": pattern.eta, "n": n}


def entry_pattern(work: Path, rng: np.random.Generator, entry_id: str, n: int = 3,
                  strain: list[float] | None = None, path: str = "pattern.xy",
                  signed: bool = False) -> dict[str, Any]:
    """A measured-looking pattern of a pristine entry, which the variant keeps at its id (with
    ``strain`` [lo, hi] %, of the entry with its cell expanded by a seeded strain in that range;
    ``signed``: expanded or compressed, each as likely); gold: its ``n`` strongest peaks
    (``top``, and ``by_angle``), the entry's facts, ``a_ref``, ``a_measured`` and
    ``strain_pct``."""
    v = mdata.stage(work, rng, pristine=[entry_id])
    e = v.entry(entry_id)
    facts = _vfacts(v, e)
    pct = round(float(rng.uniform(*strain)), 3) if strain else 0.0
    if strain and signed and rng.random() < 0.5:
        pct = -pct
    peaks = pattern_peaks(e, 1 + pct / 100)
    gold = _pattern(work, rng, peaks, path, f"powder pattern of a {facts['formula']} sample", n)
    gold.update(entry=facts, a_ref=facts["a"], a_measured=facts["a"] * (1 + pct / 100),
                strain_pct=pct)
    return gold


def polymorph_pattern(work: Path, rng: np.random.Generator, formula: str, n: int = 3,
                      path: str = "pattern.xy") -> dict[str, Any]:
    """The pattern of one seeded polymorph of ``formula`` (of those whose ``n`` strongest peaks
    stand alone); gold: its id, the other polymorphs and the peaks."""
    v = mdata.stage(work, rng, formulas=[formula])
    found = v.polymorphs(formula)
    candidates = [e["id"] for e in found if _isolated_top(pattern_peaks(e), n)]
    if not candidates:
        raise ValueError(f"{formula}: no polymorph with {n} isolated strong peaks")
    chosen = str(rng.choice(sorted(candidates)))
    gold = _pattern(work, rng, pattern_peaks(v.entry(chosen)), path,
                    f"powder pattern of a {formula} sample", n)
    gold.update(id=chosen, polymorphs=[e["id"] for e in found])
    return gold


def _column(values: list[float]) -> dict[str, Any]:
    arr = np.asarray(values, dtype=float)
    return {"n": int(len(arr)), "mean": float(arr.mean()), "min": float(arr.min()),
            "max": float(arr.max())}


def entry_xrd(work: Path, rng: np.random.Generator, entry_id: str) -> dict[str, Any]:
    """Every peak pymatgen's ``XRDCalculator()`` gives for a pristine entry (kept at its id)
    between 10 and 90 degrees (2theta, scaled intensity): the columns' summaries ``x``,
    ``y``."""
    from pymatgen.analysis.diffraction.xrd import XRDCalculator

    v = mdata.stage(work, rng, pristine=[entry_id])
    e = v.entry(entry_id)
    pattern = XRDCalculator().get_pattern(db.structure_of(e), two_theta_range=(10, 90))
    x, y = [float(q) for q in pattern.x], [float(q) for q in pattern.y]
    return {"x": _column(x), "y": _column(y), "n": len(x),
            "strongest": x[int(np.argmax(y))], "facts": _vfacts(v, e)}


def _energies(v: Variant, formula: str) -> dict[str, Any]:
    found = v.polymorphs(formula)
    vpa = [float(db.structure_of(e).volume / e["nsites"]) for e in found]
    energy = [float(e["_sag_formation_energy_per_atom"]) for e in found]
    return {"x": _column(vpa), "y": _column(energy), "n": len(found), "lowest": found[0]["id"],
            "lowest_vpa": vpa[0], "ids": [e["id"] for e in found]}


def polymorph_energies(work: Path, rng: np.random.Generator, formula: str) -> dict[str, Any]:
    """Every entry of ``formula``: volume per atom (A^3) and formation energy (eV/atom), the
    columns' summaries ``x`` and ``y``, and the lowest-energy entry (at least one of them
    unanalysed, so that the analysed ones alone are not all of them)."""
    return _energies(_stage_formula(work, rng, formula, unanalysed=True), formula)


def absent_formula(work: Path, rng: np.random.Generator, formula: str) -> dict[str, Any]:
    """An infeasible task's check: ``formula`` is not in the database."""
    return mdata.absent_formula(work, rng, formula)


def film_report(work: Path, rng: np.random.Generator, entry_id: str, cation: str, anion: str,
                n: int = 3, strain: list[float] | None = None, cells: int = 27,
                path: str = "pattern.xy", signed: bool = False) -> dict[str, Any]:
    """A long-horizon report on a strained film of an entry: :func:`entry_pattern`'s pattern and
    gold (``n`` strongest peaks, ``a_ref``, ``strain_pct``...), plus the reference's shortest
    ``cation``-``anion`` distance ``nn``, ``block_sites`` (the atoms of ``cells`` unit cells)
    and ``centers_col``, the fitted centres as a Veusz dataset summary (n, mean, min, max)."""
    gold = entry_pattern(work, rng, entry_id, n=n, strain=strain or [0.4, 2.0], path=path,
                         signed=signed)
    gold["nn"] = gold["entry"]["pairs"][f"{cation}-{anion}"]
    gold["block_sites"] = gold["entry"]["nsites"] * int(cells)
    gold["centers_col"] = _column(gold["centers"])
    return gold


def polymorph_report(work: Path, rng: np.random.Generator, formula: str, cation: str,
                     anion: str) -> dict[str, Any]:
    """A long-horizon polymorph survey of ``formula``: :func:`polymorph_energies`' columns
    (``x`` volume per atom, ``y`` formation energy, ``n``, ``lowest``), ``low``: the
    lowest-energy entry's facts (:func:`lowest_polymorph`), and ``nn``: its shortest
    ``cation``-``anion`` distance (periodic images included); all from one staged variant."""
    v = _stage_formula(work, rng, formula)
    gold = _energies(v, formula)
    low = _lowest(v, formula)
    gold.update(low=low, nn=low["pairs"][f"{cation}-{anion}"])
    return gold


GENERATORS = {
    "entry_structure": entry_structure,
    "lowest_polymorph": lowest_polymorph,
    "entry_pattern": entry_pattern,
    "polymorph_pattern": polymorph_pattern,
    "entry_xrd": entry_xrd,
    "polymorph_energies": polymorph_energies,
    "absent_formula": absent_formula,
    "film_report": film_report,
    "polymorph_report": polymorph_report,
}
