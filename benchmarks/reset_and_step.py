"""Reset and step timings of a SciGUI env on the real program (medians and p95).

    python benchmarks/reset_and_step.py --env SciGUI-ImageJ-v0 --resets 10 --steps 30

Prints one table; ``--json`` prints the numbers instead. Step phases come from
``info["timings"]``; "idle step" moves the pointer over an empty part of the screen (the cost
of parse + act + settle + grab without the program reacting), "reacting step" clicks
ImageJ's Image menu and closes it again with Escape.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import gymnasium as gym
import numpy as np

import sciagent_gym  # noqa: F401


def _summary(values: list[float]) -> dict[str, float]:
    arr = np.asarray(values)
    return {"median": float(np.median(arr)), "p95": float(np.percentile(arr, 95)),
            "n": len(values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="SciGUI-ImageJ-v0")
    parser.add_argument("--task", default="imagej/count-nuclei")
    parser.add_argument("--resets", type=int, default=10)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    t0 = time.monotonic()
    env = gym.make(args.env, task=args.task, max_steps=10_000)
    env.reset(seed=0)  # first reset also starts Xvfb and the window manager
    first = time.monotonic() - t0
    resets, phases = [], {}
    for i in range(args.resets):
        t = time.monotonic()
        _, info = env.reset(seed=i)
        resets.append(time.monotonic() - t)
        for k, v in info["timings"].items():
            phases.setdefault(k, []).append(v)
    idle, idle_observe, react = [], [], []
    for i in range(args.steps):
        _, _, _, _, info = env.step(f"pyautogui.moveTo({20 + i % 5}, 780)")
        idle.append(info["timings"]["total"])
        idle_observe.append(info["timings"]["settle"] + info["timings"]["grab"])
    for _ in range(max(args.steps // 2, 1)):
        _, _, _, _, info = env.step("pyautogui.click(646, 32)")
        react.append(info["timings"]["total"])
        _, _, _, _, info = env.step("pyautogui.press('escape')")
        react.append(info["timings"]["total"])
    env.close()
    result = {
        "env": args.env, "first_reset_s": first, "reset_s": _summary(resets),
        "reset_phases_median_s": {k: statistics.median(v) for k, v in phases.items()},
        "idle_step_s": _summary(idle), "idle_step_observe_s": _summary(idle_observe),
        "reacting_step_s": _summary(react),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{args.env}: first reset (display + program) {first:.2f} s")
    for name in ("reset_s", "idle_step_s", "idle_step_observe_s", "reacting_step_s"):
        s = result[name]
        print(f"  {name:<22} median {s['median'] * 1000:7.1f} ms   p95 {s['p95'] * 1000:7.1f} ms"
              f"   (n={s['n']})")
    print("  reset phases (median): " + ", ".join(
        f"{k} {v * 1000:.0f} ms" for k, v in result["reset_phases_median_s"].items()))


if __name__ == "__main__":
    main()
