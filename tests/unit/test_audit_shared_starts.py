"""The audit scores the no-op and each negative that is the oracle's first steps then DONE on
the oracle's own program start, and gets the same verdicts as when every case is its own
episode (fake provider, fixture tool: one reset instead of several)."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from sciagent_gym.actions import types as A
from sciagent_gym.env import SciGUIEnv
from sciagent_gym.providers.fake import FakeProvider
from sciagent_gym.runs.audit import audit_tool
from sciagent_gym.tasks.task import STATUS_GATE
from sciagent_gym.tools.discovery import add_tools_root, remove_tools_root

FIXTURE_TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "tools"
SUM = "faketool/sum-numbers"
ORACLE = ["pyautogui.click(5, 5)", 'answer("{gold.numbers.sum}")', "DONE"]
NEGATIVES = {
    "no-answer": ["DONE"],  # the oracle's first 0 steps: shared
    "saved-only": ["pyautogui.click(5, 5)", "DONE"],  # its first step: shared
    "wrong-answer": ["pyautogui.click(5, 5)", 'answer("0")', "DONE"],  # not a prefix
    "answer-first": ['answer("{gold.numbers.sum}")', "DONE"],  # not a prefix either
}


@pytest.fixture(scope="module", autouse=True)
def fixture_tools():
    add_tools_root(FIXTURE_TOOLS)
    yield
    remove_tools_root(FIXTURE_TOOLS)


def save_on_click(provider: FakeProvider, action: A.Action) -> None:
    """The fake program's Save button: a click writes sum.txt and marks the state saved."""
    if isinstance(action, A.Click):
        total = sum(int(v) for v in (provider.host_work_dir / "numbers.txt").read_text().split())
        (provider.host_work_dir / "sum.txt").write_text(f"{total}\n")
        provider.app_state["saved"] = True


def audited(share: bool, seeds=(0, 1)):
    env = SciGUIEnv("faketool", provider="fake", screen_size=(160, 100))
    try:
        env.specs[SUM] = replace(env.specs[SUM], oracle=ORACLE, negatives=NEGATIVES)
        env.reset(seed=0, options={"task": SUM})  # the provider exists from the first reset
        env.provider.respond = save_on_click
        before = env.provider.resets
        report = audit_tool("faketool", seeds=seeds, tasks=[SUM], env=env, cross=False,
                            cheats=True, share_starts=share)
        return report, env.provider.resets - before
    finally:
        env.close()


def test_shared_starts_give_the_same_verdicts_with_fewer_program_starts():
    shared, shared_resets = audited(True)
    separate, separate_resets = audited(False)

    def verdicts(report):
        return {(c.seed, c.case): (round(c.score, 6), c.success, c.ok) for c in report.cases}

    assert verdicts(shared) == verdicts(separate)
    assert shared.passed and separate.passed
    by_case = {(c.seed, c.case): c for c in shared.cases}
    # the captured state is the prefix's, not the oracle's later one: saved but no answer
    assert by_case[(0, "saved-only")].score == pytest.approx(0.5)
    assert by_case[(0, "oracle")].score == 1.0
    # the oracle's final state, ended with FAIL instead: the work was done, the score is 0
    swapped = by_case[(0, "status:fail")]
    assert swapped.ok and swapped.score == 0.0 and not swapped.success
    assert swapped.failed_criteria[0] == STATUS_GATE
    assert {c.case for c in shared.cases if c.shared} == {"noop", "no-answer", "saved-only"}
    assert not any(c.shared for c in separate.cases)
    # per seed: oracle, wrong-answer, answer-first (shared) against those and 3 more (separate)
    assert shared_resets == 2 * 3
    assert separate_resets == 2 * 6
    # the generic cheats are scored on the shared no-op state as they are on a played one
    assert sum(c.is_cheat for c in shared.cases) == sum(c.is_cheat for c in separate.cases) > 0


def test_a_broken_oracle_leaves_the_prefix_cases_to_their_own_episodes():
    env = SciGUIEnv("faketool", provider="fake", screen_size=(160, 100))
    try:
        broken = ["pyautogui.click(5, 5)", {"run": "false"}, "DONE"]
        env.specs[SUM] = replace(env.specs[SUM], oracle=broken, negatives=NEGATIVES)
        env.reset(seed=0, options={"task": SUM})
        env.provider.respond = save_on_click
        env.provider.script_command("false", returncode=1)
        report = audit_tool("faketool", seeds=[0], tasks=[SUM], env=env, cross=False)
    finally:
        env.close()
    cases = {c.case: c for c in report.cases}
    assert cases["oracle"].error and not cases["oracle"].ok
    assert not any(c.shared for c in report.cases)
    assert cases["saved-only"].ok and cases["saved-only"].score == pytest.approx(0.5)
    assert cases["noop"].ok


def test_checkpoint_needs_an_episode_in_progress():
    env = SciGUIEnv("faketool", provider="fake", screen_size=(160, 100))
    try:
        with pytest.raises(RuntimeError, match="reset"):
            env.checkpoint()
        env.reset(seed=0, options={"task": SUM})
        stops = env.provider.agent_stops
        assert env.checkpoint().agent_status == "done"
        # the episode goes on: a code tool's terminal and servers live in the agent zone
        assert env.provider.agent_stops == stops
        env.step("DONE")
        assert env.provider.agent_stops > stops
        with pytest.raises(RuntimeError):
            env.checkpoint()
    finally:
        env.close()


def test_an_unknown_task_is_a_clear_error_that_leaves_nothing_behind():
    before = set(Path(tempfile.gettempdir()).glob("sciagent-audit-*"))
    env = SciGUIEnv("faketool", provider="fake", screen_size=(160, 100))
    try:
        with pytest.raises(ValueError, match="no task 'faketool/nope'.*faketool/sum-numbers"):
            audit_tool("faketool", tasks=["faketool/nope"], env=env, cross=False)
    finally:
        env.close()
    assert set(Path(tempfile.gettempdir()).glob("sciagent-audit-*")) == before


def test_the_cross_matrix_stages_each_evaluator_once_per_seed(monkeypatch):
    """Every evaluator judges every other task's oracle state of its seed, and is staged once
    per seed for all of them (n stagings per seed, not n x (n - 1))."""
    import sciagent_gym.runs.audit as audit_module
    from sciagent_gym.tasks.task import Task

    staged: list[tuple[str, int]] = []

    class CountingTask(Task):
        def stage(self, host_work):
            staged.append((self.spec.id, self.seed))
            return super().stage(host_work)

    env = SciGUIEnv("faketool", provider="fake", screen_size=(160, 100))
    try:
        env.specs[SUM] = replace(env.specs[SUM], oracle=ORACLE, negatives=NEGATIVES)
        env.reset(seed=0, options={"task": SUM})
        env.provider.respond = save_on_click
        tasks = sorted(env.specs)
        monkeypatch.setattr(audit_module, "Task", CountingTask)
        report = audit_tool("faketool", seeds=[0, 1], tasks=tasks, env=env, cross=True)
    finally:
        env.close()
    played = {(c.task_id, c.seed) for c in report.cases if c.case == "oracle" and not c.error}
    assert {seed for _, seed in played} == {0, 1} and len({t for t, _ in played}) >= 2
    pairs = [(r.state_task, r.evaluator_task, r.seed) for r in report.cross]
    assert sorted(pairs) == sorted((s, e, seed) for s, seed in played for e in tasks if e != s)
    assert sorted(staged) == sorted({(e, seed) for _, e, seed in pairs})
