"""RLlib PPO on the real DS9 with several env runners, each creating the env by its id.

Every env runner is a Ray actor that calls ``gym.make("sciagent_gym:SciGUI-DS9-v0", ...)``
(the ``sciagent_gym:`` prefix imports the package in the actor, which registers the ids),
wraps it like ``examples/train_ppo.py`` (three GUI operations; a small grey frame and the
instruction's words, flattened for RLlib's default MLP) and runs its own DS9 on its own
virtual display. Locally::

    python examples/rllib_ppo.py --env-runners 2 --iterations 20 --out rllib-out
    python examples/rllib_ppo.py --env-runners 2 --iterations 1 --batch 32   # a smoke run

On a Ray cluster, start each node that has the programs installed (see the README's set-up)
with a custom resource, ``ray start --address=HEAD:6379 --resources='{"tool:ds9": 4}'``
(4 = how many DS9 instances the node can run), and pass ``--address auto --resource
tool:ds9``: each env runner then asks for one unit of it, so Ray places runners only on
such nodes and never more per node than it can hold.

Fault tolerance: an env runner whose process dies (its node lost, the program's sandbox
killed, an out-of-memory kill) is restarted by Ray as an identical copy and training goes
on with the others meanwhile (RLlib's ``restart_failed_env_runners``, at most
``--max-runner-restarts`` times); the history records how many restarts happened.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

ENV_ID = "sciagent_gym:SciGUI-DS9-v0"
TASK = "ds9/toggle-colorbar"
TARGETS = {"toggle colour bar": [(168, 207), (665, 233)],
           "toggle magnifier": [(168, 207), (318, 233)]}


class Scaled(gym.ObservationWrapper):
    """Flattened observation as float32 in [0, 1] (RLlib's default encoder is an MLP)."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        n = env.observation_space.shape[0]
        self.observation_space = gym.spaces.Box(0.0, 1.0, (n,), np.float32)
        spaces = env.env.observation_space  # the Dict before flattening
        self._scale = gym.spaces.flatten(spaces, {
            "screenshot": np.full(spaces["screenshot"].shape, 1.0 / 255.0, np.float32),
            "instruction": np.ones(spaces["instruction"].shape, np.float32)}).astype(np.float32)

    def observation(self, observation):
        return (observation * self._scale).astype(np.float32)


def make_env(config: dict) -> gym.Env:
    """Env creator run inside each env runner (a Ray actor). ``config["env_kwargs"]`` and
    ``config["tools_roots"]`` (tests: the fake provider on a fixture tool) are passed on."""
    from sciagent_gym.runs.distributed import EnvSpec
    from sciagent_gym.wrappers import ScreenshotObservation, TargetActions

    kwargs = {"task": config.get("task", TASK), "split": config.get("split", "train"),
              "reward": "binary", "max_steps": config.get("max_steps", 5),
              "pool_size": config.get("pool_size", 1), **config.get("env_kwargs", {})}
    env = EnvSpec(config.get("env_id", ENV_ID), kwargs,
                  tuple(config.get("tools_roots", ()))).make()
    env = TargetActions(env, TARGETS)
    env = ScreenshotObservation(env, size=(48, 30), grayscale=True, instruction_features=32)
    return Scaled(gym.wrappers.FlattenObservation(env))


def main(argv: list[str] | None = None, env_config: dict | None = None,
         on_iteration=None) -> dict:
    """Train; ``env_config`` is merged into the runners' env config, ``on_iteration(row)`` is
    called after each iteration (tests use both)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env-runners", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--batch", type=int, default=128, help="env steps per training batch")
    parser.add_argument("--max-steps", type=int, default=5)
    parser.add_argument("--pool-size", type=int, default=1, help="warm spares per runner's env")
    parser.add_argument("--address", default=None, help="Ray cluster address (default: local)")
    parser.add_argument("--resource", default=None,
                        help="custom Ray resource each env runner needs one unit of, e.g. "
                             "tool:ds9 or sciagent_slot (NAME=AMOUNT for another amount)")
    parser.add_argument("--max-runner-restarts", type=int, default=100,
                        help="how often a failed env runner is restarted (0: never)")
    parser.add_argument("--cpus-per-runner", type=float, default=1.0,
                        help="CPUs an env runner reserves (0: placement by --resource only)")
    parser.add_argument("--out", type=Path, default=Path("rllib-out"))
    args = parser.parse_args(argv)

    import ray
    from ray import cloudpickle
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.tune.registry import register_env

    if __name__ != "__main__":  # imported (e.g. by a test): ship this module's code by value,
        cloudpickle.register_pickle_by_value(sys.modules[__name__])  # runners can't import it

    owns_ray = not ray.is_initialized()  # a caller's connection (e.g. a test's) stays
    if not owns_ray:
        pass
    elif args.address:
        ray.init(address=args.address)
    else:
        # Logical CPUs: a runner mostly waits for its program, so one core can host several.
        ray.init(num_cpus=max(os.cpu_count() or 1, args.env_runners + 1),
                 include_dashboard=False, log_to_driver=False)
    register_env("sciagent-ds9-toggle", make_env)
    resource = {}
    if args.resource:
        name, _, amount = args.resource.partition("=")
        resource = {name: float(amount or 1)}
    config = (
        PPOConfig()
        .environment("sciagent-ds9-toggle",
                     env_config={"max_steps": args.max_steps, "pool_size": args.pool_size,
                                 **(env_config or {})})
        .env_runners(num_env_runners=args.env_runners, num_envs_per_env_runner=1,
                     num_cpus_per_env_runner=args.cpus_per_runner,
                     custom_resources_per_env_runner=resource,
                     sample_timeout_s=600)
        # A dead runner comes back as a fresh copy (Ray actor restart) while the others
        # keep sampling; an env error inside a runner restarts it after 1 s, not RLlib's 60.
        .fault_tolerance(restart_failed_env_runners=args.max_runner_restarts > 0,
                         max_num_env_runner_restarts=args.max_runner_restarts,
                         delay_between_env_runner_restarts_s=1.0)
        .training(train_batch_size_per_learner=args.batch,
                  minibatch_size=min(32, args.batch), num_epochs=6, lr=5e-4, gamma=0.9,
                  lambda_=0.9, entropy_coeff=0.01)
        .debugging(seed=0)
    )
    algo = config.build_algo()
    history = []
    try:
        for i in range(args.iterations):
            t0 = time.monotonic()
            result = algo.train()
            runners = result.get("env_runners", {})
            row = {"iteration": i + 1, "seconds": round(time.monotonic() - t0, 1),
                   "env_steps": int(result.get("num_env_steps_sampled_lifetime",
                                               runners.get("num_env_steps_sampled_lifetime",
                                                           0))),
                   "episodes": int(runners.get("num_episodes", 0)),
                   "success_mean": runners.get("episode_return_mean"),
                   "healthy_runners": algo.env_runner_group.num_healthy_remote_workers(),
                   "runner_restarts": algo.env_runner_group.num_remote_worker_restarts()}
            history.append(row)
            print(json.dumps(row), flush=True)
            if on_iteration is not None:
                on_iteration(row)
    finally:
        algo.stop()  # ends the runners, whose envs close their displays and programs
        if owns_ray:
            ray.shutdown()
    args.out.mkdir(parents=True, exist_ok=True)
    summary = {"env": ENV_ID, "task": TASK, "env_runners": args.env_runners,
               "history": history}
    (args.out / "rllib_history.json").write_text(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
