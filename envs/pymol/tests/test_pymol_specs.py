"""Offline checks of the PyMOL task specs, their data generators and the PyMOL getters.

No X display or GUI needed: specs are loaded and staged into tmp_path (the gold values come
from headless PyMOL, the system ``python3`` with ``pymol2``); the getters are fed files written
here, including missing and malformed ones, which must become failed criteria, not exceptions.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from helpers import requires

from sciagent_gym.evaluation import GETTERS, Criterion, FinalState, evaluate
from sciagent_gym.tasks.spec import TaskSpec
from sciagent_gym.tasks.task import Task
from sciagent_gym.tools import load_adapter, load_tool_getters, load_tool_specs

pytestmark = requires(tool="pymol")

load_tool_getters("pymol")

from sciagent_gym.envs.pymol import data, headless, questions, sources  # noqa: E402
from sciagent_gym.envs.pymol.getters import parse_pdb  # noqa: E402

SPECS: dict[str, TaskSpec] = load_tool_specs("pymol")
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
    tii = questions.structure(tmp_path, rng, "1tii.pdb")
    assert tii["atoms"] == tii["polymer"] + tii["solvent"] and tii["solvent"] > 0
    assert tii["chains"] == ["A", "C", "D", "E", "F", "G", "H"]
    hpv = questions.structure(tmp_path, rng, "1hpv.pdb")
    assert hpv["organic"] > 0 and hpv["organic_carbons"] < hpv["organic"]
    pocket = questions.contacts(tmp_path, rng, "1hpv.pdb", "resn 478", 4.0)
    assert 0 < pocket["residues"] < pocket["residues_wider"]
    assert pocket["atoms_only"] < pocket["atoms"]
    al = questions.chain_alignment(tmp_path, rng, "1tii.pdb", "D", "G")
    assert 0 < al["rmsd"] < 1.0 < al["rmsd_unaligned"]
    assert al["rmsd"] <= al["rmsd_before_rejection"]
    d = questions.ca_distance(tmp_path, rng, "1hpv.pdb", 25)
    assert d["resn"] == "ASP" and 3.0 < d["distance"] < 20.0
    assert questions.colour(tmp_path, rng, "white")["rgb8"] == [255, 255, 255]


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
    {"fn": "pymol_figure", "path": "x.png", "reference_path": "/nonexistent/gold.tif",
     "key": "width"},
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
    headless.run_headless(code)
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


# --- issue 15: no credit without the work, seeded data, content-aware checks -------------

ANSWER_TASKS = {"pymol/align-chains-rmsd": ("al", "rmsd", " Å"),
                "pymol/interface-residues": ("iface", "residues", ""),
                "pymol/measure-distance": ("d", "distance", " Å"),
                "pymol/pocket-residues": ("pocket", "residues", ""),
                "pymol/residue-selection": ("res", "residues", "")}
ZERO_WEIGHT_GETTERS = {"file_exists", "agent_status", "answer_given"}


def _getter_name(criterion: dict) -> str:
    getter = criterion["getter"]
    return getter if isinstance(getter, str) else getter["fn"]


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_gates_existence_and_status_checks_carry_no_weight(spec_id):
    criteria = SPECS[spec_id].evaluator
    assert criteria[0].get("gate"), "the first criterion is a gate"
    for c in criteria:
        if c.get("gate") or _getter_name(c) in ZERO_WEIGHT_GETTERS \
                or c["check"]["op"] == "unchanged":
            assert c["weight"] == 0, (spec_id, c["name"])
    if not SPECS[spec_id].infeasible:
        assert sum(c["weight"] for c in criteria) > 0


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_every_task_is_a_gui_task_and_values_come_as_answers(spec_id):
    spec = SPECS[spec_id]
    assert spec.modality == "gui"  # PyMOL's own command line is part of its GUI
    getters = {_getter_name(c) for c in spec.evaluator}
    assert "number_in_file" not in getters
    if spec_id in ANSWER_TASKS:
        assert "answer_number" in getters and "answer action" in spec.instruction
        assert any(isinstance(s, dict) and "answer" in s for s in spec.oracle)
    for name, steps in spec.cheats.items():
        assert steps and all(isinstance(s, str) for s in steps), name


def _inputs_digest(spec: TaskSpec, work: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    for name in sorted(set(spec.protect) | set(spec.open)):
        h.update((work / name).read_bytes())
    return h.hexdigest()


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_every_seed_has_its_own_input_data(spec_id, tmp_path):
    spec = SPECS[spec_id]
    digests = set()
    for seed in range(4):
        task = make_task(spec, seed, tmp_path / f"s{seed}")
        task.stage(tmp_path / f"s{seed}")
        digests.add(_inputs_digest(spec, tmp_path / f"s{seed}"))
        task.cleanup()
    assert len(digests) == 4
    again = make_task(spec, 2, tmp_path / "again")
    again.stage(tmp_path / "again")
    again.cleanup()
    assert _inputs_digest(spec, tmp_path / "again") in digests  # same seed, same bytes


@pytest.mark.parametrize("spec_id", sorted(ANSWER_TASKS))
def test_answers_differ_across_seeds_and_are_read_with_units(spec_id, tmp_path):
    spec = SPECS[spec_id]
    gen, key, unit = ANSWER_TASKS[spec_id]
    golds = []
    for seed in range(6):
        work = tmp_path / f"s{seed}"
        task = make_task(spec, seed, work)
        task.stage(work)
        gold = task.gold[gen][key]
        golds.append(round(gold, 4))
        crit = [c for c in task.criteria() if c.getter == "answer_number"]
        assert len(crit) == 1

        def score(answer, crit=crit, work=work):
            state = FinalState(work_dir=work, answer=answer)
            return evaluate(crit, state).criteria[0].passed

        shown = f"{gold:.4f}" if isinstance(gold, float) else str(gold)
        assert score(f"{shown}{unit}") and score(f"value = {shown}{unit}")
        assert not score(None) and not score(f"{gold + 1}{unit}")
        assert not score(f"{shown}, {gold + 2}{unit}")  # several values: ambiguous
        if unit:
            assert score(f"{gold / 10:.5f} nm")  # converted
        task.cleanup()
    assert len(set(golds)) >= 3, golds  # the answer is not one memorisable number


def test_variants_move_the_molecule_but_keep_its_chemistry(tmp_path):
    from sciagent_gym.envs.pymol.variants import random_rotation

    src = sources.SOURCES["1hpv.pdb"]
    a = sources._copy(tmp_path, np.random.default_rng(1), "1hpv.pdb", "a.pdb").read_text()
    b = sources._copy(tmp_path, np.random.default_rng(1), "1hpv.pdb", "b.pdb").read_text()
    c = sources._copy(tmp_path, np.random.default_rng(2), "1hpv.pdb", "c.pdb").read_text()
    assert a == b and a != c
    orig, var = parse_pdb(src.read_text()), parse_pdb(a)
    assert var["chains"] == orig["chains"] and var["hetero"] == orig["hetero"]
    assert 0 < var["waters"] <= orig["waters"] and var["atoms"] < orig["atoms"]
    assert max(abs(x - y) for x, y in zip(var["centroid"], orig["centroid"], strict=True)) > 1
    serials = {int(line[6:11]) for line in a.splitlines() if line.startswith(("ATOM", "HETATM"))}
    for line in a.splitlines():
        if line.startswith("CONECT"):
            assert {int(line[i:i + 5]) for i in range(6, 31, 5) if line[i:i + 5].strip()} \
                <= serials
    assert "CRYST1" not in a and "ANISOU" not in a
    rot = random_rotation(np.random.default_rng(5))
    assert np.allclose(rot @ rot.T, np.eye(3)) and np.isclose(np.linalg.det(rot), 1.0)
    # internal geometry survives up to the jitter: the CA-CA distance moves, but little
    d0 = questions.ca_distance(tmp_path, np.random.default_rng(1), "1hpv.pdb", 50)["distance"]
    d1 = questions.ca_distance(tmp_path, np.random.default_rng(2), "1hpv.pdb", 50)["distance"]
    assert d0 != d1 and abs(d0 - d1) < 0.5


# --- issue 33: seeded departures that make the data, not the instruction, decide ----------

def _atoms(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("ATOM  ", "HETATM"))]


def _xyz(lines: list[str]) -> np.ndarray:
    return np.array([[float(line[c:c + 8]) for c in (30, 38, 46)] for line in lines])


def test_task_departures_tails_flex_and_ligand_pose():
    from sciagent_gym.envs.pymol.variants import perturbed_pdb

    tii = sources.SOURCES["1tii.pdb"].read_text()
    plain = sources.perturbation("1tii.pdb")
    assert sources.perturbation("1tii.pdb", None) is plain and not plain.extra
    # a variant without departures keeps its bytes: the departures are drawn last
    assert perturbed_pdb(tii, np.random.default_rng(3), plain) == perturbed_pdb(
        tii, np.random.default_rng(3), sources.perturbation("1tii.pdb", {}))
    # tails: the A2 chain's C-terminal tail is modelled to a seeded length (0..18 more cut)
    how = sources.perturbation("1tii.pdb", {"tails": {"C": 18}})
    ends = set()
    for seed in range(8):
        chain_c = [line for line in _atoms(perturbed_pdb(tii, np.random.default_rng(seed), how))
                   if line.startswith("ATOM  ") and line[21] == "C"]
        ends.add(int(chain_c[-1][22:26]))
    assert len(ends) >= 4 and min(ends) >= 230 - 3 - 18 and max(ends) <= 230
    # flex: each chain distorted smoothly; bonded neighbours stay close to their distance
    how = sources.perturbation("1tii.pdb", {"flex": [0.5, 0.5]})
    a = _atoms(perturbed_pdb(tii, np.random.default_rng(4), plain))
    b = _atoms(perturbed_pdb(tii, np.random.default_rng(4), how))
    assert [line[:30] for line in a] == [line[:30] for line in b]
    xa, xb = _xyz(a), _xyz(b)
    ca = [i for i, line in enumerate(a) if line[12:16] == " CA " and line[21] == "D"]
    da = np.linalg.norm(np.diff(xa[ca], axis=0), axis=1)
    db = np.linalg.norm(np.diff(xb[ca], axis=0), axis=1)
    assert np.abs(da - db).max() < 0.6 and np.abs(xa - xb).max() > 0.3
    # ligand pose: the inhibitor moves as a rigid body, the protein stays
    hpv = sources.SOURCES["1hpv.pdb"].read_text()
    how = sources.perturbation("1hpv.pdb", {"ligand": "478", "ligand_shift": 2.0,
                                         "ligand_turn": 30})
    a = _atoms(perturbed_pdb(hpv, np.random.default_rng(5), sources.perturbation("1hpv.pdb")))
    b = _atoms(perturbed_pdb(hpv, np.random.default_rng(5), how))
    lig = [i for i, line in enumerate(a) if line[17:20] == "478"]
    prot = [i for i, line in enumerate(a) if line.startswith("ATOM  ")]
    xa, xb = _xyz(a), _xyz(b)
    assert np.allclose(xa[prot], xb[prot], atol=1e-3)
    inner = lambda x: np.linalg.norm(x[:, None] - x[None], axis=2)  # noqa: E731
    assert np.abs(inner(xa[lig]) - inner(xb[lig])).max() < 0.5  # rigid up to the jitter
    assert np.abs(xa[lig] - xb[lig]).max() > 0.3


def test_engineered_il2_carries_seeded_substitutions(tmp_path):
    text = sources.SOURCES["il2.pdb"].read_text()
    swaps = questions._mutations(text, "LYS", np.random.default_rng(1), 0.5, 5)
    assert swaps == questions._mutations(text, "LYS", np.random.default_rng(1), 0.5, 5)
    mutant = questions.mutant_text("il2.pdb", swaps)
    lys = {(line[21], line[22:27].strip()) for line in mutant.splitlines()
           if line.startswith("ATOM  ") and line[17:20] == "LYS"}
    for c, i, new in swaps:
        assert ((c or " "), i) in lys if new == "LYS" else ((c or " "), i) not in lys
    golds = {questions.residue_type(tmp_path, np.random.default_rng(s), "il2.pdb", "LYS",
                               mutate={"out": 0.5, "in": 5})["residues"] for s in range(4)}
    assert len(golds) >= 3, golds


# --- the figure: compared with PyMOL's own render -------------------------------------------

def _png(path: Path, rgb: np.ndarray) -> None:
    from PIL import Image

    Image.fromarray(np.asarray(rgb, dtype=np.uint8)).save(path)


def _render(work: Path, out: Path, task: Task, bg: str, extra: str = "") -> None:
    """PyMOL (headless) saving the task's figure from the staged file, as an agent would."""
    p = task.params
    headless.run_headless(f"cmd.load({str(work / 'il2.pdb')!r}, 'il2')\n{extra}"
                      f"cmd.bg_color({bg!r})\ncmd.png({str(out)!r}, width={p['width']}, "
                      f"height={p['height']}, ray=1)\nout = {str(out)!r}\n")


@pytest.fixture(scope="module")
def figure_task(tmp_path_factory):
    work = tmp_path_factory.mktemp("figure")
    task = make_task(SPECS["pymol/background-figure"], 0, work)
    task.stage(work)
    yield task, work
    task.cleanup()


def _figure_score(task: Task, work: Path, bg_rgb: list[float] | None = None):
    rgb = bg_rgb if bg_rgb is not None else task.gold["fig"]["rgb"]
    state = FinalState(work_dir=work, app_state={"background": {"rgb": rgb}})
    return evaluate(task.criteria(), state)


def test_figure_gold_stays_host_side(figure_task):
    task, work = figure_task
    gold = Path(task.gold["fig"]["image"])
    assert gold.is_file() and not gold.is_relative_to(work)
    assert sorted(p.name for p in work.iterdir()) == ["il2.pdb"]


def test_figure_rendered_by_pymol_scores_full(figure_task):
    task, work = figure_task
    out = work / f"{task.params['stem']}.png"
    _render(work, out, task, task.params["bg"])
    try:
        result = _figure_score(task, work)
        assert result.success and result.score == 1.0, result.to_dict()
    finally:
        out.unlink()


@pytest.mark.parametrize("kind", ["bg-colour", "black", "noise", "input-copy", "rotated",
                                  "default-background", "other-seed"])
def test_figure_without_the_molecule_or_view_scores_zero(figure_task, kind, tmp_path):
    task, work = figure_task
    p = task.params
    out = work / f"{p['stem']}.png"
    shape = (p["height"], p["width"], 3)
    try:
        if kind == "bg-colour":  # a uniform picture of the right size and colour
            _png(out, np.broadcast_to(np.array(task.gold["fig"]["rgb8"], np.uint8), shape))
        elif kind == "black":
            _png(out, np.zeros(shape, np.uint8))
        elif kind == "noise":
            _png(out, np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8))
        elif kind == "input-copy":
            out.write_bytes((work / "il2.pdb").read_bytes())
        elif kind == "rotated":
            _render(work, out, task, p["bg"], "cmd.turn('y', 90)\n")
        elif kind == "default-background":
            _render(work, out, task, "black")
        else:  # the same figure made from another seed's structure (another orientation)
            other = make_task(task.spec, 1, tmp_path)
            other.stage(tmp_path)
            other.cleanup()
            _render(tmp_path, out, task, p["bg"])
        result = _figure_score(task, work)
        assert not result.success and result.score <= (0.2 if kind == "default-background"
                                                       else 0.0), result.to_dict()
    finally:
        out.unlink(missing_ok=True)


def test_figure_metrics_separate_a_render_from_a_placeholder(figure_task):
    from sciagent_gym.envs.pymol.figures import compare, silhouette_iou

    task, _ = figure_task
    import tifffile

    gold = tifffile.imread(task.gold["fig"]["image"])
    blank = np.empty_like(gold)
    blank[:] = task.gold["fig"]["rgb8"]
    assert silhouette_iou(gold, gold) == 1.0 and silhouette_iou(blank, gold) == 0.0
    same = compare(gold, gold)
    assert same["background"] == task.gold["fig"]["rgb8"] and same["ssim"] > 0.99
    assert 0.05 < same["molecule_fraction"] < 0.6
    shifted = np.roll(gold, 60, axis=1)
    assert compare(shifted, gold)["molecule_iou"] < 0.9


# --- saved structures: by content ------------------------------------------------------------

def _saved(work: Path, out: Path, code: str) -> None:
    """Headless PyMOL loads the staged 1tii.pdb and runs ``code`` (which saves to ``out``)."""
    headless.run_headless(f"cmd.load({str(work / '1tii.pdb')!r}, '1tii')\n{code}\n"
                      f"out = {str(out)!r}\n")


def test_remove_waters_scores_the_saved_content(tmp_path):
    task = make_task(SPECS["pymol/remove-waters"], 0, tmp_path)
    task.stage(tmp_path)
    gold = task.gold["tii"]
    out = tmp_path / f"{task.params['stem']}.pdb"
    app = {"objects": {"1tii": {"solvent_atoms": 0, "atoms": gold["no_solvent"]}}}

    def score(app_state=app):
        return evaluate(task.criteria(), FinalState(work_dir=tmp_path, app_state=app_state))

    _saved(tmp_path, out, f"cmd.remove('solvent')\ncmd.save({str(out)!r}, '1tii')")
    assert score().success
    start = {"objects": {"1tii": {"solvent_atoms": gold["solvent"], "atoms": gold["atoms"]}}}
    _saved(tmp_path, out, f"cmd.save({str(out)!r}, '1tii')")  # saved as it opened
    assert score(start).score == 0.0
    out.write_bytes((tmp_path / "1tii.pdb").read_bytes())  # the input copied
    assert score({}).score == 0.0
    out.write_text("0\n")
    assert score({}).score == 0.0
    other = tmp_path / "other"  # another seed's structure without waters: not this one
    make_task(task.spec, 1, other).stage(other)
    _saved(other, out, f"cmd.remove('solvent')\ncmd.save({str(out)!r}, '1tii')")
    assert not score().success


def test_save_chain_scores_the_saved_content(tmp_path):
    task = make_task(SPECS["pymol/save-chain-pdb"], 0, tmp_path)
    task.stage(tmp_path)
    ch = task.params["chain"]
    out = tmp_path / f"chain{ch}.pdb"

    def score():
        return evaluate(task.criteria(), FinalState(work_dir=tmp_path))

    _saved(tmp_path, out, f"cmd.save({str(out)!r}, '1tii and polymer and chain {ch}')")
    assert score().success
    _saved(tmp_path, out, f"cmd.save({str(out)!r}, '1tii and chain {ch} and name CA')")
    assert score().score == 0.0  # one atom per residue: no credit for the chain letter
    out.write_bytes((tmp_path / "1tii.pdb").read_bytes())
    assert score().score == 0.0


# --- long-horizon tasks: stage by stage -------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1])
def test_pocket_workflow_scores_each_stage(seed, tmp_path):
    """Replays the evaluator on what the stage negatives leave: the structure opened without its
    waters (2 of 16), plus the pocket shown and coloured (6 of 16), plus the distance measured
    and answered (9 of 16); a stage counts only when the one before passed."""
    spec = SPECS["pymol/pocket-workflow"]
    assert "long-horizon" in spec.tags and spec.difficulty == "hard"
    task = make_task(spec, seed, tmp_path)
    try:
        task.stage(tmp_path)
        assert 25 <= task.oracle_steps <= 60 and spec.max_steps >= 1.5 * task.oracle_steps
        g, carbon = task.gold["pw"], task.params["carbon"]
        opened = {"polymer_atoms": g["polymer"], "solvent_atoms": 0, "atoms": g["no_solvent"],
                  "polymer": {"reps": {"sticks": 0}, "element_colors": {}},
                  "organic": {"reps": {"sticks": 0}}}
        shown = {**opened, "polymer": {"reps": {"sticks": g["pocket_atoms"]},
                                       "element_colors": {"C": {carbon: g["pocket_carbons"]}}},
                 "organic": {"reps": {"sticks": g["organic"]}}}
        pocket = {"pocket": {"atoms": g["pocket_atoms"], "residues": g["pocket_residues"]}}

        def score(objects, selections=None, answer=None):
            app = {"objects": objects, "selections": selections or {}}
            return evaluate(task.criteria(), FinalState(
                work_dir=tmp_path, app_state=app, answer=answer,
                agent_status="done")).to_dict()

        assert score({})["score"] == 0
        res = score({"1hpv": opened})
        assert res["score"] == pytest.approx(2 / 16) and res["stages_reached"] == 1
        res = score({"1hpv": shown}, pocket)
        assert res["score"] == pytest.approx(6 / 16) and res["stages_reached"] == 2
        dist = {"type": "measurement", "distances": [g["distance"]]}
        answer = f"{g['distance']:.3f} Å"
        res = score({"1hpv": shown, "dist_ab": dist}, pocket, answer)
        assert res["score"] == pytest.approx(9 / 16) and res["stages_reached"] == 3
        # waters only hidden: nothing after the first stage counts
        wet = {**shown, "solvent_atoms": g["solvent"], "atoms": g["atoms"]}
        assert score({"1hpv": wet, "dist_ab": dist}, pocket, answer)["score"] == 0
    finally:
        task.cleanup()


@pytest.mark.parametrize("seed", [0, 1])
def test_superpose_workflow_scores_each_stage(seed, tmp_path):
    """Replays the evaluator on what the stage negatives leave: both structures opened (2 of
    14), plus the model superimposed and the RMSD answered (5 of 14), plus both coloured (7 of
    14); the crystal structure moved instead of the model blocks everything after opening
    (1 of 14)."""
    spec = SPECS["pymol/superpose-model-workflow"]
    assert "long-horizon" in spec.tags and spec.difficulty == "hard"
    task = make_task(spec, seed, tmp_path)
    try:
        task.stage(tmp_path)
        assert 25 <= task.oracle_steps <= 60 and spec.max_steps >= 1.5 * task.oracle_steps
        g = task.gold["sw"]
        ccol, pcol = task.params["ccol"]["name"], task.params["pcol"]["name"]
        assert g["rmsd_unaligned"] > 5 * g["rmsd"]  # the model starts elsewhere
        crystal = {"atoms": g["crystal_atoms"], "ca_centroid": g["crystal_ca"],
                   "colors": {}}
        before = {"atoms": g["predicted_atoms"], "ca_centroid": g["predicted_ca_before"],
                  "colors": {}}
        after = {**before, "ca_centroid": g["predicted_ca"]}

        def score(objects, answer=None):
            return evaluate(task.criteria(), FinalState(
                work_dir=tmp_path, app_state={"objects": objects, "selections": {}},
                answer=answer, agent_status="done")).to_dict()

        assert score({})["score"] == 0
        res = score({"crystal": crystal, "predicted": before})
        assert res["score"] == pytest.approx(2 / 14) and res["stages_reached"] == 1
        answer = f"{g['rmsd']:.4f} Å"
        res = score({"crystal": crystal, "predicted": after}, answer)
        assert res["score"] == pytest.approx(5 / 14) and res["stages_reached"] == 2
        coloured = {"crystal": {**crystal, "colors": {ccol: g["crystal_atoms"]}},
                    "predicted": {**after, "colors": {pcol: g["predicted_atoms"]}}}
        res = score(coloured, answer)
        assert res["score"] == pytest.approx(7 / 14) and res["stages_reached"] == 3
        # the RMSD of the structures as they lie in the files: no credit for the superposition
        res = score(coloured, f"{g['rmsd_unaligned']:.4f} Å")
        assert res["score"] == pytest.approx(3 / 14) and res["stages_reached"] == 1
        moved = {**coloured["crystal"], "ca_centroid": g["predicted_ca_before"]}
        assert score({**coloured, "crystal": moved}, answer)["score"] == pytest.approx(1 / 14)
    finally:
        task.cleanup()


def test_session_reply_is_decoded_with_bounded_inflation(monkeypatch):
    """The state dump's session comes back as compressed base64 from the zone: a reply that is
    not that, or that inflates past the session limit, is a clear error, never a bomb."""
    import base64
    import zlib

    from sciagent_gym.envs.pymol import session

    data = b"\x80\x01}q\x00."
    assert session.session_bytes(base64.b64encode(zlib.compress(data)).decode()) == data
    with pytest.raises(ValueError, match="not compressed base64"):
        session.session_bytes("not base64!")
    with pytest.raises(ValueError, match="not compressed base64"):
        session.session_bytes(base64.b64encode(b"plain bytes").decode())
    monkeypatch.setattr(session, "MAX_SESSION_BYTES", 1000)
    bomb = base64.b64encode(zlib.compress(b"\0" * 100_000)).decode()
    with pytest.raises(ValueError, match="larger than 1000 bytes"):
        session.session_bytes(bomb)


def test_state_dump_on_a_session_matches_the_program(tmp_path):
    """dump_from_session: the dump code run by a fresh headless PyMOL on pickled session data
    reports the objects, representations and background that session holds."""
    import base64

    from sciagent_gym.envs.pymol.adapter import STATE_CODE
    from sciagent_gym.envs.pymol.session import dump_from_session

    spec = SPECS["pymol/ligand-sticks-gui"]
    make_task(spec, 0, tmp_path).stage(tmp_path)
    pdb = str(tmp_path / spec.open[0])
    session = headless.run_headless(
        "import base64, pickle\n"
        f"cmd.load({pdb!r})\ncmd.show('sticks', 'organic')\ncmd.bg_color('white')\n"
        "out = base64.b64encode(pickle.dumps(cmd.get_session(), 1)).decode()\n")
    out = dump_from_session(base64.b64decode(session), STATE_CODE)
    staged = parse_pdb(Path(pdb).read_text())
    obj = out["objects"][Path(pdb).stem]
    assert obj["atoms"] == staged["atoms"] and obj["reps"]["sticks"] == obj["organic_atoms"] > 0
    assert out["background"]["rgb"] == [1.0, 1.0, 1.0]
