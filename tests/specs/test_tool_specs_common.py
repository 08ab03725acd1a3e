"""Rules every tool's task specs follow, checked once for all tools (offline).

Tool-specific checks (data generators, gold values, getters on each format) stay in the
``test_<tool>_specs.py`` modules.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from sciagent_gym.evaluation.stages import stage_order
from sciagent_gym.runs.interfaces import MENUS_TARGET, interface_use, tool_interfaces
from sciagent_gym.tasks.task import Task, some_variants, variant_split
from sciagent_gym.tasks.templating import _WHOLE as WHOLE_VALUE
from sciagent_gym.tools import discover, load_adapter, load_tool_specs

TOOLS = sorted(discover())
SPECS = {tool: load_tool_specs(tool) for tool in TOOLS}
ALL = [(tool, spec_id) for tool in TOOLS for spec_id in sorted(SPECS[tool])]
# QuPath cannot start on these machines (neither Debian nor PyPI ship it): a GUI oracle that
# was never played would be a stub, so its tasks keep only their scripted oracles for now.
NO_GUI_ORACLES_YET = {"qupath": "QuPath cannot start on these machines"}
GUI_ORACLE_TOOLS = tuple(t for t in TOOLS if t not in NO_GUI_ORACLES_YET)
PLACEHOLDER_PATHS = {"home": "~", "work": "~/work", "tmp": "/tmp"}


def _flat(steps):
    """Steps with state-control ``toggle`` steps opened up."""
    for step in steps:
        if isinstance(step, dict) and "toggle" in step:
            yield from _flat(step["then"])
        else:
            yield step


@pytest.mark.parametrize("tool", TOOLS)
def test_tool_has_ten_tasks_spread_over_difficulties_and_an_infeasible_one(tool):
    specs = SPECS[tool].values()
    assert len(specs) >= (8 if tool == "imagej" else 10)
    assert {s.difficulty for s in specs} == {"easy", "medium", "hard"}
    assert sum(s.infeasible for s in specs) >= 1
    for spec in specs:
        assert spec.tool == tool and Path(spec.source).stem == spec.slug


@pytest.mark.parametrize(("tool", "spec_id"), [x for x in ALL if x[0] in GUI_ORACLE_TOOLS])
def test_every_task_has_a_gui_oracle_that_waits_fits_and_types_no_gold(tool, spec_id):
    """The GUI oracle exists, waits for a window before acting (a feasible task), fits the
    step budget on every sampled variant, and never types or answers a gold value: gold may
    only place a click on something the agent sees; values it answers are read off the screen.
    """
    spec = SPECS[tool][spec_id]
    assert spec.gui_oracle is not None, f"{spec_id} has no GUI oracle"
    if spec.infeasible:
        return
    assert any(isinstance(step, dict) and "await_window" in step for step in spec.gui_oracle)
    counts = {Task(spec, v, {}, PLACEHOLDER_PATHS).oracle_steps for v in some_variants(spec, 64)}
    assert max(counts) <= spec.max_steps, (counts, spec.max_steps)
    for step in _flat(spec.gui_oracle):
        if isinstance(step, dict) and "perceive" in step:
            # a perceiver measures what is shown: its args may name the options, not the gold
            assert "gold" not in json.dumps(step["perceive"]), f"{spec_id}: {step}"
        texts = step.get("do", []) if isinstance(step, dict) and "in_window" in step else [
            step.get("answer", "") if isinstance(step, dict) else step]
        for text in texts:
            text = json.dumps(text) if not isinstance(text, str) else text
            if "gold" in text:
                assert not re.search(r"write\(|typewrite\(|answer\(|\"answer\"|press\(", text), \
                    f"{spec_id}: a gold value is typed or answered: {text}"


LONG_HORIZON = [(tool, spec_id) for tool, spec_id in ALL
                if "long-horizon" in SPECS[tool][spec_id].tags]


@pytest.mark.parametrize(("tool", "spec_id"), LONG_HORIZON)
def test_long_horizon_tasks_are_staged_workflows_of_25_to_120_gui_steps(tool, spec_id):
    """Issue 19's long workflows: at least three stages, later ones blocked by earlier ones,
    a GUI oracle of 25-120 steps on every variant (60 until issue 33 asked for longer work:
    a workflow through dialogs, one step per click or field, runs past 60) and a step budget
    of 1.5x that."""
    spec = SPECS[tool][spec_id]
    stages = stage_order([c.get("stage", "") for c in spec.evaluator])
    assert len(stages) >= 3, stages
    assert any(c.get("blocks_from") for c in spec.evaluator), "no stage waits for another"
    assert spec.difficulty == "hard" and not spec.infeasible
    counts = {Task(spec, v, {}, PLACEHOLDER_PATHS).oracle_steps for v in some_variants(spec, 32)}
    assert 25 <= min(counts) and max(counts) <= 120, counts
    assert spec.max_steps >= 1.5 * max(counts), (spec.max_steps, counts)


@pytest.mark.parametrize(("tool", "spec_id"), ALL)
def test_variant_zero_stages_its_inputs(tool, spec_id, tmp_path):
    """Every shipped spec stages its first variant: its generator runs (some tools' call a
    command-line helper, Praat's espeak-ng), the inputs it opens exist, its criteria resolve."""
    spec = SPECS[tool][spec_id]
    task = Task(spec, 0, load_adapter(tool).generators, {"work": "/w", "home": "/h", "tmp": "/t"})
    try:
        task.stage(tmp_path)
        assert task.criteria()
        for name in spec.open:
            assert (tmp_path / name).is_file(), name
    finally:
        task.cleanup()


@pytest.mark.parametrize(("tool", "spec_id"), ALL)
def test_spec_has_negatives_a_gate_and_a_final_answer(tool, spec_id):
    spec = SPECS[tool][spec_id]
    assert len(spec.negatives) >= 2
    assert spec.oracle[-1] in ("DONE", "FAIL")
    assert spec.evaluator[0].get("gate") is True
    assert spec.hints.strip(), "hints (shown with hints=True) are missing"


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


@pytest.mark.parametrize(("tool", "spec_id"), ALL)
def test_steps_name_values_in_braces_not_dollars(tool, spec_id):
    """Steps substitute ``{name}`` inside text; a ``$name`` there stays literal (only a whole
    ``"$name"`` value is looked up), so a negative that answers ``answer("$gold.x")`` sends
    those characters and fails for the wrong reason: it then proves nothing (three ParaView
    negatives did). ``$`` after a name or bracket (R's ``df$col``) is code, not a value."""
    spec = SPECS[tool][spec_id]
    names = "|".join(["gold", *map(re.escape, spec.params)])
    dollar = re.compile(rf"(?<![\w\])$])\$(?:{names})\b")
    steps = {"oracle": spec.oracle, "gui_oracle": spec.gui_oracle,
             **{f"negative {n}": s for n, s in spec.negatives.items()},
             **{f"cheat {n}": s for n, s in (spec.cheats or {}).items()}}
    bad = [(where, text[:100]) for where, s in steps.items() for text in _strings(s)
           if dollar.search(text) and not WHOLE_VALUE.fullmatch(text)]
    assert not bad, f"use {{name}} in step text, not $name: {bad}"


@pytest.mark.parametrize(("tool", "spec_id"), ALL)
def test_params_are_deterministic_and_vary(tool, spec_id, tmp_path):
    """Seeded params repeat per seed and differ across seeds; a query pool's variants are its
    queries, each with its own params (at least its scope). A spec without params (its
    generator draws everything from the seed, so the instruction tells nothing) must stage
    different gold values for different seeds instead."""
    spec = SPECS[tool][spec_id]
    variants = some_variants(spec, 20)
    sampled = [Task(spec, v, {}, PLACEHOLDER_PATHS).params for v in variants]
    assert sampled == [Task(spec, v, {}, PLACEHOLDER_PATHS).params for v in variants]
    if spec.params or spec.queries:
        assert len({repr(sorted(p.items())) for p in sampled}) > 1, "params never vary"
        return
    golds = set()
    for v in list(variants)[:3]:
        task = Task(spec, v, load_adapter(tool).generators, PLACEHOLDER_PATHS)
        try:
            task.stage(tmp_path / str(v))
            golds.add(repr(task.criteria()))
        finally:
            task.cleanup()
    assert len(golds) > 1, "no params, and the staged variants' criteria never differ"


# -- reward only for doing the task (issue 15) --------------------------------------------------

# Getters and checks that say "a file is there", "the agent said DONE" or "this was not changed":
# true of the start state or of an empty file, so never credit, only gates or penalties.
NO_CREDIT_GETTERS = ("file_exists", "agent_status", "answer_given")
NO_CREDIT_CHECKS = ("unchanged",)


def _getter_name(criterion: dict) -> str:
    getter = criterion["getter"]
    return getter if isinstance(getter, str) else getter["fn"]


def _check_name(criterion: dict) -> str:
    check = criterion["check"]
    return check if isinstance(check, str) else check["op"]


@pytest.mark.parametrize(("tool", "spec_id"), ALL)
def test_gates_and_existence_checks_carry_no_weight(tool, spec_id):
    for crit in SPECS[tool][spec_id].evaluator:
        weight = crit.get("weight", 1)
        if crit.get("gate"):
            assert weight == 0, f"gate {crit['name']!r} has weight {weight}"
        if _getter_name(crit) in NO_CREDIT_GETTERS or _check_name(crit) in NO_CREDIT_CHECKS:
            assert weight == 0, f"{crit['name']!r} credits existence/status ({weight})"


@pytest.mark.parametrize(("tool", "spec_id"), ALL)
def test_several_toggles_each_name_the_criterion_that_credits_them(tool, spec_id):
    """Otherwise a toggle that starts right would pay the no-op (and a flip of it nothing)."""
    toggles = SPECS[tool][spec_id].toggles
    names = {c["name"] for c in SPECS[tool][spec_id].evaluator}
    if len(toggles) > 1:
        assert all(t.get("credit") in names for t in toggles), toggles


@pytest.mark.parametrize(("tool", "spec_id"), ALL)
def test_modality_is_declared_and_gui_oracles_use_no_shell_action(tool, spec_id):
    spec = SPECS[tool][spec_id]
    raw = json.loads(Path(spec.source).read_text())
    assert "modality" in raw, "every task states its modality"
    if spec.modality == "gui":
        for steps in (spec.oracle, *spec.negatives.values()):
            for step in _flat(steps):
                action = step if isinstance(step, str) else step.get("action")
                if isinstance(action, str):
                    assert not re.match(r"\s*(computer\.)?(run|launch)\(", action), action
                elif isinstance(action, dict):
                    assert action.get("type") not in ("run", "launch"), action


@pytest.mark.parametrize(("tool", "spec_id"), ALL)
def test_the_declared_oracle_interface_is_what_the_gui_oracle_does(tool, spec_id):
    """menus, console or mixed, as derived from the GUI oracle's typed lines and dialogs
    (issue 33, item 4); a task without a GUI oracle declares none."""
    spec = SPECS[tool][spec_id]
    use = interface_use(spec)
    if use is None:
        assert spec.oracle_interface is None, "no GUI oracle: nothing to declare"
        return
    assert spec.oracle_interface == use.interface, (
        f"declared {spec.oracle_interface!r}, the GUI oracle types {use.code_lines} lines of "
        f"console code, runs {use.shell_commands} shell commands and works dialogs "
        f"{list(use.dialogs)}")


#: Tools below MENUS_TARGET: feasible gui tasks proven through menus today, of how many (issue
#: 33, item 4: their consoles still carry the oracles). Strict both ways: a count may not drop,
#: and a tool that improves updates its entry, or leaves the list once it reaches the target.
MENUS_OPEN: dict[str, tuple[int, int]] = {
    "jmol": (6, 14), "matsci": (0, 1),
}
#: Tools whose program has no menu or dialog that does their tasks' work: typing an expression
#: is how the program is used (item 4 asks for dialogs where the program has them). Their GUI
#: oracles still declare ``console``, and the count is held as it is.
CONSOLE_IS_THE_PROGRAM: dict[str, tuple[str, tuple[int, int]]] = {
    "kalgebra": ("a calculator: expressions go into its Calculator input and its 2D Graph "
                 "function line; its menus hold only view, file and help items", (0, 12)),
}


@pytest.mark.parametrize("tool", TOOLS)
def test_gui_tasks_are_proven_through_menus_and_dialogs(tool):
    counts = tool_interfaces(tool, SPECS[tool].values())
    if tool in NO_GUI_ORACLES_YET:
        assert counts.without == counts.total, "a GUI oracle: take the tool off the list"
        return
    now = (counts.menus, counts.total)
    if tool in CONSOLE_IS_THE_PROGRAM:
        assert now == CONSOLE_IS_THE_PROGRAM[tool][1], (
            f"update CONSOLE_IS_THE_PROGRAM[{tool!r}] to {now}")
        return
    if tool in MENUS_OPEN:
        assert now == MENUS_OPEN[tool], f"update MENUS_OPEN[{tool!r}] to {now}" + (
            " (the target is met: drop it)" if counts.share >= MENUS_TARGET else "")
        return
    assert counts.share >= MENUS_TARGET, (
        f"{counts.menus}/{counts.total} feasible gui tasks proven through menus "
        f"(mixed {counts.mixed}, console {counts.console}), below {MENUS_TARGET:.0%}")


def _episode_key(spec, seed: int, tmp_path: Path) -> str:
    """What an episode of this variant looks like to the agent: instruction and input bytes."""
    work = tmp_path / f"{spec.slug}-{seed}"
    task = Task(spec, seed, load_adapter(spec.tool).generators,
                {"work": str(work), "home": "/home/user", "tmp": "/tmp"})
    try:
        task.stage(work)
        digest = hashlib.sha256(task.instruction.encode())
        for path in sorted(p for p in work.rglob("*") if p.is_file()):
            digest.update(path.relative_to(work).as_posix().encode() + path.read_bytes())
        return digest.hexdigest()
    finally:
        task.cleanup()
        shutil.rmtree(work, ignore_errors=True)


@pytest.mark.parametrize(("tool", "spec_id"), ALL)
def test_held_out_seeds_do_not_repeat_training_episodes(tool, spec_id, tmp_path):
    """The first test-split variant differs from the first training ones (seeded data or
    parameters): a fixed-data task would show the same episode in both splits. Four stagings
    per task keep this cheap; a fixed-data task fails it with any two."""
    spec = SPECS[tool][spec_id]
    seeds = some_variants(spec, 400)
    test = [s for s in seeds if variant_split(spec, s) == "test"][:1]
    train = [s for s in seeds if variant_split(spec, s) == "train"][:3]
    train_keys = {_episode_key(spec, s, tmp_path) for s in train}
    assert len(train_keys) == len(train), "training variants repeat each other"
    assert not any(_episode_key(spec, s, tmp_path) in train_keys for s in test)


def test_held_out_task_families_are_about_fifteen_percent():
    heldout = [s for specs in SPECS.values() for s in specs.values() if s.heldout]
    total = sum(len(specs) for specs in SPECS.values())
    assert 0.1 <= len(heldout) / total <= 0.2
    for tool, specs in SPECS.items():
        assert 1 <= sum(s.heldout for s in specs.values()) < len(specs), tool


@pytest.mark.parametrize(("tool", "spec_id"), ALL)
def test_every_gate_guards_a_criterion_after_it(tool, spec_id):
    """A failed gate skips the criteria after it in its scope (the evaluator, or its stage);
    one with no weighted criterion after it guards nothing, and the work it should stop keeps
    its credit (avogadro/strip-hydrogens-cml listed 'heavy atoms not moved' last and scored
    1.0 with the heavy atoms moved). Put it before what it guards. An all-or-nothing task (no
    weighted criterion) has nothing to guard."""
    crits = SPECS[tool][spec_id].evaluator
    if not any(c.get("weight", 1) > 0 for c in crits):
        return
    for i, c in enumerate(crits):
        if not c.get("gate"):
            continue
        stage = c.get("stage", "")
        later = [d for d in crits[i + 1:] if not stage or d.get("stage", "") == stage]
        assert any(d.get("weight", 1) > 0 for d in later), (
            f"gate {c['name']!r} guards no weighted criterion after it"
            + (f" in stage {stage!r}" if stage else ""))
