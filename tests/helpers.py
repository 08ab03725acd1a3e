"""What every tool's task audit test asserts, shared so the per-tool modules stay thin."""

from __future__ import annotations

import json
import os
from pathlib import Path

from sciagent_gym.runs.audit import AuditReport, audit_tool
from sciagent_gym.tasks.spec import TaskSpec
from sciagent_gym.tools import load_tool_specs


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
             for case in ("oracle", "noop", *sorted(spec.negatives)) for seed in seeds]
    return specs, cases


def check_case(report, specs: dict[str, TaskSpec], task_id: str, case: str, seed: int) -> None:
    """Oracle scores 1.0 and succeeds; no-op scores 0 (unless FAIL is right, or doing nothing
    is: a state-control variant whose toggles all start at their targets); negatives fail."""
    [result] = [c for c in report.cases
                if (c.task_id, c.case, c.seed) == (task_id, case, seed)]
    assert result.error is None, result.error
    if case == "oracle":
        assert result.score == 1.0 and result.success, result.failed_criteria
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
