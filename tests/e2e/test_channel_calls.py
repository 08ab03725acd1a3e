"""The sandbox helper's ``call``: a channel client's secrets on no command line, its memory and
pipes closed to the rest of the zone, its reply back through the helper, and no module or
startup file from the work directory picked up (issue 32, findings 1 and 2)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from helpers import collected

from sciagent_gym.evaluation.isolated import run_sandboxed
from sciagent_gym.providers.local import sandbox as sb

pytestmark = pytest.mark.skipif(sb.bwrap_problem() is not None,
                                reason=f"bubblewrap cannot isolate: {sb.bwrap_problem()}")

SECRET = "c0ffee-5ecret-4242"

#: Waits (for up to 20 s) until told to finish through the zone's /tmp, then prints its arguments.
SLOW_CLIENT = """
import os, sys, time
deadline = time.monotonic() + 20
while not os.path.exists("/tmp/go") and time.monotonic() < deadline:
    time.sleep(0.02)
print("reply:" + ",".join(sys.argv[1:]))
"""


@pytest.fixture
def zone():
    box = sb.Sandbox(":0", "/nonexistent", "bwrap")
    box.show_display = False
    box.start()
    try:
        yield box
    finally:
        box.close()


def _plant(zone: sb.Sandbox, marker: str) -> Path:
    """Modules and startup files a hostile agent leaves in the work directory: each one that
    runs appends to ``marker`` there. Returns the marker's host path."""
    work = zone.host_work
    if os.geteuid() == 0:  # as in an env: the zone may write its work directory
        os.chown(work, zone.identity.uid, zone.identity.gid)
    code = f"open({zone.work + '/' + marker!r}, 'a').write(__name__ + '\\n')\n"
    for name in ("json.py", "socket.py", "time.py", "sitecustomize.py", "usercustomize.py",
                 "xmlrpc/client.py", "xmlrpc/__init__.py"):
        (work / name).parent.mkdir(exist_ok=True)
        (work / name).write_text(code)
    return work / marker


def test_python_client_reply_comes_back_with_its_arguments_on_no_command_line(zone):
    pid = zone.call("c1", code=SLOW_CLIENT, args=["a", SECRET])
    seen = zone.exec(shell="for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; "
                           "cat $p/environ 2>&1; done").output
    assert SECRET not in seen, "a client's argument is readable by the zone"
    # the forked client is non-dumpable: its fds, memory and environment are closed to the zone
    probe = zone.exec(shell=f"ls -l /proc/{pid}/fd 2>&1; head -c 1 /proc/{pid}/mem 2>&1; "
                            "true").output
    assert "Permission denied" in probe, probe
    zone.exec(shell="touch /tmp/go")
    state = collected(zone, "c1")
    assert state["returncode"] == 0 and state["output"] == f"reply:a,{SECRET}\n"


def test_program_client_gets_stdin_and_its_stdout_is_the_reply(zone):
    zone.call("c2", argv=["sh", "-c", "read -r line; echo \"got $line\"; exit 3"],
              stdin=f"{SECRET}\nrest")
    state = collected(zone, "c2")
    assert state == {"done": True, "returncode": 3, "output": f"got {SECRET}\n"}


def test_clients_run_outside_the_work_directory_and_import_nothing_planted(zone):
    marker = _plant(zone, "PLANTED")
    zone.call("c3", code="import json, socket, xmlrpc.client, os\n"
                         "print(os.getcwd(), json.dumps([1]))", args=[])
    state = collected(zone, "c3")
    assert state["returncode"] == 0 and state["output"] == "/tmp [1]\n"
    # a program client started through a shell, with python -I as every client uses it
    zone.call("c4", argv=["sh", "-c", "python3 -I -S -c 'import json, xmlrpc.client; "
                                      "print(json.dumps(2))'"])
    assert collected(zone, "c4")["output"] == "2\n"
    assert not marker.exists(), marker.read_text()


def test_a_planted_module_would_run_without_the_defence(zone):
    """The same plant against the old way (python3 -S -c started in the work directory) runs:
    the test above would catch a regression."""
    marker = _plant(zone, "PLANTED")
    zone.exec(shell="python3 -S -c 'import json' 2>/dev/null; true")
    assert marker.read_text() == "json\n"


def test_a_killed_call_ends_its_group_and_is_forgotten(zone):
    zone.call("c5", argv=["sh", "-c", "sleep 30 & sleep 30"])
    time.sleep(0.2)
    zone.kill("c5")
    assert zone.exec(shell="pgrep -x sleep || echo none").output.strip() == "none"
    assert zone.collect("c5") == {"done": True, "returncode": None, "output": None}


def test_an_oversized_reply_is_refused_not_truncated(zone):
    zone.call("c6", argv=["sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' a"])
    state = collected(zone, "c6")
    assert state["output"] is None and "passed" in state["error"]


def test_the_hosts_environment_shows_in_no_process_of_a_zone(monkeypatch):
    """bubblewrap's pid 1 in a zone keeps the environment it was started with, readable by
    the zone in /proc/1/environ: a host variable (an agent's API key) must not be there."""
    canary = "sk-canary-" + os.urandom(8).hex()
    monkeypatch.setenv("SCIAGENT_TEST_API_KEY", canary)
    owner = sb.Sandbox(":0", "/nonexistent", "bwrap")
    owner.show_display = False
    agent = owner.agent_zone()
    agent.show_display = False
    read_all = "for p in /proc/[0-9]*; do cat $p/environ $p/cmdline 2>/dev/null; done"
    try:
        for zone in (owner, agent):
            zone.start()
            assert canary not in zone.exec(shell=read_all).output
    finally:
        agent.close()
        owner.close()
    assert canary not in run_sandboxed(["/bin/sh", "-c", read_all]).output
