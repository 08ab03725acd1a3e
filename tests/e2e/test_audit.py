"""Every task of every tool proven on the real program through the audit: oracle = 1.0, no-op =
0 (unless doing nothing is right), each negative fails, every cheat scores 0 (generic ones on
the real start state, the spec's own as episodes), and no task's evaluator accepts another
task's oracle state (F1 >= 0.99).

Parametrised over the discovered tools, so a new tool folder is audited with no test written.
Each tool's checks are one class (``TestAudit_<tool>``), which ``--dist loadscope`` keeps on
one worker while the tools spread over the workers; the tool's audit runs once per process, in
the first of its checks, and is cached for the rest (a parametrised module fixture would be set
up again whenever pytest reorders the checks).

When every tool's audit no longer fits CI's budget, a run audits a rotating sample of the
tools (``rotation.py``: the tools a submission changed, then the others in turn); the rest are
skipped with the reason, and ``SCIAGENT_AUDIT_ALL=1`` audits them all.
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
    runnable_tools,
)
from rotation import audit_sample, rotation_key

from sciagent_gym.tools import discover

# A tool's first check runs its whole audit with the cheats (3-8 min; 8 under load average 9).
pytestmark = pytest.mark.timeout(1200)

#: Seeds audited per tool (the cheapest tool gets a second seed).
SEEDS = {"imagej": (0, 1)}
DEFAULT_SEEDS = (0,)
TOOLS = sorted(discover())
#: The tools this run audits in full (all of them while they fit the budget).
SAMPLE = audit_sample(runnable_tools())
SPECS, CASES = {}, {}
for _tool in TOOLS:
    SPECS[_tool], CASES[_tool] = audit_cases(_tool, SEEDS.get(_tool, DEFAULT_SEEDS))


_AUDITS: dict[str, object] = {}


def audited(tool: str):
    """The tool's audit, run once per process whatever order the checks come in; an audit
    that broke (or timed out) fails every later check of the tool at once, not by running
    again."""
    if tool not in _AUDITS:
        try:
            _AUDITS[tool] = run_audit(tool, SEEDS.get(tool, DEFAULT_SEEDS))
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # also pytest-timeout's and pytest.fail's outcomes
            _AUDITS[tool] = exc
            raise
    result = _AUDITS[tool]
    if isinstance(result, BaseException):
        pytest.fail(f"the {tool} audit broke in an earlier check: {result!r}")
    return result


def _items(tool: str) -> list:
    """Every check of one tool's audit."""
    items = [("case", task_id, case, seed) for task_id, case, seed in CASES[tool]]
    items += [("cheats", task_id, "", 0) for task_id in sorted(SPECS[tool])]
    items += [("cross", "", "", 0), ("report", "", "", 0)]
    return [pytest.param(*item, id="-".join(str(x) for x in item if x != "")) for item in items]


def pytest_generate_tests(metafunc):
    if metafunc.cls is not None and issubclass(metafunc.cls, _ToolAudit):
        metafunc.parametrize(("check", "task_id", "case", "seed"), _items(metafunc.cls.tool))


class _ToolAudit:
    """One tool's checks; a subclass per discovered tool below. A class is one scope of
    ``--dist loadscope``, so each tool's checks stay on one worker and its audit runs once."""

    tool = ""

    def test_audit(self, check, task_id, case, seed):
        tool = self.tool
        report = audited(tool)
        seeds = SEEDS.get(tool, DEFAULT_SEEDS)
        if check == "case":  # oracle 1.0, no-op 0 (unless doing nothing is right), negatives
            check_case(report, SPECS[tool], task_id, case, seed)
        elif check == "cheats":  # every cheat on the task scored 0 (or a placeholder's little)
            check_cheats(report, task_id)
        elif check == "cross":  # no evaluator accepts another task's oracle state; F1 >= 0.99
            check_cross(report, SPECS[tool], seeds)
        else:  # the report's table and JSON agree with what was audited
            table = report.table()
            assert "F1=" in table and all(task_id in table for task_id in SPECS[tool])
            data = report.to_dict()
            assert data["passed"] == report.passed
            # success is right for every oracle and GUI oracle, and for the no-op and DONE
            # "cheat" of a state-control variant that asks for nothing to change
            idle = sum(c.noop_correct for c in report.cases if c.case == "noop" or c.is_cheat)
            oracles = sum(1 + (s.explicit_gui_oracle is not None) for s in SPECS[tool].values())
            assert data["counts"]["tp"] == oracles * len(seeds) + idle


for _tool in TOOLS:
    _name = "TestAudit_" + _tool
    _marks = [requires(tool=_tool)]
    if _tool in runnable_tools() and _tool not in SAMPLE:
        _marks.append(pytest.mark.skip(
            reason=f"not in this run's rotating audit sample {SAMPLE} (key {rotation_key()}; "
                   "SCIAGENT_AUDIT_ALL=1 audits every tool)"))
    globals()[_name] = type(_name, (_ToolAudit,), {
        "tool": _tool, "pytestmark": _marks, "__module__": __name__,
        "__doc__": f"The audit of {_tool}."})
