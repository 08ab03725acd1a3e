"""Every ImageJ task proven on the real app: oracle = 1.0, no-op = 0, each negative fails."""

from __future__ import annotations

import pytest

import sciagent_gym  # noqa: F401
from sciagent_gym.tasks.oracle import run_steps
from sciagent_gym.tasks.spec import load_specs
from sciagent_gym.tools import task_specs_root

pytestmark = pytest.mark.e2e
SPECS = load_specs(task_specs_root(), "imagej")
CASES = [(task_id, case) for task_id, spec in sorted(SPECS.items())
         for case in ("oracle", "noop", *sorted(spec.negatives))]
SEEDS = (0, 1)


def _play(env, task_id: str, case: str, seed: int):
    env.reset(seed=seed, options={"task": task_id})
    base = env.unwrapped
    steps = ["DONE"] if case == "noop" else base.task.steps(case)
    run_steps(env, steps)
    if base.evaluation is None:
        env.step("DONE")
    return base.evaluation


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("task_id", "case"), CASES)
def test_task_case(imagej_env, task_id, case, seed):
    ev = _play(imagej_env, task_id, case, seed)
    report = [(c.name, c.passed, c.detail) for c in ev.criteria]
    spec = SPECS[task_id]
    if case == "oracle":
        assert ev.score == 1.0 and ev.success, report
    elif case == "noop":
        if spec.infeasible:  # DONE on an infeasible task is wrong too
            assert not ev.success, report
        else:
            assert ev.score == 0.0 and not ev.success, report
    else:
        assert not ev.success, report
        assert ev.score < 1.0, report
