"""The stuck-test guard (tests/stuck_guard.py): a test SIGALRM cannot reach fails, named and
with its stacks, and the run goes on, where without the guard it would hang the run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]

BLOCKED = """
import signal, time

def test_blocked():
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])  # pytest-timeout's signal
    time.sleep(90)

def test_after():
    pass
"""


@pytest.mark.parametrize("workers", [[], ["-n", "1"]], ids=["in-process", "xdist"])
def test_a_test_stuck_past_its_timeout_is_named_and_the_run_ends(tmp_path, workers):
    (tmp_path / "test_blocked.py").write_text(BLOCKED)
    env = {**os.environ, "PYTHONPATH": str(TESTS), "SCIAGENT_STUCK_MARGIN": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "stuck_guard", "-p", "no:cacheprovider",
         "--timeout", "1", *workers, "test_blocked.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert "!! stuck: test_blocked.py::test_blocked" in out.stderr + out.stdout
    assert "in test_blocked" in out.stderr + out.stdout  # the stuck thread's stack
    if workers:  # xdist reports it and a new worker runs the rest
        assert "1 failed, 1 passed" in out.stdout, out.stdout[-2000:]
    else:
        assert out.returncode == 70, out.returncode
