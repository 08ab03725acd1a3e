"""A random policy on SciGUI-ImageJ-v0 through the plain Gymnasium API.

    python examples/random_rollout.py --steps 10
"""

from __future__ import annotations

import argparse

import gymnasium as gym

import sciagent_gym  # noqa: F401  (registers SciGUI-* ids)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="imagej/count-nuclei")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    env = gym.make("SciGUI-ImageJ-v0", task=args.task, max_steps=args.steps)
    env.action_space.seed(args.seed)
    obs, info = env.reset(seed=args.seed)
    print("instruction:", obs["instruction"])
    print(f"reset took {info['timings']['total']:.2f}s")
    terminated = truncated = False
    while not (terminated or truncated):
        action = env.action_space.sample()        # a dict of the structured action space
        obs, reward, terminated, truncated, info = env.step(action)
        print(f"step {info['steps']:2d}  error={info.get('action_error')!s:.60}  "
              f"{info['timings']['total'] * 1000:.0f} ms")
    evaluation = info["evaluation"]
    print(f"reward {reward:.2f}  success {evaluation['success']}")
    for c in evaluation["criteria"]:
        print(f"  [{'x' if c['passed'] else ' '}] {c['name']}: {c['detail']}")
    env.close()


if __name__ == "__main__":
    main()
