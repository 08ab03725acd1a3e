"""Gymnasium's and stable-baselines3's env checkers on the real ImageJ env."""

from __future__ import annotations

import warnings

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from helpers import assert_same_frames

import sciagent_gym  # noqa: F401
from sciagent_gym.wrappers import DiscreteActions, ScreenshotObservation

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def env():
    # check_env replays random actions (menus, dialogs) and compares frames pixel for pixel.
    # ImageJ paints some reactions in bursts more than 150 ms apart, so the default settle can
    # return a frame mid-reaction under load; a 1 s quiet window and no background pool make
    # the comparison about the env's dynamics, not about paint timing (see README, Speed).
    # With 0.4 s, 1 run in 8 failed while other work loaded both cores.
    from sciagent_gym.controller.settle import SettleConfig

    env = gym.make("SciGUI-ImageJ-v0", task="count-nuclei", pool_size=0,
                   settle=SettleConfig(quiet=1.0, cap=10.0))
    yield env
    env.close()


def _assert_same_observation(env, first, again, tmp_path) -> None:
    """Equal observations, or a failure that says where the frames differ (both saved)."""
    assert first["instruction"] == again["instruction"]
    assert first["terminal"] == again["terminal"]
    windows = [w.title for w in env.unwrapped.provider.windows()]
    assert_same_frames(first["screenshot"], again["screenshot"], tmp_path,
                       context=f"windows now: {windows}; ")


def test_seeded_resets_give_identical_frames(env, tmp_path):
    """What check_env's reset determinism check asserts, with a diagnosis when it fails."""
    first, _ = env.reset(seed=123)
    env.reset()
    again, _ = env.reset(seed=123)
    _assert_same_observation(env, first, again, tmp_path)


def test_seeded_step_gives_identical_frames(env, tmp_path):
    """What check_env's step determinism check asserts (its action: the space's sample for
    seed 123, a modifier hotkey), after a held middle button as its passive check leaves it.
    Under load one of the two runs could start with ImageJ's menu bar half built ("File"
    only) or with the focus on the main window instead of the image."""
    space = env.unwrapped.action_space
    env.reset()
    env.step("pyautogui.mouseDown(598, 504, button='middle')")
    space.seed(123)
    action = space.sample()
    env.reset(seed=123)
    first, *_ = env.step(action)
    env.reset(seed=123)
    again, *_ = env.step(action)
    _assert_same_observation(env, first, again, tmp_path)


def test_gymnasium_check_env_on_the_real_app(env, tmp_path, monkeypatch):
    """Gymnasium's own checker, unchanged; when its determinism checks find two frames that
    differ, the failure says where (both frames saved) instead of a bare assertion."""
    from gymnasium.utils import env_checker

    compare = env_checker.data_equivalence

    def diagnosed(a, b, *args, **kwargs):
        same = compare(a, b, *args, **kwargs)
        if not same and isinstance(a, dict) and isinstance(b, dict) \
                and "screenshot" in a and "screenshot" in b:
            _assert_same_observation(env, a, b, tmp_path)
        return same

    monkeypatch.setattr(env_checker, "data_equivalence", diagnosed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any checker warning is a failure here
        check_env(env.unwrapped)


def test_stable_baselines3_check_env_with_discrete_wrapper(env):
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker",
                                      reason="install the [rl] extra")
    wrapped = DiscreteActions(ScreenshotObservation(env, size=(160, 100)))
    assert wrapped.action_space.n == 16 * 10 + 3 + 1
    sb3_checker.check_env(wrapped, warn=True)
    obs, _ = wrapped.reset(seed=0)
    assert obs.shape == (100, 160, 3)
    _, reward, terminated, _, info = wrapped.step(wrapped.action_space.n - 1)  # DONE
    assert terminated and "evaluation" in info


def test_last_action_wrapper_passes_sb3_checker_with_multi_input_obs(env):
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker",
                                      reason="install the [rl] extra")
    from sciagent_gym.wrappers import LastAction

    wrapped = LastAction(DiscreteActions(ScreenshotObservation(env, size=(80, 50),
                                                               grayscale=True)))
    n = wrapped.env.action_space.n
    assert set(wrapped.observation_space.spaces) == {"obs", "last_action"}
    sb3_checker.check_env(wrapped, warn=True)
    obs, _ = wrapped.reset(seed=0)
    assert obs["obs"].shape == (50, 80, 1) and obs["last_action"] == n  # none yet
    obs, *_ = wrapped.step(n - 2)  # a key press (escape)
    assert obs["last_action"] == n - 2
    assert wrapped.observation_space.contains(obs)
    with pytest.raises(TypeError, match="Discrete"):
        LastAction(env)
