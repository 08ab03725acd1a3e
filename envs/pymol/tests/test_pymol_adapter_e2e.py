"""The PyMOL adapter on the real program (every task's audit is in test_audit.py): the state
channel, a state dump that leaves the screen as it was, and reset determinism."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
from helpers import (
    assert_dump_leaves_screen,
    assert_same_frames,
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


# Rebuilds PyMOL's output area as three blocks, as the feedback timer makes of a launch's lines
# when the XML-RPC line comes one tick after the load lines.
_THREE_BATCHES = """#python
from pymol import gui
from pymol.Qt import QtWidgets
from pymol import colorprinting
w = gui.get_qtwindow()
lines = w.browser.toPlainText().replace("\\xa0", " ").split("\\n")
w.browser.clear()
for batch in (lines[:3], lines[3:-1], lines[-1:]):
    w.browser.appendHtml(colorprinting.text2html("\\n".join(batch)))
    QtWidgets.QApplication.processEvents()
bar = w.browser.verticalScrollBar()
bar.setValue(bar.maximum())
__out__ = [w.browser.blockCount(), bar.maximum()]
"""


def test_output_area_is_laid_out_the_same_whatever_the_batches(env, tmp_path):
    """The scroll bar's thumb follows how many blocks the launch's lines arrived in, which
    timing decides (two resets of one seed once differed by 148 px there, and a restart and a
    restore by 162 px). Every launch lays the area out as two blocks (Adapter.after_ready,
    inside/output_area.py)."""
    obs, _ = env.reset(seed=3, options={"task": "pymol/color-chain"})
    base = env.unwrapped
    first = _frame(obs).copy()
    blocks = json.loads(base.adapter.run_script(
        base.provider, "#python\nfrom pymol import gui\n"
                       "__out__ = gui.get_qtwindow().browser.blockCount()"))
    assert blocks == 2
    three = json.loads(base.adapter.run_script(base.provider, _THREE_BATCHES))
    assert three[0] == 3
    split = base.provider.wait_settled()
    assert np.any(split != first), "three blocks should show another thumb (the test's premise)"
    # What every launch runs once PyMOL answers: the area back to two blocks.
    base.adapter.after_ready(base.provider, None)
    assert_same_frames(first, base.provider.wait_settled(), tmp_path, ("launch", "relaid"))


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


# What a person can type at PyMOL's command line (``/`` runs Python): rebind every function the
# state dump calls: every atom count 4242 (so every representation covers every atom) and a
# white background.
_REBIND = """#python
from pymol import cmd
cmd.count_atoms = lambda *a, **k: 4242
cmd.get_setting_tuple = lambda *a, **k: (5, (1.0, 1.0, 1.0))
__out__ = "rebound"
"""


def test_a_console_cannot_rebind_the_state_dump(env):
    """Issue 32, finding 4: the dump runs in a fresh headless PyMOL on the live session's data,
    so functions rebound from the program's console change nothing it reports (before, the
    dump ran in the live program and reported 4242 atoms with sticks on all of them)."""
    env.reset(seed=0, options={"task": "pymol/ligand-sticks-gui"})
    base = env.unwrapped
    before = base.adapter.dump_state(base.provider)
    assert base.adapter.run_script(base.provider, _REBIND) == "rebound"
    # the rebinding took in the live program
    assert base.adapter.run_script(base.provider, "#python\n__out__ = cmd.count_atoms()") \
        == "4242"
    after = base.adapter.dump_state(base.provider)
    assert after == before
    assert after["total_atoms"] != 4242 and after["background"]["rgb"] == [0.0, 0.0, 0.0]
    # and the session file the live program wrote for it is gone from the zone's /tmp
    zone = getattr(base.provider, "sandbox", None)
    if zone is not None:
        left = zone.exec(shell=f"ls {base.provider.paths['tmp']}").output
        assert "sciagent-pymol-session-" not in left
