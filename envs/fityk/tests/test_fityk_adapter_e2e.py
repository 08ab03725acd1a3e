"""The Fityk adapter on the real program (every task's audit is in test_audit.py): the log that
the state channel replays holds what is done in the GUI, scripts run after it, and a session
whose log was redirected cannot be read back. The agent zone sees neither the log nor the
channel's files."""

from __future__ import annotations

import gymnasium as gym
import pytest
from helpers import requires
from sciagent_gym.envs.fityk.adapter import LOG_PREFIX, FitykScriptError

import sciagent_gym  # noqa: F401

pytestmark = requires(tool="fityk")

INPUT_LINE = (640, 747)  # the input line below the output pane (fixed layout of the snapshot)


@pytest.fixture(scope="module")
def fityk_env():
    env = gym.make("SciGUI-Fityk-v0", render_mode="rgb_array", pool_size=0)
    yield env
    env.close()


def _type(env, command: str) -> None:
    env.step(f"pyautogui.click{INPUT_LINE}")
    env.step(f'pyautogui.write("{command}")\npyautogui.press("enter")')


def test_gui_commands_reach_the_state_and_scripts_follow_them(fityk_env):
    fityk_env.reset(seed=0, options={"task": "fityk/peak-fwhm-pseudovoigt"})
    base = fityk_env.unwrapped
    gold = base.task.gold["xrd"]
    state = base.adapter.dump_state(base.provider)
    assert state["datasets"][0]["points"] == gold["points"]
    assert state["datasets"][0]["peaks"] == []
    _type(fityk_env, "@0: A = abs(x - {argmax(y)}) < 1")
    _type(fityk_env, "guess %pk = PseudoVoigt")
    peaks = base.adapter.dump_state(base.provider)["datasets"][0]["peaks"]
    assert [p["name"] for p in peaks] == ["pk"]
    assert peaks[0]["center"] == pytest.approx(gold["strongest"]["two_theta"], abs=0.03)
    # a script runs after what the GUI did, and is kept for later dumps
    out = base.adapter.run_script(base.provider, "fit\nprint 'c', %pk.center")
    assert float(out.split()[-1]) == pytest.approx(gold["strongest"]["two_theta"], abs=0.01)
    # the points strictly within 1 degree of a grid point: 2 / step - 1 (99 at a 0.02 step)
    active = round(2 / gold["step"]) - 1
    assert base.adapter.dump_state(base.provider)["datasets"][0]["active"] == active


def test_the_agent_zone_sees_no_log_and_a_redirected_log_fails(fityk_env):
    fityk_env.reset(seed=1, options={"task": "fityk/strongest-peak-2theta"})
    base = fityk_env.unwrapped
    listing = base.provider.run_command("ls -a /tmp", timeout=10.0).output
    assert LOG_PREFIX not in listing and "sciagent-fityk" not in listing
    assert "No such file" in base.provider.run_command(f"cat /tmp/{LOG_PREFIX}*",
                                                       timeout=10.0).output
    _type(fityk_env, "set logfile=''")
    with pytest.raises(FitykScriptError, match="redirected"):
        base.adapter.dump_state(base.provider)
