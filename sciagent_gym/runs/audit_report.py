"""What an audit found: a result per case and per cross-task judgement, counted into precision,
recall and F1 of the success decision, printed as a table and saved as JSON
(:mod:`sciagent_gym.runs.audit` plays the cases; :mod:`sciagent_gym.runs.audit_summary` makes
the README's row per tool)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

#: The cases that must succeed with 1.0.
ORACLES = ("oracle", "gui_oracle")


@dataclass
class CaseResult:
    task_id: str
    seed: int
    case: str  # "oracle", "noop", a negative's name, "cheat:<name>" or "status:<ending>"
    score: float
    success: bool
    ok: bool
    failed_criteria: list[str]
    seconds: float
    error: str | None = None
    noop_correct: bool = False  # a state-control variant whose right answer is to do nothing
    modality: str = "gui"
    limit: float = 0.0  # the highest score a cheat may earn
    steps: int = 0  # step() calls the case made
    gui: bool = False  # played through step() alone (a GUI oracle, or a GUI-only oracle)
    shared: bool = False  # scored on the oracle's program start (see _play_sharing)
    interface: str | None = None  # a GUI case: how its oracle works (menus, console, mixed)

    @property
    def is_cheat(self) -> bool:
        return self.case.startswith("cheat:")

    @property
    def is_swapped_status(self) -> bool:
        """The oracle's state re-scored with the other ending (see ``audit._swapped_status``)."""
        return self.case.startswith("status:")


@dataclass
class CrossResult:
    state_task: str
    evaluator_task: str
    seed: int
    score: float
    success: bool


@dataclass
class AuditReport:
    tool: str
    seeds: list[int]
    cases: list[CaseResult] = field(default_factory=list)
    cross: list[CrossResult] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        # Success is the right decision for oracles, and for the no-op of a state-control
        # variant whose toggles all start right (StaR's negative instruction).
        def should(c: CaseResult) -> bool:
            return c.case in ORACLES or ((c.case == "noop" or c.is_cheat) and c.noop_correct)

        tp = sum(c.success for c in self.cases if should(c))
        fn = sum(not c.success for c in self.cases if should(c))
        fp = sum(c.success for c in self.cases if not should(c))
        fp += sum(x.success for x in self.cross)
        tn = sum(not c.success for c in self.cases if not should(c))
        tn += sum(not x.success for x in self.cross)
        return {"tp": tp, "fp": fp, "tn": tn, "fn": fn}

    @property
    def metrics(self) -> dict[str, float]:
        c = self.counts
        precision = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 0.0
        recall = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return {"precision": precision, "recall": recall, "f1": f1}

    @property
    def passed(self) -> bool:
        return all(c.ok for c in self.cases) and not any(x.success for x in self.cross)

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "seeds": self.seeds, "passed": self.passed,
                "counts": self.counts, "metrics": self.metrics,
                "cases": [asdict(c) for c in self.cases],
                "cross": [asdict(x) for x in self.cross]}

    def table(self) -> str:
        """One row per task: modality, oracle, no-op, negatives, cross-task false positives and
        (when audited) cheats held and the best cheat score."""
        cheats = any(c.is_cheat for c in self.cases)
        head = (f"{'task':<38} {'modality':<8} {'oracle':>6} {'GUI':>5} {'steps':>5} "
                f"{'no-op':>6} {'negatives':>9} {'swapped':>7} {'cross FP':>8}")
        lines = [f"audit of {self.tool} (seeds {', '.join(map(str, self.seeds))})",
                 head + (f" {'cheats':>7} {'max':>5}" if cheats else "") + "  ok"]
        for task_id in sorted({c.task_id for c in self.cases}):
            mine = [c for c in self.cases if c.task_id == task_id]
            oracle = [c for c in mine if c.case == "oracle"]
            gui = [c for c in mine if c.gui]
            noop = [c for c in mine if c.case == "noop"]
            negs = [c for c in mine if c.case not in (*ORACLES, "noop") and not c.is_cheat
                    and not c.is_swapped_status]
            swapped = [c for c in mine if c.is_swapped_status]
            tricks = [c for c in mine if c.is_cheat]
            cross_fp = sum(x.success for x in self.cross if x.evaluator_task == task_id)
            ok = all(c.ok for c in mine) and cross_fp == 0
            row = (f"{task_id:<38} {mine[0].modality:<8} "
                   f"{_worst(oracle, min):>6} {_worst(gui, min):>5} "
                   f"{'-' if not gui else max(c.steps for c in gui):>5} {_worst(noop, max):>6} "
                   f"{sum(not c.success for c in negs):>4}/{len(negs):<4} "
                   f"{_worst(swapped, max):>7} {cross_fp:>8}")
            if cheats:
                row += (f" {sum(c.ok for c in tricks):>3}/{len(tricks):<3} "
                        f"{_worst(tricks, max):>5}")
            lines.append(row + f"  {'yes' if ok else 'NO'}")
        c, m = self.counts, self.metrics
        swapped = [c for c in self.cases if c.is_swapped_status]
        lines.append(f"the oracle's state ending the other way (FAIL on a feasible task, DONE "
                     f"on an infeasible one): {sum(c.ok for c in swapped)}/{len(swapped)} "
                     "at 0")
        gui = [c for c in self.cases if c.gui]
        lines.append(f"GUI oracles: {sum(c.ok for c in gui)}/{len(gui)} at 1.0 "
                     f"({len({c.task_id for c in gui})} of {len({c.task_id for c in self.cases})} "
                     "tasks have one)")
        kinds = {c.task_id: c.interface for c in gui if c.interface}
        if kinds:
            lines.append("GUI oracles work through: " + ", ".join(
                f"{kind} {list(kinds.values()).count(kind)}"
                for kind in ("menus", "mixed", "console") if kind in kinds.values()))
        lines.append(f"success decisions: tp={c['tp']} fp={c['fp']} tn={c['tn']} fn={c['fn']}  "
                     f"precision={m['precision']:.3f} recall={m['recall']:.3f} "
                     f"F1={m['f1']:.3f}")
        if cheats:
            tricks = [c for c in self.cases if c.is_cheat]
            idle = sum(c.success for c in tricks if c.noop_correct)
            lines.append(f"cheats held: {sum(c.ok for c in tricks)}/{len(tricks)}, "
                         f"cheat successes: {sum(c.success for c in tricks) - idle}"
                         + (f" (and {idle} on do-nothing variants, where doing nothing is right)"
                            if idle else ""))
        for modality in sorted({c.modality for c in self.cases}):
            mine = [c for c in self.cases if c.modality == modality]
            n_tasks = len({c.task_id for c in mine})
            lines.append(f"modality {modality}: {n_tasks} tasks, "
                         f"{sum(c.ok for c in mine)}/{len(mine)} cases as expected")
        for case in self.cases:
            if not case.ok:
                lines.append(f"  FAILED {case.task_id} seed {case.seed} {case.case}: "
                             f"score {case.score:.2f} success {case.success} "
                             f"{case.error or ''} {case.failed_criteria}")
        return "\n".join(lines)


def _worst(cases: list[CaseResult], pick) -> str:
    return f"{pick(c.score for c in cases):.2f}" if cases else "-"


def write_json(report: AuditReport, path: str | Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report.to_dict(), indent=2))
