"""Episodes per second on a short state-control task: restart vs warm pool vs soft reset.

    python benchmarks/soft_reset.py --episodes 20            # about 3 minutes on 2 cores

Each mode plays the same seeded episodes of ``ds9/toggle-colorbar`` with a random policy over
the moves of ``examples/train_ppo.py`` (toggle the colour bar, toggle the magnifier, DONE; at
most 6 steps), one env, in this process one after the other:

- ``restart``: ``pool_size=0``, every reset restarts DS9 (the baseline);
- ``pool``: ``pool_size=1``, a spare DS9 is prepared in the background;
- ``soft``: ``pool_size=0, soft_reset=50``, DS9 keeps running and is restored in place.

Prints reset medians/p95 and episodes per second, with ratios against the restart baseline;
``--json`` prints the numbers instead.
"""

from __future__ import annotations

import argparse
import json
import time

import gymnasium as gym
import numpy as np

import sciagent_gym  # noqa: F401

# examples/train_ppo.py's moves: the button bar's 'view' section, then its 'colorbar' or
# 'magnifier' check button, each click its own step as TargetActions takes them (two clicks in
# one step can outrun the section switch and hit the 'file' section's buttons, whose dialogs
# make the next soft reset fall back to a restart), or DONE.
MOVES = [["pyautogui.click(168, 207)", "pyautogui.click(665, 233)"],
         ["pyautogui.click(168, 207)", "pyautogui.click(318, 233)"], ["DONE"]]
MODES = {"restart": {"pool_size": 0}, "pool": {"pool_size": 1},
         "soft": {"pool_size": 0, "soft_reset": 50}}


def run(mode: str, episodes: int, seed: int) -> dict[str, float]:
    env = gym.make("SciGUI-DS9-v0", task="ds9/toggle-colorbar", max_steps=6, **MODES[mode])
    rng = np.random.default_rng(seed)
    resets, steps = [], 0
    try:
        env.reset(seed=seed)  # the first start is the same in every mode: not measured
        t0 = time.monotonic()
        for ep in range(episodes):
            done = False
            while not done:
                for action in MOVES[int(rng.integers(len(MOVES)))]:
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
            "episodes_per_s": episodes / wall, "steps": steps, **{f"n_{k}": v
                                                                   for k, v in stats.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = {mode: run(mode, args.episodes, args.seed) for mode in MODES}
    base = results["restart"]["episodes_per_s"]
    for r in results.values():
        r["speedup_vs_restart"] = r["episodes_per_s"] / base
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"ds9/toggle-colorbar, random policy, {args.episodes} episodes per mode, one env")
    print(f"{'mode':<8} {'reset p50':>10} {'reset p95':>10} {'episodes/s':>11} {'vs restart':>11}"
          f"  resets (warm/cold/soft)")
    for mode, r in results.items():
        print(f"{mode:<8} {r['reset_median_s']:>9.2f}s {r['reset_p95_s']:>9.2f}s "
              f"{r['episodes_per_s']:>11.2f} {r['speedup_vs_restart']:>10.2f}x"
              f"  {r['n_warm']}/{r['n_cold']}/{r['n_soft']}")


if __name__ == "__main__":
    main()
