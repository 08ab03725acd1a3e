"""The QEMU provider's costs on the real ImageJ guest, against the local provider in the same
process (medians; ratios qemu/local, since machines here are noisy).

    python benchmarks/qemu_provider.py --resets 5 --steps 10 [--json]

Measures: image build (a no-op when cached), env start (saved start state, VM resume, savevm),
reset (loadvm + staging + opening the input), an idle step (pointer move, settle, frame over
HTTP) and a reacting step (open and close ImageJ's Analyze menu). The local provider runs with
``pool_size=0``, so its resets are cold ones.
"""

from __future__ import annotations

import argparse
import json
import time

import gymnasium as gym
import numpy as np

import sciagent_gym  # noqa: F401
from sciagent_gym.providers.qemu.build import build_image

TASK = "imagej/count-nuclei"


def _median(values: list[float]) -> float:
    return float(np.median(values))


def measure(provider: str, resets: int, steps: int) -> dict[str, float]:
    t0 = time.monotonic()
    env = gym.make("SciGUI-ImageJ-v0", task=TASK, provider=provider, pool_size=0,
                   max_steps=10_000)
    try:
        env.unwrapped._ensure_provider()
        out = {"env_start_s": time.monotonic() - t0}
        phases: dict[str, list[float]] = {}
        times = []
        for i in range(resets):
            t = time.monotonic()
            _, info = env.reset(seed=i)
            times.append(time.monotonic() - t)
            for k, v in info["timings"].items():
                phases.setdefault(k, []).append(v)
        out["reset_s"] = _median(times)
        out.update({f"reset_{k}_s": _median(v) for k, v in phases.items()})
        idle, react = [], []
        for i in range(steps):
            t = time.monotonic()
            env.step(f"pyautogui.moveTo({900 + i % 2}, 700)")
            idle.append(time.monotonic() - t)
            t = time.monotonic()
            env.step("pyautogui.click(294, 52)")
            env.step("pyautogui.press('escape')")
            react.append((time.monotonic() - t) / 2)
        out["idle_step_s"] = _median(idle)
        out["reacting_step_s"] = _median(react)
        return out
    finally:
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resets", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    t0 = time.monotonic()
    image = build_image("imagej", progress=not args.json)
    build = time.monotonic() - t0
    results = {"image_build_s": build,
               "image_stage_seconds": {k: v["seconds"] for k, v in image.meta["stages"].items()},
               "qemu": measure("qemu", args.resets, args.steps),
               "local": measure("local", args.resets, args.steps)}
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"image build (cached: a no-op unless the package changed): {build:.1f} s")
    q, loc = results["qemu"], results["local"]
    print(f"{'median':<28}{'qemu':>10}{'local':>10}{'qemu/local':>12}")
    for key in ("env_start_s", "reset_s", "idle_step_s", "reacting_step_s"):
        print(f"{key:<28}{q[key]:>10.3f}{loc[key]:>10.3f}{q[key] / loc[key]:>12.1f}")
    print("qemu reset phases: " + ", ".join(f"{k[6:-2]} {v:.2f} s" for k, v in q.items()
                                             if k.startswith("reset_") and k != "reset_s"))


if __name__ == "__main__":
    main()
