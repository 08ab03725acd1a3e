"""The QGIS adapter on the real program (every task's audit is in test_audit.py): the in-process
file channel (state dump, scripts, errors reported with QGIS's traceback, the env still working
afterwards, answers while a modal dialog is open), isolation between two envs, and resets that
give identical first frames."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from helpers import (
    assert_dump_leaves_screen,
    requires,
    step_until_changed,
)
from sciagent_gym.envs.qgis.adapter import ScriptError

import sciagent_gym  # noqa: F401
from sciagent_gym.tasks.steps import await_window

pytestmark = requires(tool="qgis")


# --- the adapter on the real program ---------------------------------------------------------


@pytest.fixture(scope="module")
def qgis_env():
    env = gym.make("SciGUI-QGIS-v0", render_mode="rgb_array", pool_size=0)
    yield env
    env.close()


def test_state_channel_reports_layers_and_runs_scripts(qgis_env):
    qgis_env.reset(seed=0, options={"task": "qgis/hide-layer"})
    base = qgis_env.unwrapped
    state = base.adapter.dump_state(base.provider)
    assert state["layer_names"] == ["towns", "districts", "dem"]
    towns = state["layers_by_name"]["towns"]
    assert towns["provider"] == "ogr" and towns["crs"] == "EPSG:4326"
    assert towns["feature_count"] == base.task.gold["towns"]["n"]
    assert towns["fields"] == ["name", "category", "region", "population"]
    assert state["layers_by_name"]["districts"]["crs"] == "EPSG:32633"
    dem = state["layers_by_name"]["dem"]
    assert (dem["type"], dem["width"], dem["height"]) == ("raster", 120, 100)
    assert state["visible_layers"] == ["towns", "districts", "dem"]
    answer = base.adapter.run_script(
        base.provider, "layer = project.mapLayersByName('towns')[0]\n"
        "layer.selectByExpression('\"population\" > 0')\n__out__ = layer.selectedFeatureCount()")
    assert int(answer) == towns["feature_count"]
    again = base.adapter.dump_state(base.provider)["layers_by_name"]["towns"]
    assert again["selected_count"] == towns["feature_count"]


def test_failing_request_reports_the_traceback_and_env_keeps_working(qgis_env):
    qgis_env.reset(seed=0, options={"task": "qgis/select-by-attribute"})
    base = qgis_env.unwrapped
    with pytest.raises(ScriptError, match="ZeroDivisionError"):
        base.adapter.run_script(base.provider, "x = 1\ny = x / 0")
    with pytest.raises(ScriptError, match="IndexError"):
        base.adapter.run_script(base.provider, "project.mapLayersByName('no_such_layer')[0]")
    assert base.adapter.run_script(base.provider, "__out__ = 'alive'") == "alive"
    # an episode still ends with an evaluation
    _, _, terminated, _, info = qgis_env.step("DONE")
    assert terminated and info["evaluation"]["score"] == 0.0


_PLANT = r"""
import os, sys, time
channel = sys.argv[1]
# a request under a made-up tag, renamed into place as the adapter's client does
with open(channel + "/req/9999-aa.tmp", "w") as fh:
    fh.write("0" * 64 + "\n" + "open(%r, 'w').write('ran')\n__out__ = 'ran'" % (channel + "/ran"))
os.rename(channel + "/req/9999-aa.tmp", channel + "/req/9999-aa.py")
for _ in range(200):
    if os.path.exists(channel + "/9999-aa.json"):
        break
    time.sleep(0.025)
print(open(channel + "/9999-aa.json").read())
# what a shell QGIS starts could read of QGIS (it is the zone's uid, QGIS runs as it too)
qgis = [p for p in os.listdir("/proc") if p.isdigit()
        and b"qgis.bin" in open("/proc/%s/cmdline" % p, "rb").read().split(b"\0")[0]]
assert len(qgis) == 1, qgis
for name in ("environ", "mem", "maps"):
    try:
        with open("/proc/%s/%s" % (qgis[0], name), "rb") as fh:  # mem: opening is the test
            fh.read(64) if name != "mem" else None
        print("READ", name)
    except OSError:
        print("CLOSED", name)
"""


def test_the_zone_can_neither_plant_a_request_nor_read_the_channel_key(qgis_env):
    """QGIS's channel files live in the zone's /tmp, as does every shell its console starts:
    a request the zone plants is refused unrun (its tag is not the adapter's), and QGIS's
    memory and environment, where the key is, are closed to the zone's other processes."""
    qgis_env.reset(seed=0, options={"task": "qgis/hide-layer"})
    base = qgis_env.unwrapped
    zone = base.provider.sandbox
    channel = base.adapter.channel_dir(base.provider)
    out = zone.exec(argv=["/usr/bin/python3", "-I", "-S", "-c", _PLANT, channel]).output
    assert "request refused" in out and '"ok": false' in out, out
    assert zone.read(f"{channel}/ran") is None
    assert out.count("CLOSED") == 3, out
    assert "SCIAGENT_QGIS_KEY" not in zone.exec(shell="cat /proc/*/environ | tr '\\0' '\\n'"
                                                ).output
    assert base.adapter.run_script(base.provider, "__out__ = 'alive'") == "alive"


def test_cli_actions_are_refused_where_the_task_forbids_them(qgis_env):
    """qgis/hide-layer is a gui task: run() does nothing and says why."""
    obs, info = qgis_env.reset(seed=0, options={"task": "qgis/hide-layer"})
    assert info["modality"] == "gui"
    base = qgis_env.unwrapped
    marker = f"{base.provider.paths['work']}/ran.txt"
    obs2, reward, terminated, _, info = qgis_env.step(f'run("touch {marker}")')
    assert info["action_error"] == "run() refused: the task's modality is 'gui' (no shell)"
    assert not terminated and reward == 0.0 and obs2["terminal"] == obs["terminal"]
    assert base.provider.read_file(marker) is None


def test_request_that_opens_a_dialog_is_reported_and_the_dialog_closed(qgis_env):
    qgis_env.reset(seed=0, options={"task": "qgis/select-by-attribute"})
    base = qgis_env.unwrapped
    with pytest.raises(ScriptError, match="opened a dialog"):
        base.adapter.run_script(base.provider, "iface.showProjectPropertiesDialog()",
                                timeout=20.0)
    await_window(base.provider, "Project Properties", gone=True, timeout=10.0)
    assert base.adapter.run_script(base.provider, "__out__ = 'alive'") == "alive"


def test_channel_answers_while_a_modal_dialog_is_open(qgis_env):
    """QTimers fire in a modal dialog's nested event loop: the state is readable then."""
    qgis_env.reset(seed=0, options={"task": "qgis/set-project-crs"})
    base = qgis_env.unwrapped
    _, _, _, _, info = qgis_env.step({"type": "hotkey", "keys": ["ctrl", "shift", "p"]})
    assert not info.get("action_error")
    await_window(base.provider, "Project Properties", timeout=20.0)
    state = base.adapter.dump_state(base.provider)
    assert state["layer_names"] == ["towns"]
    qgis_env.step({"type": "key", "key": "escape"})
    await_window(base.provider, "Project Properties", gone=True, timeout=10.0)


def test_two_envs_are_isolated():
    """Each env's channel lives in its own sandbox's /tmp: a request reaches only its QGIS."""
    a = gym.make("SciGUI-QGIS-v0", pool_size=0)
    b = gym.make("SciGUI-QGIS-v0", pool_size=0)
    try:
        a.reset(seed=0, options={"task": "qgis/set-project-crs"})
        b.reset(seed=0, options={"task": "qgis/set-project-crs"})
        pa, pb = a.unwrapped, b.unwrapped
        pa.adapter.run_script(pa.provider, "project.setTitle('env A')")
        pb.adapter.run_script(pb.provider, "project.setTitle('env B')")
        assert pa.adapter.dump_state(pa.provider)["project"]["title"] == "env A"
        assert pb.adapter.dump_state(pb.provider)["project"]["title"] == "env B"
        # the agent's CLI (its own zone) does not see the channel at all
        channel = pa.adapter.channel_dir(pa.provider)
        probe = pa.provider.run_command(f"ls -d {channel}/req; touch {channel}/req/x.py")
        assert probe.returncode != 0, probe.output
        # the same channel path seen from inside A's program zone is A's private /tmp: a
        # request dropped there (under A's channel key) reaches A's QGIS only, never B's
        zone = pa.provider.sandbox
        request = pa.adapter._keys[pa.provider.launch_id].sign("999999",
                                                               "project.setTitle('hijacked')")
        zone.exec(argv=["/usr/bin/python3", "-I", "-S", "-c",
                        "import os, sys; open(sys.argv[1] + '.tmp', 'w').write(sys.argv[2]); "
                        "os.rename(sys.argv[1] + '.tmp', sys.argv[1])",
                        f"{channel}/req/999999.py", request])
        # QGIS answers requests in number order, so wait for this one's answer before asking
        assert zone.exec(shell=f"for i in $(seq 200); do [ -e {channel}/999999.json ] && exit 0;"
                         " sleep 0.05; done; exit 1").returncode == 0
        assert pa.adapter.dump_state(pa.provider)["project"]["title"] == "hijacked"
        assert pb.adapter.dump_state(pb.provider)["project"]["title"] == "env B"
        assert pa.provider.display_name != pb.provider.display_name
    finally:
        a.close()
        b.close()


def test_reset_gives_identical_frames(qgis_env):
    frames = []
    for _ in range(2):
        obs, _ = qgis_env.reset(seed=1, options={"task": "qgis/zonal-stats"})
        frames.append(obs["screenshot"])
    assert frames[0].std() > 5
    diff = np.any(frames[0] != frames[1], axis=2)
    if diff.any():
        ys, xs = np.nonzero(diff)
        pytest.fail(f"same seed, different first frame: {int(diff.sum())} pixels in "
                    f"x {xs.min()}..{xs.max()}, y {ys.min()}..{ys.max()}")
    # a GUI step (untick the first layer in the Layers panel) changes the screen and the state
    obs, info = step_until_changed(qgis_env, "pyautogui.click(31, 409)", frames[0])
    assert not info.get("action_error")
    assert not np.array_equal(obs["screenshot"], frames[0])
    base = qgis_env.unwrapped
    assert len(base.adapter.dump_state(base.provider)["visible_layers"]) == 1


def test_state_dump_leaves_the_screen_as_it_was(qgis_env):
    assert_dump_leaves_screen(qgis_env, "qgis/zonal-stats")
