"""PPO (stable-baselines3, on CPU) on a state-control task in the real DS9, from pixels.

The task is ``ds9/toggle-colorbar`` (after StaR): the colour bar starts on or off at random and
the instruction asks for on or off, so in half the variants the right answer is to click
nothing and say DONE. The policy sees a small grey screenshot plus the instruction's words
(hashed into a few bits) and picks one of four GUI operations: toggle the colour bar (the
button bar's 'view' then 'colorbar' buttons), toggle the coordinate grid ('analysis' then
'grid'), toggle the magnifier (a wrong move: the task says change nothing else) or DONE.
Reward is 1 for a successful episode and 0 otherwise.

It trains on the ``train`` split, then plays the learned policy and a uniform random policy on
the same held-out ``test`` variants and on the held-out task family ``ds9/toggle-grid``
(``split="heldout-tasks"``: never drawn in training; the same kind of decision on another
toggle, with the grid operation the policy was never rewarded for), and saves a learning
curve::

    python examples/train_ppo.py --out ppo-out           # 26 min of training, 31 in all
    python examples/train_ppo.py --timesteps 32 --eval-episodes 2    # a smoke run

Training stops at ``--timesteps`` or after ``--minutes``, whichever comes first. On 2 cores
(DS9 restored in place between episodes, ~2 timesteps a second) 26 minutes gave 3,184
timesteps and a policy no better than always saying DONE: 11 of 24 test variants
(always-DONE 11, random 6) and 11 of 24 held-out-task variants (always-DONE 11, random 10).
With three actions (no grid toggle) an earlier run learned the task (46 of 60 test variants
against 19 for random).

Results go to ``OUT/metrics.json``, ``OUT/learning_curve.png`` and ``OUT/ppo_toggle.zip``.
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import sciagent_gym  # noqa: F401  (registers SciGUI-* ids)
from sciagent_gym.wrappers import ScreenshotObservation, TargetActions

TASK = "ds9/toggle-colorbar"
HELDOUT_TASK = "ds9/toggle-grid"  # a held-out task family (its spec says "heldout": true)
# Button bar of DS9's main window at its launch geometry: 'view' opens the view section, whose
# 'colorbar' and 'magnifier' buttons are check buttons; 'analysis' opens the one with 'grid'.
TARGETS = {"toggle colour bar": [(168, 207), (665, 233)],
           "toggle grid": [(880, 207), (164, 233)],
           "toggle magnifier": [(168, 207), (318, 233)]}
OBS_SIZE = (96, 60)
WORD_BITS = 32


def make_env(split: str, max_steps: int, soft_reset: int = 50, task: str = TASK) -> gym.Env:
    """The wrapped env: four discrete GUI operations in, small grey frame + words out.

    DS9 keeps running between episodes (``soft_reset``): the adapter restores it in place,
    which is ~3x faster than restarting it, and restarts it every ``soft_reset`` episodes."""
    env = gym.make("SciGUI-DS9-v0", task=task, split=split, reward="binary",
                   max_steps=max_steps, pool_size=0 if soft_reset else 1,
                   soft_reset=soft_reset)
    env = TargetActions(env, TARGETS)
    return ScreenshotObservation(env, size=OBS_SIZE, grayscale=True,
                                 instruction_features=WORD_BITS)


def evaluate(env: gym.Env, policy, episodes: int, first_seed: int
             ) -> tuple[list[bool], list[bool]]:
    """Success of ``policy(obs) -> action`` on variants ``first_seed ...`` of ``env``'s split,
    and whether each variant's right answer was to do nothing (what "always DONE" wins)."""
    out, idle = [], []
    for i in range(episodes):
        obs, _ = env.reset(seed=first_seed + i)
        idle.append(env.unwrapped.task.noop_correct)
        terminated = truncated = False
        info: dict = {}
        while not (terminated or truncated):
            obs, _, terminated, truncated, info = env.step(policy(obs))
        out.append(bool(info.get("evaluation", {}).get("success", False)))
    return out, idle


def plot_curve(path: Path, curve: list[tuple[int, float]], window: int,
               levels: dict[str, float]) -> None:
    """The training success rate (moving mean) with each evaluation's rate as a level line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 4))
    if curve:
        steps = np.array([c[0] for c in curve])
        wins = np.array([c[1] for c in curve])
        kernel = np.ones(min(window, len(wins))) / min(window, len(wins))
        smooth = np.convolve(wins, kernel, mode="valid")
        ax.plot(steps[len(steps) - len(smooth):], smooth,
                label=f"training episodes (mean of {len(kernel)})")
    styles = [("tab:green", "--"), ("tab:red", ":"), ("tab:olive", (0, (1, 4))),
              ("tab:purple", "-."), ("tab:grey", ":"), ("tab:brown", (0, (1, 4)))]
    for (label, value), (colour, style) in zip(levels.items(), styles, strict=False):
        ax.axhline(value, color=colour, linestyle=style, label=f"{label}: {value:.2f}")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("success rate")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"PPO from pixels on {TASK} (real DS9)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=6000)
    parser.add_argument("--n-envs", type=int, default=2, help="DS9 instances trained in parallel")
    parser.add_argument("--max-steps", type=int, default=5,
                        help="step budget per episode (a toggle takes two clicks)")
    parser.add_argument("--minutes", type=float, default=26.0,
                        help="stop training after this many minutes (0: no limit)")
    parser.add_argument("--eval-episodes", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ent-coef", type=float, default=0.01,
                        help="PPO's entropy bonus (more keeps exploring past the DONE plateau)")
    parser.add_argument("--out", type=Path, default=Path("ppo-out"))
    parser.add_argument("--load", type=Path, default=None,
                        help="evaluate this saved model (.zip) instead of training one")
    args = parser.parse_args(argv)

    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.logger import Logger
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    class Successes(BaseCallback):
        """Records (timestep, success) of every finished training episode."""

        def __init__(self, deadline: float | None) -> None:
            super().__init__()
            self.curve: list[tuple[int, float]] = []
            self.deadline = deadline

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "episode" in info:
                    self.curve.append((self.num_timesteps, float(info["episode"]["r"] > 0)))
            return self.deadline is None or time.monotonic() < self.deadline  # False: stop

    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    callback = Successes(t0 + 60 * args.minutes if args.minutes else None)
    if args.load is not None:
        model = PPO.load(args.load, device="cpu")
    else:
        vec_cls = SubprocVecEnv if args.n_envs > 1 else DummyVecEnv
        train = make_vec_env(functools.partial(make_env, "train", args.max_steps),
                             n_envs=args.n_envs, seed=args.seed, vec_env_cls=vec_cls)
        model = PPO("MultiInputPolicy", train, n_steps=32, batch_size=32, n_epochs=8,
                    learning_rate=5e-4, gamma=0.9, gae_lambda=0.9, ent_coef=args.ent_coef,
                    seed=args.seed, device="cpu", verbose=0)
        # SB3's default logger makes a /tmp/SB3-<time> folder per learn(): log nowhere instead
        model.set_logger(Logger(folder=None, output_formats=[]))
        try:
            model.learn(total_timesteps=args.timesteps, callback=callback, progress_bar=True)
        finally:
            train.close()
        model.save(args.out / "ppo_toggle")
        (args.out / "curve.json").write_text(json.dumps(callback.curve))  # before evaluating
    train_seconds = time.monotonic() - t0

    # Held-out variants (the test split) and a held-out task family, the same seeds for both
    # policies.
    rng = np.random.default_rng(args.seed)
    rates: dict[str, float] = {}
    for name, split, task in (("test", "test", TASK),
                              ("held-out task", "heldout-tasks", HELDOUT_TASK)):
        env = make_env(split, args.max_steps, task=task)
        try:
            ppo, idle = evaluate(env, lambda o: int(model.predict(o, deterministic=True)[0]),
                                 args.eval_episodes, 10_000)
            rand, _ = evaluate(env, lambda o, n=env.action_space.n: int(rng.integers(n)),
                               args.eval_episodes, 10_000)
        finally:
            env.close()
        rates[f"PPO on {name}"] = float(np.mean(ppo))
        rates[f"random on {name}"] = float(np.mean(rand))
        rates[f"always DONE on {name}"] = float(np.mean(idle))
    metrics = {
        "task": TASK, "timesteps": int(model.num_timesteps), "n_envs": args.n_envs,
        "train_minutes": round(train_seconds / 60, 2),
        "train_episodes": len(callback.curve),
        "train_success_last_50": (float(np.mean([w for _, w in callback.curve[-50:]]))
                                  if callback.curve else None),
        "test_episodes": args.eval_episodes,
        "ppo_test_success": rates["PPO on test"], "random_test_success": rates["random on test"],
        "always_done_test_success": rates["always DONE on test"],
        "heldout_task": HELDOUT_TASK,
        "ppo_heldout_task_success": rates["PPO on held-out task"],
        "random_heldout_task_success": rates["random on held-out task"],
        "always_done_heldout_task_success": rates["always DONE on held-out task"],
    }
    (args.out / "metrics.json").write_text(json.dumps(
        {**metrics, "curve": callback.curve}, indent=2))
    plot_curve(args.out / "learning_curve.png", callback.curve, 50, rates)
    print(json.dumps(metrics, indent=2))
    return metrics


if __name__ == "__main__":
    main()
