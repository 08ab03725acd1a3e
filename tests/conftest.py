"""Shared fixtures. End-to-end tests drive the real ImageJ under Xvfb.

When the programs are missing the e2e tests are skipped with the reason, except when
``SCIAGENT_REQUIRE_APPS=1`` (set by CI): then a missing program is a failure, so a CI run can
never report skipped end-to-end checks as passing.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from pathlib import Path

import pytest

REQUIRE_APPS = os.environ.get("SCIAGENT_REQUIRE_APPS") == "1"


def _missing_programs() -> list[str]:
    missing = [p for p in ("Xvfb", "openbox", "java") if shutil.which(p) is None]
    if not Path("/usr/share/java/ij.jar").exists():
        missing.append("imagej")
    return missing


def pytest_collection_modifyitems(config, items):
    missing = _missing_programs()
    if not missing or REQUIRE_APPS:  # under CI a missing program must fail the tests
        return
    for item in items:
        if "e2e" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=f"programs not installed: {missing}"))


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
def one_vm_at_a_time():
    """QEMU guests under TCG take both cores: modules that boot them take turns, also across
    pytest-xdist workers (an exclusive lock held for the module)."""
    with open(Path(tempfile.gettempdir()) / "sciagent-tests-qemu.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def our_processes(marker: str) -> list[str]:
    """Live processes whose command line or environment mention ``marker`` (a path)."""
    found = []
    needle = marker.encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            if stat.rsplit(")", 1)[-1].split()[0] == "Z":
                continue
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
            env = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if needle in raw or needle in env:
            cmd = raw.replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{pid}: {cmd}")
    return found


def step_until_changed(env, action, before, waits: int = 8):
    """Step ``action``, then WAIT (as an agent would) until the observation differs from
    ``before``; returns the last observation and the action step's ``info``.

    The step returns once the screen is quiet for the settle window (0.15 s); under load a
    program can take longer than that to start reacting (a menu that pops up 0.3 s after the
    click), and the change then shows in a later observation, not in this one."""
    import numpy as np

    obs, _, _, _, info = env.step(action)
    for _ in range(waits):
        if not np.array_equal(obs["screenshot"], before):
            break
        obs = env.step("WAIT")[0]
    return obs, info


def assert_dump_leaves_screen(env, task: str) -> None:
    """The state dump (``expose_state``, app-state getters) reads the program through its
    scripting channel; it must not change what the agent sees (DS9 once opened its Contour
    Parameters dialog to answer a query). A blinking caret's few pixels are tolerated."""
    from sciagent_gym.controller.settle import changed_pixels

    obs, _ = env.reset(seed=0, options={"task": task})
    base = env.unwrapped
    titles = sorted(w.title for w in base.provider.windows())
    base.adapter.dump_state(base.provider)
    after = base.provider.wait_settled()
    assert sorted(w.title for w in base.provider.windows()) == titles
    assert changed_pixels(obs["screenshot"], after) <= 64


def assert_same_frames(a, b, tmp_path, names=("first", "again"), context: str = "") -> None:
    """Pixel-equal frames, or a failure that says where they differ, with both saved as PNGs
    in ``tmp_path`` (under ``names``) to look at."""
    import numpy as np
    from PIL import Image

    diff = np.any(a != b, axis=2)
    if diff.any():
        ys, xs = np.nonzero(diff)
        Image.fromarray(a).save(tmp_path / f"{names[0]}.png")
        Image.fromarray(b).save(tmp_path / f"{names[1]}.png")
        pytest.fail(f"{context}{int(diff.sum())} pixels differ in x {xs.min()}..{xs.max()}, "
                    f"y {ys.min()}..{ys.max()}; frames in {tmp_path}")
