"""The long-horizon materials generators: a wide-gap screen, a polymorph study and a uniaxial
strain series, each staging a variant and computing every table row and report value its
stages score.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.materials import db
from sciagent_gym.envs.materials.facts import _facts, xrd_peaks
from sciagent_gym.envs.materials.staging import _energy, _separate, _with, stage
from sciagent_gym.envs.materials.variant import NoFit, Variant

#: Consecutive polymorphs' energies apart (eV/atom) in the polymorph study's table.
STEP_MARGIN = 0.002
#: No candidate's band gap this close to the wide-gap screen's threshold (eV).
GAP_EDGE = 0.03
#: The densest screen candidate's lead over the next (g/cm^3).
DENSITY_MARGIN = 0.02


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
