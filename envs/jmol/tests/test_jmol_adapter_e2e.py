"""The Jmol adapter on the real program (every task's audit is in test_audit.py): the state
channel over Jmol's sync socket inside the program zone, and a state dump that leaves the
screen as it was."""

from __future__ import annotations

import time

import gymnasium as gym
import numpy as np
import pytest
from helpers import requires

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


#: Jmol dithers its shading: with nothing changed, every repaint differs from the one before in
#: about 1000-2300 pixels of the 3D view (atom edges, unit-cell lines), 99 % of them by at most
#: 35 grey levels (measured on bond-length, cell-volume and atom-style after a bare
#: ``__o = 1``). A change of state on screen moves pixels by far more than that.
DITHER_LEVELS = 40


def _visible_changes(before, after, main) -> int:
    """Pixels changed by more than Jmol's dithering, outside the right-hand field of the status
    bar: it shows the memory and the time of the last repaint ("30.9/94.4 Mb; 51/73 ms"),
    which Jmol updates whenever a script makes it repaint (its DisplayPanel always shows them)."""
    diff = np.abs(before.astype(int) - after.astype(int)).max(axis=-1)
    status_top = main.y + main.height - 40
    diff[status_top:main.y + main.height, main.x + main.width * 2 // 3:] = 0
    return int((diff > DITHER_LEVELS).sum())


def _repainted(base):
    """The screen once Jmol's repaint after a script has landed: it comes ~0.2 s after the
    answer, later than the settle's quiet window, so give it a second first."""
    time.sleep(1.0)
    return base.provider.wait_settled()


def test_state_dump_leaves_the_screen_as_it_was(env):
    obs, _ = env.reset(seed=0, options={"task": "jmol/bond-length"})
    base = env.unwrapped
    main = next(w for w in base.provider.windows() if w.title.startswith("crystal.cif"))
    titles = sorted(w.title for w in base.provider.windows())
    base.adapter.dump_state(base.provider)
    after = _repainted(base)
    assert sorted(w.title for w in base.provider.windows()) == titles
    assert _visible_changes(obs["screenshot"], after, main) <= 64
    # the measure sees a real change: a quarter turn of the view
    base.adapter.run_script(base.provider, "rotate y 90")
    assert _visible_changes(after, _repainted(base), main) > 1000
