"""The control server on a real display with the real ImageJ, driven through the remote
provider exactly as a VM guest or a remote host would be."""

from __future__ import annotations

import glob
import os
import secrets
import socket
import subprocess
import sys
import time

import gymnasium as gym
import numpy as np
import pytest
import requests

import sciagent_gym  # noqa: F401
from sciagent_gym.providers.local.display import VirtualDisplay
from sciagent_gym.providers.remote.client import ControlClient, ControlError
from sciagent_gym.tasks.steps import run_steps

pytestmark = pytest.mark.e2e


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A control server for a fresh Xvfb display, as ``python -m sciagent_gym.server``."""
    home = tmp_path_factory.mktemp("remote-home")
    token = secrets.token_hex(16)
    port = _free_port()
    display = VirtualDisplay(1280, 800)
    proc = subprocess.Popen(
        [sys.executable, "-m", "sciagent_gym.server", "--display", display.name, "--home",
         str(home), "--port", str(port), "--tool", "imagej"],
        env={**os.environ, "SCIAGENT_TOKEN": token}, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        ControlClient(url, token).wait_healthy(20.0)
        yield {"url": url, "token": token, "home": home, "proc": proc, "display": display.name}
    finally:
        proc.terminate()
        proc.wait(10)
        display.close()


@pytest.fixture(scope="module")
def remote_env(server):
    # This server runs commands as its own user (no --agent-user): not isolated, so CLI
    # actions need the development switch; the ImageJ tasks are GUI-only, so the shell is
    # opened for this module with the modality override.
    env = gym.make("SciGUI-ImageJ-v0", provider="remote", url=server["url"],
                   token=server["token"], allow_unsafe_cli=True, modality="gui+cli")
    yield env
    env.close()


def test_oracle_scores_one_over_the_wire(remote_env):
    env = remote_env
    obs, info = env.reset(seed=3, options={"task": "measure-region-mean"})
    assert obs["screenshot"].shape == (800, 1280, 3) and obs["screenshot"].std() > 5
    task = env.unwrapped.task
    run_steps(env, task.steps("oracle"))
    assert env.unwrapped.evaluation.score == 1.0, env.unwrapped.evaluation.to_dict()


def test_imagej_keeps_its_instance_stub_out_of_the_host_tmp(remote_env, server):
    """ImageJ's single-instance stub (``ImageJ-<user>-<display>-<port>.stub``, in
    java.io.tmpdir) was left in the host's /tmp by every run of this server as root."""
    remote_env.reset(seed=0)
    stub = f"ImageJ-*-{server['display'].replace(':', '_')}-*.stub"
    assert not glob.glob(f"/tmp/{stub}")
    assert glob.glob(f"{server['home']}/tmp/{stub}"), "the stub is in the server's private tmp"


def test_damage_settle_over_the_wire(server):
    """The client sends the damage mode and its windows; the guest settles on paint events
    (a step nothing reacts to returns at once, not after the frame settle's 150 ms window)."""
    from sciagent_gym.controller.settle import SettleConfig

    client = ControlClient(server["url"], server["token"])
    config = SettleConfig.damage()
    client.settle(config)  # opens the guest's DAMAGE connection
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        frame = client.settle(config)
        times.append(time.perf_counter() - t0)
    assert frame.shape == (800, 1280, 3)
    assert sorted(times)[2] < 0.12, times


def test_second_task_over_the_wire(remote_env):
    """A second task after the first, on the same remote display and server."""
    env = remote_env
    env.reset(seed=1, options={"task": "set-scale"})
    run_steps(env, env.unwrapped.task.steps("oracle"))
    assert env.unwrapped.evaluation.score == 1.0, env.unwrapped.evaluation.to_dict()


def test_reset_restores_the_start_frame(remote_env):
    env = remote_env
    first, _ = env.reset(seed=5, options={"task": "count-nuclei"})
    env.step("pyautogui.click(294, 52)")  # open the Analyze menu
    changed, *_ = env.step("pyautogui.press('escape')")
    again, _ = env.reset(seed=5, options={"task": "count-nuclei"})
    diff = np.any(first["screenshot"] != again["screenshot"], axis=2)
    if diff.any():
        ys, xs = np.nonzero(diff)
        from PIL import Image

        Image.fromarray(first["screenshot"]).save("/tmp/remote-first.png")
        Image.fromarray(again["screenshot"]).save("/tmp/remote-again.png")
        pytest.fail(f"{int(diff.sum())} pixels differ in x {xs.min()}..{xs.max()}, "
                    f"y {ys.min()}..{ys.max()} (frames in /tmp/remote-*.png)")
    assert first["instruction"] == again["instruction"]


def test_cli_clipboard_and_state_channel(remote_env, server):
    env = remote_env
    env.reset(seed=0, options={"task": "count-nuclei"})
    assert env.unwrapped.provider.cli_isolated is False  # the server does not declare it
    obs, *_ = env.step("run('ls; echo $HOME')")
    assert "nuclei" in obs["terminal"] and str(server["home"]) in obs["terminal"]
    obs, *_ = env.step("run('env')")  # the token came in $SCIAGENT_TOKEN: not passed on
    assert "PATH=" in obs["terminal"] and server["token"] not in obs["terminal"]
    env.step("computer.set_clipboard('over http')")
    obs, *_ = env.step("computer.get_clipboard()")
    assert obs["terminal"] == "clipboard:\nover http"
    client = ControlClient(server["url"], server["token"])
    state = client.tool_state()
    assert state["active"]["title"].startswith("nuclei")
    assert client.tool_script('__out__ = "" + (6 * 7);') == "42"


def _collected(client: ControlClient, name: str) -> dict:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        state = client.collect(name)
        if state["done"]:
            return state
        time.sleep(0.02)
    raise AssertionError(f"call {name} did not finish")


def test_channel_calls_over_the_wire_keep_arguments_off_the_command_line(server):
    """/programs/call: Python code gets its arguments and code on stdin (the server never
    forks itself), a program its stdin; the reply is the client's stdout, its cwd the /tmp."""
    client = ControlClient(server["url"], server["token"])
    client.call("py", code="import os, sys\nprint(os.getcwd() != os.environ['HOME'], "
                           "sys.argv[1:], open('/proc/self/cmdline', 'rb').read().count(b'n0nce'))",
                args=["a", "n0nce"])
    assert _collected(client, "py") == {"done": True, "returncode": 0,
                                        "output": "True ['a', 'n0nce'] 0\n"}
    client.call("sh", argv=["sh", "-c", "read -r x; echo got $x; exit 4"], stdin="s3cret\n")
    assert _collected(client, "sh") == {"done": True, "returncode": 4, "output": "got s3cret\n"}
    assert client.collect("sh") == {"done": True, "output": None, "returncode": None}


def test_bad_requests_get_a_4xx_with_a_reason(server):
    url, token = server["url"], server["token"]
    auth = {"Authorization": f"Bearer {token}"}
    assert requests.get(f"{url}/health", timeout=5).status_code == 401
    bad = requests.get(f"{url}/health", headers={"Authorization": "Bearer " + "0" * 32},
                       timeout=5)
    assert bad.status_code == 401 and "token" in bad.json()["error"]
    cases = [
        ("POST", "/actions", {"data": b"{not json"}, 400, "not JSON"),
        ("POST", "/actions", {"json": {"actions": [{"type": "click", "x": 5000, "y": 1}]}},
         400, "off the 1280x800 screen"),
        ("POST", "/actions", {"json": {"actions": [{"type": "explode"}]}}, 400,
         "unknown action type"),
        ("GET", "/nowhere", {}, 404, "no route"),
        ("DELETE", "/actions", {}, 405, "takes POST"),
        ("GET", "/files/raw", {}, 400, "'path' is required"),
        ("GET", "/files/raw", {"params": {"path": "relative"}}, 400, "absolute"),
        ("POST", "/windows/close", {"json": {"id": 1}}, 404, "no window"),
        ("PUT", "/tree", {"params": {"path": f"{server['home']}/x"}, "data": b"not a tar"},
         400, "tar"),
        ("PUT", "/tree", {"params": {"path": "/tmp/x"}, "data": b"not a tar"}, 403, "outside"),
        ("GET", "/files/raw", {"params": {"path": "/etc/passwd"}}, 403, "outside"),
        ("POST", "/settle", {"json": {"cap": 1e9}}, 400, "out of range"),
        ("POST", "/settle", {"json": {"react": -1}}, 400, "react 0..5"),
        ("POST", "/settle", {"json": {"mode": "sleep"}}, 400, "frame or damage"),
        ("POST", "/actions", {"data": b"x" * (5 << 20)}, 413, "exceeds the limit"),
    ]
    for method, path, kwargs, status, reason in cases:
        reply = requests.request(method, url + path, headers=auth, timeout=10, **kwargs)
        assert reply.status_code == status, (method, path, reply.text)
        assert reason in reply.json()["error"], (method, path, reply.json())
    assert ControlClient(url, token).health()["ok"]  # still serving after all that


def test_tar_upload_cannot_escape_its_directory(server):
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("../escaped.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    client = ControlClient(server["url"], server["token"])
    with pytest.raises(ControlError, match="outside the target directory"):
        client._request("PUT", "/tree", params={"path": str(server["home"] / "in")},
                        data=buf.getvalue())
    assert not (server["home"] / "escaped.txt").exists()


def test_wrong_token_fails_fast(server):
    t0 = time.monotonic()
    with pytest.raises(ControlError, match="HTTP 401"):
        ControlClient(server["url"], "f" * 32).wait_healthy(30.0)
    assert time.monotonic() - t0 < 5


def test_programs_outlive_the_request_that_started_them(remote_env):
    """The server forks from short-lived request threads: a parent-death signal would kill the
    program as soon as the connection that launched it closed (it did, after a VM restore)."""
    env = remote_env
    env.reset(seed=0, options={"task": "count-nuclei"})
    provider = env.unwrapped.provider
    provider.client.reconnect()
    time.sleep(0.5)
    assert provider.app_running()
