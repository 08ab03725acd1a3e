"""``soft_reset``: an episode that starts in the program left running by the last one must
start exactly where a restart would (same first frame, same state dump), and the env must fall
back to a restart whenever the adapter cannot restore the program in place."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from helpers import assert_same_frames, requires

import sciagent_gym  # noqa: F401
from sciagent_gym.processes import wait_for
from sciagent_gym.providers.local.slot import APP

pytestmark = requires(tool="ds9")

TASK = "ds9/toggle-colorbar"
# What an agent does in this task and around it: the button bar's sections and check
# buttons (colour bar, magnifier, panner, zoom, scale), a click and a right-drag (contrast
# and bias) on the image, a region drawn in region mode.
MESS = [
    "pyautogui.click(168, 207)", "pyautogui.click(665, 233)", "pyautogui.click(318, 233)",
    "pyautogui.click(389, 207)", "pyautogui.click(100, 233)",
    "pyautogui.click(466, 207)", "pyautogui.click(300, 233)",
    "pyautogui.moveTo(500, 450)", "pyautogui.mouseDown(button='right')",
    "pyautogui.moveTo(560, 400)", "pyautogui.mouseUp(button='right')",
    "pyautogui.click(96, 207)", "pyautogui.click(130, 233)", "pyautogui.click(450, 420)",
]


@pytest.fixture(scope="module")
def envs():
    soft = gym.make("SciGUI-DS9-v0", task=TASK, pool_size=0, soft_reset=100, max_steps=40,
                    expose_state=True)
    hard = gym.make("SciGUI-DS9-v0", task=TASK, pool_size=0, max_steps=40,
                    expose_state=True)
    yield soft, hard
    soft.close()
    hard.close()


def _same(a: dict, b: dict, what: str, tmp_path) -> None:
    assert a["state"] == b["state"], what
    assert_same_frames(a["frame"], b["frame"], tmp_path, ("soft", "restart"), f"{what}: ")


def _start(env, seed: int) -> dict:
    obs, info = env.reset(seed=seed)
    return {"frame": obs["screenshot"], "state": info["state"], "info": info}


def test_soft_reset_starts_where_a_restart_does(envs, tmp_path):
    soft, hard = envs
    for seed in (1, 2, 3, 4):
        _start(soft, 100 + seed)  # the first one starts the program, the others are soft
        provider = soft.unwrapped.provider
        for action in MESS:
            soft.step(action)
        before = dict(provider.stats)
        got = _start(soft, seed)
        assert provider.stats["soft"] == before["soft"] + 1, "the soft reset fell back"
        assert got["info"]["timings"]["soft"] == 1.0
        want = _start(hard, seed)
        assert got["info"]["instruction"] == want["info"]["instruction"]
        _same(got, want, f"seed {seed}", tmp_path)
        # and the episode plays the same: the oracle's two clicks, then DONE
        for action in ("pyautogui.click(168, 207)", "pyautogui.click(665, 233)"):
            a = soft.step(action)[0]["screenshot"]
            b = hard.step(action)[0]["screenshot"]
            assert np.array_equal(a, b), f"seed {seed}: {action} diverged"
        assert soft.step("DONE")[1] == hard.step("DONE")[1]


def test_soft_reset_falls_back_to_a_restart(envs):
    soft, _ = envs
    base = soft.unwrapped
    soft.reset(seed=5)
    # a dialog open (DS9's Contour Parameters) is not something the adapter restores
    base.adapter.run_script(base.provider, "contour open")
    wait_for(lambda: len(base.provider.windows()) == 2, 10.0, what="the Contour dialog")
    before = dict(base.provider.stats)
    obs, info = soft.reset(seed=6)
    assert base.provider.stats["cold"] == before["cold"] + 1
    assert base.provider.stats["soft"] == before["soft"]
    assert not info["timings"].get("soft")
    assert [w.title for w in base.provider.windows()] == ["SAOImage sciagent"]
    # another task: a restart as well
    before = dict(base.provider.stats)
    soft.reset(seed=7, options={"task": "ds9/toggle-grid"})
    assert base.provider.stats["cold"] == before["cold"] + 1
    # the program gone (crashed, or quit by the agent): a restart
    base.provider.kill_in_sandbox(APP)
    wait_for(lambda: not base.provider.app_running(), 10.0, what="DS9 to end")
    before = dict(base.provider.stats)
    soft.reset(seed=8, options={"task": "ds9/toggle-grid"})
    assert base.provider.stats["cold"] == before["cold"] + 1 and base.provider.app_running()


def test_soft_reset_budget_restarts_every_n(envs):
    env = gym.make("SciGUI-DS9-v0", task=TASK, pool_size=0, soft_reset=2)
    try:
        kinds = []
        for seed in range(5):
            env.reset(seed=seed)
            kinds.append("soft" if env.unwrapped.provider.last_reset_timings.get("soft")
                         else "restart")
        assert kinds == ["restart", "soft", "soft", "restart", "soft"]
    finally:
        env.close()


def test_soft_reset_option_is_checked():
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(ValueError, match="soft_reset"):
            gym.make("SciGUI-DS9-v0", soft_reset=bad)
