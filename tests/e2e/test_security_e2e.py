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
    assert report["total"] == sum(r.get("played", True) for r in report["tools"][0]["results"])
    return {r["attack"]: r for r in report["tools"][0]["results"]}


@pytest.fixture(scope="module")
def imagej_results() -> dict:
    return _play("imagej")


@pytest.fixture(scope="module")
def rotating_results() -> dict:
    return _play(rotating_tool())


#: Attacks known to break a tool, open in an issue (the README's threat model says so per
#: tool): expected to fail, strictly, so that a fix is noticed.
KNOWN_OPEN = {
    ("qgis", "console-rebind"): "issue 32 finding 4: QGIS's dump runs in its Python console's "
                                "interpreter",
    ("rkward", "console-rebind"): "issue 32 finding 4: RKWard's dump runs in the R session "
                                  "its console drives",
    ("ds9", "console-rebind"): "issue 32 finding 4: DS9 answers the dump with Tcl procedures "
                               "its tcl command can redefine",
    ("qupath", "answer-race"): "issue 32: QuPath's replies are files its JVM writes, not bound "
                               "to a secret, and a thread its Groovy console starts can replace "
                               "them",
}


def _check(tool: str, result: dict) -> None:
    if not result.get("played", True):
        pytest.skip(f"does not apply to {tool}: {result['detail']}")
    if (tool, result["attack"]) in KNOWN_OPEN and not result["held"]:
        pytest.xfail(KNOWN_OPEN[tool, result["attack"]])
    assert result["held"], f"{tool} {result['attack']}: {result['detail']}"
    assert (tool, result["attack"]) not in KNOWN_OPEN, "held now: drop it from KNOWN_OPEN"


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_attack_holds_on_imagej(imagej_results, attack):
    _check("imagej", imagej_results[attack])


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_attack_holds_on_the_rotating_tool(rotating_results, attack):
    _check(rotating_tool(), rotating_results[attack])


def test_rotation_covers_every_other_tool():
    start = datetime.date(2026, 1, 1)
    days = {rotating_tool(start + datetime.timedelta(days=i)) for i in range(len(ROTATING))}
    assert days == set(ROTATING)
