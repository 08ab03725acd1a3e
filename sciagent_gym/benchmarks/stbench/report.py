"""ST-Bench's evaluation of run directories: episodes of query-pool tasks back into queries.

Every episode of a task whose metrics are ``stbench_target`` criteria saves the metrics'
values and definitions (``result.json``'s ``stbench``), so a run's queries can be rebuilt
offline and scored by :mod:`sciagent_gym.benchmarks.stbench.evaluation`: realistic-output rate,
conditional pass rate and their product per task, the composite over tasks, and against a
baseline run the win rate, mean gain, time and token cost ratios and efficiency, with cuts by
the tasks' labels. Labels come from the spec: its difficulty and tags written ``domain:…``,
``category:…``, ``capability:…``, ``stage:…``, ``skill:…`` and ``mas:…``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sciagent_gym.benchmarks.stbench.evaluation import (
    TAG_AXES,
    QueryRecord,
    TaskTags,
    compare,
    cut_scores,
    system_score,
)
from sciagent_gym.benchmarks.stbench.metrics import Metric

#: Spec tag prefix -> TaskTags field.
TAG_PREFIXES = {"domain": "domain", "category": "category", "capability": "capability",
                "stage": "pipeline_stage", "skill": "cognitive_skill", "mas": "mas_challenge"}


def task_tags(spec) -> TaskTags:
    """A spec's ST-Bench labels (empty where it has none)."""
    found = {"difficulty": spec.difficulty}
    for tag in spec.tags:
        prefix, _, value = tag.partition(":")
        if value and prefix in TAG_PREFIXES:
            found[TAG_PREFIXES[prefix]] = value
    return TaskTags(**found)


def _tokens(result: Mapping[str, Any]) -> int | None:
    usage = result.get("agent") or {}
    total = usage.get("total_tokens")
    if total is None and ("prompt_tokens" in usage or "completion_tokens" in usage):
        total = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
    return int(total) if isinstance(total, (int, float)) else None


def query_records(results: Iterable[Mapping[str, Any]], specs: Mapping[str, Any] | None = None
                  ) -> list[QueryRecord]:
    """The runs' episodes that scored ST-Bench metrics, as queries. A report that failed the
    realistic filter counts as no realistic output (``reported=None``). ``specs`` (by task id;
    default: the installed tools' of those tasks) give the labels."""
    results = list(results)
    if specs is None:
        from sciagent_gym.tools import discover, load_tool_specs

        tools = {r["task_id"].split("/", 1)[0] for r in results if r.get("stbench")}
        specs = {}
        for tool in tools & set(discover()):
            specs.update(load_tool_specs(tool))
    out = []
    for r in results:
        breakdown = r.get("stbench")
        if not breakdown:
            continue
        metrics = tuple(Metric.from_dict(m["definition"]) for m in breakdown["metrics"])
        values = {m["name"]: m["value"] for m in breakdown["metrics"] if m["reported"]}
        spec = specs.get(r["task_id"])
        out.append(QueryRecord(
            task_id=r["task_id"], query_id=str(r.get("query") or r["variant"]),
            split=r.get("split") or "test",
            reported=None if breakdown.get("realistic") is False else values,
            metrics=metrics, wall_seconds=float(r.get("seconds", 0.0)), tokens=_tokens(r),
            tags=task_tags(spec) if spec is not None else TaskTags()))
    return out


def stbench_summary(records: list[QueryRecord], baseline: list[QueryRecord] | None = None,
                    split: str | None = "test") -> dict[str, Any]:
    """The system's score (and, given a baseline run's records, the comparison) as JSON."""
    system = system_score(records, split)
    out: dict[str, Any] = {"split": split, "system": system.to_dict(),
                           "cuts": {axis: [c.to_dict() for c in cut_scores(system.tasks, axis)]
                                    for axis in TAG_AXES}}
    if baseline is not None:
        out["comparison"] = compare(records, baseline, split).to_dict()
    return out


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}"


def format_stbench(summary: Mapping[str, Any]) -> str:
    """ST-Bench's table: per task and overall (scores in percent, as the paper prints them)."""
    system = summary["system"]
    lines = [f"ST-Bench evaluation ({summary['split'] or 'all'} split): "
             f"composite {100 * system['composite']:.1f} over {system['n_tasks']} tasks "
             f"(mean {_pct(system['mean_score'])}), realistic {_pct(system['realistic_rate'])}%, "
             f"conditional pass {_pct(system['conditional_pass_rate'])}%",
             f"{'task':<40} {'queries':>7} {'realistic':>9} {'cond. pass':>10} {'score':>6}"]
    for t in system["tasks"]:
        lines.append(f"{t['task_id']:<40} {t['n_queries']:>7} {_pct(t['realistic_rate']):>9} "
                     f"{_pct(t['conditional_pass_rate']):>10} {_pct(t['score']):>6}")
    comp = summary.get("comparison")
    if comp:
        lines.append(f"against the baseline: win rate {_pct(comp['win_rate'])}%, mean gain "
                     f"{_pct(comp['mean_gain'])} points, time x{_ratio(comp['time'])}, tokens "
                     f"x{_ratio(comp['tokens'])}, efficiency {_num(comp['eta_time'])}")
    return "\n".join(lines)


def _ratio(cost: Mapping[str, Any]) -> str:
    return "n/a" if cost.get("ratio") is None else f"{cost['ratio']:.2f}"


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def report_section(results: list[dict[str, Any]], args: Any) -> tuple[Any, str]:
    """``report``'s hook: ST-Bench's evaluation of the episodes that scored its metrics
    ((None, "") when none did), against ``--baseline``'s episodes when given."""
    from sciagent_gym.run_records import load_results

    baseline = getattr(args, "baseline", None)
    records = query_records(results)
    if not records:
        if baseline:
            raise ValueError("--baseline compares ST-Bench queries, and these runs have none")
        return None, ""
    base = query_records(load_results(baseline)) if baseline else None
    if baseline and not base:
        raise ValueError(f"--baseline {baseline}: no ST-Bench queries there")
    summary = stbench_summary(records, base)
    return summary, "\n\n" + format_stbench(summary)


def add_options(parser: Any) -> None:
    parser.add_argument("--baseline", metavar="RUN_DIR",
                        help="ST-Bench queries: win rate, gain and cost ratios against this run")
