"""The DS9 adapter on the real program (every task's audit is in test_audit.py): DS9's PNG export
matching the colour maps the evaluator reads PNGs with, the XPA state channel, XPA confined to
each env's sandbox (one env's clients never reach another env's DS9), failing XPA commands
reported clearly, our WCS math agreeing with DS9's, and resets that give identical first frames."""

from __future__ import annotations

import shutil

import gymnasium as gym
import numpy as np
import pytest
from helpers import (
    assert_dump_leaves_screen,
    requires,
    step_until_changed,
)
from sciagent_gym.envs.ds9.adapter import XPA_NAME, DS9ScriptError

import sciagent_gym  # noqa: F401

pytestmark = requires(tool="ds9")


# --- the adapter on the real program ---------------------------------------------------------


@pytest.fixture(scope="module")
def ds9_env():
    env = gym.make("SciGUI-DS9-v0", render_mode="rgb_array", pool_size=0)
    yield env
    env.close()


def test_state_channel_reports_the_display(ds9_env):
    ds9_env.reset(seed=0, options={"task": "ds9/circle-region-target"})
    base = ds9_env.unwrapped
    state = base.adapter.dump_state(base.provider)
    assert state["xpa_name"] == XPA_NAME and state["file_name"] == "field.fits"
    assert state["scale"]["function"] == "linear" and state["cmap"]["name"] == "grey"
    assert state["size"] == [400.0, 400.0] and state["n_regions"] == 0
    assert state["object"] == base.task.gold["field"]["header"]["OBJECT"]
    tgt = base.task.gold["field"]["target"]
    out = base.adapter.run_script(base.provider, (
        "# set things, then read them back\nscale log\ncmap heat\nzoom to 2\n"
        f'regions command "circle {tgt["x"]} {tgt["y"]} 6"\nget scale\nget cmap'))
    assert out.splitlines() == ["log", "heat"]
    state = base.adapter.dump_state(base.provider)
    assert (state["scale"]["function"], state["cmap"]["name"], state["zoom"]) == \
        ("log", "heat", 2.0)
    [circle] = state["regions"]
    assert circle["shape"] == "circle" and circle["sizes"] == [6.0]
    assert circle["coords"][0] == pytest.approx([tgt["x"], tgt["y"]], abs=1e-3)


def test_wcs_math_agrees_with_ds9(ds9_env):
    ds9_env.reset(seed=2, options={"task": "ds9/pan-zoom-target"})
    base = ds9_env.unwrapped
    from sciagent_gym.envs.ds9.data import field_wcs

    wcs = field_wcs()
    for x, y in ((37.25, 350.5), (200.5, 200.5), (390.0, 12.75)):
        ra, dec = (float(v) for v in wcs.pix2world(x, y))
        out = base.adapter.run_script(base.provider, f"pan to {ra:.9f} {dec:.9f} wcs fk5 "
                                      "degrees\nget pan image")
        got = [float(v) for v in out.split()]
        assert got == pytest.approx([x, y], abs=0.01)
        out = base.adapter.run_script(base.provider, f"crosshair {x} {y} image\n"
                                      "get crosshair wcs fk5 degrees")
        assert [float(v) for v in out.split()] == pytest.approx([ra, dec], abs=2e-7)
    peak = base.task.gold["field"]["bright"]
    value = base.adapter.run_script(
        base.provider, f"get data image {peak['peak_x']} {peak['peak_y']} 1 1 yes")
    assert float(value) == pytest.approx(peak["peak"], rel=1e-5)


def test_failing_xpa_command_gives_a_clear_error(ds9_env):
    ds9_env.reset(seed=0, options={"task": "ds9/scale-zscale"})
    base = ds9_env.unwrapped
    with pytest.raises(DS9ScriptError, match=r"command 2 \('scale bogus'\).*parse error"):
        base.adapter.run_script(base.provider, "cmap heat\nscale bogus\ncmap cool")
    # the script stopped at the failing line; the channel still works
    assert base.adapter.run_script(base.provider, "get cmap") == "heat"
    with pytest.raises(DS9ScriptError, match="undefined command"):
        base.adapter.run_script(base.provider, "get nosuchcommand")
    assert not [w for w in base.provider.windows() if not w.title.startswith("SAOImage")
                and "ds9" in w.wm_class.lower()]


def test_xpa_is_confined_to_each_sandbox(ds9_env):
    """Two envs, two DS9s: each XPA client reaches only its own DS9; nothing listens on TCP."""
    ds9_env.reset(seed=0, options={"task": "ds9/smooth-kernel"})
    a = ds9_env.unwrapped
    other = gym.make("SciGUI-DS9-v0", render_mode="rgb_array", pool_size=0)
    try:
        other.reset(seed=0, options={"task": "ds9/smooth-kernel"})
        b = other.unwrapped
        a.adapter.run_script(a.provider, "cmap heat")
        b.adapter.run_script(b.provider, "cmap cool")
        assert a.adapter.run_script(a.provider, "get cmap") == "heat"
        assert b.adapter.run_script(b.provider, "get cmap") == "cool"
        # every XPA access point a program zone can see is its own DS9's (one per sandbox)
        probe = (f"XPA_METHOD=local XPA_TMPDIR={a.adapter.xpa_dir(a.provider)} "
                 "xpaaccess -n '*'; xpaaccess -n ds9; cat /proc/net/tcp /proc/net/tcp6; id; "
                 "ls -la /tmp/xpa; cat /tmp/xpa/*.log")
        for env in (a, b):
            res = env.provider.sandbox.exec(shell=probe)
            lines = res.output.split()
            # exactly one access point in reach (its own DS9), none under DS9's default name
            assert lines[:2] == ["1", "0"], res.output
            # no listening TCP socket in the sandbox's network namespace (no IRAF port)
            assert " 0A " not in res.output, res.output
            # the agent's CLI (its own zone) reaches no access point at all
            agent = env.provider.run_command(probe)
            assert agent.output.split()[:2] == ["0", "0"], agent.output
        # the sandboxes do not share their /tmp (where XPA's sockets are)
        mark = b.provider.sandbox.exec(shell="touch /tmp/xpa/only-in-b && ls /tmp/xpa")
        assert "only-in-b" in mark.output
        assert "only-in-b" not in a.provider.sandbox.exec(shell="ls /tmp/xpa").output
        # and are in different network namespaces
        ns = [env.provider.sandbox.exec(shell="readlink /proc/self/ns/net").output.strip()
              for env in (a, b)]
        assert ns[0] != ns[1] and all(n.startswith("net:[") for n in ns)
    finally:
        other.close()


def test_reset_gives_identical_frames(ds9_env):
    frames = []
    for _ in range(2):
        obs, _ = ds9_env.reset(seed=1, options={"task": "ds9/colormap-scale-gui"})
        frames.append(obs["screenshot"])
    assert frames[0].std() > 5  # DS9's window with the image is on screen
    assert np.array_equal(frames[0], frames[1])
    # a GUI step (the 'color' button of the button bar) changes the screen
    obs, info = step_until_changed(ds9_env, "pyautogui.click(540, 215)", frames[0])
    assert not info.get("action_error")
    assert not np.array_equal(obs["screenshot"], frames[0])


def test_toggle_task_start_state_and_both_instruction_kinds(ds9_env):
    """StaR-style toggle: setup.script sets a random start state after ready; a positive
    variant is solved by the GUI clicks, a negative one by DONE alone, and the clicks on a
    negative variant (the N-FPR error) fail it."""
    from sciagent_gym.tasks.steps import run_steps

    base = ds9_env.unwrapped
    kinds: dict[bool, int] = {}
    for seed in range(40):
        ds9_env.reset(seed=seed, options={"task": "ds9/toggle-colorbar"})
        kinds.setdefault(base.task.toggles[0].positive, seed)
        if len(kinds) == 2:
            break
    assert set(kinds) == {True, False}
    clicks = ["pyautogui.click(168, 207)", "pyautogui.click(665, 233)"]
    for positive, seed in sorted(kinds.items()):
        ds9_env.reset(seed=seed, options={"task": "ds9/toggle-colorbar"})
        [toggle] = base.task.toggles
        state = base.adapter.dump_state(base.provider)
        assert state["colorbar"] is toggle.initial  # the start state the script set
        assert state["cmap"]["name"] == base.task.params["decoy"]
        run_steps(ds9_env, base.task.steps())
        assert base.evaluation.score == 1.0 and base.evaluation.success
        assert base.adapter.dump_state(base.provider)["colorbar"] is toggle.target
        # The other decision on the same variant fails: no click on a positive instruction,
        # a click on a negative one.
        ds9_env.reset(seed=seed, options={"task": "ds9/toggle-colorbar"})
        run_steps(ds9_env, ["DONE"] if positive else [*clicks, "DONE"])
        assert not base.evaluation.success


def test_png_export_lies_on_our_colour_maps(ds9_env, tmp_path):
    """DS9's own PNG export, read back by the evaluator's colour-map inversion: every pixel on
    the map's curve, the levels rank-correlated with the data; and DS9's notes (where the
    count-bright-stars oracle leaves its count) are emptied by a reset."""
    import tifffile
    from sciagent_gym.envs.ds9.colormaps import COLORMAPS
    from sciagent_gym.envs.ds9.data import read_fits

    from sciagent_gym.evaluation import GETTERS, FinalState

    ds9_env.reset(seed=0, options={"task": "ds9/export-png-colormap"})
    base = ds9_env.unwrapped
    work, host = base.provider.paths["work"], base.provider.host_work_dir
    img = read_fits((host / "field.fits").read_bytes())[1]
    tifffile.imwrite(tmp_path / "ref.tif", img.astype(np.float32))
    for name in COLORMAPS:
        base.adapter.run_script(base.provider, f"cmap {name}\nscale mode zscale\n"
                                f"export png {work}/{name}.png")
        shutil.copy(host / f"{name}.png", tmp_path / f"{name}.png")
        info = GETTERS["ds9_png_content"](FinalState(work_dir=tmp_path), f"{name}.png",
                                          str(tmp_path / "ref.tif"), cmap=name)
        assert info["size"] == [400, 400] and info["correlation"] > 0.99, (name, info)
        assert info["cmap_fit"] > 0.999, (name, info)
    base.adapter.run_script(base.provider, "tcl {set ds9notes 7}")
    assert base.adapter.run_script(base.provider, "get notes") == "7"
    ds9_env.reset(seed=0, options={"task": "ds9/export-png-colormap"})
    assert base.adapter.run_script(base.provider, "get notes") == ""


def test_state_dump_leaves_the_screen_as_it_was(ds9_env):
    assert_dump_leaves_screen(ds9_env, "ds9/toggle-colorbar")
