"""Nothing left running: after close(), at interpreter exit, and when the interpreter is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import gymnasium as gym
import pytest
from helpers import our_processes

import sciagent_gym  # noqa: F401
from sciagent_gym import processes
from sciagent_gym.providers.local.sandbox import sweep_stale

pytestmark = pytest.mark.e2e


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    ppid = int(fh.read().split(")")[-1].split()[1])
            except OSError:
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.add(child)
            todo.append(child)
    return out


def _wait_gone(pids, timeout=5.0) -> set[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = {p for p in pids if _alive(p)}
        if not left:
            return set()
        time.sleep(0.05)
    return left


def test_close_ends_every_process():
    env = gym.make("SciGUI-ImageJ-v0", task="count-nuclei")
    env.reset(seed=0)
    provider = env.unwrapped.provider
    display = provider.display_name
    root = str(provider.sandbox.root)
    marker = provider._display.marker
    started = {p.pid for p in processes.live_processes()}
    tree = set(started)
    for pid in started:
        tree |= _descendants(pid)
    assert len(tree) >= 4  # Xvfb, openbox, the sandbox, ImageJ's JVM at least
    env.close()
    assert _wait_gone(tree) == set()
    assert our_processes(root) == []
    assert our_processes(marker) == []
    assert not os.path.exists(root)
    assert not os.path.exists(f"/tmp/.X11-unix/X{display[1:]}")


_CHILD = """
import sys, gymnasium as gym, sciagent_gym
env = gym.make("SciGUI-ImageJ-v0", task="count-nuclei")
env.reset(seed=0)
p = env.unwrapped.provider
print(p.display_name, p.sandbox.root, p._display.marker, flush=True)
if sys.argv[1] == "kill":
    import os, signal
    os.kill(os.getpid(), signal.SIGKILL)
if sys.argv[1] in ("term", "hup"):
    import time
    time.sleep(120)  # the test sends the signal while the env is open
"""


def _default_signals() -> None:
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def _mounted(path: str) -> bool:
    with open("/proc/self/mounts") as fh:
        return any(line.split()[1].startswith(path) for line in fh)


@pytest.mark.parametrize("how", ["exit", "term", "hup", "kill"])
def test_nothing_survives_the_interpreter(how):
    # the signals at their defaults, as a program started from a shell has them (a run under
    # nohup inherits SIGHUP ignored, which the package rightly leaves alone)
    child = subprocess.Popen([sys.executable, "-c", _CHILD, how], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, preexec_fn=_default_signals)
    try:
        line = child.stdout.readline()
        if how in ("term", "hup"):
            child.send_signal(signal.SIGTERM if how == "term" else signal.SIGHUP)
        _, err = child.communicate(timeout=120)
    finally:
        child.kill()
    expected = {"exit": 0, "term": 128 + signal.SIGTERM, "hup": 128 + signal.SIGHUP,
                "kill": -signal.SIGKILL}[how]
    assert child.returncode == expected, err
    display, root, marker = line.split()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (our_processes(root) or our_processes(marker)):
        time.sleep(0.1)
    assert our_processes(root) == []
    assert our_processes(marker) == []  # Xvfb and openbox
    if how == "kill":  # nothing can run in a SIGKILLed interpreter: the next start sweeps
        assert os.path.exists(root)
        assert root in sweep_stale()
    # a signal ends the interpreter through SystemExit: close() and atexit ran, so the
    # sandbox's folder and its tmpfs home are gone, not left for the next sweep
    assert not os.path.exists(root) and not _mounted(root)
