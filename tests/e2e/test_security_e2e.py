"""The hostile-agent catalogue (sciagent_gym.runs.attacks) against real programs, a test each.

CI plays the whole catalogue through the command users run, ``sciagent-gym audit --attacks``,
on ImageJ and on one more tool that rotates by day (the full table over every tool is in the
README, with the command): one program start per tool serves every attack.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys

import pytest
from helpers import runnable_tools

from sciagent_gym.runs.attacks import ATTACKS

pytestmark = pytest.mark.e2e

#: Every other tool this machine runs (or CI requires), a new tool folder included.
ROTATING = tuple(t for t in runnable_tools() if t != "imagej")


def rotating_tool(day: datetime.date | None = None) -> str:
    """The second tool of today's run: each of the others in turn, one a day."""
    day = day or datetime.date.today()
    return ROTATING[day.toordinal() % len(ROTATING)]


def _play(tool: str) -> dict:
    res = subprocess.run([sys.executable, "-m", "sciagent_gym.cli.main", "audit", "--attacks",
                          "--tool", tool, "--json"], capture_output=True, text=True,
                         timeout=1200)
    assert res.stdout.strip(), res.stderr[-2000:]
    report = json.loads(res.stdout)
    assert res.returncode == (0 if report["held"] == report["total"] else 1)
    return {r["attack"]: r for r in report["tools"][0]["results"]}


@pytest.fixture(scope="module")
def imagej_results() -> dict:
    return _play("imagej")


@pytest.fixture(scope="module")
def rotating_results() -> dict:
    return _play(rotating_tool())


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_attack_holds_on_imagej(imagej_results, attack):
    result = imagej_results[attack]
    assert result["held"], f"{attack}: {result['detail']}"


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_attack_holds_on_the_rotating_tool(rotating_results, attack):
    result = rotating_results[attack]
    assert result["held"], f"{rotating_tool()} {attack}: {result['detail']}"


def test_rotation_covers_every_other_tool():
    start = datetime.date(2026, 1, 1)
    days = {rotating_tool(start + datetime.timedelta(days=i)) for i in range(len(ROTATING))}
    assert days == set(ROTATING)
