"""The materials workstation on the real sandbox: Jmol, Fityk and Veusz up in their own screen
regions in the program zone, the terminal and its OPTIMADE server in the agent zone, the three
state channels answering through the workstation's merged dump, the agent zone reaching none of
them, and nothing left once the env closes."""

from __future__ import annotations

import os

import gymnasium as gym
import pytest
from helpers import our_processes, requires
from sciagent_gym.envs.jmol.adapter import SYNC_PORT
from sciagent_gym.envs.materials.adapter import URL
from sciagent_gym.envs.matsci.adapter import LAYOUT
from sciagent_gym.envs.veusz.adapter import PORT as VEUSZ_PORT

import sciagent_gym  # noqa: F401  (registers the env ids)

pytestmark = [pytest.mark.e2e, requires(tool="matsci")]

TITLES = {"jmol": "Jmol", "fityk": "Fityk", "veusz": "Untitled - Veusz",
          "terminal": "Materials terminal: ready 0"}


@pytest.fixture
def env():
    env = gym.make("SciGUI-MatSci-v0", task="matsci/db-cif-cell-volume", pool_size=0)
    try:
        yield env
    finally:
        env.close()


def test_each_program_in_its_region_and_the_channels_answer(env):
    env.reset(seed=0)
    base = env.unwrapped
    windows = base.provider.windows()
    for name, (x, y, w, _h) in LAYOUT.items():
        found = [v for v in windows if v.title.startswith(TITLES[name])]
        assert len(found) == 1, (name, [v.title for v in windows])
        v = found[0]
        # the client area lies inside the region (the frame's title bar above it)
        assert x <= v.x < x + 10 and y <= v.y <= y + 30, (name, v)
        assert v.x + v.width <= x + w + 2 and v.y + v.height <= 800, (name, v)
    state = base.adapter.dump_state(base.provider)
    assert state["errors"] == {}
    assert state["jmol"]["atoms"] == 0 and state["fityk"]["dataset_count"] == 1
    assert "/page1/graph1" in state["veusz"]["widgets"]


def test_agent_zone_has_the_database_but_not_the_channels(env):
    env.reset(seed=1)
    obs, *_ = env.step(
        f'run("curl -s -o /dev/null -w %{{http_code}} \'{URL}/structures?page_limit=1\'; echo; '
        f'for p in {SYNC_PORT} {VEUSZ_PORT}; do curl -s -m 3 http://127.0.0.1:$p/ >/dev/null; '
        f'echo port$p=$?; done; ps -eo comm")')
    out = obs["terminal"]
    assert "200" in out.splitlines()[1]
    slot = env.unwrapped.provider._slot
    if slot.isolation == "bwrap":
        assert f"port{SYNC_PORT}=7" in out and f"port{VEUSZ_PORT}=7" in out
        assert not {"java", "fityk"} & set(out.split())


def test_close_ends_every_program(env):
    env.reset(seed=2)
    root = str(env.unwrapped.provider._slot.sandbox.root)
    env.close()
    assert our_processes(root) == [] and not os.path.exists(root)
