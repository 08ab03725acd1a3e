"""Inputs and gold values of the workstation's cross-tool tasks.

Every generator takes ``(work_dir, rng, **args)`` and first stages the materials env's
structure database (:func:`sciagent_gym.envs.materials.data.stage_database`) where the
terminal's OPTIMADE server reads it; gold values are computed on the host from the pristine
database (:mod:`sciagent_gym.envs.materials.db`) with pymatgen. Powder patterns are simulated
from a database entry's structure with :mod:`sciagent_gym.datagen.crystals` (pymatgen's
kinematic XRD, Cu K-alpha, seeded pseudo-Voigt width, background and counting noise), so a
pattern, its entry and the peaks Fityk should find are one thing.

Entries are named by the specs' parameters (ids of database version
:data:`sciagent_gym.envs.materials.db.DB_VERSION`; ``tests/specs/test_matsci_specs.py`` checks
that they still fit): cubic, analysed entries whose stored cell is the conventional one, so
"the cell" means one thing in the database, in a CIF written from it and in Jmol.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.fityk.data import CU_KA, bragg_d
from sciagent_gym.envs.jmol.data import pair_distances
from sciagent_gym.envs.materials import data as mdata
from sciagent_gym.envs.materials import db

from sciagent_gym.datagen import crystals

#: Structure types whose stored cell is the cubic conventional cell.
CUBIC_TYPES = ("rocksalt", "cesium-chloride", "zincblende", "fluorite", "perovskite")


def entry(entry_id: str) -> dict[str, Any]:
    found = db.by_id().get(entry_id)
    if found is None:
        raise ValueError(f"no entry {entry_id!r} in the structure database v{db.DB_VERSION}")
    return found


def cubic_entries(types: tuple[str, ...] = CUBIC_TYPES, nelements: int | None = None
                  ) -> list[str]:
    """Ids of analysed cubic entries of ``types`` (the specs' parameter lists come from
    here; the spec tests check them)."""
    return [e["id"] for e in db.entries()
            if e.get("_sag_structure_type") in types and e["_sag_space_group_number"]
            and (nelements is None or e["nelements"] == nelements)]


def _crystal(e: dict[str, Any]) -> crystals.Crystal:
    return crystals.describe(db.structure_of(e), e.get("_sag_structure_type") or "")


def _facts(e: dict[str, Any]) -> dict[str, Any]:
    c = _crystal(e)
    s = c.structure
    formula = e["chemical_formula_descriptive"]
    return {"id": e["id"], "formula": formula, "a": round(float(s.lattice.a), 5),
            "lengths": sorted(round(float(x), 5) for x in s.lattice.abc),
            "volume": round(float(s.volume), 4), "density": round(float(s.density), 5),
            "nsites": len(s), "spacegroup": c.spacegroup,
            "spacegroup_number": c.spacegroup_number,
            "counts": {str(el): int(n) for el, n in s.composition.items()},
            "pairs": pair_distances(c)}


# -- generators ----------------------------------------------------------------------------------

def entry_structure(work: Path, rng: np.random.Generator, entry_id: str,
                    cation: str | None = None, anion: str | None = None, cells: int = 1
                    ) -> dict[str, Any]:
    """One entry's cell, volume, density, composition and pair distances; with ``cation`` and
    ``anion``, also their shortest distance (``nn``); ``block_sites``: the atoms of a block of
    ``cells`` unit cells."""
    mdata.stage_database(work)
    facts = _facts(entry(entry_id))
    if cation and anion:
        facts["nn"] = facts["pairs"][f"{cation}-{anion}"]
    facts["block_sites"] = facts["nsites"] * int(cells)
    return facts


def lowest_polymorph(work: Path, rng: np.random.Generator, formula: str) -> dict[str, Any]:
    """The lowest-energy entry of ``formula``: its facts, and the other polymorphs' ids."""
    mdata.stage_database(work)
    found = mdata.polymorphs(formula)
    if len(found) < 2:
        raise ValueError(f"{formula}: fewer than two polymorphs in the database")
    facts = _facts(found[0])
    facts["others"] = [e["id"] for e in found[1:]]
    facts["second"] = _facts(found[1])
    return facts


def _isolated_top(peaks: list[crystals.Peak], n: int, window: float = 1.0) -> bool:
    """The ``n`` strongest peaks stand alone within ``window`` degrees (of peaks over 2 %)."""
    top = sorted(peaks, key=lambda p: -p.intensity)[:n]
    return len(top) == n and all(
        all(q is p or abs(q.two_theta - p.two_theta) > window or q.intensity < 2 for q in peaks)
        for p in top)


def pattern_peaks(entry_id: str, scale: float = 1.0) -> list[crystals.Peak]:
    """The powder peaks (Cu K-alpha, 10-90 degrees, >= 1 %) of an entry, its lattice scaled by
    ``scale``."""
    s = db.structure_of(entry(entry_id))
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
                  strain: list[float] | None = None, path: str = "pattern.xy"
                  ) -> dict[str, Any]:
    """A measured-looking pattern of an entry (with ``strain`` [lo, hi] %, of the entry with
    its cell expanded by a seeded strain in that range); gold: its ``n`` strongest peaks
    (``top``, and ``by_angle``), the entry's facts, ``a_ref``, ``a_measured`` and
    ``strain_pct``."""
    mdata.stage_database(work)
    facts = _facts(entry(entry_id))
    pct = round(float(rng.uniform(*strain)), 3) if strain else 0.0
    peaks = pattern_peaks(entry_id, 1 + pct / 100)
    gold = _pattern(work, rng, peaks, path, f"powder pattern of a {facts['formula']} sample", n)
    gold.update(entry=facts, a_ref=facts["a"], a_measured=facts["a"] * (1 + pct / 100),
                strain_pct=pct)
    return gold


def polymorph_pattern(work: Path, rng: np.random.Generator, formula: str, n: int = 3,
                      path: str = "pattern.xy") -> dict[str, Any]:
    """The pattern of one seeded polymorph of ``formula`` (of those whose ``n`` strongest peaks
    stand alone); gold: its id, the other polymorphs and the peaks."""
    mdata.stage_database(work)
    candidates = [e["id"] for e in mdata.polymorphs(formula)
                  if _isolated_top(pattern_peaks(e["id"]), n)]
    if not candidates:
        raise ValueError(f"{formula}: no polymorph with {n} isolated strong peaks")
    chosen = str(rng.choice(sorted(candidates)))
    gold = _pattern(work, rng, pattern_peaks(chosen), path,
                    f"powder pattern of a {formula} sample", n)
    gold.update(id=chosen, polymorphs=[e["id"] for e in mdata.polymorphs(formula)])
    return gold


def _column(values: list[float]) -> dict[str, Any]:
    arr = np.asarray(values, dtype=float)
    return {"n": int(len(arr)), "mean": float(arr.mean()), "min": float(arr.min()),
            "max": float(arr.max())}


def entry_xrd(work: Path, rng: np.random.Generator, entry_id: str) -> dict[str, Any]:
    """Every peak pymatgen's ``XRDCalculator()`` gives for an entry between 10 and 90 degrees
    (2theta, scaled intensity): the columns' summaries ``x``, ``y``."""
    from pymatgen.analysis.diffraction.xrd import XRDCalculator

    mdata.stage_database(work)
    pattern = XRDCalculator().get_pattern(db.structure_of(entry(entry_id)),
                                          two_theta_range=(10, 90))
    x, y = [float(v) for v in pattern.x], [float(v) for v in pattern.y]
    return {"x": _column(x), "y": _column(y), "n": len(x),
            "strongest": x[int(np.argmax(y))], "facts": _facts(entry(entry_id))}


def polymorph_energies(work: Path, rng: np.random.Generator, formula: str) -> dict[str, Any]:
    """Every entry of ``formula``: volume per atom (A^3) and formation energy (eV/atom), the
    columns' summaries ``x`` and ``y``, and the lowest-energy entry."""
    mdata.stage_database(work)
    found = mdata.polymorphs(formula)
    vpa = [float(db.structure_of(e).volume / e["nsites"]) for e in found]
    energy = [float(e["_sag_formation_energy_per_atom"]) for e in found]
    return {"x": _column(vpa), "y": _column(energy), "n": len(found), "lowest": found[0]["id"],
            "lowest_vpa": vpa[0], "ids": [e["id"] for e in found]}


def absent_formula(work: Path, rng: np.random.Generator, formula: str) -> dict[str, Any]:
    """An infeasible task's check: ``formula`` is not in the database."""
    return mdata.absent_formula(work, rng, formula)


def film_report(work: Path, rng: np.random.Generator, entry_id: str, cation: str, anion: str,
                n: int = 3, strain: list[float] | None = None, cells: int = 27,
                path: str = "pattern.xy") -> dict[str, Any]:
    """A long-horizon report on a strained film of an entry: :func:`entry_pattern`'s pattern and
    gold (``n`` strongest peaks, ``a_ref``, ``strain_pct``...), plus the reference's shortest
    ``cation``-``anion`` distance ``nn``, ``block_sites`` (the atoms of ``cells`` unit cells)
    and ``centers_col``, the fitted centres as a Veusz dataset summary (n, mean, min, max)."""
    gold = entry_pattern(work, rng, entry_id, n=n, strain=strain or [0.4, 2.0], path=path)
    gold["nn"] = gold["entry"]["pairs"][f"{cation}-{anion}"]
    gold["block_sites"] = gold["entry"]["nsites"] * int(cells)
    gold["centers_col"] = _column(gold["centers"])
    return gold


def polymorph_report(work: Path, rng: np.random.Generator, formula: str, cation: str,
                     anion: str) -> dict[str, Any]:
    """A long-horizon polymorph survey of ``formula``: :func:`polymorph_energies`' columns
    (``x`` volume per atom, ``y`` formation energy, ``n``, ``lowest``), ``low``: the
    lowest-energy entry's facts (:func:`lowest_polymorph`), and ``nn``: its shortest
    ``cation``-``anion`` distance (periodic images included)."""
    gold = polymorph_energies(work, rng, formula)
    low = lowest_polymorph(work, rng, formula)
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
