"""TargetActions on the fake provider: macros of clicks through step(), and a recorded
demonstration encoded into its discrete actions (what behaviour cloning learns from)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciagent_gym.actions import types as A
from sciagent_gym.env import SciGUIEnv
from sciagent_gym.tools.discovery import add_tools_root, remove_tools_root
from sciagent_gym.wrappers import TargetActions

FIXTURE_TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "tools"
TARGETS = {"open": [(10, 10), (20, 30)], "sum": [(10, 10), (40, 50)], "save": [(60, 70)]}


@pytest.fixture
def env():
    add_tools_root(FIXTURE_TOOLS)
    made = TargetActions(SciGUIEnv("faketool", provider="fake", screen_size=(160, 100)),
                         TARGETS)
    yield made
    made.close()
    remove_tools_root(FIXTURE_TOOLS)


def test_a_target_is_its_clicks_in_order_and_the_last_action_is_done(env):
    env.reset(seed=0)
    env.step(1)
    assert env.unwrapped.provider.executed[-2:] == [A.Click(10, 10), A.Click(40, 50)]
    _, _, terminated, _, _ = env.step(3)
    assert terminated and env.names == ("open", "sum", "save", "DONE")


def test_a_demonstration_encodes_to_targets_with_the_step_each_starts_at(env):
    demo = ["pyautogui.click(10, 10)", "pyautogui.click(40, 50)",
            {"type": "click", "x": 60, "y": 70}, "pyautogui.click(10, 10)",
            "pyautogui.click(20, 30)", "DONE"]
    assert env.encode(demo) == [(1, 0), (2, 2), (0, 3), (3, 5)]
    # several calls in one step: both clicks come from step 0
    assert env.encode(["pyautogui.click(10, 10)\npyautogui.click(20, 30)", "DONE"]) == \
        [(0, 0), (3, 1)]


@pytest.mark.parametrize("demo", [["pyautogui.click(10, 10)", "DONE"],   # half a macro
                                  ["pyautogui.press('enter')"],
                                  ["pyautogui.click(11, 10)"]])
def test_what_no_target_explains_is_refused(env, demo):
    with pytest.raises(ValueError, match="starts no target"):
        env.encode(demo)
