"""A program that dies before its window is up is started once more from the snapshot, and the
crash is counted (``slot.start_crashes``, ``info["timings"]["start_crashes"]``); one that dies
every time is an AppCrashedError carrying its output."""

from __future__ import annotations

import pytest
from helpers import requires
from test_agent_zone_program_e2e import env  # noqa: F401 (the fixture tool, pool off)

from sciagent_gym.errors import AppCrashedError

pytestmark = [pytest.mark.e2e, requires("xmessage", "Xvfb", "openbox", "bwrap")]
DIE = ["sh", "-c", "echo dying at start; exit 3"]


def test_a_start_up_crash_is_started_again_and_counted(env, monkeypatch):  # noqa: F811
    real = env.adapter.launch_argv
    calls = []

    def launch(provider, task):
        calls.append(task.spec.id)
        return DIE if len(calls) == 1 else real(provider, task)

    monkeypatch.setattr(env.adapter, "launch_argv", launch)
    _, info = env.reset(seed=0)
    slot = env.provider._slot
    assert len(calls) == 2 and slot.app_running()
    assert len(slot.start_crashes) == 1 and "dying at start" in slot.start_crashes[0]
    assert info["timings"]["start_crashes"] == 1.0


def test_a_program_that_always_dies_is_an_error(env, monkeypatch):  # noqa: F811
    monkeypatch.setattr(env.adapter, "launch_argv", lambda provider, task: DIE)
    with pytest.raises(AppCrashedError, match="dying at start"):
        env.reset(seed=0)
    assert len(env.provider._slot.start_crashes) == 2
