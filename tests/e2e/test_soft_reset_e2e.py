"""``soft_reset``: an episode that starts in the program left running by the last one must
start exactly where a restart would (same first frame, same state dump), and the env must fall
back to a restart whenever the adapter cannot restore the program in place.

One case per tool whose adapter overrides ``restore_in_place`` (:data:`CASES`); each runs with
one module-scoped pair of envs (soft, restart)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from helpers import assert_same_frames, requires

import sciagent_gym  # noqa: F401
from sciagent_gym.processes import wait_for
from sciagent_gym.providers.local.slot import APP
from sciagent_gym.tasks.steps import run_steps
from sciagent_gym.tools import ToolAdapter, discover
from sciagent_gym.tools.adapter import load_adapter


def _ds9_dialog(env) -> None:
    """DS9's Contour Parameters dialog, opened through XPA."""
    base = env.unwrapped
    base.adapter.run_script(base.provider, "contour open")
    wait_for(lambda: len(base.provider.windows()) == 2, 10.0, what="the Contour dialog")


def _pymol_dialog(env) -> None:
    """PyMOL's File > Open dialog (Ctrl+O in the main window), left open."""
    env.step("pyautogui.click(515, 193)")
    env.step("pyautogui.hotkey('ctrl', 'o')")
    wait_for(lambda: any(w.title == "Open file" for w in env.unwrapped.provider.windows()),
             20.0, what="PyMOL's Open file dialog")


def _imagej_dialog(env) -> None:
    """ImageJ's Command Finder (L in an image window), left open."""
    env.step("pyautogui.click(300, 400)")
    env.step("pyautogui.press('l')")
    wait_for(lambda: any(w.title == "Command Finder" for w in env.unwrapped.provider.windows()),
             20.0, what="ImageJ's Command Finder")


def _qgis_dialog(env) -> None:
    """QGIS's Data Source Manager (Ctrl+Shift+V), left open."""
    env.step("pyautogui.hotkey('ctrl', 'shift', 'v')")
    wait_for(lambda: any(w.title.startswith("Data Source Manager")
                         for w in env.unwrapped.provider.windows()),
             20.0, what="QGIS's Data Source Manager")


_QGIS_ID = re.compile(r"_[0-9a-f]{8}(_[0-9a-f]{4}){3}_[0-9a-f]{12}")


def _qgis_state(state: dict) -> dict:
    """QGIS's dump without the random UUID in each layer's id (two restarts differ there)."""
    return json.loads(_QGIS_ID.sub("_ID", json.dumps(state)))


class _Last(gym.Wrapper):
    """Keeps the last step's reward (the GUI oracle's steps run through it)."""

    def step(self, action):
        obs, self.reward, *rest = self.env.step(action)
        return (obs, self.reward, *rest)


@dataclass
class Case:
    """How one tool is proven: what an agent does (``mess``), a dialog the adapter must
    refuse, another task; the episode played after the reset: ``play`` (actions from the
    task's params, each step's frame compared) or, when None, the task's GUI oracle (its
    last frame and its reward compared)."""

    env_id: str
    task: str
    mess: list[str]
    play: Callable[[dict[str, Any]], list[str]] | None
    dialog: Callable[[Any], None]
    other_task: str
    titles: list[str]
    # (y0, y1, x0, x1) boxes left out of frame comparisons: a text caret that blinks (its
    # phase differs between two restarts as well), a scroll bar laid out by launch timing
    carets: list[tuple[int, int, int, int]] = field(default_factory=list)
    seeds: tuple[int, ...] = (1, 2, 3, 4)
    # whether the GUI oracle's last screens are compared, or only its end states: ImageJ's
    # Results window, opened by the oracle's last command, takes the focus or not by timing
    # (seen both ways round, soft vs restart, in two runs at load ~10)
    end_frames: bool = True
    # the part of the state dumps compared (None: all of it)
    state_view: Callable[[dict], dict] | None = None

    def view(self, state: dict) -> dict:
        return self.state_view(state) if self.state_view is not None else state


CASES: dict[str, Case] = {
    # What an agent does in this task and around it: the button bar's sections and check
    # buttons (colour bar, magnifier, panner, zoom, scale), a click and a right-drag (contrast
    # and bias) on the image, a region drawn in region mode.
    "ds9": Case(
        "SciGUI-DS9-v0", "ds9/toggle-colorbar",
        ["pyautogui.click(168, 207)", "pyautogui.click(665, 233)", "pyautogui.click(318, 233)",
         "pyautogui.click(389, 207)", "pyautogui.click(100, 233)",
         "pyautogui.click(466, 207)", "pyautogui.click(300, 233)",
         "pyautogui.moveTo(500, 450)", "pyautogui.mouseDown(button='right')",
         "pyautogui.moveTo(560, 400)", "pyautogui.mouseUp(button='right')",
         "pyautogui.click(96, 207)", "pyautogui.click(130, 233)", "pyautogui.click(450, 420)"],
        lambda p: ["pyautogui.click(168, 207)", "pyautogui.click(665, 233)"],
        _ds9_dialog, "ds9/toggle-grid", ["SAOImage sciagent"]),
    # Commands typed at the PyMOL> prompt (colour, representation, background, a second
    # object, a setting left half typed in the viewport's own command line), a rotation drag,
    # a zoom by the wheel, the Reset button, an object's C menu opened and closed, a click
    # that hides an object.
    "pymol": Case(
        "SciGUI-PyMOL-v0", "pymol/color-chain",
        ["pyautogui.click(300, 193)", "pyautogui.typewrite('color red, chain A\\n')",
         "pyautogui.typewrite('show sticks\\n')", "pyautogui.moveTo(500, 450)",
         "pyautogui.mouseDown()", "pyautogui.moveTo(560, 400)", "pyautogui.mouseUp()",
         "pyautogui.click(1000, 51)", "pyautogui.scroll(-3, x=500, y=450)",
         "pyautogui.typewrite('bg_color white\\n')", "pyautogui.click(1213, 240)",
         "pyautogui.press('escape')", "pyautogui.typewrite('load ~/work/1tii.pdb, two\\n')",
         "pyautogui.click(1035, 240)", "pyautogui.typewrite('set cartoon_transparency, 0.5')"],
        None, _pymol_dialog, "pymol/remove-waters", ["PyMOL"], seeds=(1, 2)),
    # A tool switched (oval) and a selection drawn, Measure (the Results table), a duplicate
    # (a second image), Process > Smooth through the Command Finder, a zoom (the window
    # grows, its title says the zoom), the Text tool.
    "imagej": Case(
        "SciGUI-ImageJ-v0", "imagej/measure-region-mean",
        ["pyautogui.click(87, 80)", "pyautogui.moveTo(150, 300)", "pyautogui.mouseDown()",
         "pyautogui.moveTo(250, 400)", "pyautogui.mouseUp()", "pyautogui.hotkey('ctrl', 'm')",
         "pyautogui.click(300, 250)", "pyautogui.hotkey('ctrl', 'shift', 'd')",
         "pyautogui.press('enter')", "pyautogui.click(300, 130)", "pyautogui.press('l')",
         "pyautogui.write('smooth')", "pyautogui.press('enter')", "pyautogui.press('escape')",
         "pyautogui.click(300, 300)", "pyautogui.press('+')", "pyautogui.click(296, 80)"],
        None, _imagej_dialog, "imagej/set-scale", ["ImageJ", "ihc.tif"], seeds=(1, 2),
        end_frames=False),
    # Layers hidden and selected in the Layers panel, a zoom by the wheel and a pan drag, the
    # Processing Toolbox docked, a layer's context menu and the Data Source Manager opened and
    # closed, editing switched on, the Identify tool clicked on the map (its results panel
    # docks), a rectangle selection, a search typed in the locator, the Browser expanded.
    "qgis": Case(
        "SciGUI-QGIS-v0", "qgis/hide-layer",
        ["pyautogui.click(31, 409)", "pyautogui.click(85, 427)",
         "pyautogui.scroll(-3, x=700, y=400)", "pyautogui.moveTo(700, 400)",
         "pyautogui.mouseDown()", "pyautogui.moveTo(760, 450)", "pyautogui.mouseUp()",
         "pyautogui.hotkey('ctrl', 'alt', 't')", "pyautogui.rightClick(85, 445)",
         "pyautogui.press('escape')", "pyautogui.hotkey('ctrl', 'shift', 'v')",
         "pyautogui.press('escape')", "pyautogui.click(85, 409)", "pyautogui.click(322, 97)",
         "pyautogui.hotkey('ctrl', 'shift', 'i')", "pyautogui.click(600, 450)",
         "pyautogui.click(787, 57)", "pyautogui.moveTo(400, 200)", "pyautogui.mouseDown()",
         "pyautogui.moveTo(900, 700)", "pyautogui.mouseUp()", "pyautogui.hotkey('ctrl', 'k')",
         "pyautogui.write('tow')", "pyautogui.press('escape')", "pyautogui.click(60, 213)",
         "pyautogui.press('right')"],
        None, _qgis_dialog, "qgis/select-by-attribute", ["*Untitled Project — QGIS"],
        seeds=(1, 2), state_view=_qgis_state),
}


def _overrides(tool: str) -> bool:
    return type(load_adapter(tool, getters=False)).restore_in_place \
        is not ToolAdapter.restore_in_place


def test_every_tool_that_restores_in_place_is_proven_here():
    assert {t for t in discover() if _overrides(t)} == set(CASES)


@pytest.fixture(scope="module", params=[pytest.param(t, marks=requires(tool=t)) for t in CASES])
def case(request):
    c = CASES[request.param]
    soft = gym.make(c.env_id, task=c.task, pool_size=0, soft_reset=100, max_steps=40,
                    expose_state=True)
    hard = gym.make(c.env_id, task=c.task, pool_size=0, max_steps=40, expose_state=True)
    yield c, soft, hard
    soft.close()
    hard.close()


def _masked(frame: np.ndarray, c: Case) -> np.ndarray:
    frame = frame.copy()
    for y0, y1, x0, x1 in c.carets:
        frame[y0:y1, x0:x1] = 0
    return frame


def _start(env, seed: int) -> dict:
    obs, info = env.reset(seed=seed)
    return {"frame": obs["screenshot"], "state": info["state"], "info": info}


def test_soft_reset_starts_where_a_restart_does(case, tmp_path):
    c, soft, hard = case
    for seed in c.seeds:
        _start(soft, 100 + seed)  # the first one starts the program, the others are soft
        provider = soft.unwrapped.provider
        for action in c.mess:
            soft.step(action)
        before = dict(provider.stats)
        got = _start(soft, seed)
        assert provider.stats["soft"] == before["soft"] + 1, "the soft reset fell back"
        assert got["info"]["timings"]["soft"] == 1.0
        want = _start(hard, seed)
        assert got["info"]["instruction"] == want["info"]["instruction"]
        assert c.view(got["state"]) == c.view(want["state"]), f"seed {seed}"
        assert_same_frames(_masked(got["frame"], c), _masked(want["frame"], c), tmp_path,
                           ("soft", "restart"), f"seed {seed}: ")
        # and the episode plays the same
        if c.play is None:
            played = [_Last(env) for env in (soft, hard)]
            for env in played:
                run_steps(env, env.unwrapped.task.steps("gui_oracle"))
            assert played[0].reward == played[1].reward == 1.0, f"seed {seed}: the GUI " \
                f"oracle scored {played[0].reward} after a soft reset, {played[1].reward} " \
                "after a restart"
            states = [c.view(env.unwrapped.adapter.dump_state(env.unwrapped.provider))
                      for env in played]
            assert states[0] == states[1], f"seed {seed}: the GUI oracle's end states differ"
            if c.end_frames:  # the screens they leave, settled
                ends = [env.unwrapped.provider.wait_settled() for env in played]
                assert_same_frames(_masked(ends[0], c), _masked(ends[1], c), tmp_path,
                                   ("soft-played", "restart-played"), f"seed {seed}: ")
            continue
        for action in c.play(soft.unwrapped.task.params):
            a = soft.step(action)[0]["screenshot"]
            b = hard.step(action)[0]["screenshot"]
            assert np.array_equal(a, b), f"seed {seed}: {action} diverged"
        assert soft.step("DONE")[1] == hard.step("DONE")[1]


def test_soft_reset_falls_back_to_a_restart(case):
    c, soft, _ = case
    base = soft.unwrapped
    soft.reset(seed=5)
    # a dialog left open is not something the adapter restores
    c.dialog(soft)
    before = dict(base.provider.stats)
    obs, info = soft.reset(seed=6)
    assert base.provider.stats["cold"] == before["cold"] + 1
    assert base.provider.stats["soft"] == before["soft"]
    assert not info["timings"].get("soft")
    assert sorted(w.title for w in base.provider.windows()) == sorted(c.titles)
    # another task: a restart as well
    before = dict(base.provider.stats)
    soft.reset(seed=7, options={"task": c.other_task})
    assert base.provider.stats["cold"] == before["cold"] + 1
    # the program gone (crashed, or quit by the agent): a restart
    base.provider.kill_in_sandbox(APP)
    wait_for(lambda: not base.provider.app_running(), 10.0, what="the program to end")
    before = dict(base.provider.stats)
    soft.reset(seed=8, options={"task": c.other_task})
    assert base.provider.stats["cold"] == before["cold"] + 1 and base.provider.app_running()


@requires(tool="ds9")
def test_soft_reset_budget_restarts_every_n():
    env = gym.make("SciGUI-DS9-v0", task="ds9/toggle-colorbar", pool_size=0, soft_reset=2)
    try:
        kinds = []
        for seed in range(5):
            env.reset(seed=seed)
            kinds.append("soft" if env.unwrapped.provider.last_reset_timings.get("soft")
                         else "restart")
        assert kinds == ["restart", "soft", "soft", "restart", "soft"]
    finally:
        env.close()


def test_soft_reset_option_is_checked():
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(ValueError, match="soft_reset"):
            gym.make("SciGUI-DS9-v0", soft_reset=bad)
