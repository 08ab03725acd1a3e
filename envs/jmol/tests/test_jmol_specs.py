"""Offline checks of the Jmol task specs, their crystal generators and the Jmol getters.

No X display needed: specs are staged into tmp_path (gold values from pymatgen; the figure
task's reference image from headless Jmol, JmolData), the state-dump summary is fed raw dumps
written here, and the getters get summaries with missing and malformed parts, which must become
failed criteria, not exceptions.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import requires

from sciagent_gym.evaluation import Criterion, FinalState, evaluate
from sciagent_gym.tasks.spec import TaskSpec
from sciagent_gym.tasks.task import Task
from sciagent_gym.tools import load_adapter, load_tool_getters, load_tool_specs

pytestmark = requires(tool="jmol")

load_tool_getters("jmol")

from sciagent_gym.envs.jmol import data  # noqa: E402
from sciagent_gym.envs.jmol.adapter import summarise  # noqa: E402

SPECS: dict[str, TaskSpec] = load_tool_specs("jmol")
SANDBOX = {"home": "/home/user", "tmp": "/tmp"}


def make_task(spec: TaskSpec, seed: int, work: Path) -> Task:
    return Task(spec, seed, data.GENERATORS, {**SANDBOX, "work": str(work)})


def test_specs_cover_the_required_kinds_of_task():
    assert len(SPECS) >= 12
    assert {s.difficulty for s in SPECS.values()} == {"easy", "medium", "hard"}
    assert sum(s.infeasible for s in SPECS.values()) == 1
    console = [s for s in SPECS.values() if "scripting" in s.tags]
    assert len(console) >= 2 and all(s.modality == "gui" for s in console)
    assert load_adapter("jmol").generators == data.GENERATORS


@pytest.mark.parametrize(("family", "formula"), [
    ("rocksalt", "NaCl"), ("perovskite", "SrTiO3"), ("spinel", "ZnFe2O4"),
    ("wurtzite", "GaN"), ("rutile", "MgF2"), ("fluorite", "CaF2")])
def test_crystal_gold_is_the_named_compound_with_its_chemistry(family, formula, tmp_path):
    gold = data.crystal(tmp_path, np.random.default_rng(1), family, formula)
    assert gold["formula"] == formula and gold["family"] == family
    text = (tmp_path / "crystal.cif").read_text()
    assert "_symmetry_space_group_name_H-M" in text and f"{gold['a']:.3f}" in text
    assert sum(gold["counts"].values()) == gold["nsites"]
    assert gold["volume_nm3"] == pytest.approx(gold["volume"] / 1000, abs=1e-6)


def test_crystal_known_geometry(tmp_path):
    rng = np.random.default_rng(3)
    g = data.crystal(tmp_path, rng, "perovskite", "SrTiO3", centre="Ti", ligand="O",
                     species="O", cells=8)
    assert g["bond"] == pytest.approx(g["a"] / 2, abs=1e-3)  # Ti-O = a/2
    assert g["centre_cn"] == 6 and g["angle"] == pytest.approx(90.0, abs=1e-3)
    assert g["species_count"] == 3 and g["cells_sites"] == 40
    g = data.crystal(tmp_path, rng, "rocksalt", "NaCl", centre="Na", ligand="Cl")
    assert g["bond"] == pytest.approx(g["a"] / 2, abs=1e-3) and g["centre_cn"] == 6
    g = data.crystal(tmp_path, rng, "fluorite", "CaF2", centre="Ca", ligand="F", species="Ca")
    assert g["centre_cn"] == 8 and g["species_count"] == 4
    assert g["angle"] == pytest.approx(70.529, abs=0.01)  # the cube's edge angle
    with pytest.raises(ValueError, match="no compound"):
        data.crystal(tmp_path, rng, "rocksalt", "SrTiO3")


def test_lattice_jitter_is_seeded(tmp_path):
    a = [data.crystal(tmp_path, np.random.default_rng(s), "rutile", "TiO2")["a"] for s in (1, 1, 2)]
    assert a[0] == a[1] != a[2]


@pytest.mark.parametrize("spec_id", sorted(SPECS))
def test_every_variant_stages(spec_id, tmp_path):
    spec = SPECS[spec_id]
    for seed in range(2):
        work = tmp_path / f"seed{seed}"
        task = make_task(spec, seed, work)
        try:
            task.stage(work)
            assert (work / "crystal.cif").is_file()
            assert task.criteria()
        finally:
            task.cleanup()


RAW = {
    "atoms": 5, "models": 1, "counts": {"Sr": 1, "Ti": 1, "O": 3},
    "styles": ["Sr 0.5 {0.0 255.0 0.0}", "Ti 0.4945 {191.0 194.0 199.0}",
               "O 0.35 {255.0 13.0 13.0}", "O 0.6 {255.0 255.0 0.0}"],
    "fxyz": [[0, 0, 0], [0.5, 0.5, 0.5], [0, 0.5, 0.5], [0.5, 0, 0.5], [0.5, 0.5, 0]],
    "hidden": 0, "cell": [3.9, 3.9, 3.9, 90, 90, 90, float("nan")],
    "spacegroup": "HM:Pm-3m", "spacegroup_number": "221", "file": "/w/crystal.cif",
    "show_unitcell": True, "show_axes": False, "background": "[xffffff]",
    "measurements": [{"type": "distance", "value": 1.95, "elements": "Ti O "},
                     {"type": "angle", "value": 90.0, "elements": "O Ti O "},
                     {"type": "distance", "value": 2.76, "elements": "Sr O "}],
    "polyhedra": [{"element": "Ti", "vertices": 6, "vertex_elements": [8] * 6}],
}


def test_summarise_turns_a_raw_dump_into_checkable_keys():
    s = summarise(RAW)
    assert s["cell"] == {"a": 3.9, "b": 3.9, "c": 3.9, "alpha": 90, "beta": 90, "gamma": 90}
    assert s["spacegroup"] == "Pm-3m" and s["spacegroup_number"] == 221
    assert s["background"] == [255, 255, 255]
    assert s["show"] == {"unitcell": True, "axes": False}
    assert s["radius"]["O"] == [0.35, 0.6] and s["color"]["O"] == [[255, 13, 13], [255, 255, 0]]
    assert s["measurements"][0]["elements"] == ["Ti", "O"]
    assert s["polyhedra"][0]["vertex_elements"] == ["O"] * 6


def test_summarise_survives_an_empty_viewer():
    s = summarise({"atoms": 0, "counts": {}, "styles": "", "cell": "", "spacegroup": "",
                   "spacegroup_number": "", "background": "", "measurements": "",
                   "polyhedra": ""})
    assert s["cell"] is None and s["spacegroup_number"] is None and s["fxyz"] is None
    assert s["measurements"] == [] and s["polyhedra"] == [] and s["background"] is None


def _score(tmp_path, app_state, getter, check):
    crit = Criterion.from_dict({"name": "c", "getter": getter, "check": check})
    state = FinalState(work_dir=tmp_path, app_state=app_state)
    return evaluate([crit], state).criteria[0]


def test_getters_read_supercells_polyhedra_and_measurements(tmp_path):
    s = summarise(RAW)
    one = _score(tmp_path, s, {"fn": "jmol_supercell", "n": 1, "key": "sites"},
                 {"op": "equals", "expected": 5})
    assert one.passed
    two = _score(tmp_path, s, {"fn": "jmol_supercell", "n": [2, 2, 2], "key": "sites"},
                 {"op": "equals", "expected": 40})
    assert not two.passed  # one cell is not a 2x2x2 supercell
    packed = dict(s, fxyz=[[x + i, y + j, z + k] for x, y, z in s["fxyz"]
                           for i in (0, 1) for j in (0, 1) for k in (0, 1)] + [[2, 2, 2]])
    assert _score(tmp_path, packed, {"fn": "jmol_supercell", "n": 2, "key": "sites"},
                  {"op": "equals", "expected": 40}).passed
    assert _score(tmp_path, packed, {"fn": "jmol_supercell", "n": 2, "key": "outside"},
                  {"op": "equals", "expected": 0}).passed
    assert _score(tmp_path, s, {"fn": "jmol_polyhedra", "element": "Ti", "key": "vertices"},
                  {"op": "list_equal", "expected": [6]}).passed
    assert _score(tmp_path, s, {"fn": "jmol_distance", "a": "O", "b": "Ti"},
                  {"op": "numeric", "expected": 1.95, "abs_tol": 0.01}).passed
    assert _score(tmp_path, s, {"fn": "jmol_angle", "vertex": "Ti", "ends": "O"},
                  {"op": "list_equal", "expected": [90.0]}).passed


@pytest.mark.parametrize(("getter", "why"), [
    ({"fn": "jmol_distance", "a": "Sr", "b": "Ti"}, "no Sr-Ti distance"),
    ({"fn": "jmol_angle", "vertex": "O", "ends": "Ti"}, "no Ti-O-Ti angle"),
    ({"fn": "jmol_supercell", "n": 2, "key": "sites"}, "no crystal"),
])
def test_getters_fail_as_criteria_not_exceptions(tmp_path, getter, why):
    empty = summarise({"atoms": 0})
    result = _score(tmp_path, empty, getter, {"op": "is_true"})
    assert not result.passed and why in result.detail
    missing = _score(tmp_path, None, getter, {"op": "is_true"})
    assert not missing.passed and "app state unavailable" in missing.detail


def test_the_figure_reference_is_rendered_by_headless_jmol(tmp_path):
    gold = data.view(tmp_path, np.random.default_rng(0), "wurtzite", "ZnO", axis="a")
    img = gold["render"]
    assert img.shape == (data.DISPLAY[1], data.DISPLAY[0], 3) and img.dtype == np.uint8
    assert (img == 255).all(axis=2).mean() > 0.5  # a white background
    assert (img.max(axis=2) - img.min(axis=2) > 60).any()  # coloured atoms drawn


# -- the long-horizon workflows: partial credit by stage (replayed on built final states) -------

def _block_dump(work: Path, gold: dict, lattice: list[int] | None) -> dict:
    """The state dump after the CIF is opened (``lattice`` None: its asymmetric unit only) or
    reloaded as a block of ``lattice`` cells."""
    from pymatgen.core import Structure

    s = Structure.from_file(str(work / "crystal.cif"))
    if lattice is None:
        fxyz = [list(map(float, s[0].frac_coords)), list(map(float, s[-1].frac_coords))]
    else:
        fxyz = [[float(q[0] + i), float(q[1] + j), float(q[2] + k)] for q in s.frac_coords
                for i in range(lattice[0]) for j in range(lattice[1]) for k in range(lattice[2])]
    cell = [gold[k] for k in ("a", "b", "c", "alpha", "beta", "gamma")]
    return summarise({"atoms": len(fxyz), "models": 1, "counts": {}, "styles": "", "fxyz": fxyz,
                      "cell": cell, "spacegroup": "", "spacegroup_number": "",
                      "file": f"file:{work}/crystal.cif", "background": "[x000000]",
                      "measurements": "", "polyhedra": ""})


@pytest.mark.parametrize(("spec_id", "block", "expected"), [
    ("jmol/supercell-bond-report-workflow", False, 1 / 7.5),
    ("jmol/supercell-bond-report-workflow", True, 2 / 7.5),
    ("jmol/coordination-figure-workflow", False, 1 / 8),
    ("jmol/coordination-figure-workflow", True, 2 / 8)])
def test_workflow_stage_negatives_give_partial_credit(spec_id, block, expected, tmp_path):
    """stops-after-open and stops-after-block of both long-horizon workflows."""
    spec = SPECS[spec_id]
    assert "long-horizon" in spec.tags and spec.difficulty == "hard" and not spec.open
    for seed in range(2):
        work = tmp_path / f"seed{seed}"
        task = make_task(spec, seed, work)
        try:
            task.stage(work)
            gold = task.gold["w"]
            assert 25 <= task.oracle_steps <= 60 and spec.max_steps >= 1.5 * task.oracle_steps
            dump = _block_dump(work, gold, gold["lattice"] if block else None)
            result = evaluate(task.criteria(), FinalState(work_dir=work, app_state=dump,
                                                          agent_status="done"))
            assert result.score == pytest.approx(expected), result
            assert not result.success
        finally:
            task.cleanup()


STATE = """# Jmol state version 14.32.83  2023-01-07 08:24;
function _setFileState() {
  load /*file*/"/home/user/work/crystal.cif" /*options*/  {3.0 3.0 3.0};
}
function _setVariableState() {
  background [xffffff];
  measures delete;
  measure ({3}) ({0}) ({5});
  polyhedron @{{ "faces":[ [ 0,1,2 ] ],"elemNos":[ 8,8,8,8,8,8 ],"vertexCount":6,"atomIndex":2 }} ;
  polyhedron @{{ "faces":[ [ 0,1,2 ] ],"elemNos":[ 8,8,8,8,8,8 ],"vertexCount":6,"atomIndex":9 }} ;
}
"""


def test_state_and_xyz_getters_read_what_jmol_writes(tmp_path):
    (tmp_path / "s.spt").write_text(STATE)
    (tmp_path / "b.xyz").write_text("3\nModel[1]\nTi 0 0 0\nO 1.95 0 0\nO 0 0 2.5\n")
    (tmp_path / "bad.xyz").write_text("5\nModel\nTi 0 0 0\n")
    assert _score(tmp_path, None, {"fn": "jmol_state_file", "path": "s.spt"},
                  {"op": "equals", "expected": {"file": "crystal.cif", "lattice": [3, 3, 3],
                                                "measures": 1, "background": [255, 255, 255],
                                                "polyhedra": 2, "vertices": [6]}}).passed
    assert _score(tmp_path, None, {"fn": "jmol_xyz", "path": "b.xyz", "a": "Ti", "b": "O"},
                  {"op": "equals", "expected": {"atoms": 3, "counts": {"O": 2, "Ti": 1},
                                                "shortest": 1.95}}).passed
    bad = _score(tmp_path, None, {"fn": "jmol_xyz", "path": "bad.xyz", "key": "atoms"},
                 {"op": "is_true"})
    assert not bad.passed and "5 atoms announced" in bad.detail
    (tmp_path / "fake.spt").write_text('load "crystal.cif" {3 3 3}\n')
    fake = _score(tmp_path, None, {"fn": "jmol_state_file", "path": "fake.spt", "key": "file"},
                  {"op": "is_true"})
    assert not fake.passed and "not a Jmol state" in fake.detail
