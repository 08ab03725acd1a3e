"""Sandboxes started ahead of need (``evaluation.warm``: ``start_sandboxed``, ``WarmReader``,
``run_sandboxed(warm=owner)``): each serves one request, one lost before use leaves the
request to a cold run, and closing (or dropping the owner) leaves no process. On the real
programs (marked e2e): the Veusz and PyMOL state dumps read by a warm reader are the dumps
the cold readers give."""

from __future__ import annotations

import copy
import gc
import os
import secrets
import signal
import tempfile
import threading
import time
from pathlib import Path

import gymnasium as gym
import pytest
from helpers import DISPLAY_PROGRAMS, requires

import sciagent_gym  # noqa: F401
from sciagent_gym import processes
from sciagent_gym.evaluation import isolated as iso
from sciagent_gym.isolation.bwrap import bwrap_problem

needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None,
                                 reason=f"no bubblewrap here: {bwrap_problem()}")

#: Waits on stdin, then answers with the length of its input and the input in capitals.
ECHO = ["/usr/bin/python3", "-I", "-c",
        "import sys\ndata = sys.stdin.buffer.read()\n"
        "print('ANSWER', len(data), data.decode().upper(), flush=True)\n"]


class Owner:
    """Stands for an env's provider: what a warm reader belongs to."""


def _gone(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state == "Z":  # exited, not yet reaped
            return True
        time.sleep(0.05)
    return False


def _pids(owner: object) -> list[int]:
    return [r._next.pid for r in iso.warm_readers(owner) if r._next is not None]


@needs_bwrap
def test_a_warm_sandbox_serves_one_request_and_leaves_nothing():
    warm = iso.start_sandboxed(ECHO)
    pid = warm.pid
    assert warm.alive()
    res = warm.run(b"hello", timeout=30)
    assert res is not None and not res.timed_out and res.returncode == 0
    assert "ANSWER 5 HELLO" in res.output
    assert not warm.alive() and _gone(pid)
    with pytest.raises(RuntimeError, match="one request"):
        warm.run(b"again")
    assert all(p.pid != pid for p in processes.live_processes())


@needs_bwrap
def test_each_request_gets_a_new_sandbox_and_the_next_is_started():
    owner = Owner()
    try:
        first = iso.run_sandboxed(ECHO, stdin=b"one", timeout=30, warm=owner)
        reader, = iso.warm_readers(owner)
        assert "ANSWER 3 ONE" in first.output and reader.last == "started"
        waiting = _pids(owner)
        assert len(waiting) == 1 and not _gone(waiting[0], timeout=0.2)
        second = iso.run_sandboxed(ECHO, stdin=b"two", timeout=30, warm=owner)
        assert "ANSWER 3 TWO" in second.output and reader.last == "warm"
        assert _gone(waiting[0])  # the one that served is gone; another waits
        assert _pids(owner) and _pids(owner) != waiting
    finally:
        iso.close_warm(owner)


@needs_bwrap
def test_an_episode_end_holds_the_next_start_back_until_the_reset_is_done():
    """defer_warm (the env, as an episode ends): the reader that serves the final dump starts
    no successor, which would compete with the reset's program start; prepare_warm (the
    env, once the reset is done) starts it."""
    owner = Owner()
    try:
        iso.run_sandboxed(ECHO, stdin=b"one", timeout=30, warm=owner)
        assert len(_pids(owner)) == 1
        iso.defer_warm(owner)
        res = iso.run_sandboxed(ECHO, stdin=b"final", timeout=30, warm=owner)
        assert "ANSWER 5 FINAL" in res.output and iso.warm_readers(owner)[0].last == "warm"
        assert _pids(owner) == []
        iso.prepare_warm(owner)
        assert len(_pids(owner)) == 1
        res = iso.run_sandboxed(ECHO, stdin=b"next", timeout=30, warm=owner)
        assert iso.warm_readers(owner)[0].last == "warm" and len(_pids(owner)) == 1
    finally:
        iso.close_warm(owner)


@needs_bwrap
def test_a_killed_warm_reader_falls_back_to_a_cold_run():
    owner = Owner()
    try:
        iso.run_sandboxed(ECHO, stdin=b"start", timeout=30, warm=owner)
        pid, = _pids(owner)
        os.killpg(pid, signal.SIGKILL)
        assert _gone(pid)
        res = iso.run_sandboxed(ECHO, stdin=b"cold", timeout=30, warm=owner)
        assert res.returncode == 0 and "ANSWER 4 COLD" in res.output
        assert iso.warm_readers(owner)[0].last == "lost"
        # and the next request finds a warm one again
        res = iso.run_sandboxed(ECHO, stdin=b"warm", timeout=30, warm=owner)
        assert "ANSWER 4 WARM" in res.output and iso.warm_readers(owner)[0].last == "warm"
    finally:
        iso.close_warm(owner)


@needs_bwrap
def test_a_warm_reader_killed_while_it_serves_is_replaced_by_a_cold_run():
    """Killed from outside after it was handed its request (not by the deadline): lost, so
    the request runs cold rather than failing."""
    slow = ["/usr/bin/python3", "-I", "-c",
            "import sys, time\ndata = sys.stdin.buffer.read()\ntime.sleep(1.0)\n"
            "print('ANSWER', data.decode(), flush=True)\n"]
    owner = Owner()
    try:
        iso.run_sandboxed(slow, stdin=b"x", timeout=30, warm=owner)
        pid, = _pids(owner)
        killer = threading.Timer(0.4, lambda: os.killpg(pid, signal.SIGKILL))
        killer.start()
        res = iso.run_sandboxed(slow, stdin=b"again", timeout=30, warm=owner)
        killer.join()
        assert res.returncode == 0 and "ANSWER again" in res.output
        assert iso.warm_readers(owner)[0].last == "lost"
    finally:
        iso.close_warm(owner)


@needs_bwrap
def test_the_deadline_still_applies_to_a_warm_reader():
    hang = ["/usr/bin/python3", "-I", "-c", "import sys, time\nsys.stdin.read()\ntime.sleep(60)\n"]
    owner = Owner()
    try:
        assert iso.run_sandboxed(hang, stdin=b"x", timeout=1.0, warm=owner).timed_out
        pid, = _pids(owner)
        t = time.monotonic()
        res = iso.run_sandboxed(hang, stdin=b"x", timeout=1.0, warm=owner)
        assert res.timed_out and iso.warm_readers(owner)[0].last == "warm"
        assert time.monotonic() - t < 5 and _gone(pid)
    finally:
        iso.close_warm(owner)


@needs_bwrap
def test_close_and_a_dropped_owner_leave_no_process():
    owner = Owner()
    iso.run_sandboxed(ECHO, stdin=b"a", timeout=30, warm=owner)
    pid, = _pids(owner)
    iso.close_warm(owner)
    assert _gone(pid) and iso.warm_readers(owner) == []
    # closed: a later request starts a new reader; dropping the owner ends what waits
    iso.run_sandboxed(ECHO, stdin=b"b", timeout=30, warm=owner)
    pid, = _pids(owner)
    del owner
    gc.collect()
    assert _gone(pid)
    assert all(p.pid != pid for p in processes.live_processes())


@needs_bwrap
def test_a_warm_reader_refuses_input_over_its_cap_and_files_go_cold():
    reader = iso.WarmReader(ECHO, max_stdin=4)
    try:
        assert reader.run(b"12345", timeout=30) is None and reader.last == "skipped"
        res = reader.run(b"1234", timeout=30)
        assert res is not None and "ANSWER 4 1234" in res.output
    finally:
        reader.close()
    assert reader._next is None
    assert reader.run(b"x", timeout=30) is None  # closed: serves nothing more


# -- the real programs -----------------------------------------------------------------------

def _wait_warm() -> None:
    """Let the waiting reader finish starting (either way the answer is the same)."""
    time.sleep(3.0)


@pytest.mark.e2e
@requires(*DISPLAY_PROGRAMS, tool="veusz")
def test_veusz_warm_dump_is_the_cold_dump():
    from sciagent_gym.envs.veusz import getters
    from sciagent_gym.envs.veusz.adapter import SERIALIZE_CODE

    env = gym.make("SciGUI-Veusz-v0", pool_size=0)
    waiting: list[int] = []
    try:
        env.reset(seed=0, options={"task": "veusz/conductivity-log-axis"})
        base = env.unwrapped
        adapter, provider = base.adapter, base.provider
        adapter.run_script(provider, "Set('/page1/graph1/y/log', True)")
        out = adapter._request(provider, SERIALIZE_CODE, timeout=30.0)
        with tempfile.TemporaryDirectory() as tmp:
            doc = Path(tmp) / "document.vsz"
            doc.write_text(out["vsz"])
            cold = copy.deepcopy(getters.load_document(doc, []))  # today's path, files=
        getters._CACHE.clear()
        assert getters.load_live_document(out["vsz"], provider) == cold
        getters._CACHE.clear()
        _wait_warm()
        assert getters.load_live_document(out["vsz"], provider) == cold
        assert iso.warm_readers(provider)[0].last == "warm"
        # the dump itself goes through the warm reader and reports what the cold one does
        getters._CACHE.clear()
        state = adapter.dump_state(provider)
        assert iso.warm_readers(provider)[0].last == "warm"
        assert state["widgets"] == cold["widgets"]
        assert state["widgets"]["/page1/graph1/y"]["settings"]["log"] is True
        # a killed warm reader: the dump falls back to a cold run, same answer
        pid, = _pids(provider)
        os.killpg(pid, signal.SIGKILL)
        assert _gone(pid)
        getters._CACHE.clear()
        again = adapter.dump_state(provider)
        assert iso.warm_readers(provider)[0].last == "lost" and again == state
        waiting = _pids(provider)
        assert waiting
    finally:
        base = adapter = provider = None  # the env's provider is the readers' owner
        env.close()
    assert all(_gone(pid) for pid in waiting)  # closing the env ended the waiting reader


@pytest.mark.e2e
@requires(*DISPLAY_PROGRAMS, tool="pymol")
def test_pymol_warm_dump_is_the_cold_dump():
    from sciagent_gym.envs.pymol.adapter import SAVE_SESSION, SESSION_CLIENT, STATE_CODE
    from sciagent_gym.envs.pymol.session import (
        MAX_SESSION_BYTES,
        dump_from_session,
        session_bytes,
    )

    env = gym.make("SciGUI-PyMOL-v0", pool_size=0)
    waiting: list[int] = []
    try:
        env.reset(seed=0, options={"task": "pymol/color-chain"})
        base = env.unwrapped
        adapter, provider = base.adapter, base.provider
        adapter.run_script(provider, "show sticks, resi 1-5")
        path = f"{provider.paths['tmp']}/sciagent-pymol-session-{secrets.token_hex(8)}.pkl"
        adapter._request(provider, SAVE_SESSION.format(path=path), timeout=20.0)
        data = session_bytes(adapter.call_client(
            provider, "pymol-session-test", code=SESSION_CLIENT,
            args=[path, str(MAX_SESSION_BYTES)], timeout=20.0, error=RuntimeError))
        cold = dump_from_session(data, STATE_CODE)  # today's path, files=
        assert dump_from_session(data, STATE_CODE, warm=provider) == cold
        _wait_warm()
        assert dump_from_session(data, STATE_CODE, warm=provider) == cold
        assert iso.warm_readers(provider)[0].last == "warm"
        state = adapter.dump_state(provider)
        assert iso.warm_readers(provider)[0].last == "warm" and state == cold
        pid, = _pids(provider)
        os.killpg(pid, signal.SIGKILL)
        assert _gone(pid)
        assert adapter.dump_state(provider) == cold
        assert iso.warm_readers(provider)[0].last == "lost"
        waiting = _pids(provider)
        assert waiting
    finally:
        base = adapter = provider = None  # the env's provider is the readers' owner
        env.close()
    assert all(_gone(pid) for pid in waiting)
