"""The damage-driven settle on the real ImageJ: a settled frame after a menu opens, a quick
return after a key the program ignores, and nothing left open after close."""

from __future__ import annotations

import time
from dataclasses import replace

import gymnasium as gym
import numpy as np
import pytest

import sciagent_gym  # noqa: F401
from sciagent_gym.controller.settle import SettleConfig, changed_pixels, wait_settled

pytestmark = pytest.mark.e2e


def test_damage_settle_on_imagej():
    # busy_cap bounds how long a program that has not painted may hold a step (the fake's
    # unit tests prove it); here a parallel test worker can starve ImageJ's JVM past the
    # default 0.5 s before the menu paints (one run in ~10 under `make test`), so the cap is
    # raised to observe the reaction itself. Every other window is the env's default.
    env = gym.make("SciGUI-ImageJ-v0", task="imagej/bleach-timecourse-report", pool_size=0,
                   settle=replace(SettleConfig.damage(), busy_cap=2.0))
    try:
        obs, _ = env.reset(seed=0)
        base = env.unwrapped
        slot = base.provider._slot
        source = slot._damage
        assert source is not None and source.busy is not None  # DAMAGE found, processes known
        assert len(source.busy.__self__.pids()) > 3  # Xvfb, openbox, the zone and ImageJ's JVM
        main = next(w for w in base.provider.windows() if w.title == "ImageJ")

        # Shift alone: ImageJ paints nothing; the step returns well before a frame settle's
        # 150 ms quiet window (median of five, the machine is shared).
        idle = []
        for _ in range(5):
            t0 = time.perf_counter()
            obs2, _, _, _, info = env.step("pyautogui.press('shift')")
            idle.append(time.perf_counter() - t0)
            assert info.get("action_error") is None
        assert np.median(idle) < 0.1, idle
        assert changed_pixels(obs2["screenshot"], obs["screenshot"]) == 0

        # A click on the menu bar's "Analyze": the menu opens; the observation is the frame a
        # 1 s quiet window gives, not a half-painted one.
        before = events = source.events
        t0 = time.perf_counter()
        obs3, _, _, _, _ = env.step(f"pyautogui.click({main.x + 253}, {main.y + 12})")
        took = time.perf_counter() - t0
        events = source.events
        # the menu's paints were seen as DAMAGE events (if not: did the step end at the busy
        # cap, or because every thread slept before the JVM painted?)
        assert events > before, (f"no paint within the step ({took:.3f} s); busy now: "
                                 f"{source.busy.__self__ and source.busy()}")
        truth, settled = wait_settled(base.provider.screenshot, SettleConfig(quiet=1.0, cap=6))
        assert settled
        assert changed_pixels(obs3["screenshot"], obs2["screenshot"]) > 1000  # it reacted
        assert changed_pixels(obs3["screenshot"], truth) <= 64  # and had finished painting
        env.step("pyautogui.press('escape')")
    finally:
        env.close()
    assert slot._damage is None and source._dpy is None  # the DAMAGE connection is closed
