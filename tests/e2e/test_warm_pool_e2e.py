"""The warm pool: resets that swap in a prepared sandbox, identical to cold ones."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import sciagent_gym  # noqa: F401
from sciagent_gym import processes

pytestmark = pytest.mark.e2e


def _wait_prepared(env, timeout=60.0):
    pool = env.unwrapped.provider.pool
    assert pool.wait_idle(timeout) and pool.pending_keys(), f"nothing prepared: {pool.errors}"


def test_warm_resets_swap_and_match_cold_resets():
    warm_env = gym.make("SciGUI-ImageJ-v0", task="count-nuclei", pool_size=1, modality="gui+cli")
    cold_env = gym.make("SciGUI-ImageJ-v0", task="count-nuclei", pool_size=0)
    try:
        warm_env.reset(seed=7)
        _wait_prepared(warm_env)
        obs_w, info_w = warm_env.reset(seed=8)          # predicted: seed + 1
        assert info_w["timings"]["warm"] == 1.0
        assert info_w["timings"]["total"] < 0.5
        obs_c, info_c = cold_env.reset(seed=8)
        assert info_c["timings"]["warm"] == 0.0
        assert (info_w["variant"], info_w["instruction"]) == \
            (info_c["variant"], info_c["instruction"])
        assert np.array_equal(obs_w["screenshot"], obs_c["screenshot"])
        # the swapped-in sandbox is fully usable and gold values came with it
        obs, *_ = warm_env.step('run("ls")')
        assert "nuclei.tif" in obs["terminal"]
        assert warm_env.unwrapped.task.gold == cold_env.unwrapped.task.gold
        _wait_prepared(warm_env)
        _, info = warm_env.reset()                     # unseeded: a miss, then a cold reset
        assert info["timings"]["warm"] == 0.0
        _wait_prepared(warm_env)
        _, info = warm_env.reset()                     # continuation of the RNG: predicted
        assert info["timings"]["warm"] == 1.0
        stats = warm_env.unwrapped.provider.stats
        assert stats == {"warm": 2, "cold": 2, "soft": 0}
        assert warm_env.unwrapped.provider.pool.errors == []
    finally:
        warm_env.close()
        cold_env.close()
    assert processes.live_processes() == []


def test_two_workers_prepare_the_next_two_unseeded_resets():
    """A pool of 2 with 2 workers holds the RNG's next two variants, both swapped in warm."""
    env = gym.make("SciGUI-ImageJ-v0", task="count-nuclei", pool_size=2, pool_workers=2)
    reference = gym.make("SciGUI-ImageJ-v0", task="count-nuclei", pool_size=0)
    try:
        env.reset(seed=3)
        reference.reset(seed=3)
        env.reset()  # the first unseeded reset after a seeded one: now predicted too
        reference.reset()
        _wait_prepared(env)
        assert len(env.unwrapped.provider.pool.pending_keys()) == 2
        for _ in range(2):
            _, info = env.reset()
            _, ref = reference.reset()
            assert info["timings"]["warm"] == 1.0
            assert info["variant"] == ref["variant"]  # the same draws as without a pool
        assert env.unwrapped.provider.pool.errors == []
    finally:
        env.close()
        reference.close()
    assert processes.live_processes() == []


def test_expect_prepares_the_announced_episode_instead_of_the_guess():
    """The default guess after reset(seed=5) is seed 6; a caller that knows it replays seed 5
    of another task (the audit's next case) says so, and that reset is the warm one."""
    env = gym.make("SciGUI-ImageJ-v0", pool_size=1)
    reference = gym.make("SciGUI-ImageJ-v0", pool_size=0)
    try:
        env.reset(seed=5, options={"task": "count-nuclei"})
        env.unwrapped.expect([("set-scale", 5)])
        _wait_prepared(env)
        _, info = env.reset(seed=5, options={"task": "set-scale"})
        _, ref = reference.reset(seed=5, options={"task": "set-scale"})
        assert info["timings"]["warm"] == 1.0
        assert (info["task_id"], info["variant"], info["instruction"]) == \
            (ref["task_id"], ref["variant"], ref["instruction"])
        env.unwrapped.expect([(None, 9)])  # no task fixed: what the RNG seeded 9 draws
        _wait_prepared(env)
        _, info = env.reset(seed=9)
        assert info["timings"]["warm"] == 1.0
        assert env.unwrapped.provider.pool.errors == []
    finally:
        env.close()
        reference.close()
    assert processes.live_processes() == []
