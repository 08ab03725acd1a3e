"""The PyMOL adapter on the real program (every task's audit is in test_audit.py): the state
channel, a state dump that leaves the screen as it was, and reset determinism."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from helpers import (
    assert_dump_leaves_screen,
    requires,
)

import sciagent_gym  # noqa: F401
from sciagent_gym.tools import load_tool_getters

load_tool_getters("pymol")

from sciagent_gym.envs.pymol.getters import parse_pdb  # noqa: E402

pytestmark = requires(tool="pymol")


@pytest.fixture(scope="module")
def env():
    e = gym.make("SciGUI-PyMOL-v0", pool_size=0)
    yield e
    e.close()


def _frame(obs):
    return obs["screenshot"] if isinstance(obs, dict) else obs


@pytest.mark.xfail(strict=False, reason="known defect: once in a CI run, 148 pixels at the "
                   "edge of PyMOL's log panel (x 955..968, y 96..106) differed between two "
                   "resets of the same seed; not reproduced in 19 runs since, cause not found")
def test_reset_is_deterministic(env):
    frames = []
    for _ in range(2):
        obs, _ = env.reset(seed=3, options={"task": "pymol/color-chain"})
        frames.append(_frame(obs).copy())
    diff = np.any(frames[0] != frames[1], axis=2)
    if diff.any():
        ys, xs = np.nonzero(diff)
        pytest.fail(f"same seed, different first frame: {int(diff.sum())} pixels in "
                    f"x {xs.min()}..{xs.max()}, y {ys.min()}..{ys.max()}")


def test_state_channel_reports_and_runs_commands(env):
    env.reset(seed=0, options={"task": "pymol/pocket-residues"})
    base = env.unwrapped
    # the seed's variant of 1hpv as staged (waters and termini differ per seed)
    staged = parse_pdb((base.provider.host_work_dir / "1hpv.pdb").read_text())
    assert staged["hetero"] == 35 and 0 < staged["waters"] < 80
    state = base.adapter.dump_state(base.provider)
    assert state["object_names"] == ["1hpv"]
    hpv = state["objects"]["1hpv"]
    assert hpv["atoms"] == staged["atoms"] and hpv["organic_atoms"] == 35
    assert hpv["solvent_atoms"] == staged["waters"]
    assert state["background"]["rgb"] == [0.0, 0.0, 0.0]
    base.adapter.run_script(base.provider, "remove solvent\nselect near, resn 478")
    state = base.adapter.dump_state(base.provider)
    assert state["objects"]["1hpv"]["solvent_atoms"] == 0
    assert state["selections"]["near"]["atoms"] == 35
    out = base.adapter.run_script(base.provider, "#python\n__out__ = cmd.count_atoms('all')")
    assert out == str(staged["atoms"] - staged["waters"])


def test_state_dump_leaves_the_screen_as_it_was(env):
    assert_dump_leaves_screen(env, "pymol/align-chains-rmsd")
