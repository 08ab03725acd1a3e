"""Each tool's audit (minutes of real program runs) runs once per test session, serially and
under the Makefile's xdist distribution: a check that re-ran it per test once made CI crawl."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from helpers import set_up_installs

from sciagent_gym.tools import discover

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"


def _dist_mode() -> str:
    return re.search(r"--dist (\w+)", (ROOT / "Makefile").read_text()).group(1)


@pytest.mark.parametrize("workers", [None, 2])
def test_each_tool_is_audited_once(workers, tmp_path):
    calls = tmp_path / "calls.txt"
    calls.touch()
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
            "count_audits", str(TESTS / "e2e" / "test_audit.py")]
    argv += ["-n", str(workers), "--dist", _dist_mode()] if workers else ["-p", "no:xdist"]
    # every tool, not CI's rotating sample (tests/rotation.py)
    env = {**os.environ, "AUDIT_CALLS": str(calls), "SCIAGENT_REQUIRE_APPS": "1",
           "SCIAGENT_AUDIT_ALL": "1",
           "PYTHONPATH": os.pathsep.join([str(TESTS / "fixtures" / "plugins"), str(TESTS)])}
    result = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=300)
    assert "failed" in result.stdout, result.stdout[-2000:] + result.stderr[-2000:]
    audited = Counter(calls.read_text().split())
    installed_by_set_up = {t for t in discover() if set_up_installs(t)}
    assert set(audited) == installed_by_set_up
    assert set(audited.values()) == {1}, audited
