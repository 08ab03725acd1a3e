"""Every task of every tool proven on the real program through the audit: oracle = 1.0, no-op =
0 (unless doing nothing is right), each negative fails, every cheat scores 0 (generic ones on
the real start state, the spec's own as episodes), and no task's evaluator accepts another
task's oracle state (F1 >= 0.99).

Parametrised over the discovered tools, so a new tool folder is audited with no test written.
Each tool's audit runs once (a module fixture per tool) and its cases are one xdist group, so
under ``--dist loadgroup`` the tools' audits spread over the workers.
"""

from __future__ import annotations

import pytest
from helpers import (
    audit_cases,
    check_case,
    check_cheats,
    check_cross,
    requires,
    run_audit,
)

from sciagent_gym.tools import discover

# A fixture audits a whole tool and plays its cheats (up to ~10 min under load): headroom.
pytestmark = pytest.mark.timeout(1800)

#: Seeds audited per tool (the cheapest tool gets a second seed).
SEEDS = {"imagej": (0, 1)}
DEFAULT_SEEDS = (0,)
TOOLS = sorted(discover())
SPECS, CASES = {}, {}
for _tool in TOOLS:
    SPECS[_tool], CASES[_tool] = audit_cases(_tool, SEEDS.get(_tool, DEFAULT_SEEDS))


def _params(tool: str, *rest, id: str):
    return pytest.param(tool, *rest, id=f"{tool}-{id}" if id else tool,
                        marks=[pytest.mark.xdist_group(f"audit-{tool}"), requires(tool=tool)])


@pytest.fixture(scope="module")
def report(request):
    tool = request.param
    return run_audit(tool, SEEDS.get(tool, DEFAULT_SEEDS))


@pytest.mark.parametrize(("report", "task_id", "case", "seed"), [
    _params(tool, task_id, case, seed, id=f"{task_id}-{case}-{seed}")
    for tool in TOOLS for task_id, case, seed in CASES[tool]], indirect=["report"])
def test_case(report, task_id, case, seed):
    check_case(report, SPECS[task_id.split("/")[0]], task_id, case, seed)


@pytest.mark.parametrize(("report", "task_id"), [
    _params(tool, task_id, id=task_id) for tool in TOOLS for task_id in sorted(SPECS[tool])],
    indirect=["report"])
def test_cheats_score_zero(report, task_id):
    check_cheats(report, task_id)


@pytest.mark.parametrize("report", [_params(tool, id="") for tool in TOOLS], indirect=True)
def test_cross_task_matrix_has_no_false_success(report, request):
    tool = request.node.callspec.params["report"]
    check_cross(report, SPECS[tool], SEEDS.get(tool, DEFAULT_SEEDS))


@pytest.mark.parametrize("report", [_params(tool, id="") for tool in TOOLS], indirect=True)
def test_report_table_and_json(report, request):
    tool = request.node.callspec.params["report"]
    table = report.table()
    assert "F1=" in table and all(task_id in table for task_id in SPECS[tool])
    data = report.to_dict()
    seeds = SEEDS.get(tool, DEFAULT_SEEDS)
    assert data["passed"] == report.passed and data["counts"]["tp"] == len(SPECS[tool]) * len(seeds)

