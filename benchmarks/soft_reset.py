"""Episodes per second on a short task: restart vs warm pool vs soft reset.

    python benchmarks/soft_reset.py --episodes 20            # DS9: about 3 minutes on 2 cores
    python benchmarks/soft_reset.py --env pymol --out benchmarks/results/soft-reset-pymol.json

Each mode plays the same seeded episodes of one task with a random policy over a few moves
(:data:`ENVS`; DS9's are ``examples/train_ppo.py``'s: toggle the colour bar, toggle the
magnifier, DONE; at most 6 steps), one env, in this process one after the other:

- ``restart``: ``pool_size=0``, every reset restarts the program (the baseline);
- ``pool``: ``pool_size=1``, a spare program is prepared in the background;
- ``soft``: ``pool_size=0, soft_reset=50``, the program keeps running and is restored in place;
- ``soft-damage`` (with ``--damage``): the same with ``settle=SettleConfig.damage()``, whose
  canonical settle after the restore waits on paint events instead of comparing frames.

Prints reset medians/p95 and episodes per second, with ratios against the restart baseline;
``--json`` prints the numbers instead, with the 1-minute load average before and after each
mode (the machine is shared: the numbers mean little without it); ``--out`` writes them too.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import sciagent_gym  # noqa: F401
from sciagent_gym.controller.settle import SettleConfig

# Per env: the env id, the task, and the moves (each a list of steps). DS9's are
# examples/train_ppo.py's: the button bar's 'view' section, then its 'colorbar' or 'magnifier'
# check button, each click its own step as TargetActions takes them (two clicks in one step can
# outrun the section switch and hit the 'file' section's buttons, whose dialogs make the next
# soft reset fall back to a restart), or DONE. PyMOL: a colour typed at the prompt, a zoom by
# the wheel, or DONE. ImageJ: the oval tool, Measure (opens the Results table), or DONE. QGIS: a
# layer's visibility box then a click on the map (two clicks on the box in a row are a
# double-click: Layer Properties opens and the soft reset falls back), a zoom by the wheel on the
# map, or DONE.
ENVS = {
    "ds9": ("SciGUI-DS9-v0", "ds9/toggle-colorbar",
            [["pyautogui.click(168, 207)", "pyautogui.click(665, 233)"],
             ["pyautogui.click(168, 207)", "pyautogui.click(318, 233)"], ["DONE"]]),
    "pymol": ("SciGUI-PyMOL-v0", "pymol/color-chain",
              [["pyautogui.click(515, 193)", "pyautogui.write('color red, chain A\\n')"],
               ["pyautogui.scroll(-3, x=500, y=450)"], ["DONE"]]),
    "imagej": ("SciGUI-ImageJ-v0", "imagej/measure-region-mean",
               [["pyautogui.click(87, 80)"], ["pyautogui.hotkey('ctrl', 'm')"], ["DONE"]]),
    "qgis": ("SciGUI-QGIS-v0", "qgis/hide-layer",
             [["pyautogui.click(31, 427)", "pyautogui.click(700, 400)"],
              ["pyautogui.scroll(-3, x=700, y=400)"], ["DONE"]]),
}
MODES = {"restart": {"pool_size": 0}, "pool": {"pool_size": 1},
         "soft": {"pool_size": 0, "soft_reset": 50}}


def run(name: str, mode: str, episodes: int, seed: int) -> dict[str, float]:
    env_id, task, moves = ENVS[name]
    load_before = os.getloadavg()[0]
    env = gym.make(env_id, task=task, max_steps=6, **MODES[mode])
    rng = np.random.default_rng(seed)
    resets, steps = [], 0
    try:
        env.reset(seed=seed)  # the first start is the same in every mode: not measured
        t0 = time.monotonic()
        for ep in range(episodes):
            done = False
            while not done:
                for action in moves[int(rng.integers(len(moves)))]:
                    _, _, term, trunc, _ = env.step(action)
                    steps += 1
                    done = term or trunc
                    if done:
                        break
            t = time.monotonic()
            env.reset(seed=seed + 1 + ep)
            resets.append(time.monotonic() - t)
        wall = time.monotonic() - t0
        stats = dict(env.unwrapped.provider.stats)
    finally:
        env.close()
    return {"reset_median_s": float(np.median(resets)),
            "reset_p95_s": float(np.percentile(resets, 95)),
            "episodes_per_s": episodes / wall, "steps": steps,
            "load1_before": load_before, "load1_after": os.getloadavg()[0],
            **{f"n_{k}": v for k, v in stats.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--env", choices=sorted(ENVS), default="ds9")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--out", type=Path, help="also write the JSON numbers here")
    parser.add_argument("--damage", action="store_true",
                        help="also soft resets under the damage settle (mode soft-damage)")
    args = parser.parse_args()
    if args.damage:
        MODES["soft-damage"] = {**MODES["soft"], "settle": SettleConfig.damage()}
    results = {mode: run(args.env, mode, args.episodes, args.seed) for mode in MODES}
    base = results["restart"]["episodes_per_s"]
    for r in results.values():
        r["speedup_vs_restart"] = r["episodes_per_s"] / base
    text = json.dumps({"env": ENVS[args.env][0], "task": ENVS[args.env][1],
                       "episodes": args.episodes, "modes": results}, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    if args.json:
        print(text)
        return
    print(f"{ENVS[args.env][1]}, random policy, {args.episodes} episodes per mode, one env")
    print(f"{'mode':<11} {'reset p50':>10} {'reset p95':>10} {'episodes/s':>11} {'vs restart':>11}"
          f"  resets (warm/cold/soft)")
    for mode, r in results.items():
        print(f"{mode:<11} {r['reset_median_s']:>9.2f}s {r['reset_p95_s']:>9.2f}s "
              f"{r['episodes_per_s']:>11.2f} {r['speedup_vs_restart']:>10.2f}x"
              f"  {r['n_warm']}/{r['n_cold']}/{r['n_soft']}  load {r['load1_before']:.1f}")


if __name__ == "__main__":
    main()
