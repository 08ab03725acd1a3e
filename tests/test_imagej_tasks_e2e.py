"""Every ImageJ task proven on the real app through the audit: oracle = 1.0, no-op = 0, each
negative fails, every cheat (generic ones on the real start state, the spec's own as episodes)
scores 0, and no task's evaluator accepts another task's oracle state (F1 >= 0.99)."""

from __future__ import annotations

import pytest
from audit_checks import audit_cases, check_case, check_cheats, check_cross, run_audit

import sciagent_gym  # noqa: F401

# The module fixture audits every task and plays its cheats (about 10 min under load): headroom.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1800)]
SEEDS = (0, 1)
SPECS, CASES = audit_cases("imagej", SEEDS)


@pytest.fixture(scope="module")
def report():
    return run_audit("imagej", SEEDS)


@pytest.mark.parametrize(("task_id", "case", "seed"), CASES)
def test_case(report, task_id, case, seed):
    check_case(report, SPECS, task_id, case, seed)


@pytest.mark.parametrize("task_id", sorted(SPECS))
def test_cheats_score_zero(report, task_id):
    check_cheats(report, task_id)


def test_cross_task_matrix_has_no_false_success(report):
    check_cross(report, SPECS, SEEDS)


def test_report_table_and_json(report):
    table = report.table()
    assert "F1=" in table and all(task_id in table for task_id in SPECS)
    data = report.to_dict()
    assert data["passed"] == report.passed and data["counts"]["tp"] == len(SPECS) * len(SEEDS)
