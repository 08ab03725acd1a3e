"""The audit's summary table, one row per tool, from the JSON reports a test run leaves.

``SCIAGENT_AUDIT_DIR=.audit make test`` (what ``.ci/run`` does) writes ``<tool>.json`` per
audited tool; ``sciagent-gym audit --summary .audit`` prints the Markdown table, so the docs'
table is generated from a measured run and a new tool gets its row with no code written.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from sciagent_gym.runs.audit_report import ORACLES, AuditReport, CaseResult, CrossResult

HEADER = ("| tool | tasks | oracle 1.0 | GUI oracle 1.0 | no-op 0 | negatives fail "
          "| cross-task F1 | cheats held | best cheat score | cheat successes "
          "| cases as expected |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|")


def load_report(path: str | Path) -> AuditReport:
    """An :class:`AuditReport` back from the JSON of ``AuditReport.to_dict``."""
    data = json.loads(Path(path).read_text())
    return AuditReport(tool=data["tool"], seeds=list(data["seeds"]),
                       cases=[CaseResult(**c) for c in data["cases"]],
                       cross=[CrossResult(**x) for x in data["cross"]])


def summary_row(report: AuditReport, display_name: str | None = None) -> str:
    """One Markdown row: what each kind of case was expected to do, and how many did.

    The negatives include the oracle's state scored with the other ending (``status:*``:
    FAIL on a feasible task, DONE on an infeasible one), which must score 0.
    Cases whose right answer is to do nothing (a state-control variant whose toggles already
    are as asked) are counted apart: there a no-op, and DONE as a "cheat", rightly succeed.
    """
    cases = report.cases
    tasks = len({c.task_id for c in cases})
    oracle = [c for c in cases if c.case == "oracle"]
    noop = [c for c in cases if c.case == "noop"]
    gui = [c for c in cases if c.gui]
    negatives = [c for c in cases if c.case not in (*ORACLES, "noop") and not c.is_cheat]
    cheats = [c for c in cases if c.is_cheat]
    noop_idle = [c for c in noop if c.noop_correct]
    noop_rest = [c for c in noop if not c.noop_correct]
    cheat_rest = [c for c in cheats if not c.noop_correct]
    idle_successes = sum(c.success for c in cheats if c.noop_correct)

    def frac(good: int, total: int) -> str:
        return f"{good}/{total}"

    noop_cell = frac(sum(c.ok for c in noop_rest), len(noop_rest))
    if noop_idle:
        plural = "s" if len(noop_idle) > 1 else ""
        noop_cell += (f" (+{len(noop_idle)} do-nothing variant{plural}: "
                      f"{min(c.score for c in noop_idle):.1f})")
    successes = str(sum(c.success for c in cheat_rest))
    if idle_successes:
        successes += (f" (+{idle_successes} on do-nothing variants: DONE is right there)")
    best = max((c.score for c in cheat_rest), default=0.0)
    cells = [display_name or report.tool, str(tasks),
             frac(sum(c.score == 1.0 and c.success for c in oracle), len(oracle)),
             f"{frac(sum(c.ok for c in gui), len(gui))} "
             f"({len({c.task_id for c in gui})} of {tasks} tasks)", noop_cell,
             frac(sum(c.ok if c.is_swapped_status else not c.success for c in negatives),
                  len(negatives)),
             f"{report.metrics['f1']:.3f}",
             frac(sum(c.ok for c in cheats), len(cheats)) if cheats else "not played",
             f"{best:.2f}" if cheats else "-", successes if cheats else "-",
             frac(sum(c.ok for c in cases), len(cases))]
    return "| " + " | ".join(cells) + " |"


def summary_markdown(reports: Iterable[tuple[AuditReport, str]]) -> str:
    """The table for ``(report, display name)`` pairs, in the order given."""
    return "\n".join([HEADER, *(summary_row(r, name) for r, name in reports)])
