"""Several envs on one machine: Gymnasium async vector envs and SB3's SubprocVecEnv."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import sciagent_gym  # noqa: F401
from sciagent_gym.actions.space import ACTION_TYPES

pytestmark = pytest.mark.e2e


def test_async_vector_env_with_text_observations():
    envs = gym.make_vec("SciGUI-ImageJ-v0", num_envs=2, vectorization_mode="async",
                        task="count-nuclei", pool_size=0, max_steps=2, modality="gui+cli")
    try:
        obs, info = envs.reset(seed=0)
        assert obs["screenshot"].shape == (2, 800, 1280, 3)
        assert all("nuclei.tif" in text for text in obs["instruction"])
        assert info["variant"][0] != info["variant"][1]      # per-env seeds differ
        actions = envs.action_space.sample()
        actions["action_type"][:] = ACTION_TYPES.index("run")
        actions["text"] = ("echo first-env", "echo second-env")
        obs, reward, terminated, truncated, info = envs.step(actions)
        assert "first-env" in obs["terminal"][0] and "second-env" in obs["terminal"][1]
        actions["action_type"][:] = ACTION_TYPES.index("wait")
        actions["seconds"][:] = 0.0
        obs, reward, terminated, truncated, info = envs.step(actions)
        assert truncated.all() and "evaluation" in info           # the budget of 2 steps
        assert np.all(reward == 0.0)
    finally:
        envs.close()


def test_sb3_subproc_vec_env():
    vec_env_mod = pytest.importorskip("stable_baselines3.common.vec_env",
                                      reason="install the [rl] extra")
    from sciagent_gym.wrappers import DiscreteActions, ScreenshotObservation

    def make():
        env = gym.make("SciGUI-ImageJ-v0", task="count-nuclei", pool_size=0, max_steps=3)
        return DiscreteActions(ScreenshotObservation(env, size=(128, 80), grayscale=True))

    venv = vec_env_mod.SubprocVecEnv([make, make])
    try:
        obs = venv.reset()
        assert obs.shape == (2, 80, 128, 1)
        assert venv.get_attr("width") == [1280, 1280]
        for _ in range(3):
            obs, rewards, dones, infos = venv.step(np.array([0, 1]))
        assert dones.all() and all("evaluation" in i for i in infos)
    finally:
        venv.close()
