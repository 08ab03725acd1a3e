"""Damage-driven settle vs the default frame settle, each checked against a 1 s settle.

    python benchmarks/settle_damage.py --tool imagej --steps 40 \\
        --out benchmarks/results/settle-damage-imagej.json
    python benchmarks/settle_damage.py --plot benchmarks/results/settle-damage-*.json \\
        --png benchmarks/results/settle-damage.png

One env of the tool (its first task that is not held out, pool off). The same seeded random
actions (menu-bar clicks, Escape, clicks, right and double clicks and hovers on the open
windows, typing, Tab, Enter, Ctrl+O, Shift alone) are played twice from the same reset, once
per mode, in this process:

- ``damage``: :func:`~sciagent_gym.controller.settle.wait_damage_settled` (``--quiet``,
  ``--react``);
- ``frame``: the default ``SettleConfig()`` (grab every 15 ms until 150 ms without change).

After each observation the script keeps waiting until 1 s passes without a change (frames,
64-pixel tolerance for carets, cap 6 s): that frame is the truth, and the next action starts
from it, so both modes act on the same states. An observation is half-painted when it differs
from its truth in more than 64 pixels. A step is *reacting* when its truth differs from the
previous truth, else *idle*. Step time = act + settle + grab, as ``env.step`` pays it.

Every paint (DAMAGE rectangle) from the action to the truth is traced, for per-tool quiet
windows: reaction latency (action to first paint bigger than 64 px) and the gaps between
paints of a reacting step before its last paint (the quiet window that step needed). ``--json``
is implied: the JSON holds per-step records and the summary; the plot shows all tools.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

TOL = 64  # pixels, as SettleConfig.tolerance


def _env_id(tool: str) -> str:
    import gymnasium as gym

    import sciagent_gym  # noqa: F401

    ids = [i for i in gym.registry if i.startswith(("SciGUI-", "SciCode-")) and
           i.split("-", 1)[1][:-len("-v0")].lower() == tool.lower()]
    if not ids:
        raise SystemExit(f"no SciGUI or SciCode env for tool {tool!r}")
    return ids[0]


def _task(tool: str) -> str:
    root = Path(__file__).resolve().parents[1] / "task_specs" / tool
    for path in sorted(root.glob("*.json")):
        if not json.loads(path.read_text()).get("heldout"):
            return f"{tool}/{path.stem}"
    raise SystemExit(f"no task for {tool}")


def next_action(rng: random.Random, windows: list) -> str:
    """One random pyautogui action on one of the open windows (the same ``rng`` and windows
    give the same action, so both modes play the same script); no clicks on the right third
    of a window (close buttons) and no quit shortcuts."""
    wins = sorted((w.x, w.y, w.width, w.height) for w in windows) or [(0, 0, 1280, 800)]
    x, y, w, h = wins[rng.randrange(len(wins))]
    kind = rng.choice(["menu", "menu", "escape", "click", "click", "rightclick", "dblclick",
                       "hover", "type", "tab", "enter", "dialog", "idle"])
    px, py = x + rng.randint(5, max(6, w * 2 // 3)), y + rng.randint(5, max(6, h - 5))
    if kind == "menu":
        return f"pyautogui.click({x + rng.randint(5, max(6, min(w - 5, 400)))}, " \
               f"{y + rng.randint(3, 25)})"
    return {"escape": "pyautogui.press('escape')", "click": f"pyautogui.click({px}, {py})",
            "rightclick": f"pyautogui.rightClick({px}, {py})",
            "dblclick": f"pyautogui.doubleClick({px}, {py})",
            "hover": f"pyautogui.moveTo({px}, {py})", "type": "pyautogui.typewrite('ab')",
            "tab": "pyautogui.press('tab')", "enter": "pyautogui.press('enter')",
            "dialog": "pyautogui.hotkey('ctrl', 'o')"}.get(kind, "pyautogui.press('shift')")


class Tracer:
    """Wraps a damage source: every paint it hands out is also logged."""

    def __init__(self, source) -> None:
        self.source, self.log = source, []
        self.busy = source.busy

    def mark(self) -> None:
        self.source.mark()

    def next_paint(self, deadline: float):
        paint = self.source.next_paint(deadline)
        if paint is not None:
            self.log.append(paint)
        return paint

    def drain(self) -> None:
        while self.next_paint(0.0) is not None:
            pass


def _roots(prov) -> list[int]:
    """The pids the slot's damage settle watches (as LocalSlot gives them)."""
    slot = prov._slot
    return [p.pid for p in (slot._display._xvfb, slot._display._wm,
                            getattr(slot._app_zone, "_proc", None)) if p]


def play(env, mode: str, steps: int, seed: int, quiet: float, react: float,
         use_busy: bool = True, tool_settle: dict | None = None) -> list[dict]:
    from sciagent_gym.actions.parse import parse_action
    from sciagent_gym.controller.activity import ProcessActivity
    from sciagent_gym.controller.damage import XDamageSource
    from sciagent_gym.controller.settle import (
        SettleConfig,
        changed_pixels,
        for_tool,
        wait_damage_settled,
        wait_settled,
    )

    base = env.unwrapped
    prov = base.provider
    size = (base.width, base.height)
    busy = ProcessActivity(lambda: _roots(prov)).busy if use_busy else None
    source = XDamageSource(prov.display_name, busy)
    tracer = Tracer(source)
    truth_cfg = SettleConfig(quiet=1.0, cap=6.0)
    cfg = for_tool(SettleConfig.damage(quiet=quiet, react=react), tool_settle)
    grab = prov.screenshot

    def traced_grab():
        tracer.drain()
        return grab()

    prev, _ = wait_settled(grab, truth_cfg)
    records = []
    try:
        rng = random.Random(seed)
        for _ in range(steps):
            text = next_action(rng, prov.windows())
            acts = parse_action(text, size)
            tracer.mark()
            tracer.log = []
            t0 = time.monotonic()
            for a in acts:
                prov.execute(a)
            t_act = time.monotonic()
            if mode == "damage":
                obs, settled = wait_damage_settled(grab, tracer, cfg)
            else:  # the trace is read between grabs (times within one grab interval)
                obs, settled = wait_settled(traced_grab, SettleConfig())
            t1 = time.monotonic()

            truth, truth_settled = wait_settled(traced_grab, truth_cfg)
            tracer.drain()
            paints = [(round(t - t_act, 4), area) for t, area in tracer.log]
            records.append({
                "action": text, "step_s": t1 - t0, "act_s": t_act - t0, "settled": settled,
                "reacting": changed_pixels(truth, prev) > TOL,
                "half_painted": changed_pixels(obs, truth) > TOL,
                "diff_px": changed_pixels(obs, truth), "truth_settled": truth_settled,
                "paints": paints})
            prev = truth
            if not prov.app_running():
                print(f"  program exited after {text}", file=sys.stderr)
                break
    finally:
        source.close()
    return records


def burst_stats(records: list[dict]) -> dict:
    """Reaction latencies and in-burst gaps of the reacting steps' traces."""
    lat, gaps, spans = [], [], []
    for r in records:
        big = [t for t, area in r["paints"] if area > TOL and t >= 0]
        if not r["reacting"] or not big:
            continue
        lat.append(big[0])
        times = sorted(t for t, _ in r["paints"] if t >= 0)
        inner = [b - a for a, b in zip(times, times[1:], strict=False) if b - a < 0.5]
        gaps.append(max(inner, default=0.0))
        spans.append(times[-1] - big[0])
    def pct(v, q):
        return (float(np.percentile(v, q)) if v else None)
    return {"reaction_latency_s": {"p50": pct(lat, 50), "p95": pct(lat, 95),
                                   "max": max(lat, default=None)},
            "largest_gap_in_burst_s": {"p50": pct(gaps, 50), "p95": pct(gaps, 95),
                                       "max": max(gaps, default=None)},
            "burst_span_s": {"p50": pct(spans, 50), "max": max(spans, default=None)},
            "reacting_traced": len(lat)}


def needed_windows(records: list[dict]) -> dict:
    """What the damage settle's half-painted steps would have needed: the gap from the last
    paint before the observation to the first after it (a quiet window), or the first paint's
    time when none came before it (a reaction window). Gaps of 0.5 s or more are timers
    (tooltips, playback) that no window short enough to be useful waits out."""
    quiet, react, timers = [], [], []
    for r in records:
        if not r["half_painted"]:
            continue
        obs = r["step_s"] - r["act_s"]
        times = sorted(t for t, _ in r["paints"])
        before = [t for t in times if t <= obs]
        after = [t for t in times if t > obs]
        if not after:
            continue
        gap = after[0] - (before[-1] if before else 0.0)
        (timers if gap >= 0.5 else quiet if before else react).append(round(gap, 4))
    return {"quiet": quiet, "react": react, "timers": timers,
            "suggest": {k: round(max(v) + 0.03, 2) for k, v in (("quiet", quiet),
                                                                  ("react", react)) if v}}


def summary(records: list[dict]) -> dict:
    idle = [r["step_s"] for r in records if not r["reacting"]]
    react = [r["step_s"] for r in records if r["reacting"]]
    def med(v):
        return (float(np.median(v)) if v else None)
    lag = []  # reacting steps: from the last paint before the observation to its end
    for r in records:
        before = [t for t, _ in r["paints"] if t <= r["step_s"] - r["act_s"]]
        if r["reacting"] and before:
            lag.append(r["step_s"] - r["act_s"] - max(before))
    return {"steps": len(records), "idle": len(idle), "reacting": len(react),
            "after_last_paint_p50_s": med(lag),
            "step_p50_idle_s": med(idle), "step_p50_reacting_s": med(react),
            "half_painted": sum(r["half_painted"] for r in records),
            "half_painted_rate": (sum(r["half_painted"] for r in records) / len(records))
            if records else None,
            "capped": sum(not r["settled"] for r in records)}


def run(tool: str, steps: int, seed: int, quiet: float, react: float,
        use_busy: bool = True, tool_settle: dict | None = None) -> dict:
    import gymnasium as gym

    env_id, task = _env_id(tool), _task(tool)
    out = {"tool": tool, "env": env_id, "task": task, "seed": seed, "quiet": quiet,
           "react": react, "busy": use_busy, "modes": {}}
    env = gym.make(env_id, task=task, pool_size=0, max_steps=10_000)
    if tool_settle is None:  # the tool's own windows, as the env applies them
        tool_settle = env.unwrapped.adapter.info.extra.get("settle") or {}
    out["tool_settle"] = tool_settle
    try:
        for mode in ("damage", "frame"):
            env.reset(seed=seed)
            load0 = os.getloadavg()[0]
            records = play(env, mode, steps, seed, quiet, react, use_busy, tool_settle)
            out["modes"][mode] = {"summary": summary(records), "load": [load0,
                                  os.getloadavg()[0]], "records": records}
            print(f"{tool} {mode}: {json.dumps(out['modes'][mode]['summary'])}",
                  file=sys.stderr)
        out["bursts"] = burst_stats(out["modes"]["damage"]["records"] +
                                    out["modes"]["frame"]["records"])
        out["needed"] = needed_windows(out["modes"]["damage"]["records"])
        out["truth"] = {"settle": "frames, 1.0 s quiet, 64 px tolerance, 6 s cap",
                        "half_painted_rate": 0.0}
        print(f"{tool} bursts: {json.dumps(out['bursts'])}", file=sys.stderr)
        print(f"{tool} needed: {json.dumps(out['needed'])}", file=sys.stderr)
    finally:
        env.close()
    return out


def resets(tool: str, n: int, seed: int, quiet: float, react: float) -> dict:
    """The canonical settle at reset, frames vs damage: its time and whether the first frame
    is the one the frame settle gives (restart resets, pool off, same seed)."""
    import gymnasium as gym

    from sciagent_gym.controller.settle import SettleConfig, changed_pixels

    env_id, task = _env_id(tool), _task(tool)
    out: dict = {}
    firsts: dict[str, list[np.ndarray]] = {}
    for mode, cfg in (("frame", SettleConfig()),
                      ("damage", SettleConfig.damage(quiet=quiet, react=react))):
        env = gym.make(env_id, task=task, pool_size=0, settle=cfg, max_steps=10_000)
        try:
            times, firsts[mode] = [], []
            for _ in range(n):
                obs, _ = env.reset(seed=seed)
                times.append(env.unwrapped.provider.last_reset_timings["settle"])
                firsts[mode].append(obs["screenshot"])
        finally:
            env.close()
        out[mode] = {"settle_p50_s": float(np.median(times)), "settle_s": times}
    ref = firsts["frame"][0]
    for mode in out:
        out[mode]["first_frame_diff_px_vs_frame"] = [changed_pixels(f, ref)
                                                     for f in firsts[mode]]
    return out


def plot(paths: list[str], png: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = [json.loads(Path(p).read_text()) for p in paths]
    tools = [d["tool"] for d in data]
    fig, axes = plt.subplots(1, 2, figsize=(15, 5))
    xs = np.arange(len(tools))
    for k, (mode, colour) in enumerate((("damage", "tab:green"), ("frame", "tab:blue"))):
        s = [d["modes"][mode]["summary"] for d in data]
        axes[0].bar(xs + k * 0.2 - 0.3, [1000 * (v["step_p50_idle_s"] or 0) for v in s], 0.2,
                    color=colour, label=f"{mode} idle")
        axes[0].bar(xs + k * 0.2 + 0.1, [1000 * (v["step_p50_reacting_s"] or 0) for v in s],
                    0.2, color=colour, alpha=0.5, hatch="//", label=f"{mode} reacting")
        axes[1].bar(xs + (k - 0.5) * 0.35, [100 * (v["half_painted_rate"] or 0) for v in s],
                    0.35, color=colour, label=mode)
    axes[0].set_ylabel("step p50 (ms, log)")
    axes[0].set_yscale("log")
    axes[1].set_ylabel("half-painted vs 1 s settle (%)")
    axes[1].axhline(1.0, color="grey", linestyle=":")
    for ax in axes:
        ax.set_xticks(xs, tools, rotation=45, ha="right")
        ax.legend(fontsize=7)
    fig.suptitle("Damage-driven vs frame settle (same actions, same process per tool)")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def table(paths: list[str]) -> str:
    """A markdown table of result files: step p50 idle/reacting and half-painted per mode."""
    rows = ["| tool | steps (idle/react) | damage p50 idle / react ms | frame p50 idle / react ms"
            " | grab after last paint, damage / frame ms | half-painted damage / frame / 1 s"
            " | tool settle | load |", "|---|---|---|---|---|---|---|---|"]
    for path in paths:
        d = json.loads(Path(path).read_text())
        dm, fr = (summary(d["modes"][m]["records"]) for m in ("damage", "frame"))

        def ms(v):
            return "-" if v is None else f"{1000 * v:.0f}"
        rows.append(
            f"| {d['tool']} | {dm['steps']} ({dm['idle']}/{dm['reacting']}) | "
            f"{ms(dm['step_p50_idle_s'])} / {ms(dm['step_p50_reacting_s'])} | "
            f"{ms(fr['step_p50_idle_s'])} / {ms(fr['step_p50_reacting_s'])} | "
            f"{ms(dm['after_last_paint_p50_s'])} / {ms(fr['after_last_paint_p50_s'])} | "
            f"{dm['half_painted']} ({100 * dm['half_painted_rate']:.1f} %) / "
            f"{fr['half_painted']} ({100 * fr['half_painted_rate']:.1f} %) / 0 | "
            f"{json.dumps(d.get('tool_settle') or {})} | "
            f"{d['modes']['damage']['load'][0]:.1f} |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tool")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quiet", type=float, default=0.04)
    ap.add_argument("--react", type=float, default=0.01)
    ap.add_argument("--no-busy", action="store_true",
                    help="paints only, no look at the processes' states")
    ap.add_argument("--resets", type=int, default=0,
                    help="also time the canonical settle at N resets per mode")
    ap.add_argument("--tool-settle", type=json.loads, default=None,
                    help='JSON instead of tool.json\'s "settle", e.g. \'{"react": 0.1}\'')
    ap.add_argument("--out")
    ap.add_argument("--plot", nargs="*")
    ap.add_argument("--png", default="benchmarks/results/settle-damage.png")
    args = ap.parse_args()
    if args.plot:
        plot(args.plot, args.png)
        print(table(args.plot))
        return
    result = run(args.tool, args.steps, args.seed, args.quiet, args.react, not args.no_busy,
                 args.tool_settle)
    if args.resets:
        result["resets"] = resets(args.tool, args.resets, args.seed, args.quiet, args.react)
        print(f"{args.tool} resets: " + json.dumps(
            {m: {k: v for k, v in r.items() if k != "settle_s"}
             for m, r in result["resets"].items()}), file=sys.stderr)
    text = json.dumps(result, separators=(",", ":"))
    if args.out:
        Path(args.out).write_text(text)
    else:
        print(text)


if __name__ == "__main__":
    main()
