"""The Jmol adapter on the real program (every task's audit is in test_audit.py): the state
channel over Jmol's sync socket inside the program zone, and a state dump that leaves the
screen as it was."""

from __future__ import annotations

import gymnasium as gym
import pytest
from helpers import assert_dump_leaves_screen, requires

import sciagent_gym  # noqa: F401

pytestmark = requires(tool="jmol")


@pytest.fixture(scope="module")
def env():
    e = gym.make("SciGUI-Jmol-v0", pool_size=0)
    yield e
    e.close()


def test_state_channel_reports_and_runs_scripts(env):
    env.reset(seed=0, options={"task": "jmol/coordination-polyhedra"})
    base = env.unwrapped
    state = base.adapter.dump_state(base.provider)
    assert state["models"] == 1 and state["cell"] is not None
    assert state["file"].endswith("/crystal.cif") and state["polyhedra"] == []
    out = base.adapter.run_script(base.provider, 'load "" {2 2 2}; __o = {*}.size')
    assert int(out) > state["atoms"]
    base.adapter.run_script(base.provider, "background white; measure {*}[1] {*}[2]")
    state = base.adapter.dump_state(base.provider)
    assert state["background"] == [255, 255, 255]
    assert len(state["measurements"]) == 1 and len(state["measurements"][0]["elements"]) == 2


def test_a_failing_script_is_an_error_not_an_answer(env):
    env.reset(seed=1, options={"task": "jmol/supercell"})
    base = env.unwrapped
    with pytest.raises(Exception, match="(?i)error"):
        base.adapter.run_script(base.provider, "this is not jmol script", timeout=20)
    assert base.adapter.run_script(base.provider, "__o = 6 * 7") == "42"


def test_state_dump_leaves_the_screen_as_it_was(env):
    assert_dump_leaves_screen(env, "jmol/bond-length")
