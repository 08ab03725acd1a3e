"""The Praat adapter on the real program (every task's audit is in test_audit.py): the ``praat
--send`` state channel, failing scripts reported (and their error message closed), and resets
that give identical first frames."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from helpers import (
    assert_dump_leaves_screen,
    requires,
    step_until_changed,
)
from sciagent_gym.envs.praat.adapter import PraatScriptError, is_error_dialog

import sciagent_gym  # noqa: F401
from sciagent_gym.processes import wait_for

pytestmark = requires(tool="praat")


# --- the adapter on the real program ---------------------------------------------------------


@pytest.fixture(scope="module")
def praat_env():
    env = gym.make("SciGUI-Praat-v0", render_mode="rgb_array", pool_size=0)
    yield env
    env.close()


def test_state_channel_reports_the_objects(praat_env):
    praat_env.reset(seed=0, options={"task": "praat/concatenate"})
    base = praat_env.unwrapped
    state = base.adapter.dump_state(base.provider)
    assert [(o["type"], o["name"]) for o in state["objects"]] == \
        [("Sound", "tone_a"), ("Sound", "tone_b"), ("Sound", "tone_c")]
    durations = base.task.gold["tones"]["durations"]
    for obj in state["objects"]:
        assert obj["duration"] == pytest.approx(durations[obj["name"]], abs=1e-6)
    # the dump leaves the selection as it found it
    assert base.adapter.dump_state(base.provider)["n_selected"] == state["n_selected"]
    answer = base.adapter.run_script(base.provider, 'selectObject: "Sound tone_b"\n'
                                     'To TextGrid: "words", ""\nInsert boundary: 1, 0.1\n'
                                     'out$ = selected$ ()')
    assert answer == "TextGrid tone_b"
    grid = base.adapter.dump_state(base.provider)["objects"][-1]
    assert grid["type"] == "TextGrid" and grid["tiers"][0]["boundaries"] == [0.1]


def test_failing_script_raises_and_closes_the_message(praat_env):
    praat_env.reset(seed=0, options={"task": "praat/measure-duration"})
    base = praat_env.unwrapped
    # "rejected" (not "no answer within ...") proves the error window was noticed at once
    with pytest.raises(PraatScriptError, match="rejected"):
        base.adapter.run_script(base.provider, 'selectObject: "Sound no_such_thing"')
    wait_for(lambda: not [w for w in base.provider.windows() if is_error_dialog(w)], 5.0,
             what="the error window to close")
    # the channel still works afterwards
    assert base.adapter.run_script(base.provider, 'out$ = "alive"') == "alive"


def test_reset_gives_identical_frames(praat_env):
    frames = []
    for _ in range(2):
        obs, _ = praat_env.reset(seed=1, options={"task": "praat/rename-object"})
        frames.append(obs["screenshot"])
    assert frames[0].std() > 5  # the Objects window with the Sound's commands is on screen
    assert np.array_equal(frames[0], frames[1])
    # a GUI step (click on the Query menu button) changes the screen
    obs, info = step_until_changed(praat_env, "pyautogui.click(777, 251)", frames[0])
    assert not info.get("action_error")
    assert not np.array_equal(obs["screenshot"], frames[0])


def test_state_dump_leaves_the_screen_as_it_was(praat_env):
    assert_dump_leaves_screen(praat_env, "praat/rename-object")
