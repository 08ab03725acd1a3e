"""Every ImageJ task proven on the real app through the audit: oracle = 1.0, no-op = 0, each
negative fails, and no task's evaluator accepts another task's oracle state (F1 >= 0.99)."""

from __future__ import annotations

import pytest

import sciagent_gym  # noqa: F401
from sciagent_gym.audit import audit_tool
from sciagent_gym.tasks.spec import load_specs
from sciagent_gym.tools import task_specs_root

pytestmark = pytest.mark.e2e
SPECS = load_specs(task_specs_root(), "imagej")
SEEDS = (0, 1)
CASES = [(task_id, case, seed) for task_id, spec in sorted(SPECS.items())
         for case in ("oracle", "noop", *sorted(spec.negatives)) for seed in SEEDS]


@pytest.fixture(scope="module")
def report():
    return audit_tool("imagej", seeds=SEEDS)


@pytest.mark.parametrize(("task_id", "case", "seed"), CASES)
def test_case(report, task_id, case, seed):
    [result] = [c for c in report.cases
                if (c.task_id, c.case, c.seed) == (task_id, case, seed)]
    assert result.error is None, result.error
    if case == "oracle":
        assert result.score == 1.0 and result.success, result.failed_criteria
    elif case == "noop" and not SPECS[task_id].infeasible:
        assert result.score == 0.0 and not result.success
    else:
        assert not result.success, (result.score, result.failed_criteria)


def test_cross_task_matrix_has_no_false_success(report):
    n_tasks = len(SPECS)
    assert len(report.cross) == n_tasks * (n_tasks - 1) * len(SEEDS)
    accepted = [(x.evaluator_task, x.state_task) for x in report.cross if x.success]
    assert accepted == []
    assert report.metrics["f1"] >= 0.99, report.table()


def test_report_table_and_json(report):
    table = report.table()
    assert "F1=" in table and all(task_id in table for task_id in SPECS)
    data = report.to_dict()
    assert data["passed"] == report.passed and data["counts"]["tp"] == len(SPECS) * len(SEEDS)
