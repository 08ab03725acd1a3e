"""Shared fixtures and the collection rule for the test suite (helpers live in tests/helpers.py).

The suite is ``tests/`` (the core) and each tool's own ``envs/<tool>/tests/`` (its spec, data
and adapter tests, beside the code they test). End-to-end tests drive real programs under Xvfb
and are marked ``e2e``: those under ``tests/e2e/`` and every ``*_e2e.py``; ``tests/unit/``
(the env's logic), ``tests/specs/`` and a tool's other tests (its specs and data) and
``tests/integration/`` (Ray, packaging, the suite itself) need no program. An e2e test is
skipped when the display programs or ImageJ (the tool the generic e2e tests use) are missing,
except under ``SCIAGENT_REQUIRE_APPS=1`` (CI), where a missing program fails it; tests of
another tool say so with ``helpers.requires``.
"""

from __future__ import annotations

import fcntl
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent / "tests"
# tests/helpers.py and the plugins beside it, for a tool's tests as for the core's
sys.path.insert(0, str(TESTS))

from helpers import DISPLAY_PROGRAMS, REQUIRE_APPS, missing_programs, tool_missing  # noqa: E402

from sciagent_gym.agents.scripted_server import ScriptedModelServer  # noqa: E402

E2E_DIR = TESTS / "e2e"
#: A test stuck past its timeout ends its worker with a stack dump, not the run (stuck_guard.py).
pytest_plugins = ["stuck_guard"]


def pytest_collection_modifyitems(config, items):
    missing = [*missing_programs(*DISPLAY_PROGRAMS), *tool_missing("imagej")]
    for item in items:
        path = Path(str(item.fspath))
        if E2E_DIR in path.parents or path.name.endswith("_e2e.py"):
            item.add_marker(pytest.mark.e2e)
        if missing and not REQUIRE_APPS and "e2e" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=f"not installed: {', '.join(missing)}"))


@pytest.fixture(scope="session", autouse=True)
def sb3_logs_in_the_session_tmp(tmp_path_factory):
    """stable-baselines3 makes a /tmp/SB3-<date> folder for every model's logger unless
    SB3_LOGDIR names one: the tests' models (and the examples they run) log into pytest's
    temporary tree instead, so a test run leaves nothing in /tmp."""
    import os

    old = os.environ.get("SB3_LOGDIR")
    os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3"))
    yield
    if old is None:
        os.environ.pop("SB3_LOGDIR", None)
    else:
        os.environ["SB3_LOGDIR"] = old


@pytest.fixture(scope="module")
def imagej_env():
    """One ImageJ env for a test module (the display is reused across resets), with the shell
    allowed whatever the task's modality, for the tests of CLI actions."""
    import gymnasium as gym

    import sciagent_gym  # noqa: F401

    env = gym.make("SciGUI-ImageJ-v0", render_mode="rgb_array", modality="gui+cli")
    yield env
    env.close()


@pytest.fixture(scope="module")
def one_vm_at_a_time(tmp_path_factory):
    """QEMU guests under TCG take both cores: modules that boot them take turns, also across
    pytest-xdist workers (an exclusive lock held for the module). The lock file lives in the
    run's pytest temp root, which the workers share (each has its own ``popen-gwN`` below it)
    and pytest prunes, not in /tmp itself."""
    with open(tmp_path_factory.getbasetemp().parent / "sciagent-tests-qemu.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


# -- a scripted model server for the prompt agent --------------------------------------------------

@pytest.fixture
def model_server():
    servers = []

    def make(script):
        servers.append(ScriptedModelServer(script))
        return servers[-1]

    yield make
    for s in servers:
        s.close()
