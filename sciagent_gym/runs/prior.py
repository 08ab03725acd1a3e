"""The prior audit: can an answer learnt across variants, without looking at the data, pay?

A policy trained over many episodes of a task learns whatever the answers share: a value that is
often right, a multiple-choice letter that wins more than its share, an answer the instruction
text already decides. For every scored answer criterion (the agent's ``answer(...)``, read by an
``answer_*`` getter) this audit stages variants host-side, as a reset does but with no program
started, so it covers every tool, installed or not:

- **train**: ``train`` variants of the train split give the candidate constants: every observed
  gold answer, the median of numeric golds and, for multiple choice, every option letter;
- **unseen**: ``unseen`` variants of the val and test splits score each candidate with the
  criterion's own check; the best candidate's pass share is the criterion's *prior share*;
- **instruction-determined**: variants (train and unseen) are grouped by their instruction text;
  a group of at least three whose gold answers are all the same says the data does not decide
  the answer (it follows from the instruction, or from nothing).

Targets (issue 33): no prior share above :data:`LIMIT` (multiple choice: no letter above chance
plus :data:`CHOICE_SLACK`) and no instruction-determined criterion. A criterion behind a gate on
the program's state or files (``gated``) still counts, since a policy may learn that cheaper
part of the work too, but is marked so. Criteria whose checks do not say what passes (a regex, a
similarity to a reference text) are listed as not covered.
"""

from __future__ import annotations

import statistics
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from sciagent_gym.evaluation import Criterion, FinalState, evaluate
from sciagent_gym.evaluation.answer_checks import LETTERS, expected_index
from sciagent_gym.providers.local.sandbox import INSIDE_HOME
from sciagent_gym.tasks.spec import TaskSpec
from sciagent_gym.tasks.task import STATUS_GATE, Task, variant_split
from sciagent_gym.tools import load_adapter, load_tool_specs

#: The highest share of unseen variants a constant answer may pass.
LIMIT = 0.10
#: Multiple choice: how far above chance (1 / options) the best letter may be.
CHOICE_SLACK = 0.05
#: Paths as the local provider shows them (instructions and params may name them).
PATHS = {"home": INSIDE_HOME, "work": f"{INSIDE_HOME}/work", "tmp": "/tmp"}
#: Getters that read the agent's ``answer(...)``; their criteria are what this audit covers.
ANSWER_PREFIX = "answer_"
#: Where scripts/update_readme.py puts :func:`readme_section` in docs/rewards-and-splits.md (up
#: to the end marker).
README_MARKER = ("<!-- generated: benchmarks/results/prior-all.json "
                 "(sciagent-gym audit --prior --json) -->\n")
#: Gates that guard nothing about the program's state: the answer's presence, the ending.
_FREE_GATES = ("answer_given", "agent_status", "file_sha256")


@dataclass
class CriterionPrior:
    """One scored answer criterion of one task, over its staged variants."""

    task_id: str
    criterion: str
    getter: str
    check: str
    train: int = 0  # variants that gave candidates
    unseen: int = 0  # variants the candidates were scored on
    best: str | None = None  # the constant answer that passed most unseen variants
    share: float = 0.0  # its share of them
    limit: float = LIMIT  # the share it may reach (chance + slack for multiple choice)
    choices: int = 0  # options of a multiple-choice criterion (0: not one)
    gated: str | None = None  # a gate on program state or files in front of it
    groups: int = 0  # instruction groups of at least 3 variants
    determined: int = 0  # ... of them with one gold answer for all
    example: str = ""  # one determined group's instruction (shortened)
    covered: bool = True
    note: str = ""

    @property
    def over(self) -> bool:
        return self.covered and self.unseen > 0 and self.share > self.limit + 1e-9

    @property
    def ok(self) -> bool:
        return not self.over and self.determined == 0


@dataclass
class PriorReport:
    tool: str
    criteria: list[CriterionPrior] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)  # task id -> why it was not staged

    @property
    def passed(self) -> bool:
        return not self.errors and all(c.ok for c in self.criteria)

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "passed": self.passed, "errors": self.errors,
                "criteria": [asdict(c) | {"over": c.over, "ok": c.ok} for c in self.criteria]}

    def row(self) -> dict[str, Any]:
        """The per-tool summary: answer criteria, the worst prior share, how many are over
        their limit, how many the instruction decides, how many are not covered."""
        covered = [c for c in self.criteria if c.covered and c.unseen]
        worst = max(covered, key=lambda c: c.share, default=None)
        return {"tool": self.tool, "criteria": len(self.criteria),
                "worst": round(worst.share, 3) if worst else None,
                "worst_at": f"{worst.task_id}: {worst.criterion}" if worst else "",
                "over": sum(c.over for c in self.criteria),
                "determined": sum(c.determined > 0 for c in self.criteria),
                "gated": sum(c.gated is not None for c in self.criteria),
                "not_covered": sum(not c.covered for c in self.criteria),
                "errors": len(self.errors)}

    def table(self) -> str:
        lines = [f"prior audit of {self.tool}",
                 f"{'task / criterion':<64} {'share':>6} {'of':>6} {'limit':>6} {'instr.':>7}"
                 "  best"]
        for c in self.criteria:
            name = f"{c.task_id}: {c.criterion}"[:64]
            if not c.covered:
                lines.append(f"{name:<64} {'-':>6} {'':>6} {'':>6} {'':>7}  not covered: "
                             f"{c.note}")
                continue
            mark = " OVER" if c.over else ""
            det = f"{c.determined}/{c.groups}" if c.groups else "-"
            of = f"{round(c.share * c.unseen)}/{c.unseen}"
            lines.append(f"{name:<64} {c.share:>6.2f} {of:>6} {c.limit:>6.2f} {det:>7}  "
                         f"{(c.best or '')[:24]!r}{mark}"
                         + (f" (gated: {c.gated[:30]})" if c.gated else ""))
        for task_id, why in self.errors.items():
            lines.append(f"  NOT STAGED {task_id}: {why}")
        r = self.row()
        lines.append(f"{r['criteria']} answer criteria: worst share {r['worst']}, "
                     f"{r['over']} over the limit, {r['determined']} decided by the "
                     f"instruction, {r['not_covered']} not covered")
        return "\n".join(lines)


# -- what passes a criterion --------------------------------------------------------------------

def gold_answer(c: Criterion) -> str | None:
    """An answer text that passes ``c`` on its own variant, read off its check's parameters
    (with the getter's label in front where it reads one: "a = 4.2"), or None when they do
    not say (a regex, a similarity to a reference text)."""
    p = c.check_params
    label = c.getter_params.get("label") if c.getter == "answer_number" else None
    if label and c.check == "numeric" and "expected" in p:  # read as "label = value"
        return f"{label} = {_plain(p['expected'])}"
    if c.check in ("numeric", "equals", "text") and "expected" in p:
        return _plain(p["expected"])
    if c.check == "choice":
        return LETTERS[expected_index(p["expected"], p["options"])]
    if c.check == "list_equal" and isinstance(p.get("expected"), list):
        return ", ".join(_plain(v) for v in p["expected"])
    if c.check == "one_of" and p.get("options"):
        return _plain(p["options"][0])
    if c.check == "in_range" and p.get("min") is not None and p.get("max") is not None:
        return _plain((float(p["min"]) + float(p["max"])) / 2)
    return None


def _plain(v: Any) -> str:
    if isinstance(v, float):
        return repr(v) if v != int(v) or abs(v) >= 1e15 else str(int(v))
    return str(v)


def passes(c: Criterion, answer: str, work: Path) -> bool:
    """Whether ``c``'s own check passes on a final state whose only content is ``answer``
    (taken out of its stage: the stages before it are the work this audit does not do)."""
    state = FinalState(work_dir=work, agent_status="done", answer=answer)
    alone = replace(c, stage="", blocks_from=(), gate=False)
    return evaluate([alone], state).criteria[0].passed


def _gate_in_front(criteria: list[Criterion], i: int) -> str | None:
    """The first gate before criterion ``i`` that guards program state or files (a gate on
    its stage, an unstaged gate, or an earlier stage it is blocked by)."""
    me = criteria[i]
    for c in criteria[:i]:
        if not c.gate or c.getter in _FREE_GATES or c.getter.startswith(ANSWER_PREFIX):
            continue
        if c.stage in ("", me.stage) or c.stage in me.blocks_from:
            return c.name
    return None


# -- staging ---------------------------------------------------------------------------------

@dataclass
class _Variant:
    seed: int
    split: str
    instruction: str
    criteria: list[Criterion]


def _variants(spec: TaskSpec, generators: dict, train: int, unseen: int,
              scratch: Path, max_seed: int = 2000) -> Iterable[_Variant]:
    """Staged variants: ``train`` of the train split, then ``unseen`` of val and test."""
    want = {"train": train, "unseen": unseen}
    limit = len(spec.queries) if spec.queries else max_seed
    for seed in range(limit):
        split = variant_split(spec, seed)
        kind = "train" if split == "train" else "unseen"
        if want[kind] <= 0:
            if not any(want.values()):
                return
            continue
        want[kind] -= 1
        task = Task(spec, seed, generators, PATHS)
        try:
            task.stage(scratch / f"{seed}")
            yield _Variant(seed, kind, task.instruction, task.criteria())
        finally:
            task.cleanup()


def audit_task(spec: TaskSpec, generators: dict, train: int = 30, unseen: int = 30,
               progress: Callable[[], None] | None = None) -> list[CriterionPrior]:
    """The prior of every scored answer criterion of ``spec`` (none for an infeasible task,
    whose answer criteria carry no weight)."""
    if spec.infeasible:
        return []
    with tempfile.TemporaryDirectory(prefix="sciagent-prior-") as tmp:
        scratch, empty = Path(tmp) / "stage", Path(tmp) / "empty"
        empty.mkdir()
        variants = []
        for v in _variants(spec, generators, train, unseen, scratch):
            variants.append(v)
            if progress:
                progress()
        return _judge(spec.id, variants, empty)


def _judge(task_id: str, variants: list[_Variant], empty: Path) -> list[CriterionPrior]:
    if not variants:
        return []
    first = variants[0].criteria
    out = []
    for i, c in enumerate(first):
        if c.weight <= 0 or not c.getter.startswith(ANSWER_PREFIX) or c.name == STATUS_GATE:
            continue
        prior = CriterionPrior(task_id, c.name, c.getter, c.check,
                               gated=_gate_in_front(first, i))
        per = [(v, next((x for x in v.criteria if x.name == c.name), None)) for v in variants]
        per = [(v, x) for v, x in per if x is not None]
        golds = {v.seed: gold_answer(x) for v, x in per}
        if any(g is None for g in golds.values()):
            prior.covered, prior.note = False, f"a {c.check} check does not say what passes"
            out.append(prior)
            continue
        wrong = [v.seed for v, x in per if not passes(x, golds[v.seed], empty)]
        if wrong:
            prior.covered = False
            prior.note = f"its gold answer fails its own check (seed {wrong[0]})"
            out.append(prior)
            continue
        train = [(v, x) for v, x in per if v.split == "train"]
        unseen = [(v, x) for v, x in per if v.split == "unseen"]
        prior.train, prior.unseen = len(train), len(unseen)
        candidates = _candidates([golds[v.seed] for v, _ in train], [x for _, x in train])
        if c.check == "choice":
            prior.choices = len(c.check_params["options"])
            prior.limit = 1 / prior.choices + CHOICE_SLACK
        best, share = None, 0.0
        for answer in candidates:
            n = sum(passes(x, answer, empty) for _, x in unseen)
            if unseen and n / len(unseen) > share:
                best, share = answer, n / len(unseen)
        prior.best, prior.share = best, share
        _instruction_groups(prior, per, golds, empty)
        out.append(prior)
    return out


def _candidates(golds: list[str], criteria: list[Criterion]) -> list[str]:
    """Every observed gold answer, the median of the numeric ones, every option letter."""
    out = list(dict.fromkeys(golds))
    numbers = []
    for g in golds:
        try:
            numbers.append(float(g))
        except ValueError:
            pass
    if numbers:
        out.append(_plain(statistics.median(numbers)))
    for c in criteria:
        if c.check == "choice":
            out += [LETTERS[i] for i in range(len(c.check_params["options"]))]
    return list(dict.fromkeys(out))


def _instruction_groups(prior: CriterionPrior, per: list, golds: dict[int, str],
                        empty: Path) -> None:
    groups: dict[str, list] = defaultdict(list)
    for v, x in per:
        groups[v.instruction].append((v, x))
    for text, members in groups.items():
        if len(members) < 3:
            continue
        prior.groups += 1
        answer = golds[members[0][0].seed]
        if all(passes(x, answer, empty) for _, x in members):
            prior.determined += 1
            prior.example = prior.example or " ".join(text.split())[:160]


def audit_prior(tool: str, tasks: Iterable[str] | None = None, train: int = 30,
                unseen: int = 30, progress: Callable[[str], None] | None = None
                ) -> PriorReport:
    """The prior audit of ``tool``'s tasks (all, or ``tasks``); nothing is started."""
    adapter = load_adapter(tool)
    specs = load_tool_specs(tool)
    report = PriorReport(tool)
    for task_id in sorted(tasks or specs):
        if task_id not in specs:
            raise ValueError(f"{tool} has no task {task_id!r}")
        try:
            report.criteria += audit_task(
                specs[task_id], adapter.generators, train, unseen,
                progress=(lambda t=task_id: progress(t)) if progress else None)
        except Exception as exc:  # a generator that cannot stage is a finding, not a crash
            report.errors[task_id] = f"{type(exc).__name__}: {str(exc)[:300]}"
    return report


def summary_markdown(reports: Iterable[PriorReport]) -> str:
    """The docs' table (docs/rewards-and-splits.md): a row per tool."""
    lines = ["| tool | answer criteria | worst constant share | where | above target "
             "| decided by the instruction | behind a state gate | not covered |",
             "|---|---|---|---|---|---|---|---|"]
    for r in reports:
        row = r.row()
        worst = "-" if row["worst"] is None else f"{row['worst']:.2f}"
        lines.append(f"| {r.tool} | {row['criteria']} | {worst} | {row['worst_at'][:60]} "
                     f"| {row['over']} | {row['determined']} | {row['gated']} "
                     f"| {row['not_covered']}" + (f" ({row['errors']} tasks not staged)"
                                                  if row["errors"] else "") + " |")
    return "\n".join(lines)


def report_from_dict(data: dict[str, Any]) -> PriorReport:
    """A :class:`PriorReport` back from :meth:`PriorReport.to_dict`."""
    names = set(CriterionPrior.__dataclass_fields__)
    return PriorReport(data["tool"],
                       [CriterionPrior(**{k: v for k, v in c.items() if k in names})
                        for c in data["criteria"]], dict(data.get("errors") or {}))


def readme_section(data: dict[str, Any]) -> str:
    """What the docs show of ``audit --prior --json``: how it was measured, the table."""
    reports = [report_from_dict(t) for t in data["tools"]]
    total = sum(len(r.criteria) for r in reports)
    over = sum(r.row()["over"] for r in reports)
    decided = sum(r.row()["determined"] for r in reports)
    return (f"Measured on {data.get('measured', '?')} with `sciagent-gym audit --prior --json > "
            f"benchmarks/results/prior-all.json` ({data['train']} train and {data['unseen']} "
            f"unseen variants a task where it has that many; {data.get('seconds', '?')} s): "
            f"{total} scored answer criteria, {over} above target, {decided} decided by the "
            "instruction.\n\n" + summary_markdown(reports))
