"""What tests share besides fixtures: which programs a test needs (one skip rule for all),
process and screen checks, and what every tool's task audit asserts.

Missing programs skip the tests that need them, except under ``SCIAGENT_REQUIRE_APPS=1`` (set by
CI) for the programs ``make setup`` installs: then the test runs and fails, so a CI run never
reports a skipped end-to-end check as passing. Tools the set-up cannot install (QuPath, outside
Debian) are skipped with the reason even then.
"""

from __future__ import annotations

import json
import os
import shutil
from functools import cache
from pathlib import Path

import pytest

from sciagent_gym.deps import DEBIAN_NAME
from sciagent_gym.runs.audit import audit_cases as played_cases
from sciagent_gym.runs.audit import audit_tool
from sciagent_gym.runs.audit_report import AuditReport
from sciagent_gym.tasks.spec import TaskSpec
from sciagent_gym.tools import discover, load_tool_specs, tool_info

REQUIRE_APPS = os.environ.get("SCIAGENT_REQUIRE_APPS") == "1"
#: What every end-to-end test needs: a virtual display, a window manager, the sandbox.
DISPLAY_PROGRAMS = ("Xvfb", "openbox", "bwrap")


def missing_programs(*programs: str) -> list[str]:
    """The programs (names on PATH or absolute paths) that are not installed."""
    return [p for p in programs
            if (not Path(p).exists() if os.path.isabs(p) else shutil.which(p) is None)]


@cache
def tool_missing(tool: str) -> tuple[str, ...]:
    """The tool's programs that are not installed (empty when it can run)."""
    return tuple(req.name for req in tool_info(tool).requires if req.missing())


def set_up_installs(tool: str) -> bool:
    """True when ``make setup`` installs every requirement of the tool (programs from Debian,
    Python modules with pip)."""
    return all(req.pip or DEBIAN_NAME.match(req.package) for req in tool_info(tool).requires)


def requires(*programs: str, tool: str | None = None) -> pytest.MarkDecorator:
    """Mark a test (or ``pytestmark``) as needing ``programs`` and/or the tool's programs:
    skipped when one is missing, unless CI requires it (then it runs, and fails)."""
    missing = missing_programs(*programs)
    required = REQUIRE_APPS
    if tool is not None:
        missing += tool_missing(tool)
        required = REQUIRE_APPS and set_up_installs(tool)
    return pytest.mark.skipif(bool(missing) and not required,
                              reason=f"not installed: {', '.join(missing)}")


def runnable_tools() -> list[str]:
    """Every discovered tool this machine runs, or CI requires."""
    return [t for t in sorted(discover())
            if not tool_missing(t) or (REQUIRE_APPS and set_up_installs(t))]


def our_processes(marker: str) -> list[str]:
    """Live processes whose command line or environment mention ``marker`` (a path)."""
    found = []
    needle = marker.encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            if stat.rsplit(")", 1)[-1].split()[0] == "Z":
                continue
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
            env = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if needle in raw or needle in env:
            cmd = raw.replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{pid}: {cmd}")
    return found


def step_until_changed(env, action, before, waits: int = 8):
    """Step ``action``, then WAIT (as an agent would) until the observation differs from
    ``before``; returns the last observation and the action step's ``info``.

    The step returns once the screen is quiet for the settle window (0.15 s); under load a
    program can take longer than that to start reacting (a menu that pops up 0.3 s after the
    click), and the change then shows in a later observation, not in this one."""
    import numpy as np

    obs, _, _, _, info = env.step(action)
    for _ in range(waits):
        if not np.array_equal(obs["screenshot"], before):
            break
        obs = env.step("WAIT")[0]
    return obs, info


def collected(zone, name: str, timeout: float = 30.0) -> dict:
    """A sandbox zone's channel call (``Sandbox.call``) once it has finished."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = zone.collect(name)
        if state["done"]:
            return state
        time.sleep(0.02)
    zone.kill(name)
    raise AssertionError(f"the client {name} did not finish within {timeout:.0f}s")


def call_and_collect(zone, name: str, timeout: float = 30.0, **call) -> dict:
    """Start a channel client in a sandbox zone (``Sandbox.call``) and wait for its reply."""
    zone.call(name, **call)
    return collected(zone, name, timeout)


def assert_dump_leaves_screen(env, task: str) -> None:
    """The state dump (``expose_state``, app-state getters) reads the program through its
    scripting channel; it must not change what the agent sees (DS9 once opened its Contour
    Parameters dialog to answer a query). A blinking caret's few pixels are tolerated."""
    from sciagent_gym.controller.settle import changed_pixels

    obs, _ = env.reset(seed=0, options={"task": task})
    base = env.unwrapped
    titles = sorted(w.title for w in base.provider.windows())
    base.adapter.dump_state(base.provider)
    after = base.provider.wait_settled()
    now = sorted(w.title for w in base.provider.windows())
    assert now == titles, f"the dump changed the windows: {titles} -> {now}"
    assert changed_pixels(obs["screenshot"], after) <= 64


def assert_same_frames(a, b, tmp_path, names=("first", "again"), context: str = "") -> None:
    """Pixel-equal frames, or a failure that says where they differ, with both saved as PNGs
    in ``tmp_path`` (under ``names``) to look at."""
    import numpy as np
    from PIL import Image

    diff = np.any(a != b, axis=2)
    if diff.any():
        ys, xs = np.nonzero(diff)
        Image.fromarray(a).save(tmp_path / f"{names[0]}.png")
        Image.fromarray(b).save(tmp_path / f"{names[1]}.png")
        pytest.fail(f"{context}{int(diff.sum())} pixels differ in x {xs.min()}..{xs.max()}, "
                    f"y {ys.min()}..{ys.max()}; frames in {tmp_path}")


# -- the task audit every tool passes --------------------------------------------------------------


def run_audit(tool: str, seeds: tuple[int, ...]) -> AuditReport:
    """The tool's audit with cheats; with $SCIAGENT_AUDIT_DIR set, its table and JSON are saved
    there too (``<tool>.txt``, ``<tool>.json``), so a test run also yields the README's table."""
    report = audit_tool(tool, seeds=seeds, cheats=True)
    out = os.environ.get("SCIAGENT_AUDIT_DIR")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / f"{tool}.txt").write_text(report.table() + "\n")
        (Path(out) / f"{tool}.json").write_text(json.dumps(report.to_dict(), indent=1))
    return report


def audit_cases(tool: str, seeds: tuple[int, ...]) -> tuple[dict[str, TaskSpec], list[tuple]]:
    """The tool's specs and one (task id, case, seed) per oracle, no-op and negative run."""
    specs = load_tool_specs(tool)
    cases = [(task_id, case, seed) for task_id, spec in sorted(specs.items())
             for case in [*played_cases(spec), _swapped(spec)] for seed in seeds]
    return specs, cases


def _swapped(spec: TaskSpec) -> str:
    """The case that scores the oracle's final state with the other ending."""
    return "status:done" if spec.infeasible else "status:fail"


def check_case(report, specs: dict[str, TaskSpec], task_id: str, case: str, seed: int) -> None:
    """Oracle scores 1.0 and succeeds; no-op scores 0 (unless FAIL is right, or doing nothing
    is: a state-control variant whose toggles all start at their targets); negatives fail; the
    oracle's state with FAIL (DONE on an infeasible task) scores 0."""
    [result] = [c for c in report.cases
                if (c.task_id, c.case, c.seed) == (task_id, case, seed)]
    assert result.error is None, result.error
    if case in ("oracle", "gui_oracle"):
        assert result.score == 1.0 and result.success, result.failed_criteria
    elif case.startswith("status:"):  # the oracle's state ended the other way: no credit
        assert result.score == 0.0 and not result.success, result.failed_criteria
    elif case == "noop" and result.noop_correct:  # a negative toggle instruction: leave it
        assert result.score == 1.0 and result.success, result.failed_criteria
    elif case == "noop" and not specs[task_id].infeasible:
        assert result.score == 0.0 and not result.success
    else:
        assert not result.success, (result.score, result.failed_criteria)


def check_cross(report, specs: dict[str, TaskSpec], seeds: tuple[int, ...]) -> None:
    """No task's evaluator accepts another task's oracle state; F1 of success >= 0.99."""
    n_tasks = len(specs)
    assert len(report.cross) == n_tasks * (n_tasks - 1) * len(seeds)
    assert [(x.evaluator_task, x.state_task) for x in report.cross if x.success] == []
    assert report.metrics["f1"] >= 0.99, report.table()


def check_cheats(report, task_id: str) -> None:
    """Every cheat played on the task (generic ones on its real start state and the spec's own
    as episodes) scored 0, or at most the placeholder limit without success."""
    cheats = [c for c in report.cases if c.task_id == task_id and c.is_cheat]
    assert cheats, f"{task_id}: the audit played no cheat (was it run with cheats=True?)"
    assert [(c.case, c.seed, round(c.score, 3), c.success, c.error, c.failed_criteria)
            for c in cheats if not c.ok] == []


def check_answer_units(task, work, key: str, unit: str, equivalents, wrong: float) -> None:
    """A unit-declaring ``answer_number`` criterion of a staged ``task``: the gold value (at the
    dotted ``key``) passes with its unit, bare, and in each equivalent unit; the number of
    another unit given bare, and the right number with a wrong unit, fail."""
    from sciagent_gym.evaluation import FinalState, evaluate

    value = task.gold
    for part in key.split("."):
        value = value[part]
    [answer] = [c for c in task.criteria() if c.getter == "answer_number"]

    def score(text: str) -> bool:
        state = FinalState(work_dir=work, app_state=None, agent_status="done", answer=text)
        return evaluate([answer], state).success

    assert score(f"{value:.6g} {unit}") and score(f"{value:.6g}")
    for factor, other in equivalents:
        assert score(f"{value * factor:.6g} {other}"), other
    assert not score(f"{value * wrong:.6g}")  # the number of another unit, no unit given
    assert not score(f"{value:.6g} {equivalents[0][1]}")  # the right number, wrong unit
