"""CSMBench's evaluation of run directories: accuracy of the multiple-choice items, and STS,
BERTScore F1 and (with a judge endpoint) the LLM judge's 1-10 mean of the open items, overall
and cut by the figure's scale (a ``scale:<atomic|micro|meso|macro>`` tag) and item type.

An episode is a CSMBench item when its spec is tagged ``csmbench``: multiple-choice when its
criteria hold a ``choice`` check (correct when every such criterion passed, as recorded),
open when they hold ``sts_at_least``, else a value item (a number or name checked by other
ops: correct when the episode succeeded), reported beside them by accuracy. The open items'
reference texts are gold values, which no run keeps; like ``rescore``, the report stages the
same variant into a scratch directory to recompute them, and reads the agent's answer from the
episode's saved final state. An open item with no answer scores STS 0, BERTScore F1 0 and
judge 1 (the scale's floor), and is counted as unanswered.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciagent_gym.errors import AgentError

TAG = "csmbench"
SCALES = ("atomic", "micro", "meso", "macro")
_DEFAULT_PATHS = {"home": "/home/user", "work": "/home/user/work", "tmp": "/tmp"}


@dataclass
class Item:
    """One episode as a CSMBench item."""

    task_id: str
    variant: int
    kind: str  # "mc", "open" (free text, STS) or "value" (a number or name checked otherwise)
    scale: str
    correct: bool = False
    answer: str | None = None
    reference: str = ""
    question: str = ""


def _scale(spec) -> str:
    found = [t.split(":", 1)[1] for t in spec.tags if t.startswith("scale:")]
    return found[0] if found else "unscaled"


def _op(criterion: Mapping[str, Any]) -> Any:
    check = criterion.get("check")
    return check.get("op") if isinstance(check, Mapping) else check


def _answer(result: Mapping[str, Any]) -> str | None:
    """The agent's answer, from the saved final state (None when it gave none)."""
    directory = result.get("directory")
    meta = Path(directory) / "final_state" / "meta.json" if directory else None
    if meta is not None and meta.is_file():
        text = json.loads(meta.read_text()).get("answer")
        return text if isinstance(text, str) and text.strip() else None
    return None


def _staged_reference(spec, result: Mapping[str, Any], scratch: Path) -> tuple[str, str]:
    """(reference text of the open item's sts_at_least criterion, the task's instruction),
    from the variant staged again (its generators are seeded)."""
    from sciagent_gym.tasks.task import Task
    from sciagent_gym.tools import load_adapter

    task = Task(spec, result["variant"], load_adapter(spec.tool).generators,
                result.get("paths") or _DEFAULT_PATHS)
    try:
        task.stage(scratch)
        refs = [c.check_params["reference"] for c in task.criteria()
                if c.check == "sts_at_least"]
    finally:
        task.cleanup()
    return " ".join(refs), task.instruction


def csmbench_items(results: Iterable[Mapping[str, Any]],
                   specs: Mapping[str, Any] | None = None) -> list[Item]:
    """The runs' episodes of csmbench-tagged tasks as items. ``specs`` (by task id; default:
    the installed tools' of those tasks) give tags, criteria and generators."""
    results = list(results)
    if specs is None:
        from sciagent_gym.tools import discover, load_tool_specs

        tools = {r["task_id"].split("/", 1)[0] for r in results} & set(discover())
        specs = {}
        for tool in tools:
            specs.update(load_tool_specs(tool))
    items: list[Item] = []
    with tempfile.TemporaryDirectory(prefix="sciagent-csmbench-") as scratch:
        for n, r in enumerate(results):
            spec = specs.get(r["task_id"])
            if spec is None or TAG not in spec.tags:
                continue
            ops = {_op(c) for c in spec.evaluator}
            kind = "mc" if "choice" in ops else "open" if "sts_at_least" in ops else "value"
            item = Item(r["task_id"], int(r["variant"]), kind, _scale(spec))
            if item.kind == "mc":
                names = {c.get("name") for c in spec.evaluator if _op(c) == "choice"}
                got = [c for c in r.get("criteria", []) if c.get("name") in names]
                item.correct = bool(got) and all(c.get("passed") for c in got)
            elif kind == "open":
                item.answer = _answer(r)
                item.reference, item.question = _staged_reference(spec, r,
                                                                  Path(scratch) / str(n))
            else:
                item.correct = bool(r.get("success"))
            items.append(item)
    return items


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _judge_all(judge, items: list[Item]) -> tuple[dict[int, float], int, str]:
    """Judge scores by item index (answered items; unanswered get the floor 1), how many got
    no score (an error or a reply without one) and the first error."""
    scores: dict[int, float] = {}
    missing, first_error = 0, ""
    for i, it in enumerate(items):
        if it.answer is None:
            scores[i] = 1.0
            continue
        try:
            score, _ = judge.score(it.answer, it.reference, it.question)
        except AgentError as exc:
            score, first_error = None, first_error or str(exc)
        if score is None:
            missing += 1
        else:
            scores[i] = float(score)
    return scores, missing, first_error


def csmbench_summary(items: list[Item], bertscore: bool = True, judge=None) -> dict[str, Any]:
    """Accuracy, STS, BERTScore F1 and judge means, overall and per (scale, type)."""
    from sciagent_gym.benchmarks.csmbench.text_scores import BERTSCORE_VARIANT
    from sciagent_gym.benchmarks.csmbench.text_scores import bertscore as bert_fn

    open_items = [it for it in items if it.kind == "open"]
    answered = [i for i, it in enumerate(open_items) if it.answer is not None]
    sts = {i: 0.0 for i in range(len(open_items))}
    bert: dict[int, float] = {}
    bert_note = "no open items"
    if answered:
        from sciagent_gym.evaluation.sentence_model import sts as sts_fn

        got = sts_fn([open_items[i].answer for i in answered],
                     [open_items[i].reference for i in answered])
        sts.update(zip(answered, got, strict=True))
        if bertscore:
            scores = bert_fn([open_items[i].answer for i in answered],
                             [open_items[i].reference for i in answered])
            if scores.available:
                bert = {i: 0.0 for i in range(len(open_items))}
                bert.update(zip(answered, scores.f1, strict=True))
                bert_note = BERTSCORE_VARIANT
            else:
                bert_note = f"not available: {scores.unavailable}"
        else:
            bert_note = "not requested"
    judged, judge_missing, judge_error = ({}, 0, "") if judge is None else \
        _judge_all(judge, open_items)

    def cell(mc: list[Item], idx: list[int], values: list[Item]) -> dict[str, Any]:
        return {"mc_items": len(mc),
                "accuracy": _mean([float(it.correct) for it in mc]),
                "value_items": len(values),
                "value_accuracy": _mean([float(it.correct) for it in values]),
                "open_items": len(idx),
                "answered": sum(open_items[i].answer is not None for i in idx),
                "sts": _mean([sts[i] for i in idx]),
                "bertscore_f1": _mean([bert[i] for i in idx]) if bert else None,
                "judge": _mean([judged[i] for i in idx if i in judged]) if judge else None,
                "judged": sum(i in judged for i in idx)}

    mc_all = [it for it in items if it.kind == "mc"]
    values = [it for it in items if it.kind == "value"]
    scales = sorted({it.scale for it in items},
                    key=lambda s: (SCALES.index(s) if s in SCALES else len(SCALES), s))
    by_scale = {s: cell([it for it in mc_all if it.scale == s],
                        [i for i, it in enumerate(open_items) if it.scale == s],
                        [it for it in values if it.scale == s]) for s in scales}
    return {"items": len(items), "overall": cell(mc_all, list(range(len(open_items))), values),
            "by_scale": by_scale, "bertscore": bert_note,
            "judge": (f"{judge.model} at {judge.url}" if judge else "not requested"),
            "judge_missing": judge_missing, "judge_error": judge_error}


def _f(v: float | None, digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def format_csmbench(summary: Mapping[str, Any]) -> str:
    """CSMBench's table: one row per scale and item type, then all."""
    lines = [f"CSMBench: {summary['items']} items; BERTScore: {summary['bertscore']}; "
             f"LLM judge: {summary['judge']}"]
    if summary.get("judge_missing"):
        lines.append(f"  judge gave no score for {summary['judge_missing']} answered item(s)"
                     + (f" (first error: {summary['judge_error']})"
                        if summary.get("judge_error") else ""))
    lines.append(f"{'scale':<10} {'type':<5} {'items':>5} {'accuracy':>8} {'answered':>8} "
                 f"{'STS':>6} {'BERT-F1':>7} {'judge':>5}")
    rows = [*summary["by_scale"].items(), ("all", summary["overall"])]
    for name, c in rows:
        if c["mc_items"]:
            lines.append(f"{name:<10} {'mc':<5} {c['mc_items']:>5} {_f(c['accuracy']):>8} "
                         f"{'-':>8} {'-':>6} {'-':>7} {'-':>5}")
        if c["value_items"]:
            lines.append(f"{name:<10} {'value':<5} {c['value_items']:>5} "
                         f"{_f(c['value_accuracy']):>8} {'-':>8} {'-':>6} {'-':>7} {'-':>5}")
        if c["open_items"]:
            lines.append(f"{name:<10} {'open':<5} {c['open_items']:>5} {'-':>8} "
                         f"{c['answered']:>8} {_f(c['sts']):>6} {_f(c['bertscore_f1']):>7} "
                         f"{_f(c['judge'], 2):>5}")
    return "\n".join(lines)


def report_run(run_dir: str | Path, judge_url: str | None = None, judge_model: str | None = None,
               judge_key: str | None = None, specs: Mapping[str, Any] | None = None
               ) -> dict[str, Any] | None:
    """CSMBench's summary of a run directory's csmbench-tagged episodes (None when it has
    none), with the LLM judge when ``judge_url`` is given."""
    from sciagent_gym.run_records import find_episodes

    results = [{**json.loads((ep / "result.json").read_text()), "directory": str(ep)}
               for ep in find_episodes(run_dir)]
    items = csmbench_items(results, specs)
    if not items:
        return None
    judge = None
    if judge_url:
        from sciagent_gym.benchmarks.csmbench.text_scores import JUDGE_MODEL, Judge

        judge = Judge(judge_url, model=judge_model or JUDGE_MODEL,
                      api_key=judge_key or os.environ.get("SCIAGENT_JUDGE_API_KEY", ""))
    return csmbench_summary(items, judge=judge)


def report_section(results: list[dict[str, Any]], args: Any) -> tuple[Any, str]:
    """``report``'s hook: CSMBench's summary of the first run directory (``--judge-url``,
    ``--judge-model``, ``--judge-key``) and its table to print after the episode table
    ((None, "") when the run has no CSMBench items)."""
    summary = report_run(args.run_dir[0], getattr(args, "judge_url", None),
                         getattr(args, "judge_model", None), getattr(args, "judge_key", None))
    if summary is None:
        return None, ""
    return summary, "\n\n" + format_csmbench(summary)


def add_options(parser: Any) -> None:
    parser.add_argument("--judge-url", metavar="URL",
                        help="CSMBench items: an OpenAI-compatible endpoint (ending before "
                             "/chat/completions) whose model scores open answers 1-10")
    parser.add_argument("--judge-model", default="gpt-4o-2024-11-20",
                        help="the judge's model name (default: CSMBench's, gpt-4o-2024-11-20)")
    parser.add_argument("--judge-key",
                        help="the judge's API key (default: $SCIAGENT_JUDGE_API_KEY)")
