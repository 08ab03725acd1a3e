"""The RKWard adapter on the real program (every task's audit is in test_audit.py): the state
channel served from RKWard's own R session in the program zone, errors that stay errors, a
reply that must carry its request's nonce, a state dump that leaves the screen as it was, and a
channel the agent zone cannot reach."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
from helpers import assert_dump_leaves_screen, call_and_collect, requires
from sciagent_gym.envs.rkward.adapter import CLIENT, PORT

import sciagent_gym  # noqa: F401

pytestmark = requires(tool="rkward")


@pytest.fixture(scope="module")
def env():
    e = gym.make("SciGUI-RKWard-v0", pool_size=0)
    yield e
    e.close()


def test_state_channel_reports_and_runs_r(env):
    env.reset(seed=0, options={"task": "rkward/survey-correlation"})
    base = env.unwrapped
    state = base.adapter.dump_state(base.provider)
    assert state["wd"].endswith("/work")
    survey = state["objects"]["survey"]
    assert survey["class"] == ["data.frame"] or survey["class"] == "data.frame"
    assert survey["nrow"] == base.task.gold["s"]["n"]
    out = base.adapter.run_script(base.provider, "ct <- cor.test(survey$income, "
                                                 "survey$satisfaction); unname(ct$estimate)")
    assert abs(float(out) - base.task.gold["s"]["pearson_r"]) < 1e-9
    state = base.adapter.dump_state(base.provider)
    assert state["objects"]["ct"]["class"] == "htest"


def test_a_failing_request_is_an_error_not_an_answer(env):
    env.reset(seed=1, options={"task": "rkward/survey-correlation"})
    base = env.unwrapped
    with pytest.raises(Exception, match="no_such_object|not found|failed"):
        base.adapter.run_script(base.provider, "no_such_object + 1", timeout=20)
    assert base.adapter.run_script(base.provider, "6 * 7") == "42"


def test_a_reply_without_the_nonce_is_refused(env):
    """The client keeps only a reply that carries the nonce it sent: a stand-in server in the
    program zone that answers with another nonce does not pass for RKWard's R."""
    env.reset(seed=0, options={"task": "rkward/survey-correlation"})
    base = env.unwrapped
    zone = base.provider.sandbox
    fake = (f"import json, socket\ns = socket.socket()\ns.setsockopt(socket.SOL_SOCKET, "
            f"socket.SO_REUSEADDR, 1)\ns.bind(('127.0.0.1', {PORT + 1}))\ns.listen(1)\n"
            "c, _ = s.accept()\nc.recv(65536)\n"
            "c.sendall(json.dumps({'nonce': 'forged', 'ok': True, 'out': 1}).encode() + b'\\n')\n")
    zone.spawn("fake-server", ["/usr/bin/python3", "-I", "-S", "-c", fake])
    try:
        res = call_and_collect(zone, "client", code=CLIENT,
                               args=[str(PORT + 1), "n0nce", "l " + b"1".hex()])
        assert res["returncode"] == 0, res
        reply = json.loads(res["output"])
        assert reply["ok"] is False and "nonce" in reply["error"]
    finally:
        zone.kill("fake-server")


def test_the_agent_zone_cannot_reach_the_channel(env):
    env.reset(seed=0, options={"task": "rkward/survey-correlation"})
    base = env.unwrapped
    probe = (f"bash -c '(exec 3<>/dev/tcp/127.0.0.1/{PORT}) 2>/dev/null "
             "&& echo REACHED || echo REFUSED'")
    out = base.provider.run_command(probe).output
    assert "REFUSED" in out and "REACHED" not in out
    inside = base.provider.sandbox.exec(shell=probe, timeout=20).output
    assert "REACHED" in inside  # the channel is there, in the program zone only


def test_state_dump_leaves_the_screen_as_it_was(env):
    assert_dump_leaves_screen(env, "rkward/trial-welch-ttest")
