"""The materials code env on the real sandbox: xterm and the OPTIMADE server run in the agent
zone (the agent's own shell and loopback), the program zone sees neither, the terminal's title
tells ready from running, and nothing is left once the env closes."""

from __future__ import annotations

import json
import os

import gymnasium as gym
import pytest
from helpers import our_processes, requires
from sciagent_gym.envs.materials.adapter import URL

import sciagent_gym  # noqa: F401  (registers the env ids)

pytestmark = [pytest.mark.e2e, requires(tool="materials")]


@pytest.fixture
def env():
    env = gym.make("SciCode-Materials-v0", task="materials/count-entries-with-elements",
                   pool_size=0)
    try:
        yield env
    finally:
        env.close()


def _titles(env) -> list[str]:
    return [w.title for w in env.unwrapped.provider.windows()]


def test_server_and_terminal_live_in_the_agent_zone(env):
    env.reset(seed=0)
    base = env.unwrapped
    assert _titles(env) == ["Materials terminal: ready 0"]
    obs, reward, terminated, truncated, info = env.step(
        f'run("curl -s \'{URL}/structures?page_limit=1\'; echo; ps -eo comm")')
    doc = json.loads(obs["terminal"].splitlines()[1])
    assert doc["meta"]["data_available"] >= 500
    assert {"xterm", "bash"} <= set(obs["terminal"].split())
    slot = base.provider._slot
    if slot.isolation == "bwrap":  # the program zone has its own loopback: no server there
        out = slot.sandbox.exec(shell=f"curl -s -m 3 {URL}/info; echo rc=$?; ps -eo comm")
        assert "rc=7" in out.output and "xterm" not in out.output.split()


def test_title_follows_the_shell_and_close_ends_everything(env):
    env.reset(seed=1)
    root = str(env.unwrapped.provider._slot.sandbox.root)
    env.step("pyautogui.write('sleep 3')\npyautogui.press('enter')")
    assert _titles(env) == ["Materials terminal: running"]
    env.step({"type": "wait", "seconds": 4})
    assert _titles(env) == ["Materials terminal: ready 1"]
    env.close()
    assert our_processes(root) == [] and not os.path.exists(root)
