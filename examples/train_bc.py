"""Behaviour cloning from GUI oracle demonstrations, then PPO, against PPO from scratch (real DS9).

Two tasks:

- ``ds9/toggle-colorbar`` (state control, after StaR): the colour bar starts on or off and the
  instruction asks for on or off; half the variants need no click. Four operations: toggle the
  colour bar, toggle the grid, toggle the magnifier (both wrong moves), DONE.
- ``ds9/colormap-scale-gui`` (multi-step): set the colour map and the scale function the
  instruction names, six colour maps by three scales. Ten operations: a colour map each, a scale
  each, DONE; a success takes three right decisions in a row.

The policy sees a small grey screenshot and the instruction's words (hashed into presence
bits) and picks an operation; an operation is its clicks through the env's own ``step()``
(:class:`~sciagent_gym.wrappers.TargetActions`). Per task:

1. record ``--demos`` demonstrations on ``train`` variants (``record_demos``: the task's GUI
   oracle through ``step()``, as ``sciagent-gym demos`` does) and encode their actions into
   operations, each paired with the frame seen before it;
2. **BC**: fit SB3's PPO policy network to those pairs (cross-entropy), no env step;
3. **BC + PPO**: continue with PPO from the cloned weights;
4. **PPO from scratch** with as many env steps as the demonstrations and BC + PPO took together;
5. play BC, BC + PPO, PPO from scratch, a random policy and always-DONE on the same held-out
   ``test`` variants.

Env steps are counted in operations (decisions, SB3's timesteps); a demonstration costs the
operations it took. Results: ``OUT/metrics.json`` and ``OUT/bc_vs_ppo.png`` (training success
rate against env steps, test success rates as level lines)::

    python examples/train_bc.py --out bc-out                        # the README's figures
    python examples/train_bc.py --demos 4 --budget 16 --eval-episodes 2 --out /tmp/bc  # smoke
"""

from __future__ import annotations

import argparse
import functools
import json
import shutil
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
from train_ppo import evaluate  # the sibling example's held-out evaluation

import sciagent_gym  # noqa: F401  (registers SciGUI-* ids)
from sciagent_gym.runs.demos import record_demos
from sciagent_gym.runs.replay import episode_dirs, load_episode
from sciagent_gym.wrappers import ScreenshotObservation, TargetActions

OBS_SIZE = (96, 60)
_CMAP_X = {"heat": 639, "cool": 735, "rainbow": 838, "bb": 287, "aips0": 540, "viridis": 946}
_SCALE_X = {"sqrt": 306, "squared": 418, "histequ": 719}
TASKS = {
    # button bar of DS9's main window at its launch geometry (the specs' GUI oracles click
    # the same buttons)
    "ds9/toggle-colorbar": {
        "targets": {"toggle colour bar": [(168, 207), (665, 233)],
                    "toggle grid": [(880, 207), (164, 233)],
                    "toggle magnifier": [(168, 207), (318, 233)]},
        "max_steps": 5, "words": 32},
    "ds9/colormap-scale-gui": {
        "targets": {**{f"colour map {n}": [(540, 215), (x, 241)] for n, x in _CMAP_X.items()},
                    **{f"scale {n}": [(463, 215), (x, 241)] for n, x in _SCALE_X.items()}},
        "max_steps": 12, "words": 64},
}


def make_env(task: str, split: str, soft_reset: int = 50) -> gym.Env:
    """Operations in, small grey frame + instruction words out; DS9 restored in place."""
    cfg = TASKS[task]
    env = gym.make("SciGUI-DS9-v0", task=task, split=split, reward="binary",
                   max_steps=cfg["max_steps"], pool_size=0, soft_reset=soft_reset)
    env = TargetActions(env, cfg["targets"])
    return ScreenshotObservation(env, size=OBS_SIZE, grayscale=True,
                                 instruction_features=cfg["words"])


def demo_pairs(demo_dir: Path, env: gym.Env) -> tuple[dict[str, np.ndarray], np.ndarray, int]:
    """(observations, operations, env steps) of every recorded demonstration: each operation
    with the wrapper's observation of the frame recorded before its first action."""
    from PIL import Image

    targets: TargetActions = env.env  # the TargetActions under the observation wrapper
    images, words, ops = [], [], []
    for ep in episode_dirs(demo_dir):
        _, lines = load_episode(ep)
        reset = next(x for x in lines if "reset" in x)
        steps = [x for x in lines if "step" in x and "action" in x]
        frames = [reset["screenshot"]] + [x["screenshot"] for x in steps]
        instruction = reset["reset"]["instruction"]
        for op, first in targets.encode([x["action"] for x in steps]):
            frame = np.asarray(Image.open(ep / frames[first]).convert("RGB"))
            obs = env.observation({"screenshot": frame, "instruction": instruction,
                                   "terminal": ""})
            images.append(obs["screenshot"])
            words.append(obs["instruction"])
            ops.append(op)
    return ({"screenshot": np.stack(images), "instruction": np.stack(words)},
            np.asarray(ops), len(ops))


def clone(model, obs: dict[str, np.ndarray], ops: np.ndarray, epochs: int, seed: int
          ) -> list[float]:
    """Behaviour cloning: maximise the policy's log-probability of the demonstrated
    operations (minibatch Adam on the whole policy network); returns the loss per epoch."""
    import torch

    policy = model.policy
    policy.set_training_mode(True)
    optimiser = torch.optim.Adam(policy.parameters(), lr=1e-3)
    rng = np.random.default_rng(seed)
    losses = []
    for _ in range(epochs):
        order = rng.permutation(len(ops))
        total = 0.0
        for start in range(0, len(ops), 32):
            idx = order[start:start + 32]
            batch, _ = policy.obs_to_tensor({k: v[idx] for k, v in obs.items()})
            actions = torch.as_tensor(ops[idx], device=policy.device)
            loss = -policy.get_distribution(batch).log_prob(actions).mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += loss.item() * len(idx)
        losses.append(total / len(ops))
    policy.set_training_mode(False)
    return losses


def plot(path: Path, results: dict[str, dict], window: int = 30) -> None:
    """Per task: training success (moving mean) of PPO from scratch and of BC + PPO (shifted
    by the demonstrations' env steps) against env steps; test success rates as levels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(7 * len(results), 4), squeeze=False)
    for ax, (task, r) in zip(axes[0], results.items(), strict=True):
        for label, curve, colour in (("PPO from scratch (training)", r["curve_ppo"], "tab:blue"),
                                     ("BC + PPO (training)", r["curve_bc_ppo"], "tab:orange")):
            if curve:
                steps = np.array([c[0] for c in curve])
                wins = np.array([c[1] for c in curve])
                k = min(window, len(wins))
                smooth = np.convolve(wins, np.ones(k) / k, mode="valid")
                ax.plot(steps[len(steps) - len(smooth):], smooth, color=colour, label=label)
        ax.axvline(r["demo_steps"], color="grey", linewidth=0.8)
        levels = (("BC (test)", "bc", "tab:red", "--"), ("BC + PPO (test)", "bc_ppo",
                  "tab:orange", ":"), ("PPO from scratch (test)", "ppo", "tab:blue", ":"),
                  ("random (test)", "random", "tab:grey", "-."),
                  ("always DONE (test)", "always_done", "tab:olive", (0, (1, 4))))
        for label, key, colour, style in levels:
            ax.axhline(r["test"][key], color=colour, linestyle=style,
                       label=f"{label}: {r['test'][key]:.2f}")
        ax.set_title(f"{task} ({r['demos']} demos = {r['demo_steps']} steps)")
        ax.set_xlabel("env steps (operations)")
        ax.set_ylabel("success rate")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize="x-small", loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run_task(task: str, args, tmp: Path) -> dict:
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.logger import Logger
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    class Successes(BaseCallback):
        """(env steps so far + offset, success) of every finished training episode."""

        def __init__(self, offset: int = 0) -> None:
            super().__init__()
            self.offset, self.curve = offset, []

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "episode" in info:
                    self.curve.append((self.offset + self.num_timesteps,
                                       float(info["episode"]["r"] > 0)))
            return True

    def new_model(env):
        # ReLU and PyTorch's default init rather than SB3's orthogonal init with small gains:
        # with those, the cloning loss stalls at the class prior on toggle-colorbar, whose
        # right move is an XOR of the instruction word and the colour bar's state (a saddle a
        # near-linear network at init does not leave; measured: 0.61 after 800 full-batch
        # steps, against 0.001 with this network). Both methods get the same network.
        model = PPO("MultiInputPolicy", env, n_steps=32, batch_size=32, n_epochs=8,
                    learning_rate=5e-4, gamma=0.9, gae_lambda=0.9, ent_coef=args.ent_coef,
                    policy_kwargs={"activation_fn": torch.nn.ReLU, "ortho_init": False,
                                   "net_arch": {"pi": [256, 256], "vf": [64, 64]}},
                    seed=args.seed, device="cpu", verbose=0)
        # SB3's default logger makes a /tmp/SB3-<time> folder per learn(): log nowhere instead
        model.set_logger(Logger(folder=None, output_formats=[]))
        return model

    def train_env():
        cls = SubprocVecEnv if args.n_envs > 1 else DummyVecEnv
        return make_vec_env(functools.partial(make_env, task, "train"), n_envs=args.n_envs,
                            seed=args.seed, vec_env_cls=cls)

    t0 = time.monotonic()
    demo_dir = tmp / task.replace("/", "_")
    demos = record_demos("ds9", demo_dir, seeds=range(args.seed, args.seed + args.demos),
                         tasks=[task], split="train", pool_size=0)
    if demos.failed:
        raise RuntimeError(f"demonstrations failed: {demos.failed}")
    probe = make_env(task, "train")
    try:
        obs, ops, demo_steps = demo_pairs(demo_dir, probe)
    finally:
        probe.close()
    budget = max(args.budget, demo_steps + 1)
    metrics: dict = {"task": task, "demos": args.demos, "demo_steps": demo_steps,
                     "budget": budget, "demo_op_counts": np.bincount(
                         ops, minlength=len(TASKS[task]["targets"]) + 1).tolist()}

    env = train_env()
    try:
        bc_model = new_model(env)
        metrics["bc_loss"] = clone(bc_model, obs, ops, args.bc_epochs, args.seed)
        metrics["bc_train_accuracy"] = float(np.mean(
            bc_model.predict(obs, deterministic=True)[0] == ops))
        bc_model.save(args.out / f"{task.split('/')[1]}_bc")
        bc_ppo_cb = Successes(offset=demo_steps)
        bc_model.learn(total_timesteps=budget - demo_steps, callback=bc_ppo_cb,
                       reset_num_timesteps=True, progress_bar=not args.quiet)
    finally:
        env.close()
    bc_only = PPO.load(args.out / f"{task.split('/')[1]}_bc", device="cpu")
    env = train_env()
    try:
        scratch = new_model(env)
        scratch_cb = Successes()
        scratch.learn(total_timesteps=budget, callback=scratch_cb, progress_bar=not args.quiet)
    finally:
        env.close()
    metrics["train_minutes"] = round((time.monotonic() - t0) / 60, 2)

    rng = np.random.default_rng(args.seed)
    test = make_env(task, "test")
    rates = {}
    try:
        for name, model in (("bc", bc_only), ("bc_ppo", bc_model), ("ppo", scratch)):
            wins, idle = evaluate(test, lambda o, m=model: int(m.predict(o, deterministic=True)
                                                               [0]), args.eval_episodes, 10_000)
            rates[name] = float(np.mean(wins))
        wins, _ = evaluate(test, lambda o, n=test.action_space.n: int(rng.integers(n)),
                           args.eval_episodes, 10_000)
        rates["random"] = float(np.mean(wins))
        rates["always_done"] = float(np.mean(idle))
    finally:
        test.close()
    metrics["test"] = rates
    metrics["test_episodes"] = args.eval_episodes
    metrics["curve_ppo"] = scratch_cb.curve
    metrics["curve_bc_ppo"] = bc_ppo_cb.curve
    return metrics


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", action="append", choices=list(TASKS),
                        help="only these tasks (default: both)")
    parser.add_argument("--demos", type=int, default=24, help="demonstrations per task")
    parser.add_argument("--budget", type=int, default=640,
                        help="env steps per method: demonstrations + PPO, or PPO alone")
    parser.add_argument("--bc-epochs", type=int, default=200)
    parser.add_argument("--n-envs", type=int, default=2)
    parser.add_argument("--eval-episodes", type=int, default=24)
    parser.add_argument("--ent-coef", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("bc-out"))
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="sciagent-bc-"))
    results = {}
    try:
        for task in args.task or list(TASKS):
            results[task] = run_task(task, args, tmp)
            (args.out / "metrics.json").write_text(json.dumps(results, indent=2))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    plot(args.out / "bc_vs_ppo.png", results)
    summary = {t: {"demo_steps": r["demo_steps"], "budget": r["budget"], **r["test"]}
               for t, r in results.items()}
    print(json.dumps(summary, indent=2))
    return results


if __name__ == "__main__":
    main()
