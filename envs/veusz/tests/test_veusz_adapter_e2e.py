"""The Veusz adapter on the real program (every task's audit is in test_audit.py): the state
channel served from inside Veusz in the program zone, errors that stay errors, a reply that
must carry its request's nonce, a state dump that leaves the screen as it was, and a channel
the agent zone cannot reach."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
from helpers import assert_dump_leaves_screen, call_and_collect, requires
from sciagent_gym.envs.veusz.adapter import CLIENT, PORT

import sciagent_gym  # noqa: F401

pytestmark = requires(tool="veusz")


@pytest.fixture(scope="module")
def env():
    e = gym.make("SciGUI-Veusz-v0", pool_size=0)
    yield e
    e.close()


def test_state_channel_reports_and_runs_commands(env):
    env.reset(seed=0, options={"task": "veusz/conductivity-log-axis"})
    base = env.unwrapped
    state = base.adapter.dump_state(base.provider)
    assert state["filename"].endswith("/conductivity.vsz")
    xy = state["widgets"]["/page1/graph1/data"]
    assert xy["type"] == "xy" and xy["data"]["xData"]["n"] == state["datasets"]["T"]["n"]
    assert state["widgets"]["/page1/graph1/y"]["settings"]["log"] is False
    out = base.adapter.run_script(base.provider, "Set('/page1/graph1/y/log', True)\n"
                                                 "__out__ = Get('/page1/graph1/y/log')")
    assert json.loads(out) is True
    state = base.adapter.dump_state(base.provider)
    assert state["widgets"]["/page1/graph1/y"]["settings"]["log"] is True


def test_a_failing_request_is_an_error_not_an_answer(env):
    env.reset(seed=1, options={"task": "veusz/xrd-axis-range"})
    base = env.unwrapped
    with pytest.raises(Exception, match="NoSuchWidget|KeyError|ValueError|failed"):
        base.adapter.run_script(base.provider, "Set('/page9/nothing/label', 'x')", timeout=20)
    assert base.adapter.run_script(base.provider, "__out__ = 6 * 7") == "42"


def test_a_reply_without_the_nonce_is_refused(env):
    """The client keeps only a reply that carries the nonce it sent: a stand-in server in the
    program zone that answers with another nonce does not pass for Veusz."""
    env.reset(seed=0, options={"task": "veusz/plot-tensile-curve"})
    base = env.unwrapped
    zone = base.provider.sandbox
    fake = (f"import json, socket\ns = socket.socket()\ns.setsockopt(socket.SOL_SOCKET, "
            f"socket.SO_REUSEADDR, 1)\ns.bind(('127.0.0.1', {PORT + 1}))\ns.listen(1)\n"
            "c, _ = s.accept()\nc.recv(65536)\n"
            "c.sendall(json.dumps({'nonce': 'forged', 'ok': True, 'out': 1}).encode() + b'\\n')\n")
    zone.spawn("fake-server", ["/usr/bin/python3", "-I", "-S", "-c", fake])
    try:
        res = call_and_collect(zone, "client", code=CLIENT,
                               args=[str(PORT + 1), "n0nce", "__out__ = 1"])
        assert res["returncode"] == 0, res
        reply = json.loads(res["output"])
        assert reply["ok"] is False and "nonce" in reply["error"]
    finally:
        zone.kill("fake-server")


def test_the_agent_zone_cannot_reach_the_channel(env):
    env.reset(seed=0, options={"task": "veusz/plot-tensile-curve"})
    base = env.unwrapped
    probe = (f"bash -c '(exec 3<>/dev/tcp/127.0.0.1/{PORT}) 2>/dev/null "
             "&& echo REACHED || echo REFUSED'")
    out = base.provider.run_command(probe).output
    assert "REFUSED" in out and "REACHED" not in out
    inside = base.provider.sandbox.exec(shell=probe, timeout=20).output
    assert "REACHED" in inside  # the channel is there, in the program zone only


def test_state_dump_leaves_the_screen_as_it_was(env):
    assert_dump_leaves_screen(env, "veusz/conductivity-log-axis")


def test_a_console_cannot_rebind_the_state_dump(env):
    """Issue 32, finding 4: the dump runs in a fresh headless Veusz on the live document's
    commands, so what a console rebinds in the live program changes nothing it reports
    (before, math.isfinite rebound there turned every number of the dump into None)."""
    env.reset(seed=0, options={"task": "veusz/conductivity-log-axis"})
    base = env.unwrapped
    before = base.adapter.dump_state(base.provider)
    assert base.adapter.run_script(base.provider, base.adapter.console_rebind) == "rebound"
    assert base.adapter.run_script(base.provider, "import math\n"
                                   "__out__ = str(math.isfinite(1.0))") == "False"
    after = base.adapter.dump_state(base.provider)
    assert after is not before  # each dump its own copy (the reader caches by content)
    assert after == before
    assert after["datasets"]["T"]["mean"] is not None and after["modified"] is False
