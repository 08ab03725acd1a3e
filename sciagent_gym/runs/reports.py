"""Offline work on run directories: re-scoring saved final states and episode metrics.

Metrics (MatToolBench's, per task, tool and domain):
- Score: mean partial credit; SR: fraction of episodes where every criterion passed;
- Steps: mean steps; Steps*: mean steps over successful episodes only (undefined when none);
- Opt: the GUI oracle's step count on those same successful variants (the reference step
  count; ``info["oracle_steps"]``), and Steps*/Opt: the mean over successful episodes of steps
  over the oracle's steps (1.0: as short as the demonstration; undefined without a GUI oracle);
- FTR: among episodes the agent ended itself (DONE/FAIL), the fraction that did not succeed;
- VOID: fraction of episodes that exhausted the step budget;
- Crash: fraction of episodes ended by the program exiting (neither the agent nor the budget);
- Stages: on tasks with a staged evaluator (long workflows), the mean share of stages passed
  before the first that failed: how far along the workflow agents get (undefined without any);
- the domain-macro average: the mean over domains of each domain's mean.

Results are broken down by task, tool, domain, modality (gui, gui+cli, code: what the agent
could use, as MatToolBench separates GUI from CLI agents) and scope: tasks tagged ``cross-tool``
carry an artifact from one program to another, and MatToolBench reports them apart, as
cross-tool diagnostics, from its single-tool headline numbers (the ``scope single-tool`` row);
and by how the task's GUI oracle works the program (``interface menus``, ``console``,
``mixed``): tasks proven through menus and dialogs apart from those proven by console code.
Several run directories (a policy or model each) are compared side by side, one column group
per run, never pooled into one mean.
"""

from __future__ import annotations

import csv
import json
import math
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciagent_gym.evaluation import FinalState, evaluate
from sciagent_gym.run_records import find_episodes
from sciagent_gym.tasks.task import Task
from sciagent_gym.tools import discover, load_adapter, load_tool_specs


@dataclass
class Rescored:
    directory: str
    task_id: str
    old_score: float
    new_score: float
    old_success: bool
    new_success: bool
    criteria: list[dict]

    @property
    def changed(self) -> bool:
        return (self.old_score, self.old_success) != (self.new_score, self.new_success)


def rescore(run_dir: str | Path) -> list[Rescored]:
    """Score every saved final state again with the current task specs and evaluators.

    Gold values are recomputed by staging the same variant into a scratch directory (the
    generators are seeded), so nothing from the original run's host side is needed.
    """
    out = []
    specs_by_tool: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="sciagent-rescore-") as scratch:
        for ep in find_episodes(run_dir):
            result = json.loads((ep / "result.json").read_text())
            if not (ep / "final_state").is_dir():
                continue
            tool = result["task_id"].split("/", 1)[0]
            if tool not in specs_by_tool:
                specs_by_tool[tool] = (load_tool_specs(tool), load_adapter(tool))
            specs, adapter = specs_by_tool[tool]
            paths = result.get("paths") or {"home": "/home/user", "work": "/home/user/work",
                                            "tmp": "/tmp"}
            task = Task(specs[result["task_id"]], result["variant"], adapter.generators, paths)
            task.stage(Path(scratch) / f"{len(out)}")
            evaluation = evaluate(task.criteria(), FinalState.load(ep / "final_state"))
            task.cleanup()
            out.append(Rescored(str(ep), result["task_id"], result["score"], evaluation.score,
                                result["success"], evaluation.success,
                                evaluation.to_dict()["criteria"]))
    return out


METRICS = ("episodes", "score", "sr", "steps", "steps_star", "steps_opt", "step_ratio", "ftr",
           "void", "crash", "stages")
LEVELS = ("task", "tool", "domain", "modality", "scope", "interface")
#: The tag that makes a task a cross-tool diagnostic (``scope cross-tool``).
CROSS_TOOL_TAG = "cross-tool"


def _known_spec(task_id: str, tools: dict | None = None):
    """The task's spec, or None for a task of a tool (or a tool) no longer known."""
    tool = task_id.split("/", 1)[0]
    if tool not in (tools if tools is not None else discover()):
        return None
    return load_tool_specs(tool).get(task_id)


def scope_of(task_id: str, tools: dict | None = None) -> str:
    """"cross-tool" for a task tagged so, "single-tool" for any other known task."""
    spec = _known_spec(task_id, tools)
    if spec is None:
        return "unknown"
    return "cross-tool" if CROSS_TOOL_TAG in spec.tags else "single-tool"


def interface_of(task_id: str, tools: dict | None = None) -> str:
    """How the task's GUI oracle works the program (menus, console, mixed), as its spec
    declares; "none" for a task without a GUI oracle, "unknown" for one no longer known."""
    spec = _known_spec(task_id, tools)
    if spec is None:
        return "unknown"
    return getattr(spec, "oracle_interface", None) or "none"


def _end(row: dict[str, Any]) -> str:
    """How an episode ended; runs recorded before results carried ``end`` fall back to the
    terminated/truncated flags (which cannot tell a crash or a runner's DONE apart)."""
    if "end" in row:
        return row["end"]
    return "budget" if row.get("truncated") else "agent" if row.get("terminated") else "budget"


_SPECS: dict[str, Any] = {}


def oracle_steps(row: dict[str, Any]) -> int | None:
    """The GUI oracle's step count for an episode's variant: as recorded, or (runs recorded
    before it was) computed from the task's spec; None when the task has no GUI oracle."""
    if row.get("oracle_steps") is not None:
        return int(row["oracle_steps"])
    tool = row["task_id"].split("/", 1)[0]
    if tool not in _SPECS:
        try:
            _SPECS[tool] = load_tool_specs(tool)
        except Exception:  # a tool no longer installed: no reference
            _SPECS[tool] = {}
    spec = _SPECS[tool].get(row["task_id"])
    if spec is None or spec.gui_oracle is None:
        return None
    return Task(spec, int(row["variant"]), {}, row.get("paths") or
                {"home": "~", "work": "~/work", "tmp": "/tmp"}).oracle_steps


def stage_reach(criteria: list[dict[str, Any]]) -> float | None:
    """The share of an episode's stages passed before the first that did not, from its saved
    criteria (each carries its ``stage``); None when the task is not staged."""
    order: list[str] = []
    passed: dict[str, bool] = {}
    for c in criteria:
        stage = c.get("stage")
        if not stage:
            continue
        if stage not in passed:
            order.append(stage)
        passed[stage] = passed.get(stage, True) and bool(c.get("passed"))
    if not order:
        return None
    reached = 0
    for stage in order:
        if not passed[stage]:
            break
        reached += 1
    return reached / len(order)


def _metrics(rows: list[dict[str, Any]]) -> dict[str, float]:
    n = len(rows)
    succ = [r for r in rows if r["success"]]
    refs = [(r["steps"], oracle_steps(r)) for r in succ]
    refs = [(steps, ref) for steps, ref in refs if ref]
    ends = [_end(r) for r in rows]
    ended = [r for r, e in zip(rows, ends, strict=True) if e in ("agent", "script")]
    reach = [x for x in (stage_reach(r.get("criteria") or []) for r in rows) if x is not None]
    return {
        "episodes": n,
        "score": sum(r["score"] for r in rows) / n,
        "sr": len(succ) / n,
        "steps": sum(r["steps"] for r in rows) / n,
        "steps_star": sum(r["steps"] for r in succ) / len(succ) if succ else math.nan,
        "steps_opt": sum(ref for _, ref in refs) / len(refs) if refs else math.nan,
        "step_ratio": sum(s / ref for s, ref in refs) / len(refs) if refs else math.nan,
        "ftr": sum(not r["success"] for r in ended) / len(ended) if ended else math.nan,
        "void": ends.count("budget") / n,
        "crash": ends.count("crash") / n,
        "stages": sum(reach) / len(reach) if reach else math.nan,
    }


def episode_metrics(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Metrics per task, per tool, per domain, overall, and the domain-macro average."""
    tools = discover()
    groups: dict[str, dict[str, list]] = {level: defaultdict(list) for level in LEVELS}
    for r in results:
        tool = r["task_id"].split("/", 1)[0]
        domain = tools[tool].domain if tool in tools else "unknown"
        groups["task"][r["task_id"]].append(r)
        groups["tool"][tool].append(r)
        groups["domain"][domain].append(r)
        groups["modality"][r.get("modality") or "unrecorded"].append(r)
        groups["scope"][scope_of(r["task_id"], tools)].append(r)
        groups["interface"][interface_of(r["task_id"], tools)].append(r)
    out: dict[str, Any] = {level: {k: _metrics(v) for k, v in sorted(g.items())}
                           for level, g in groups.items()}
    out["overall"] = _metrics(results) if results else {}
    domains = list(out["domain"].values())
    out["domain_macro"] = {m: _nanmean([d[m] for d in domains]) for m in METRICS[1:]} \
        if domains else {}
    return out


def _nanmean(values: list[float]) -> float:
    vals = [v for v in values if not math.isnan(v)]
    return sum(vals) / len(vals) if vals else math.nan


def _fmt(value: float, pct: bool = False) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "-"
    return f"{value * 100:.0f}%" if pct else f"{value:.2f}"


def format_table(metrics: dict[str, Any]) -> str:
    header = f"{'':<34} {'n':>4} {'Score':>6} {'SR':>5} {'Steps':>6} {'Steps*':>7} " \
             f"{'Opt':>6} {'*/Opt':>6} {'FTR':>5} {'VOID':>5} {'Crash':>5} {'Stages':>6}"
    lines = [header]
    rows = [(f"{level} {name}", m) for level in LEVELS for name, m in metrics[level].items()]
    if metrics["domain_macro"]:
        rows.append(("domain-macro average", metrics["domain_macro"]))
    for label, m in rows:
        lines.append(f"{label:<34} {m.get('episodes', ''):>4} {_fmt(m['score']):>6} "
                     f"{_fmt(m['sr'], True):>5} {_fmt(m['steps']):>6} "
                     f"{_fmt(m['steps_star']):>7} {_fmt(m['steps_opt']):>6} "
                     f"{_fmt(m['step_ratio']):>6} {_fmt(m['ftr'], True):>5} "
                     f"{_fmt(m['void'], True):>5} {_fmt(m['crash'], True):>5} "
                     f"{_fmt(m.get('stages', math.nan), True):>6}")
    return "\n".join(lines)


def write_csv(metrics: dict[str, Any], path: str | Path) -> None:
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["level", "name", *METRICS])
        for level in LEVELS:
            for name, m in metrics[level].items():
                writer.writerow([level, name, *(m[k] for k in METRICS)])
        if metrics["domain_macro"]:
            writer.writerow(["domain_macro", "all", "",
                             *(metrics["domain_macro"][k] for k in METRICS[1:])])


def plot(metrics: dict[str, Any], path: str | Path, title: str = "") -> None:
    """Score and SR per task as grouped bars (a PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(metrics["task"])
    scores = [metrics["task"][n]["score"] for n in names]
    srs = [metrics["task"][n]["sr"] for n in names]
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(names) + 2), 4))
    xs = range(len(names))
    ax.bar([x - 0.2 for x in xs], scores, width=0.4, label="Score (mean partial credit)")
    ax.bar([x + 0.2 for x in xs], srs, width=0.4, label="SR (success rate)")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([n.split("/", 1)[-1] for n in names], rotation=30, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("fraction")
    ax.set_title(title or "episode metrics per task")
    ax.legend(loc="upper right", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# -- several runs side by side ------------------------------------------------------------------

def run_label(run_dir: str | Path, results: list[dict[str, Any]]) -> str:
    """A run's column title: its policy (and model), else the directory name."""
    policies = sorted({r.get("policy", "") for r in results} - {""})
    models = sorted({str(r.get("agent", {}).get("model", "")) for r in results} - {""})
    label = "+".join(models or policies)
    return label or Path(run_dir).name


def compare_runs(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Metrics of each run, keyed by its label (labels made unique by the directory name)."""
    return {label: episode_metrics(results) for label, results in runs.items() if results}


def format_comparison(compared: dict[str, dict[str, Any]]) -> str:
    """One row per task/tool/domain/modality, a Score and SR column pair per run."""
    labels = list(compared)
    width = max(9, *(len(label) for label in labels))
    lines = [f"{'':<34} " + " ".join(f"{label[:width]:^{width + 4}}" for label in labels),
             f"{'':<34} " + " ".join(f"{'Score':>{width - 2}} {'SR':>5}" for _ in labels)]
    for level in LEVELS:
        names = sorted({n for m in compared.values() for n in m[level]})
        for name in names:
            cells = []
            for label in labels:
                m = compared[label][level].get(name)
                cells.append(f"{_fmt(m['score']):>{width - 2}} {_fmt(m['sr'], True):>5}"
                             if m else f"{'-':>{width - 2}} {'-':>5}")
            lines.append(f"{level + ' ' + name:<34} " + " ".join(cells))
    cells = [f"{_fmt(m['overall']['score']):>{width - 2}} {_fmt(m['overall']['sr'], True):>5}"
             for m in compared.values()]
    lines.append(f"{'overall':<34} " + " ".join(cells))
    return "\n".join(lines)


def write_comparison_csv(compared: dict[str, dict[str, Any]], path: str | Path) -> None:
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["run", "level", "name", *METRICS])
        for label, metrics in compared.items():
            for level in LEVELS:
                for name, m in metrics[level].items():
                    writer.writerow([label, level, name, *(m[k] for k in METRICS)])


def plot_comparison(compared: dict[str, dict[str, Any]], path: str | Path,
                    title: str = "") -> None:
    """Score per task, one bar per run (a PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted({n for m in compared.values() for n in m["task"]})
    n_runs = len(compared)
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(names) * max(1, n_runs / 2) + 2), 4))
    bar = 0.8 / n_runs
    for i, (label, metrics) in enumerate(compared.items()):
        xs = [x - 0.4 + bar * (i + 0.5) for x in range(len(names))]
        ys = [metrics["task"][n]["score"] if n in metrics["task"] else 0.0 for n in names]
        ax.bar(xs, ys, width=bar, label=label)
    ax.set_xticks(list(range(len(names))))
    ax.set_xticklabels([n.split("/", 1)[-1] for n in names], rotation=30, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("Score (mean partial credit)")
    ax.set_title(title or "runs compared per task")
    ax.legend(loc="upper right", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
