"""Offline checks of the PyMOL task specs, their data generators and the PyMOL getters.

No X display or GUI needed: specs are loaded and staged into tmp_path (the gold values come
from headless PyMOL, the system ``python3`` with ``pymol2``); the getters are fed files written
here, including missing and malformed ones, which must become failed criteria, not exceptions.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from sciagent_gym.evaluation import GETTERS, Criterion, FinalState, evaluate
from sciagent_gym.tasks.spec import TaskSpec, load_specs
from sciagent_gym.tasks.task import Task
from sciagent_gym.tools import load_adapter, load_tool_getters, task_specs_root

pytestmark = pytest.mark.skipif(shutil.which("pymol") is None, reason="PyMOL not installed")

load_tool_getters("pymol")

from sciagent_gym.envs.pymol import data  # noqa: E402
from sciagent_gym.envs.pymol.getters import parse_pdb  # noqa: E402

SPECS: dict[str, TaskSpec] = load_specs(task_specs_root(), "pymol")
SPEC_IDS = sorted(SPECS)
SEEDS = range(3)
SANDBOX = {"home": "/home/user", "tmp": "/tmp"}


def make_task(spec: TaskSpec, seed: int, work: Path, hints: bool = False) -> Task:
    return Task(spec, seed, data.GENERATORS, {**SANDBOX, "work": str(work)}, hints=hints)


def test_all_pymol_specs_load():
    assert len(SPECS) >= 10
    for spec_id, spec in SPECS.items():
        assert spec.tool == "pymol"
        assert Path(spec.source).stem == spec.slug, spec_id
    assert {s.difficulty for s in SPECS.values()} == {"easy", "medium", "hard"}
    assert any(s.infeasible for s in SPECS.values())


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_stage_writes_inputs_and_gold(spec_id, tmp_path):
    spec = SPECS[spec_id]
    for seed in SEEDS:
        work = tmp_path / f"seed{seed}"
        task = make_task(spec, seed, work)
        task.stage(work)
        for name in (*spec.protect, *spec.open):
            assert (work / name).is_file(), name
        assert set(task.gold) == {g.name for g in spec.generate}
        for values in task.gold.values():
            for key, value in values.items():
                if isinstance(value, float):
                    assert math.isfinite(value), key
        assert task.criteria()
        assert task.steps("oracle")
        for name in spec.negatives:
            for step in task.steps(name):
                text = step if isinstance(step, str) else str(next(iter(step.values())))
                assert "$gold" not in text and "{" not in text, (name, text)
        for hints in (False, True):
            text = make_task(spec, seed, work, hints=hints).instruction
            assert "{" not in text and "}" not in text and "$gold" not in text, text
        # the gold never lands in the sandbox's work dir: only the copied inputs are there
        assert sorted(p.name for p in work.iterdir()) == sorted(set(spec.protect) | set(spec.open))


def test_gold_values_match_known_structure_facts(tmp_path):
    rng = np.random.default_rng(0)
    tii = data.structure(tmp_path, rng, "1tii.pdb")
    assert tii["atoms"] == tii["polymer"] + tii["solvent"] and tii["solvent"] > 0
    assert tii["chains"] == ["A", "C", "D", "E", "F", "G", "H"]
    hpv = data.structure(tmp_path, rng, "1hpv.pdb")
    assert hpv["organic"] > 0 and hpv["organic_carbons"] < hpv["organic"]
    pocket = data.contacts(tmp_path, rng, "1hpv.pdb", "resn 478", 4.0)
    assert 0 < pocket["residues"] < pocket["residues_wider"]
    assert pocket["atoms_only"] < pocket["atoms"]
    al = data.chain_alignment(tmp_path, rng, "1tii.pdb", "D", "G")
    assert 0 < al["rmsd"] < 1.0 < al["rmsd_unaligned"]
    assert al["rmsd"] <= al["rmsd_before_rejection"]
    d = data.ca_distance(tmp_path, rng, "1hpv.pdb", 25)
    assert d["resn"] == "ASP" and 3.0 < d["distance"] < 20.0
    assert data.colour(tmp_path, rng, "white")["rgb8"] == [255, 255, 255]


def test_parse_pdb_counts_chains_waters_and_rejects_junk():
    text = ("ATOM      1  CA  ALA A   1      11.104   6.134  -6.504  1.00  0.00           C\n"
            "ATOM      2  CA  GLY B   2      11.104   6.134  -6.504  1.00  0.00           C\n"
            "HETATM    3  O   HOH     3      11.104   6.134  -6.504  1.00  0.00           O\n"
            "HETATM    4  C1  LIG A 101      11.104   6.134  -6.504  1.00  0.00           C\n")
    out = parse_pdb(text)
    assert out["atoms"] == 4 and out["waters"] == 1 and out["hetero"] == 1
    assert out["chains"] == ["", "A", "B"] and out["residues"] == 4
    from sciagent_gym.evaluation import GetterError

    with pytest.raises(GetterError):
        parse_pdb("hello world\n")


def _evaluate(tmp_path: Path, getter: dict, check: dict) -> tuple[bool, str]:
    crit = Criterion.from_dict({"name": "c", "weight": 1, "getter": getter, "check": check})
    result = evaluate([crit], FinalState(work_dir=tmp_path))
    return result.criteria[0].passed, result.criteria[0].detail


@pytest.mark.parametrize("getter", [
    {"fn": "pdb_summary", "path": "x.pdb", "key": "atoms"},
    {"fn": "number_in_file", "path": "x.txt"},
    {"fn": "pymol_session", "path": "x.pse", "key": "objects"},
    {"fn": "image_corner_rgb", "path": "x.png"},
])
def test_getters_fail_cleanly_on_missing_and_malformed_files(tmp_path, getter):
    assert getter["fn"] in GETTERS
    check = {"op": "equals", "expected": 1}
    passed, detail = _evaluate(tmp_path, getter, check)
    assert not passed and "not found" in detail
    (tmp_path / getter["path"]).write_bytes(b"\x00\x01junk\xff" * 10)
    passed, _ = _evaluate(tmp_path, getter, check)
    assert not passed
    (tmp_path / getter["path"]).write_text("no numbers or atoms here\n")
    passed, _ = _evaluate(tmp_path, getter, check)
    assert not passed


def test_number_in_file_reads_the_first_number(tmp_path):
    (tmp_path / "r.txt").write_text("RMSD = 0.249 A (96 atoms)\n")
    assert _evaluate(tmp_path, {"fn": "number_in_file", "path": "r.txt"},
                     {"op": "numeric", "expected": 0.249, "abs_tol": 1e-9})[0]


def test_pymol_session_reads_a_real_session(tmp_path):
    code = ("cmd.load('/usr/share/pymol/data/demo/pept.pdb', 'pept')\n"
            "cmd.hide('everything')\ncmd.show('sticks')\ncmd.select('core', 'resi 2-4')\n"
            f"cmd.save({str(tmp_path / 's.pse')!r})\nout = 1")
    data.run_headless(code)
    getter = {"fn": "pymol_session", "path": "s.pse", "key": "sticks.pept"}
    assert _evaluate(tmp_path, getter, {"op": "equals", "expected": 107})[0]
    getter = {"fn": "pymol_session", "path": "s.pse", "key": "lines.pept"}
    assert _evaluate(tmp_path, getter, {"op": "equals", "expected": 0})[0]


def test_adapter_launches_pymol_with_its_inputs():
    adapter = load_adapter("pymol")

    class P:
        paths = {"work": "/home/user/work", "home": "/home/user", "tmp": "/tmp"}

    spec = SPECS["pymol/color-chain"]
    argv = adapter.launch_argv(P(), make_task(spec, 0, Path("/nonexistent")))
    assert argv[0] == "pymol" and "-R" in argv and argv[-1] == "/home/user/work/1tii.pdb"
    assert adapter.launch_argv(P(), None)[-1] == "0"  # nothing loaded: geometry flags last
    assert adapter.launch_env(P())["PATH"].startswith("/usr/bin")
