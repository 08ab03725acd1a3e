"""``sciagent-gym bench --density``: how many envs of one tool this machine holds.

Envs are added one level at a time (each made and reset while the running ones keep acting),
then all of them act at an LLM agent's pace (one action every ``pace`` seconds each, phases
spread so they do not fire together) for ``duration`` seconds. A level is measured by the step
latency the agent sees (wall time of ``env.step``, p50/p95 over the window), the memory of the
processes this package started (PSS of every process tree, so shared libraries are counted
once across envs; the driving interpreter is reported apart) and CPU. Adding stops at the first
level whose p95 breaks the limit, when MemAvailable minus a margin cannot fit the next envs, or
at ``max_envs``. Actions are harmless (bench's scripted actions, never DONE), so the program
keeps working without its state being wrecked. Everything is closed on exit, errors and
Ctrl+C; the machine's load average is kept with every level since other work inflates latency.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from sciagent_gym import processes
from sciagent_gym.runs.bench import scripted_actions

#: Spread of start phases: multiples of the golden ratio mod 1 stay evenly spread for any n.
_PHI = (5 ** 0.5 - 1) / 2
_TICK = os.sysconf("SC_CLK_TCK")


def mem_available_mb() -> float:
    """MemAvailable from /proc/meminfo: what can be allocated without swapping."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("/proc/meminfo has no MemAvailable")


def _children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            out.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    return out


def our_pids() -> list[int]:
    """Every live process under the ones this package started (not this interpreter)."""
    children, seen, todo = _children(), [], [p.pid for p in processes.live_processes()]
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.append(pid)
            todo += children.get(pid, [])
    return seen


def _rollup(pid: int) -> dict[str, int]:
    """kB figures of /proc/PID/smaps_rollup (empty for a process gone meanwhile)."""
    try:
        lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]
    except OSError:
        return {}
    return {k: int(v.split()[0]) for k, v in (line.split(":", 1) for line in lines)}


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


def tree_memory(pids: list[int]) -> dict[str, Any]:
    """PSS, RSS and private dirty memory (MB) over ``pids``, and PSS by program name."""
    pss = rss = dirty = 0.0
    by_name: dict[str, float] = {}
    for pid in pids:
        m = _rollup(pid)
        if m:
            pss, rss, dirty = pss + m["Pss"], rss + m["Rss"], dirty + m.get("Private_Dirty", 0)
            name = _comm(pid)
            by_name[name] = by_name.get(name, 0.0) + m["Pss"] / 1024
    return {"pss_mb": pss / 1024, "rss_mb": rss / 1024, "private_dirty_mb": dirty / 1024,
            "pss_mb_by_program": by_name}


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds spent so far by ``pids``."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / _TICK


def machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of all CPUs from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]
    return float(sum(values) - idle), float(sum(values))


def _pct(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50": float("nan"), "p95": float("nan"), "max": float("nan"), "n": 0}
    arr = np.asarray(values, dtype=float)
    return {"p50": float(np.median(arr)), "p95": float(np.percentile(arr, 95)),
            "max": float(arr.max()), "n": len(arr)}


class _Recorder:
    """Step records of all drivers: (start, wall latency, the env's own step time)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.steps: list[tuple[float, float, float]] = []
        self.errors: list[str] = []

    def between(self, t0: float, t1: float) -> tuple[list[float], list[float]]:
        """Wall and env step times of the steps that began in [t0, t1)."""
        with self.lock:
            rows = [s for s in self.steps if t0 <= s[0] < t1]
        return [r[1] for r in rows], [r[2] for r in rows]


class _Driver(threading.Thread):
    """One env acting every ``pace`` seconds from ``first`` on, as an agent would."""

    def __init__(self, env: gym.Env, index: int, pace: float, first: float,
                 record: _Recorder, stop: threading.Event) -> None:
        super().__init__(name=f"density-env-{index}", daemon=True)
        base = env.unwrapped
        self.env, self.pace, self.next, self.rec, self.stop = env, pace, first, record, stop
        self.actions = itertools.cycle(a for a in scripted_actions(base.width, base.height)
                                       if a != "DONE")
        self.alive = True

    def run(self) -> None:
        while not self.stop.wait(max(0.0, self.next - time.perf_counter())):
            t0 = time.perf_counter()
            try:
                _, _, terminated, truncated, info = self.env.step(next(self.actions))
                elapsed = time.perf_counter() - t0
                with self.rec.lock:
                    self.rec.steps.append((t0, elapsed, float(info["timings"]["total"])))
                if terminated or truncated:
                    self.env.reset()
            except Exception as exc:  # a crashed program: counted, then a fresh start
                with self.rec.lock:
                    self.rec.errors.append(f"{self.name}: {type(exc).__name__}: {exc}"[:500])
                try:
                    self.env.reset()
                except Exception:
                    self.alive = False
                    return
            # A late agent acts again a whole pace after its last action, never in a burst.
            self.next = max(self.next + self.pace, time.perf_counter())


def run_density(env_id: str | None = None, task: str | None = None, max_envs: int = 24,
                pace: float = 3.0, duration: float = 60.0, p95_limit: float = 0.5,
                add: int = 1, spares: int = 0, margin_mb: float = 2048.0, seed: int = 0,
                make_env: Callable[[], gym.Env] | None = None,
                mem_available: Callable[[], float] = mem_available_mb,
                progress: Callable[[dict[str, Any]], None] = lambda level: None,
                ) -> dict[str, Any]:
    """Add envs level by level until p95 step latency or memory says stop; see module doc.

    ``env_id`` names the env (``make_env`` replaces ``gym.make`` instead: unit tests use the
    fake provider). ``spares`` is the warm pool of each env (0: one sandbox per env, half the
    memory of the default pool of one).
    """
    if max_envs < 1 or add < 1 or pace <= 0 or duration <= 0:
        raise ValueError("density needs max_envs >= 1, add >= 1, pace > 0 and duration > 0")
    if env_id is None and make_env is None:
        raise ValueError("density needs the env to measure: env_id (or make_env)")
    make = make_env or (lambda: gym.make(env_id, task=task, pool_size=spares,
                                         max_steps=10 ** 9))
    out: dict[str, Any] = {"env": env_id, "task": task, "cpus": os.cpu_count(),
                           "pace_s": pace, "duration_s": duration, "p95_limit_s": p95_limit,
                           "spares": spares, "margin_mb": margin_mb, "levels": [],
                           "mem_total_mb": round(_mem_total_mb())}
    envs: list[gym.Env] = []
    drivers: list[_Driver] = []
    rec, stop = _Recorder(), threading.Event()
    stop_reason = "max_envs"
    try:
        while len(envs) < max_envs:
            new = min(add, max_envs - len(envs))
            levels = out["levels"]
            need = (levels[-1]["mem_per_env_mb"] * new) if levels else 0.0
            if mem_available() - margin_mb < need:
                stop_reason = "memory"
                break
            resets = []
            for _ in range(new):
                envs.append(make())
                t0 = time.perf_counter()
                envs[-1].reset(seed=seed + len(envs) - 1)
                resets.append(time.perf_counter() - t0)
                first = time.perf_counter() + ((len(envs) * _PHI) % 1.0) * pace
                drivers.append(_Driver(envs[-1], len(envs) - 1, pace, first, rec, stop))
                drivers[-1].start()
            level = _measure(len(envs), duration, rec, stop)
            level["reset_s"] = resets
            level["mem_available_mb"] = mem_available()
            level["drivers_alive"] = sum(d.alive for d in drivers)
            levels.append(level)
            progress(level)
            if not level["latency_s"]["n"] or level["latency_s"]["p95"] > p95_limit:
                stop_reason = "p95"
                break
            if level["drivers_alive"] < len(drivers):
                stop_reason = "env died"
                break
    finally:
        stop.set()
        for d in drivers:
            d.join(timeout=pace + 30)
        for env in envs:
            try:
                env.close()
            except Exception as exc:
                rec.errors.append(f"close: {type(exc).__name__}: {exc}"[:500])
    out["stop_reason"] = stop_reason
    out["errors"] = rec.errors
    ok = [lv["envs"] for lv in out["levels"] if lv["latency_s"]["p95"] <= p95_limit]
    out["held_envs"] = max(ok, default=0)
    out["left_running"] = len(our_pids())
    return out


def _mem_total_mb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _measure(n: int, duration: float, rec: _Recorder, stop: threading.Event) -> dict[str, Any]:
    """One window with ``n`` envs acting: latency, memory, CPU and load over ``duration``."""
    t0 = time.perf_counter()
    pids = our_pids()
    cpu0, self0, busy0 = cpu_seconds(pids), time.process_time(), machine_busy()
    stop.wait(duration)
    t1 = time.perf_counter()
    wall = t1 - t0
    cpu1, self1, busy1 = cpu_seconds(pids), time.process_time(), machine_busy()
    walls, own = rec.between(t0, t1)
    pids = our_pids()
    mem = tree_memory(pids)
    driver = _rollup(os.getpid())
    return {
        "envs": n, "window_s": wall, "latency_s": _pct(walls), "env_step_s": _pct(own),
        "steps_per_s": len(walls) / wall, "processes": len(pids),
        "mem_per_env_mb": mem["pss_mb"] / n, "rss_per_env_mb": mem["rss_mb"] / n,
        "private_dirty_per_env_mb": mem["private_dirty_mb"] / n,
        "pss_mb_per_env_by_program": {k: v / n for k, v in
                                      sorted(mem["pss_mb_by_program"].items())},
        "driver_pss_mb": driver.get("Pss", 0) / 1024,
        # CPU of the envs' processes and of this interpreter (settle, grabs), in cores.
        "cpu_envs_cores": (cpu1 - cpu0) / wall,
        "cpu_driver_cores": (self1 - self0) / wall,
        "cpu_machine_busy": (busy1[0] - busy0[0]) / max(1.0, busy1[1] - busy0[1]),
        "loadavg": list(os.getloadavg()),
        "errors_so_far": len(rec.errors),
    }


def format_density(r: dict[str, Any]) -> str:
    """The per-level table and the verdict."""
    lines = [f"{r['env']} on {r['cpus']} CPUs, {r['mem_total_mb'] / 1024:.0f} GB: one action "
             f"every {r['pace_s']:g} s per env, {r['duration_s']:g} s windows, spares "
             f"{r['spares']}, p95 limit {r['p95_limit_s'] * 1000:.0f} ms",
             f"{'envs':>4} {'PSS/env':>8} {'priv/env':>8} {'drv/env':>8} {'p50 ms':>7} "
             f"{'p95 ms':>7} {'steps':>6} {'cpu env':>7} {'cpu drv':>7} {'busy':>5} {'load1':>6} "
             f"{'avail GB':>8}"]
    for lv in r["levels"]:
        lat = lv["latency_s"]
        lines.append(f"{lv['envs']:>4} {lv['mem_per_env_mb']:>7.0f}M "
                     f"{lv['private_dirty_per_env_mb']:>7.0f}M "
                     f"{lv['driver_pss_mb'] / lv['envs']:>7.0f}M "
                     f"{lat['p50'] * 1000:>7.0f} {lat['p95'] * 1000:>7.0f} {lat['n']:>6} "
                     f"{lv['cpu_envs_cores']:>7.2f} {lv['cpu_driver_cores']:>7.2f} "
                     f"{lv['cpu_machine_busy']:>5.0%} {lv['loadavg'][0]:>6.2f} "
                     f"{lv['mem_available_mb'] / 1024:>8.1f}")
    lines.append(f"held {r['held_envs']} envs with p95 <= {r['p95_limit_s'] * 1000:.0f} ms; "
                 f"stopped: {r['stop_reason']}; errors: {len(r['errors'])}; "
                 f"processes left running: {r['left_running']}")
    return "\n".join(lines)


def plot_density(r: dict[str, Any], path: str | Path) -> None:
    """Envs vs p50/p95 step latency (left) and memory per env (right)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lv = r["levels"]
    n = [x["envs"] for x in lv]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(n, [x["latency_s"]["p95"] * 1000 for x in lv], "o-", label="p95 step")
    ax.plot(n, [x["latency_s"]["p50"] * 1000 for x in lv], "s--", label="p50 step")
    ax.axhline(r["p95_limit_s"] * 1000, color="red", lw=0.8, label="p95 limit")
    ax.set_xlabel("envs acting at once")
    ax.set_ylabel("step latency, ms")
    ax.set_ylim(bottom=0)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax2 = ax.twinx()
    ax2.plot(n, [x["mem_per_env_mb"] for x in lv], "^:", color="tab:green",
             label="memory/env (PSS)")
    ax2.plot(n, [x["mem_per_env_mb"] + x["driver_pss_mb"] / x["envs"] for x in lv], "v:",
             color="tab:olive", label="memory/env + driver's share")
    ax2.set_ylabel("MB per env (PSS)")
    ax2.set_ylim(bottom=0)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize="small", loc="lower right")
    loads = [x["loadavg"][0] for x in lv]
    load = f"load1 {min(loads):.1f}-{max(loads):.1f}" if loads else ""
    ax.set_title(f"{r['env']}: {r['cpus']} CPUs, 1 action/{r['pace_s']:g} s per env, {load}",
                 fontsize="medium")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def save(r: dict[str, Any], path: str | Path) -> None:
    Path(path).write_text(json.dumps(r, indent=2))


def cmd_density(args: Any) -> int:
    """The CLI's ``bench --density``: tqdm over envs added, the table, JSON and plot."""
    import sys

    from tqdm import tqdm

    bar = tqdm(total=args.max_envs, desc="density", unit="env",
               disable=args.json or not sys.stderr.isatty())

    def progress(level: dict[str, Any]) -> None:
        line = (f"p95 {level['latency_s']['p95'] * 1000:.0f} ms, "
                f"{level['mem_per_env_mb']:.0f} MB/env, load {level['loadavg'][0]:.1f}")
        bar.update(level["envs"] - bar.n)
        bar.set_postfix_str(line)
        if bar.disable and not args.json:  # a log, not a terminal: one line per level
            print(f"... {level['envs']} envs: {line}", file=sys.stderr, flush=True)

    try:
        result = run_density(args.env, task=args.task, max_envs=args.max_envs, pace=args.pace,
                             duration=args.duration, p95_limit=args.p95_limit, add=args.add,
                             spares=args.spares, margin_mb=args.margin_mb, progress=progress)
    finally:
        bar.close()
    print(json.dumps(result, indent=2) if args.json else format_density(result))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        stem = f"density-{args.env.split(':')[-1]}"
        save(result, out / f"{stem}.json")
        plot_density(result, out / f"{stem}.png")
    return 0
