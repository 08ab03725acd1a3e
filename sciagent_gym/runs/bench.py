"""``sciagent-gym bench``: an env's speed on the real program, against a harness baseline.

Measured in one run: reset p50/p95 (cold: pool off; warm: the pool swaps in a prepared
sandbox), step overhead p50/p95 (parse + act + settle + grab, from ``info["timings"]``, on
steps the program does not react to), episodes per hour of a scripted 10-step episode, peak
memory of an env's processes, and steps per second with 1, 2 and 4 async envs. The baseline
does what the reference harnesses do: relaunch per episode, sleep 5 s after reset and 2 s after
each action, PNG-encode every screenshot. Ratios are ours / baseline from the same process.
"""

from __future__ import annotations

import io
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from PIL import Image

from sciagent_gym import processes
from sciagent_gym.actions.space import ACTION_TYPES
from sciagent_gym.controller.settle import SettleConfig, changed_pixels


def scripted_actions(width: int, height: int) -> list[str]:
    """Ten tool-agnostic actions on the empty desktop corner, the last one DONE."""
    x, y = width - 30, height - 30
    return [f"pyautogui.moveTo({x}, {y})", f"pyautogui.click({x}, {y})",
            "pyautogui.press('shift')", f"pyautogui.moveTo({x - 10}, {y})",
            f"pyautogui.click({x - 10}, {y - 5})", "pyautogui.press('shift')",
            f"pyautogui.moveTo({x}, {y - 10})", f"pyautogui.scroll(-1, {x}, {y})",
            f"pyautogui.moveTo({x - 5}, {y - 5})", "DONE"]


def _pct(values: list[float]) -> dict[str, float]:
    arr = np.asarray(values, dtype=float)
    return {"p50": float(np.median(arr)), "p95": float(np.percentile(arr, 95)), "n": len(arr)}


def _tree_memory_mb() -> float:
    """Peak resident memory (VmHWM) summed over every process this package started."""
    total = 0
    roots = [p.pid for p in processes.live_processes()]
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    seen, todo = set(), list(roots)
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        todo += children.get(pid, [])
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def _reacted(before: np.ndarray | None, after: np.ndarray | None) -> bool:
    """Whether a step changed the screen beyond settle's tolerance: a step the program
    reacted to (its repaint is in the settle time) rather than an idle one."""
    if before is None or after is None or before.shape != after.shape:
        return False
    return changed_pixels(before, after) > SettleConfig().tolerance


def _episodes(env: gym.Env, n: int, seed: int) -> dict[str, Any]:
    base = env.unwrapped
    actions = scripted_actions(base.width, base.height)
    resets, overheads, episodes, warm, prepared = [], [], [], [], []
    idle, reacting = [], []
    env.reset(seed=seed)
    for _ in range(n):
        t0 = time.perf_counter()
        _, info = env.reset()
        resets.append(time.perf_counter() - t0)
        warm.append(bool(info["timings"].get("warm", 0.0)))
        if "prepared_in_background" in info["timings"]:
            prepared.append(info["timings"]["prepared_in_background"])
        for action in actions:
            before = getattr(base, "_frame", None)
            obs, _, terminated, truncated, info = env.step(action)
            if action != "DONE":
                overheads.append(info["timings"]["total"])
                split = reacting if _reacted(before, getattr(base, "_frame", None)) else idle
                split.append(info["timings"]["total"])
            if terminated or truncated:
                break
        episodes.append(time.perf_counter() - t0)
    return {"reset": resets, "step": overheads, "episode": episodes, "warm": warm,
            "prepared": prepared, "idle": idle, "reacting": reacting}


def _baseline(env_id: str, task: str | None, n: int, seed: int,
              reset_sleep: float, step_sleep: float, **make: Any) -> dict[str, Any]:
    """Relaunch per episode, fixed sleeps, PNG screenshots: the reference harnesses' loop.

    Its steps skip our settle detection (a zero quiet window) since the fixed sleep stands in
    for it; its resets keep our readiness wait, which the harnesses' VM boot also includes.
    """
    resets, steps, episodes = [], [], []
    no_settle = SettleConfig(quiet=0.0, cap=0.0, interval=0.0)
    for k in range(n):
        t0 = time.perf_counter()
        env = gym.make(env_id, task=task, pool_size=0, settle=no_settle, **make)
        try:
            env.reset(seed=seed + k)
            time.sleep(reset_sleep)
            Image.fromarray(env.unwrapped.provider.screenshot()).save(io.BytesIO(), "PNG")
            resets.append(time.perf_counter() - t0)
            for action in scripted_actions(env.unwrapped.width, env.unwrapped.height):
                t1 = time.perf_counter()
                obs, _, terminated, truncated, _ = env.step(action)
                time.sleep(step_sleep)
                Image.fromarray(env.unwrapped.provider.screenshot()).save(io.BytesIO(), "PNG")
                steps.append(time.perf_counter() - t1)
                if terminated or truncated:
                    break
        finally:
            env.close()
        episodes.append(time.perf_counter() - t0)
    return {"reset": resets, "step": steps, "episode": episodes}


def _vector_throughput(env_id: str, task: str | None, num_envs: int, steps: int,
                       seed: int, **make: Any) -> float:
    envs = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="async", task=task,
                        pool_size=0, max_steps=10_000, **make)
    try:
        envs.reset(seed=seed)
        actions = envs.action_space.sample()
        actions["action_type"][:] = ACTION_TYPES.index("move")
        t0 = time.perf_counter()
        for i in range(steps):
            actions["coordinate"][:] = [[1200 - i % 7, 760] for _ in range(num_envs)]
            envs.step(actions)
        return num_envs * steps / (time.perf_counter() - t0)
    finally:
        envs.close()


def run_bench(env_id: str, task: str | None = None, episodes: int = 6,
              baseline_episodes: int = 2, vector_sizes: tuple[int, ...] = (1, 2, 4),
              vector_steps: int = 20, seed: int = 0, reset_sleep: float = 5.0,
              step_sleep: float = 2.0, pool_size: int = 2, pool_workers: int = 2,
              progress: Callable[[str], None] = lambda m: None,
              make_kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """``make_kwargs`` go to every ``gym.make`` (tests: the fake provider); with an empty
    ``vector_sizes`` the async-env throughput (a minute or more per tool) is left out."""
    make = dict(make_kwargs or {})
    if pool_size < 1:
        raise ValueError("the warm-reset measurement needs pool_size >= 1")
    out: dict[str, Any] = {"env": env_id, "task": task, "cpus": os.cpu_count(),
                           "pool": {"size": pool_size, "workers": pool_workers}}
    progress("cold resets (pool off)")
    env = gym.make(env_id, task=task, pool_size=0, **make)
    try:
        cold = _episodes(env, episodes, seed)
        # One env's own processes, no spares: what each added env costs without a pool.
        out["peak_memory_mb_no_pool"] = _tree_memory_mb()
    finally:
        env.close()
    progress(f"warm resets (pool of {pool_size}, {pool_workers} preparing at once)")
    env = gym.make(env_id, task=task, pool_size=pool_size, pool_workers=pool_workers, **make)
    try:
        pool = env.unwrapped
        # Back to back, as a training loop runs: a reset swaps in a ready sandbox, waits for
        # one being prepared, or (on a miss) resets cold; all of it counts as reset time.
        warm = _episodes(env, episodes, seed)
        out["peak_memory_mb_per_env"] = _tree_memory_mb()
        out["pool_stats"] = dict(getattr(pool.provider, "stats", {}))
        # How long the pool took to prepare each swapped-in sandbox: when this exceeds the
        # episode, reset() waits for the rest and the program's start bounds the reset.
        out["prepared_in_background_s"] = _pct(warm["prepared"]) if warm["prepared"] else None
    finally:
        env.close()
    progress("idle steps with SettleConfig.fast()")
    env = gym.make(env_id, task=task, pool_size=0, settle=SettleConfig.fast(), max_steps=10_000,
                   **make)
    try:
        env.reset(seed=seed)
        base_env = env.unwrapped
        x, y = base_env.width - 30, base_env.height - 30
        fast = [env.step(f"pyautogui.moveTo({x - i % 5}, {y})")[4]["timings"]["total"]
                for i in range(30)]
    finally:
        env.close()
    out["step_overhead_fast_settle_s"] = _pct(fast)
    progress("baseline (relaunch, fixed sleeps, PNG)")
    base = _baseline(env_id, task, baseline_episodes, seed, reset_sleep, step_sleep, **make)
    out["reset_cold_s"] = _pct(cold["reset"])
    out["reset_warm_s"] = _pct(warm["reset"])  # every reset of the pooled env, hits and misses
    out["step_overhead_s"] = _pct(cold["step"] + warm["step"])
    # The scripted steps split by whether the screen changed (None: no step of that kind).
    for kind in ("idle", "reacting"):
        steps = cold[kind] + warm[kind]
        out[f"step_{kind}_s"] = _pct(steps) if steps else None
    out["episode_s"] = _pct(warm["episode"])
    out["baseline"] = {"reset_s": _pct(base["reset"]), "step_s": _pct(base["step"]),
                       "episode_s": _pct(base["episode"])}
    ours_eph = 3600 / np.mean(warm["episode"])
    base_eph = 3600 / np.mean(base["episode"])
    out["episodes_per_hour"] = {"ours": ours_eph, "baseline": base_eph,
                                "ratio": ours_eph / base_eph}
    out["ratios_ours_over_baseline"] = {
        "reset_p50": out["reset_warm_s"]["p50"] / out["baseline"]["reset_s"]["p50"],
        "step_p50": out["step_overhead_s"]["p50"] / out["baseline"]["step_s"]["p50"],
        "episode_p50": out["episode_s"]["p50"] / out["baseline"]["episode_s"]["p50"],
    }
    out["vector_steps_per_s"] = {}
    for n in vector_sizes:
        progress(f"{n} async envs")
        out["vector_steps_per_s"][str(n)] = _vector_throughput(env_id, task, n, vector_steps,
                                                               seed, **make)
    return out


def format_bench(r: dict[str, Any]) -> str:
    ms = lambda s: f"{s * 1000:8.1f} ms"  # noqa: E731
    b = r["baseline"]
    lines = [
        f"{r['env']} on {r['cpus']} CPUs" + (f", task {r['task']}" if r["task"] else ""),
        f"{'':<28}{'ours p50':>12}{'ours p95':>12}{'baseline p50':>15}{'ratio':>8}",
        f"{'reset (warm, pool)':<28}{ms(r['reset_warm_s']['p50'])}{ms(r['reset_warm_s']['p95'])}"
        f"{ms(b['reset_s']['p50']):>15}{r['ratios_ours_over_baseline']['reset_p50']:8.3f}",
        f"{'reset (cold, no pool)':<28}{ms(r['reset_cold_s']['p50'])}"
        f"{ms(r['reset_cold_s']['p95'])}",
        f"{'step overhead':<28}{ms(r['step_overhead_s']['p50'])}"
        f"{ms(r['step_overhead_s']['p95'])}{ms(b['step_s']['p50']):>15}"
        f"{r['ratios_ours_over_baseline']['step_p50']:8.3f}",
        *[f"{'  ' + kind + ' steps (n=' + str(r[key]['n']) + ')':<28}{ms(r[key]['p50'])}"
          f"{ms(r[key]['p95'])}" for kind, key in (("idle", "step_idle_s"),
                                                  ("reacting", "step_reacting_s")) if r.get(key)],
        f"{'step, SettleConfig.fast()':<28}{ms(r['step_overhead_fast_settle_s']['p50'])}"
        f"{ms(r['step_overhead_fast_settle_s']['p95'])}",
        f"{'10-step episode':<28}{ms(r['episode_s']['p50'])}{ms(r['episode_s']['p95'])}"
        f"{ms(b['episode_s']['p50']):>15}{r['ratios_ours_over_baseline']['episode_p50']:8.3f}",
        f"episodes per hour: ours {r['episodes_per_hour']['ours']:.0f}, baseline "
        f"{r['episodes_per_hour']['baseline']:.0f} ({r['episodes_per_hour']['ratio']:.1f}x)",
        f"peak memory of one env's processes (pool of {r['pool']['size']} included): "
        f"{r['peak_memory_mb_per_env']:.0f} MB",
    ]
    if r["vector_steps_per_s"]:
        lines.append("async envs, steps/s: " + ", ".join(
            f"{n}: {v:.1f}" for n, v in r["vector_steps_per_s"].items()))
    return "\n".join(lines)


def plot_bench(r: dict[str, Any], path: str | Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = ["reset", "step", "10-step episode"]
    ours = [r["reset_warm_s"]["p50"], r["step_overhead_s"]["p50"], r["episode_s"]["p50"]]
    base = [r["baseline"]["reset_s"]["p50"], r["baseline"]["step_s"]["p50"],
            r["baseline"]["episode_s"]["p50"]]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    xs = np.arange(len(labels))
    ax.bar(xs - 0.2, ours, 0.4, label="sciagent-gym (warm pool, settle)")
    ax.bar(xs + 0.2, base, 0.4, label="baseline (relaunch, fixed sleeps, PNG)")
    ax.set_yscale("log")
    ax.set_xticks(xs)
    ax.set_xticklabels(labels)
    ax.set_ylabel("seconds (median, log scale)")
    ax.legend(fontsize="small")
    ns = list(r["vector_steps_per_s"])
    ax2.bar(ns, [r["vector_steps_per_s"][n] for n in ns], color="tab:green")
    ax2.set_xlabel("async envs")
    ax2.set_ylabel("steps per second")
    fig.suptitle(f"{r['env']} on {r['cpus']} CPUs")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def save(r: dict[str, Any], path: str | Path) -> None:
    Path(path).write_text(json.dumps(r, indent=2))
