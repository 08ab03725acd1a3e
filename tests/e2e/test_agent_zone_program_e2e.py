"""A tool whose program runs in the agent zone (``program_zone = "agent"``, as a code env's
terminal does): the program and the agent's commands share one zone, the program zone stays
out of their sight, and nothing is left once the env closes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import our_processes, requires

from sciagent_gym import processes
from sciagent_gym.env import SciGUIEnv
from sciagent_gym.tools.discovery import add_tools_root, remove_tools_root

FIXTURE_TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "tools"
pytestmark = [pytest.mark.e2e, requires("xmessage", "Xvfb", "openbox", "bwrap")]


@pytest.fixture
def env():
    add_tools_root(FIXTURE_TOOLS)
    env = SciGUIEnv("agentzone", task="agentzone/write-file", pool_size=0)
    try:
        yield env
    finally:
        env.close()
        remove_tools_root(FIXTURE_TOOLS)


def _commands(result) -> set[str]:
    return {line.strip() for line in result.output.splitlines()[1:]}


def test_program_shares_the_agent_zone_and_not_the_program_zone(env):
    env.reset(seed=0)
    slot = env.provider._slot
    assert slot.app_running()
    agent_sees = _commands(env.provider.run_command("ps -eo comm"))
    assert "xmessage" in agent_sees  # the program is where the agent's shell is
    program_zone_sees = _commands(slot.sandbox.exec(shell="ps -eo comm"))
    assert "xmessage" not in program_zone_sees
    # the shell there is the agent's: the agent zone's uid, not the program's
    uid = env.provider.run_command("id -u").output.strip()
    if slot.isolation == "bwrap":
        assert uid == str(slot.sandbox.lease.agent.uid)
    obs, reward, terminated, truncated, info = env.step('run("echo ok > out.txt")')
    assert not truncated and info.get("action_error") is None
    obs, reward, terminated, truncated, info = env.step("DONE")
    assert terminated and reward == 1.0


def test_a_new_episode_restarts_the_program_and_close_ends_it(env):
    env.reset(seed=0)
    root = str(env.provider._slot.sandbox.root)
    env.provider.run_command("pkill xmessage")
    processes.wait_for(lambda: not env.provider._slot.app_running(), 10,
                       what="the program to end")  # pkill returns before the exit is seen
    env.reset(seed=1)
    assert env.provider._slot.app_running()
    env.close()
    assert our_processes(root) == [] and not os.path.exists(root)
