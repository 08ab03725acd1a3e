"""Offline checks of the seeded, strained Jmol structures (issue 33): the answer follows from the
file, not from the instruction or from a textbook compound.

No X display needed: structures are generated into tmp_path and read back with pymatgen.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest
from helpers import requires

from sciagent_gym.tools import load_tool_specs

pytestmark = requires(tool="jmol")

from sciagent_gym.envs.jmol import strained  # noqa: E402

SPECS = load_tool_specs("jmol")
SEEDED = ("jmol/space-group-number", "jmol/count-atoms", "jmol/bond-length", "jmol/bond-angle",
          "jmol/coordination-polyhedra")


def test_strains_reach_many_space_groups():
    table = strained.space_group_table()
    assert len(table) >= 40
    assert {99, 38, 160} <= set(table)  # perovskite's polar shifts along [001], [110], [111]
    assert {225, 139, 69, 12, 166, 2} <= set(table)  # rock salt under each strain
    assert all(pairs for pairs in table.values())


def test_a_strained_cell_is_written_in_the_symmetry_it_has(tmp_path):
    from pymatgen.core import Structure

    seen = collections.Counter()
    for seed in range(6):
        gold = strained.seeded(tmp_path, np.random.default_rng(seed), "spacegroup")
        text = (tmp_path / "crystal.cif").read_text()
        assert f"_symmetry_Int_Tables_number   {gold['spacegroup_number']}" in text
        back = Structure.from_file(str(tmp_path / "crystal.cif"))
        assert len(back) == gold["nsites"]
        assert strained.analyse(back).get_space_group_number() == gold["spacegroup_number"]
        seen[gold["spacegroup_number"]] += 1
    assert max(seen.values()) <= 2


def test_counted_cells_keep_both_traps(tmp_path):
    for seed in range(3):
        gold = strained.seeded(tmp_path, np.random.default_rng(seed), "count", family="rocksalt",
                               formula="NaCl", element="Na", species="K")
        assert 1 <= gold["species_count"] <= strained.MAX_COUNT
        assert gold["counts"]["K"] == gold["species_count"]


@pytest.mark.parametrize("quantity", ["bond", "angle", "polyhedra"])
def test_shells_are_clear_and_bent(quantity, tmp_path):
    for seed in range(3):
        gold = strained.seeded(tmp_path, np.random.default_rng(seed), quantity,
                               family="perovskite", formula="SrTiO3", centre="Ti", ligand="O")
        assert gold["centre_cn"] >= {"bond": 2, "angle": 3, "polyhedra": 4}[quantity]
        assert 1.5 < gold["bond"] < 3.5
        if quantity == "angle":
            assert min(abs(gold["angle"] - x) for x in strained.IDEAL_ANGLES) >= 0.5


def test_a_strain_changes_the_answers(tmp_path):
    golds = [strained.seeded(tmp_path, np.random.default_rng(s), "angle", family="rocksalt",
                             formula="NaCl", centre="Na", ligand="Cl") for s in range(4)]
    assert len({g["angle"] for g in golds}) == 4


@pytest.mark.parametrize("spec_id", SEEDED)
def test_instructions_name_no_compound(spec_id):
    spec = SPECS[spec_id]
    assert "formula" not in spec.instruction and "{c.formula}" not in spec.instruction
    assert spec.generate[0].fn == "seeded"


def test_the_space_group_task_starts_without_the_cell_label():
    from sciagent_gym.envs.jmol.adapter import HIDE_CELL_INFO_TAG

    tagged = {i for i, s in SPECS.items() if HIDE_CELL_INFO_TAG in s.tags}
    assert tagged == {"jmol/space-group-number"}  # image tasks compare with the label shown


@pytest.mark.parametrize(("polyhedra", "compound"), [
    (True, ("fluorite", "CaF2", "Ca", "F")), (True, ("wurtzite", "ZnO", "Zn", "O")),
    (False, ("rutile", "TiO2", "Ti", "O")), (False, ("rocksalt", "KCl", "K", "Cl"))])
def test_workflow_crystals_are_strained_per_seed(polyhedra, compound, tmp_path):
    """The long-horizon workflows name a compound, so its strain decides the answer (issue 33):
    the same instruction goes with a different bond and angle per seed, none a textbook one."""
    from pymatgen.core import Structure
    from sciagent_gym.envs.jmol import data

    family, formula, centre, ligand = compound
    golds = []
    for seed in range(4):
        gold = data.strained_workflow_crystal(tmp_path, np.random.default_rng(seed), family,
                                              formula, centre, ligand, polyhedra,
                                              "crystal.cif", 8)
        back = Structure.from_file(str(tmp_path / "crystal.cif"))
        assert len(back) == gold["nsites"] and gold["cells_sites"] == 8 * gold["nsites"]
        assert gold["strain"] != "none" and gold["formula"] == formula
        if polyhedra:
            assert gold["centre_cn"] >= 4
            assert min(abs(gold["angle"] - x) for x in strained.IDEAL_ANGLES) >= 0.5
        golds.append(gold)
    assert len({g["bond"] for g in golds}) == 4
    assert len({g["angle"] for g in golds}) == 4 or not polyhedra  # a strained cube stays square
    assert max(g["bond"] for g in golds) - min(g["bond"] for g in golds) > 0.02
    for spec_id, compounds in (("jmol/supercell-bond-report-workflow", 15),
                               ("jmol/coordination-figure-workflow", 8)):
        spec = SPECS[spec_id]
        assert spec.generate[0].args["strained"] is True
        assert len(spec.params["c"]["choice"]) >= compounds
