"""``sciagent-gym bench --all``: every installed tool's env against the fixed-sleep baseline.

One row per tool from ``run_bench`` (runs/bench.py), each against its own baseline in the same
process, with the load average when the row started and ended: on a shared machine the load
explains more of a slow row than the tool does. A full run is long (an hour on 2 cores), so
results are saved after every tool and a rerun skips the tools already measured (``force``
measures them again); a tool that fails is recorded with its error and tried again next run.
Writes bench-all.json (every figure), bench-all.csv, bench-all.md (the table in docs/speed.md) and
bench-all.png.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import json
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from sciagent_gym.runs.bench import run_bench

STEM = "bench-all"
#: docs/speed.md: scripts/update_readme.py puts ``readme_section`` of the committed
#: benchmarks/results/bench-all.json between this and ``<!-- end generated -->``.
README_MARKER = "<!-- generated: benchmarks/results/bench-all.json (sciagent-gym bench --all) -->\n"
#: (key in a row, CSV/Markdown header); the Markdown table shows a subset, see ``markdown``.
COLUMNS = [
    ("tool", "tool"), ("env", "env"), ("status", "status"),
    ("reset_warm_p50", "reset warm p50 s"), ("reset_warm_p95", "reset warm p95 s"),
    ("reset_cold_p50", "reset cold p50 s"), ("reset_cold_p95", "reset cold p95 s"),
    ("step_idle_p50", "step idle p50 s"), ("step_idle_n", "idle steps"),
    ("step_reacting_p50", "step reacting p50 s"), ("step_reacting_n", "reacting steps"),
    ("step_fast_p50", "step fast-settle p50 s"),
    ("baseline_reset_p50", "baseline reset p50 s"), ("baseline_step_p50", "baseline step p50 s"),
    ("eph_ours", "episodes/h ours"), ("eph_baseline", "episodes/h baseline"),
    ("eph_ratio", "episodes/h ratio"), ("memory_mb", "peak memory MB (no pool)"),
    ("memory_pool_mb", "peak memory MB (pool included)"),
    ("load_start", "load 1 min at start"), ("load_end", "load 1 min at end"),
    ("episodes", "episodes"), ("baseline_episodes", "baseline episodes"),
    ("started", "started UTC"), ("seconds", "wall s"), ("error", "error"),
]


def tool_status(only: Iterable[str] | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """``({tool: env id} installed, {tool: what is missing})``, as ``sciagent-gym doctor`` sees
    it: a tool is installed when none of its tool.json requirements is missing."""
    from sciagent_gym.tools import discover

    found = discover()
    wanted = list(only) if only else sorted(found)
    unknown = [t for t in wanted if t not in found]
    if unknown:
        raise ValueError(f"unknown tool(s) {', '.join(unknown)} (known: {', '.join(found)})")
    installed, missing = {}, {}
    for name in wanted:
        absent = [r.name for r in found[name].requires if r.missing()]
        if absent:
            missing[name] = "missing " + ", ".join(absent)
        else:
            installed[name] = found[name].env_id
    return installed, missing


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M")


def row_from(tool: str, env_id: str, r: dict[str, Any]) -> dict[str, Any]:
    """The flat figures of one ``run_bench`` result (the full result stays under ``bench``)."""
    def p50(d: dict[str, Any] | None) -> float | None:
        return None if d is None else d["p50"]

    return {
        "tool": tool, "env": env_id, "status": "ok", "error": None,
        "reset_warm_p50": r["reset_warm_s"]["p50"], "reset_warm_p95": r["reset_warm_s"]["p95"],
        "reset_cold_p50": r["reset_cold_s"]["p50"], "reset_cold_p95": r["reset_cold_s"]["p95"],
        "step_idle_p50": p50(r.get("step_idle_s")),
        "step_idle_n": (r.get("step_idle_s") or {}).get("n", 0),
        "step_reacting_p50": p50(r.get("step_reacting_s")),
        "step_reacting_n": (r.get("step_reacting_s") or {}).get("n", 0),
        "step_fast_p50": r["step_overhead_fast_settle_s"]["p50"],
        "baseline_reset_p50": r["baseline"]["reset_s"]["p50"],
        "baseline_step_p50": r["baseline"]["step_s"]["p50"],
        "eph_ours": r["episodes_per_hour"]["ours"],
        "eph_baseline": r["episodes_per_hour"]["baseline"],
        "eph_ratio": r["episodes_per_hour"]["ratio"],
        "memory_mb": r.get("peak_memory_mb_no_pool"),
        "memory_pool_mb": r.get("peak_memory_mb_per_env"),
        "bench": r,
    }


def measure_tool(tool: str, env_id: str, episodes: int, baseline_episodes: int,
                 measure: Callable[..., dict[str, Any]] = run_bench,
                 progress: Callable[[str], None] = lambda m: None,
                 **bench_kwargs: Any) -> dict[str, Any]:
    """One row: the tool's figures, or its error (the run goes on with the next tool)."""
    started, load0, t0 = _now(), os.getloadavg()[0], time.monotonic()
    try:
        row = row_from(tool, env_id, measure(env_id, episodes=episodes,
                                             baseline_episodes=baseline_episodes,
                                             vector_sizes=(), progress=progress,
                                             **bench_kwargs))
    except Exception as exc:  # any failure of one tool's program: record it, go on
        row = {"tool": tool, "env": env_id, "status": "error",
               "error": f"{type(exc).__name__}: {exc}".strip()[:2000]}
    row.update(started=started, seconds=time.monotonic() - t0, load_start=load0,
               load_end=os.getloadavg()[0], episodes=episodes,
               baseline_episodes=baseline_episodes)
    return row


def load(out: Path) -> dict[str, Any]:
    path = out / f"{STEM}.json"
    return json.loads(path.read_text()) if path.is_file() else {"rows": {}}


def run_all(out: str | Path, tools: Iterable[str] | None = None, episodes: int = 5,
            baseline_episodes: int = 1, force: bool = False,
            measure: Callable[..., dict[str, Any]] = run_bench, show_progress: bool = True,
            command: str | None = None, **bench_kwargs: Any) -> dict[str, Any]:
    """Measure every installed tool not yet in ``out``/bench-all.json; save after each."""
    from tqdm import tqdm

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    installed, missing = tool_status(tools)
    data = load(out)
    # A rerun of some tools updates what it checked and keeps the rest (and the full run's
    # command, which the docs quote).
    checked = set(installed) | set(missing)
    data["missing"] = {**{t: w for t, w in data.get("missing", {}).items() if t not in checked},
                       **missing}
    data["cpus"] = os.cpu_count()
    if command and (tools is None or "command" not in data):
        data["command"] = command
    rows = data.setdefault("rows", {})
    todo = [t for t in installed
            if force or t not in rows or rows[t].get("status") != "ok"]
    bar = tqdm(todo, desc="bench --all", unit="tool", disable=not show_progress)
    for tool in bar:
        bar.set_description(f"{tool}")

        def progress(message: str, tool: str = tool) -> None:
            bar.set_postfix_str(message[:40])

        data["rows"][tool] = measure_tool(tool, installed[tool], episodes, baseline_episodes,
                                  measure=measure, progress=progress, **bench_kwargs)
        data["updated"] = _now()
        write_all(data, out)
    bar.close()
    data.setdefault("updated", _now())
    write_all(data, out)
    return data


def write_all(data: dict[str, Any], out: Path) -> None:
    """bench-all.json, .csv, .md and .png from ``data``, rows in tool order."""
    data["rows"] = dict(sorted(data["rows"].items()))
    tmp = out / f"{STEM}.json.tmp"
    tmp.write_text(json.dumps(data, indent=2))
    tmp.replace(out / f"{STEM}.json")  # an interrupted write must not lose the rows so far
    (out / f"{STEM}.csv").write_text(to_csv(data))
    (out / f"{STEM}.md").write_text(markdown(data, half_painted(out) or None) + "\n")
    if any(r.get("status") == "ok" for r in data["rows"].values()):
        plot_all(data, out / f"{STEM}.png")


def to_csv(data: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([h for _, h in COLUMNS])
    for row in data["rows"].values():
        w.writerow(["" if row.get(k) is None else
                    f"{row[k]:.4g}" if isinstance(row.get(k), float) else row.get(k)
                    for k, _ in COLUMNS])
    for tool, why in data.get("missing", {}).items():
        w.writerow([tool if k == "tool" else "not installed" if k == "status" else
                    why if k == "error" else "" for k, _ in COLUMNS])
    return buf.getvalue()


def _s(v: float | None) -> str:
    """Seconds as a person reads them: ms below one second."""
    if v is None:
        return "–"
    return f"{v * 1000:.0f} ms" if v < 1 else f"{v:.1f} s"


def half_painted(results: str | Path) -> dict[str, dict[str, int]]:
    """Per tool, the half-painted observations of ``benchmarks/settle_damage.py`` found beside
    bench-all.json (``settle-damage-<tool>.json``): ``{"frame": n, "damage": n, "steps": n}``,
    frame and damage being the two settles. That bench checks every observation against a 1 s settle
    of the same step, which ``bench --all`` does not do."""
    found = {}
    for path in sorted(Path(results).glob("settle-damage-*.json")):
        try:
            d = json.loads(path.read_text())
            modes = {m: d["modes"][m]["summary"] for m in ("frame", "damage")}
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not a per-tool result (the plot's inputs are all this shape)
        if path.name != f"settle-damage-{d.get('tool')}.json":
            continue  # a variant run (-nobusy-, -resets-), not the tool's own
        found[d["tool"]] = {"frame": modes["frame"]["half_painted"],
                            "damage": modes["damage"]["half_painted"],
                            "steps": modes["frame"]["steps"]}
    return found


def markdown(data: dict[str, Any], half: dict[str, dict[str, int]] | None = None) -> str:
    """The table (and the tools that were skipped or failed below it); with ``half``
    (:func:`half_painted`), a column of half-painted observations per settle."""
    head = ["tool", "reset warm p50 / p95", "reset cold p50 / p95", "step idle p50",
            "step reacting p50 (n)", "step fast p50", "episodes/h ours / baseline",
            "ratio", "memory", "load"]
    if half is not None:
        head.insert(6, "half-painted frame / damage")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    failed = []
    for r in data["rows"].values():
        if r.get("status") != "ok":
            failed.append(f"{r['tool']} ({r.get('error', '').splitlines()[0][:120]})")
            continue
        react = (f"{_s(r['step_reacting_p50'])} ({r['step_reacting_n']})"
                 if r.get("step_reacting_n") else "– (0)")
        mem = "–" if r.get("memory_mb") is None else f"{r['memory_mb']:.0f} MB"
        cells = [
            r["tool"], f"{_s(r['reset_warm_p50'])} / {_s(r['reset_warm_p95'])}",
            f"{_s(r['reset_cold_p50'])} / {_s(r['reset_cold_p95'])}",
            _s(r["step_idle_p50"]), react, _s(r["step_fast_p50"]),
            f"{r['eph_ours']:.0f} / {r['eph_baseline']:.0f}", f"{r['eph_ratio']:.1f}x", mem,
            f"{r['load_start']:.1f}–{r['load_end']:.1f}"]
        if half is not None:
            h = half.get(r["tool"])
            cells.insert(6, "–" if h is None else f"{h['frame']} / {h['damage']} of {h['steps']}")
        lines.append("| " + " | ".join(cells) + " |")
    notes = []
    if failed:
        notes.append("Failed: " + "; ".join(failed) + ".")
    if data.get("missing"):
        notes.append("Not installed (skipped): " + "; ".join(
            f"{t} ({why})" for t, why in data["missing"].items()) + ".")
    return "\n".join(lines + ([""] + notes if notes else []))


def summary(data: dict[str, Any]) -> str:
    """One sentence for the docs: the command, the dates and the load of the rows."""
    ok = [r for r in data["rows"].values() if r.get("status") == "ok"]
    if not ok:
        return "No tool measured yet."
    loads = [x for r in ok for x in (r["load_start"], r["load_end"])]
    days = sorted({r["started"][:10] for r in ok})
    return (f"`{data.get('command') or 'sciagent-gym bench --all'}`, {len(ok)} tools on "
            f"{data.get('cpus')} CPUs, {' to '.join(days[::max(len(days) - 1, 1)])}; 1-minute "
            f"load average {min(loads):.1f} to {max(loads):.1f} while the rows ran (other "
            "sessions shared the machine, so absolute times are upper bounds; each ratio is "
            "against a baseline measured in the same process at the same load).")


def readme_section(data: dict[str, Any], half: dict[str, dict[str, int]] | None = None) -> str:
    """What docs/speed.md shows: the sentence on how it was measured, then the table."""
    text = summary(data)
    if half:
        text += (" Half-painted: of `benchmarks/settle_damage.py`'s seeded random steps (its own "
                 "run, `settle-damage-<tool>.json`), the observations that differ from a 1 s "
                 "settle of the same step, under the frame settle and the damage settle.")
    return text + "\n\n" + markdown(data, half or None)


def plot_all(data: dict[str, Any], path: str | Path) -> None:
    """Reset p50 per tool (warm, cold, baseline) on a log axis, and the episodes/h ratio."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    rows = [r for r in data["rows"].values() if r.get("status") == "ok"]
    rows.sort(key=lambda r: r["reset_cold_p50"])
    names = [r["tool"] for r in rows]
    ys = np.arange(len(rows))
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 2.2 + 0.36 * len(rows)), sharey=True,
                                  gridspec_kw={"width_ratios": [3, 2]})
    ax.barh(ys - 0.27, [r["reset_warm_p50"] for r in rows], 0.27, label="warm (pool)")
    ax.barh(ys, [r["reset_cold_p50"] for r in rows], 0.27, label="cold (relaunch)")
    ax.barh(ys + 0.27, [r["baseline_reset_p50"] for r in rows], 0.27, color="0.7",
            label="baseline (relaunch + 5 s sleep + PNG)")
    ax.set_xscale("log")
    ticks = [0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30, 100]
    longest = max(max(r["reset_cold_p50"], r["baseline_reset_p50"]) for r in rows)
    ticks = [t for t in ticks if t <= longest * 3]
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{t * 1000:.0f} ms" if t < 1 else f"{t:g} s" for t in ticks])
    ax.set_xlim(0.005, longest * 1.5)
    ax.set_yticks(ys)
    ax.set_yticklabels(names)
    ax.invert_yaxis()
    ax.set_xlabel("reset p50 (log scale)")
    ax.legend(fontsize="small", loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3,
              frameon=False)
    ax.grid(axis="x", alpha=0.3)
    ratios = [r["eph_ratio"] for r in rows]
    ax2.barh(ys, ratios, 0.6, color="tab:green")
    for y, v in zip(ys, ratios, strict=True):
        ax2.text(v, y, f" {v:.1f}x", va="center", fontsize="small")
    ax2.axvline(1.0, color="k", lw=0.8)
    ax2.set_xlabel("episodes per hour, ours / baseline")
    ax2.set_xlim(0, max(ratios + [1.0]) * 1.2)
    loads = [x for r in rows for x in (r["load_start"], r["load_end"])]
    fig.suptitle(f"sciagent-gym bench --all: {len(rows)} tools on {data.get('cpus')} CPUs, "
                 f"load {min(loads):.1f}-{max(loads):.1f}, {data.get('updated', '')} UTC")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _command(args: argparse.Namespace) -> str:
    """The command line that reproduces this run (for the docs' text)."""
    parts = ["sciagent-gym bench --all"]
    if args.tools:
        parts.append(f"--tools {args.tools}")
    parts.append(f"--episodes {args.episodes} --baseline-episodes {args.baseline_episodes}")
    if (args.pool_size, args.pool_workers) != (2, 2):
        parts.append(f"--pool-size {args.pool_size} --pool-workers {args.pool_workers}")
    return " ".join(parts + [f"--out {args.out}"])


def cmd_bench_all(args: argparse.Namespace) -> int:
    if not args.out:
        raise ValueError("bench --all needs --out DIR (its JSON is what a rerun resumes from)")
    if args.episodes < 1 or args.baseline_episodes < 1:
        raise ValueError("bench --all needs --episodes >= 1 and --baseline-episodes >= 1")
    if args.task or args.density:
        raise ValueError("bench --all measures each tool on a sampled task, without --density; "
                         "use --env ID for --task or --density")
    tools = [t.strip() for t in args.tools.split(",") if t.strip()] if args.tools else None
    data = run_all(args.out, tools, episodes=args.episodes,
                   baseline_episodes=args.baseline_episodes, force=args.force,
                   show_progress=not args.json, command=_command(args), pool_size=args.pool_size,
                   pool_workers=args.pool_workers)
    print(json.dumps(data, indent=2) if args.json else markdown(data))
    return 0 if all(r.get("status") == "ok" for r in data["rows"].values()) else 1
