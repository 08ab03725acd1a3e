"""Avogadro's tasks offline: the molecule and crystal generators' gold, the bounded readers of
saved files, and each file task's criteria on the files an oracle and a wrong attempt would
leave.

Avogadro itself is not needed here: the files are written with numpy from the gold (what Add
Hydrogens, Remove All Hydrogens, Build Supercell, Scale Cell Volume, Edit Unit Cell and Wrap
Atoms produce), the way the end-to-end audit's GUI oracles make them with the real program.
Agent-written files may be anything, so the readers are fed junk too.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sciagent_gym.evaluation import FinalState, evaluate
from sciagent_gym.tasks.task import Task
from sciagent_gym.tools import load_adapter, load_tool_getters, load_tool_specs

load_tool_getters("avogadro")

from sciagent_gym.envs.avogadro import data  # noqa: E402
from sciagent_gym.envs.avogadro.getters import NUMBER, read_structure  # noqa: E402

SPECS = load_tool_specs("avogadro")


def _stage(task_id: str, tmp_path: Path, seed: int = 0) -> tuple[Task, Path]:
    work = tmp_path / "work"
    task = Task(SPECS[task_id], seed, load_adapter("avogadro").generators,
                {"work": str(work), "home": "/h", "tmp": "/t"})
    task.stage(work)
    return task, work


def _score(task: Task, work: Path, answer: str | None = None, status: str = "done"):
    return evaluate(task.criteria(), FinalState(work_dir=work, app_state=None,
                                                agent_status=status, answer=answer))


def _cjson(path: Path, elements: list[str], xyz, cell=None) -> None:
    doc = {"chemicalJson": 1, "atoms": {"elements": {"number": [NUMBER[e] for e in elements]},
                                        "coords": {"3d": np.asarray(xyz).ravel().tolist()}}}
    if cell is not None:
        doc["unitCell"] = {"cellVectors": np.asarray(cell).ravel().tolist()}
    path.write_text(json.dumps(doc))


# -- generators --------------------------------------------------------------------------------


def test_aryl_geometry_is_what_the_gold_says(tmp_path):
    gold = data.aryl(tmp_path, np.random.default_rng(3), "Br", "a.cjson", row=4)
    doc = json.loads((tmp_path / "a.cjson").read_text())
    xyz = np.array(doc["atoms"]["coords"]["3d"]).reshape(-1, 3)
    assert doc["atoms"]["elements"]["number"][6] == 35
    assert data.distance(xyz, 0, 6) == pytest.approx(gold["cx"], abs=1e-4)
    assert gold["formula"] == "C6H5Br" and gold["heavy_formula"] == "C6Br"
    # the C-Br bond is listed as bond number 4
    assert doc["bonds"]["connections"]["index"][6:8] == [0, 6]


def test_dihaloethane_torsion_matches_its_gold(tmp_path):
    for conf, (lo, hi) in (("gauche", (55, 80)), ("anti", (160, 179))):
        gold = data.dihaloethane(tmp_path, np.random.default_rng(5), "Cl", conf, "d.cjson")
        xyz = np.array(json.loads((tmp_path / "d.cjson").read_text())["atoms"]["coords"]["3d"])
        xyz = xyz.reshape(-1, 3)
        assert abs(data.dihedral(xyz, 2, 0, 1, 3)) == pytest.approx(gold["abs_torsion"], abs=1e-2)
        assert lo - 0.01 <= gold["abs_torsion"] <= hi + 0.01


def test_skeleton_keeps_its_z_matrix_geometry(tmp_path):
    gold = data.skeleton(tmp_path, np.random.default_rng(0), "acetone", "s.cjson")
    xyz = np.array(gold["coords"]).reshape(-1, 3)
    assert gold["elements"] == ["C", "C", "O", "C"] and gold["formula"] == "C3H6O"
    assert data.distance(xyz, 1, 2) == pytest.approx(1.213, rel=0.02)
    assert data.angle(xyz, 0, 1, 3) == pytest.approx(117.0, rel=0.02)


def test_snapshot_atoms_are_outside_and_the_same_crystal(tmp_path):
    gold = data.crystal(tmp_path, np.random.default_rng(2), "rutile", "TiO2", "s.poscar",
                        outside=3)
    lines = (tmp_path / "s.poscar").read_text().splitlines()
    assert lines[7] == "Cartesian"
    cart = np.array([[float(v) for v in line.split()] for line in lines[8:]])
    frac = cart @ np.linalg.inv(np.array(gold["lattice"]))
    outside = ((frac < -1e-3) | (frac > 1 + 1e-3)).any(axis=1)
    assert outside.sum() == gold["n_outside"] == 3
    assert np.allclose(np.mod(frac, 1.0), gold["frac"], atol=1e-5)


# -- readers -----------------------------------------------------------------------------------


JUNK = ["", "{", "[]", '{"atoms": 3}', "x" * 100, '{"atoms": {"elements": {"number": [999]}}}',
        '{"atoms": {"elements": {"number": [6]}, "coords": {"3d": [1]}}}']


@pytest.mark.parametrize("text", JUNK)
def test_junk_cjson_is_refused(tmp_path, text):
    from sciagent_gym.evaluation import GetterError

    (tmp_path / "j.cjson").write_text(text)
    with pytest.raises(GetterError):
        read_structure(FinalState(work_dir=tmp_path, app_state=None), "j.cjson")


def test_cml_with_entities_is_refused_and_plain_cml_is_read(tmp_path):
    from sciagent_gym.evaluation import GetterError

    state = FinalState(work_dir=tmp_path, app_state=None)
    (tmp_path / "bomb.cml").write_text('<?xml version="1.0"?><!DOCTYPE m [<!ENTITY a "aaaa">]>'
                                       "<molecule>&a;</molecule>")
    with pytest.raises(GetterError):
        read_structure(state, "bomb.cml")
    (tmp_path / "ok.cml").write_text(
        '<molecule xmlns="http://www.xml-cml.org/schema"><atomArray>'
        '<atom id="a1" elementType="C" x3="0" y3="0" z3="0"/>'
        '<atom id="a2" elementType="O" x3="1.2" y3="0" z3="0"/></atomArray></molecule>')
    saved = read_structure(state, "ok.cml")
    assert saved.elements == ["C", "O"] and saved.xyz[1, 0] == pytest.approx(1.2)


# -- the tasks' criteria on right and wrong files ------------------------------------------------


def test_add_hydrogens_pays_for_the_complete_molecule_only(tmp_path):
    task, work = _stage("avogadro/add-hydrogens", tmp_path)
    gold = task.gold["m"]
    heavy = np.array(gold["coords"]).reshape(-1, 3)
    _cjson(work / "complete.cjson", gold["elements"], heavy)
    assert _score(task, work).score == 0
    n_h = int(gold["formula"].split("H")[1].split("N")[0].split("O")[0] or 1)
    ups = ([0.0, 0.0, 1.09], [0.0, 0.0, -1.09], [0.0, 1.09, 0.0])
    hs = [heavy[k % len(heavy)] + ups[k // len(heavy)] for k in range(n_h)]
    _cjson(work / "complete.cjson", gold["elements"] + ["H"] * n_h, [*heavy, *hs])
    result = _score(task, work)
    assert result.score == pytest.approx(1.0) and result.success


def test_supercell_criteria_need_the_repeats_in_the_right_axes(tmp_path):
    task, work = _stage("avogadro/supercell", tmp_path, seed=1)
    gold, reps = task.gold["c"], task.params["r"]["list"]
    lattice = np.array(gold["lattice"])
    species, cart = [], []
    for i, j, k in np.ndindex(*reps):
        for el, f in zip(gold["species"], gold["frac"], strict=True):
            species.append(el)
            cart.append((np.array(f) + [i, j, k]) @ lattice)
    big = lattice * np.array(reps)[:, None]
    _cjson(work / "supercell.cjson", species, cart, big)
    assert _score(task, work).success
    _cjson(work / "supercell.cjson", gold["species"], np.array(gold["frac"]) @ lattice, lattice)
    assert _score(task, work).score == 0
    # the right number of cells along the wrong axes: the atom count is a real part of the work
    # (partial credit), the cell and the sites are not
    swapped = reps[::-1]
    if swapped != reps:
        species, cart = [], []
        for i, j, k in np.ndindex(*swapped):
            for el, f in zip(gold["species"], gold["frac"], strict=True):
                species.append(el)
                cart.append((np.array(f) + [i, j, k]) @ lattice)
        _cjson(work / "supercell.cjson", species, cart, lattice * np.array(swapped)[:, None])
        result = _score(task, work)
        assert 0 < result.score < 0.5 and not result.success


def test_scale_volume_fails_when_the_atoms_stay_behind(tmp_path):
    task, work = _stage("avogadro/scale-cell-volume", tmp_path, seed=2)
    gold, f = task.gold["c"], task.params["v"]["f"]
    lattice = np.array(gold["lattice"])
    scaled = lattice * f ** (1 / 3)
    frac = np.array(gold["frac"])
    _cjson(work / "scaled.cjson", gold["species"], frac @ scaled, scaled)
    assert _score(task, work).success
    _cjson(work / "scaled.cjson", gold["species"], frac @ lattice, scaled)
    left_behind = _score(task, work)
    assert not left_behind.success and 0 < left_behind.score < 1  # the cell is scaled
    _cjson(work / "scaled.cjson", gold["species"], frac @ lattice, lattice)
    assert _score(task, work).score == 0  # saved unchanged: nothing of the work done


def test_infeasible_task_pays_only_for_fail(tmp_path):
    task, work = _stage("avogadro/phenol-oh-bond", tmp_path)
    assert _score(task, work, status="fail").success
    assert not _score(task, work, answer="0.97 Å", status="fail").success
    assert not _score(task, work, status="done").success


# -- the long-horizon tasks' stages -------------------------------------------------------------


def _cml(path: Path, elements: list[str], xyz) -> None:
    atoms = "".join(f'<atom id="a{i + 1}" elementType="{e}" x3="{x:.5f}" y3="{y:.5f}" '
                    f'z3="{z:.5f}"/>' for i, (e, (x, y, z)) in
                    enumerate(zip(elements, np.asarray(xyz).reshape(-1, 3), strict=True)))
    path.write_text('<molecule xmlns="http://www.xml-cml.org/schema"><atomArray>'
                    f"{atoms}</atomArray></molecule>")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_halogen_swap_workup_scores_each_stage(tmp_path, seed):
    task, work = _stage("avogadro/halogen-swap-workup", tmp_path, seed=seed)
    gold, s = task.gold["m"], task.params["s"]
    assert not task.spec.open  # the agent opens the file through File > Open
    assert len({s["x"], s["y"], s["z"]}) == 3
    answer = f"{gold['cx']:.2f} Å"
    # weights: measure 1, swap 2, second swap 2, skeleton 2
    # stopped after the measurement (the stopped-after-measure negative): 1 of 7
    assert _score(task, work, answer=answer).score == pytest.approx(1 / 7)
    # the first analogue saved too (stopped-after-swap): 3 of 7
    _cjson(work / f"{s['yname']}.cjson", gold["swapped_elements"], gold["coords"])
    assert _score(task, work, answer=answer).score == pytest.approx(3 / 7)
    # the second analogue saved too (stopped-after-second-swap): 5 of 7
    _cjson(work / f"{s['zname']}.cjson", gold["swapped2_elements"], gold["coords"])
    assert _score(task, work, answer=answer).score == pytest.approx(5 / 7)
    # the skeleton saved with its hydrogens still in (skeleton-with-hydrogens): 6 of 7
    _cml(work / f"skeleton_{s['zname']}.cml", gold["swapped2_elements"], gold["coords"])
    assert _score(task, work, answer=answer).score == pytest.approx(6 / 7)
    # the whole workflow
    _cml(work / f"skeleton_{s['zname']}.cml", gold["swapped2_heavy_elements"],
         gold["heavy_coords"])
    full = _score(task, work, answer=answer)
    assert full.score == 1.0 and full.success
    # without the measurement nothing downstream counts (swapped-without-measuring)
    assert _score(task, work).score == 0.0
    # the second file holds the first analogue (the second swap not done): that stage fails
    # and blocks the skeleton
    _cjson(work / f"{s['zname']}.cjson", gold["swapped_elements"], gold["coords"])
    assert _score(task, work, answer=answer).score == pytest.approx(3 / 7)
    # the original halogen kept, or a ring carbon changed: the swap stage fails
    _cjson(work / f"{s['zname']}.cjson", gold["swapped2_elements"], gold["coords"])
    _cjson(work / f"{s['yname']}.cjson", gold["elements"], gold["coords"])
    assert _score(task, work, answer=answer).score == pytest.approx(1 / 7)


def _crystal_file(path: Path, gold: dict, scale: float = 1.0, reps=(1, 1, 1),
                  shift: bool = False) -> None:
    """The crystal as Avogadro saves it: ``scale`` the volume factor, ``reps`` the supercell;
    with ``shift`` the first atom is left one cell out (not wrapped)."""
    lattice = np.array(gold["lattice"]) * scale ** (1 / 3)
    species, frac = [], []
    for i, j, k in np.ndindex(*reps):
        for el, f in zip(gold["species"], gold["frac"], strict=True):
            species.append(el)
            frac.append((np.array(f) + [i, j, k]) / reps)
    frac = np.array(frac)
    if shift:  # a whole cell out along a, well clear of the face
        frac[0] += [-1.0 if frac[0][0] < 0.5 else 1.0, 0.0, 0.0]
    big = lattice * np.array(reps)[:, None]
    _cjson(path, species, frac @ big, big)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pressure_defect_prep_scores_each_stage(tmp_path, seed):
    task, work = _stage("avogadro/pressure-defect-prep", tmp_path, seed=seed)
    gold, f, reps = task.gold["c"], task.params["v"]["f"], task.params["r"]["list"]
    assert not task.spec.open  # the agent opens the snapshot through File > Open
    # the snapshot really has atoms outside its cell, and the gold volume is the product
    snap = read_structure(FinalState(work_dir=work, app_state=None), "snapshot.cjson")
    frac = snap.xyz @ np.linalg.inv(snap.cell)
    assert ((frac < -1e-3) | (frac > 1 + 1e-3)).any()
    assert gold["supercell_volume"] == pytest.approx(
        abs(np.linalg.det(np.array(gold["lattice"]))) * f * np.prod(reps), rel=1e-6)
    answer = f"{gold['supercell_volume']:.2f} Å³"
    # stopped after wrapping (stopped-after-wrap): 1 of 4
    _crystal_file(work / "wrapped.cjson", gold)
    assert _score(task, work).score == pytest.approx(0.25)
    # and after compressing (stopped-after-compress): 2 of 4
    _crystal_file(work / "compressed.cjson", gold, scale=f)
    assert _score(task, work).score == pytest.approx(0.5)
    # the whole workflow
    _crystal_file(work / "supercell.cjson", gold, scale=f, reps=reps)
    full = _score(task, work, answer=answer)
    assert full.score == 1.0 and full.success
    # the supercell built from the uncompressed cell (supercell-not-compressed: no
    # compressed.cjson, or the uncompressed cell saved under its name): the compress stage
    # fails and blocks everything after it: 1 of 4
    (work / "compressed.cjson").unlink()
    _crystal_file(work / "supercell.cjson", gold, reps=reps)
    assert _score(task, work, answer=answer).score == pytest.approx(0.25)
    _crystal_file(work / "compressed.cjson", gold)
    assert _score(task, work, answer=answer).score == pytest.approx(0.25)
    # the snapshot copied as wrapped.cjson (input-copied), or a compressed copy without the
    # atoms following the cell: the stage earns nothing
    (work / "wrapped.cjson").write_bytes((work / "snapshot.cjson").read_bytes())
    assert _score(task, work, answer=answer).score == 0.0
    _crystal_file(work / "wrapped.cjson", gold)
    lattice = np.array(gold["lattice"])
    _cjson(work / "compressed.cjson", gold["species"], np.array(gold["frac"]) @ lattice,
           lattice * f ** (1 / 3))
    assert _score(task, work, answer=answer).score == pytest.approx(0.25)
    # an unwrapped snapshot saved as wrapped.cjson (unwrapped-saved): nothing counts
    _crystal_file(work / "wrapped.cjson", gold, shift=True)
    _crystal_file(work / "compressed.cjson", gold, scale=f)
    _crystal_file(work / "supercell.cjson", gold, scale=f, reps=reps)
    assert _score(task, work, answer=answer).score == 0.0


# -- partial credit of the one-operation tasks (issue 33 item 5) --------------------------------


@pytest.mark.parametrize("seed", [0, 1])
def test_strip_hydrogens_pays_the_export_and_the_stripping(tmp_path, seed):
    task, work = _stage("avogadro/strip-hydrogens-cml", tmp_path, seed=seed)
    gold = task.gold["m"]
    assert _score(task, work).score == 0.0  # no-op: nothing saved
    # exported with its hydrogens (the hydrogens-kept negative): the skeleton only, 1 of 1.5
    _cml(work / "skeleton.cml", gold["elements"], gold["coords"])
    kept = _score(task, work)
    assert kept.score == pytest.approx(0.5 / 1.5) and not kept.success
    # the heavy atoms moved (a changed-nothing gate): nothing counts
    _cml(work / "skeleton.cml", gold["heavy_elements"],
         np.array(gold["heavy_coords"]).reshape(-1, 3) + 0.2)
    assert _score(task, work).score == 0.0
    # one heavy atom deleted too: the gate fails
    _cml(work / "skeleton.cml", gold["heavy_elements"][:-1],
         np.array(gold["heavy_coords"]).reshape(-1, 3)[:-1])
    assert _score(task, work).score == 0.0
    _cml(work / "skeleton.cml", gold["heavy_elements"], gold["heavy_coords"])
    full = _score(task, work)
    assert full.score == 1.0 and full.success


@pytest.mark.parametrize("seed", [0, 1])
def test_wrap_atoms_pays_the_converted_crystal_and_the_wrapping(tmp_path, seed):
    task, work = _stage("avogadro/wrap-atoms", tmp_path, seed=seed)
    gold = task.gold["c"]
    assert _score(task, work).score == 0.0  # no-op: nothing saved
    # saved unwrapped (the saved-unwrapped negative): the conversion only, 0.5 of 1.5
    _crystal_file(work / "wrapped.cjson", gold, shift=True)
    unwrapped = _score(task, work)
    assert unwrapped.score == pytest.approx(0.5 / 1.5) and not unwrapped.success
    # a different cell, or the atoms elsewhere: no stage passes
    _crystal_file(work / "wrapped.cjson", gold, scale=1.05)
    assert _score(task, work).score == 0.0
    lattice = np.array(gold["lattice"])
    frac = np.array(gold["frac"])
    _cjson(work / "wrapped.cjson", gold["species"], ((frac + 0.1) % 1.0) @ lattice, lattice)
    assert _score(task, work).score == 0.0
    _crystal_file(work / "wrapped.cjson", gold)
    full = _score(task, work)
    assert full.score == 1.0 and full.success


def test_add_hydrogens_with_the_heavy_atoms_moved_earns_nothing(tmp_path):
    """The changed-nothing gate comes before the weighted criteria, so it gates them (a gate
    only skips the criteria after it)."""
    task, work = _stage("avogadro/add-hydrogens", tmp_path)
    gold = task.gold["m"]
    heavy = np.array(gold["coords"]).reshape(-1, 3) + 0.3
    n_h = int(gold["formula"].split("H")[1].split("N")[0].split("O")[0] or 1)
    ups = ([0.0, 0.0, 1.09], [0.0, 0.0, -1.09], [0.0, 1.09, 0.0])
    hs = [heavy[k % len(heavy)] + ups[k // len(heavy)] for k in range(n_h)]
    _cjson(work / "complete.cjson", gold["elements"] + ["H"] * n_h, [*heavy, *hs])
    assert _score(task, work).score == 0.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_eos_volume_pair_scores_each_file_and_the_volume(tmp_path, seed):
    task, work = _stage("avogadro/eos-volume-pair", tmp_path, seed=seed)
    gold, v = task.gold["c"], task.params["v"]
    assert not task.spec.open  # the agent opens relaxed.cjson through File > Open
    assert float(v["ratio"]) == pytest.approx(v["fhi"] / v["flo"], abs=1e-5)
    assert gold["supercell_volume"] == pytest.approx(
        abs(np.linalg.det(np.array(gold["lattice"]))) * v["fhi"], rel=1e-6)
    answer = f"{gold['supercell_volume']:.2f} Å³"
    assert _score(task, work).score == 0.0
    # the answer alone (the answer-without-the-files cheat) is blocked by the expanded cell
    assert _score(task, work, answer=answer).score == 0.0
    # stopped after the compressed crystal: cell and atoms, 2 of 5
    _crystal_file(work / "compressed.cjson", gold, scale=v["flo"])
    assert _score(task, work).score == pytest.approx(0.4)
    # expanded by hi % of the compressed cell, not of the relaxed one: that file fails
    _crystal_file(work / "expanded.cjson", gold, scale=v["flo"] * v["fhi"])
    wrong = f"{gold['supercell_volume'] * v['flo']:.2f} Å³"
    assert _score(task, work, answer=wrong).score == pytest.approx(0.4)
    # the cells scaled with the atoms left behind: the cells and the volume, 3 of 5
    lattice = np.array(gold["lattice"])
    for name, f in (("compressed.cjson", v["flo"]), ("expanded.cjson", v["fhi"])):
        _cjson(work / name, gold["species"], np.array(gold["frac"]) @ lattice,
               lattice * f ** (1 / 3))
    assert _score(task, work, answer=answer).score == pytest.approx(0.6)
    _crystal_file(work / "compressed.cjson", gold, scale=v["flo"])
    _crystal_file(work / "expanded.cjson", gold, scale=v["fhi"])
    full = _score(task, work, answer=answer)
    assert full.score == 1.0 and full.success


def _c_strained_file(path: Path, gold: dict, c_len: float, atoms_follow: bool = True) -> None:
    lattice = np.array(gold["lattice"])
    strained = lattice.copy()
    strained[2] *= c_len / np.linalg.norm(lattice[2])
    frac = np.array(gold["frac"])
    _cjson(path, gold["species"], frac @ (strained if atoms_follow else lattice), strained)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_c_axis_strain_pair_scores_each_file_and_the_volume(tmp_path, seed):
    task, work = _stage("avogadro/c-axis-strain-pair", tmp_path, seed=seed)
    gold, c = task.gold["c"], task.params["c"]
    assert not task.spec.open  # the agent opens relaxed.cjson through File > Open
    lattice = np.array(gold["lattice"])
    c0 = float(np.linalg.norm(lattice[2]))
    assert c["lo_n"] < c0 < c["hi_n"]  # the pair brackets the seeded relaxed c
    assert gold["c_length_volume"] == pytest.approx(
        abs(np.linalg.det(lattice)) * c["lo_n"] / c0, rel=1e-6)
    answer = f"{gold['c_length_volume']:.2f} Å³"
    assert _score(task, work).score == 0.0
    assert _score(task, work, answer=answer).score == 0.0  # answer-without-the-files
    # stopped after the stretched crystal: 2 of 5
    _c_strained_file(work / "stretched.cjson", gold, c["hi_n"])
    assert _score(task, work).score == pytest.approx(0.4)
    # the atoms left where they were: the cells and the volume, 3 of 5
    _c_strained_file(work / "stretched.cjson", gold, c["hi_n"], atoms_follow=False)
    _c_strained_file(work / "compressed.cjson", gold, c["lo_n"], atoms_follow=False)
    assert _score(task, work, answer=answer).score == pytest.approx(0.6)
    # a set to the short length instead of c (a-set-instead-of-c): that file fails
    _c_strained_file(work / "stretched.cjson", gold, c["hi_n"])
    short_a = lattice.copy()
    short_a[0] *= c["lo_n"] / np.linalg.norm(lattice[0])
    _cjson(work / "compressed.cjson", gold["species"], np.array(gold["frac"]) @ short_a, short_a)
    assert _score(task, work, answer=answer).score == pytest.approx(0.4)
    _c_strained_file(work / "compressed.cjson", gold, c["lo_n"])
    full = _score(task, work, answer=answer)
    assert full.score == 1.0 and full.success
