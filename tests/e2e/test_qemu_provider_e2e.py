"""``provider="qemu"`` end to end: the ImageJ guest (built and its start state saved once, both
cached on this machine), an oracle episode scoring 1.0, and a ``loadvm`` reset proven by the
screen and by ImageJ's own state to bring everything back; two envs side by side."""

from __future__ import annotations

import time

import gymnasium as gym
import numpy as np
import pytest
from helpers import REQUIRE_APPS, our_processes
from test_qemu_vm_e2e import _missing

import sciagent_gym  # noqa: F401
from sciagent_gym.providers.qemu.build import build_image
from sciagent_gym.tasks.steps import run_steps

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900),
              pytest.mark.usefixtures("one_vm_at_a_time")]


@pytest.fixture(scope="module")
def qemu_env():
    missing = _missing()
    if missing and not REQUIRE_APPS:
        pytest.skip(f"cannot build or boot a guest here: {missing}")
    build_image("imagej", progress=False)
    env = gym.make("SciGUI-ImageJ-v0", provider="qemu")
    env.unwrapped._ensure_provider()
    yield env
    vm_dir = env.unwrapped.provider.vm.directory
    env.close()
    assert not vm_dir.exists() and our_processes(str(vm_dir)) == []


def _state(env) -> dict:
    base = env.unwrapped
    return base.adapter.dump_state(base.provider)


def test_oracle_then_loadvm_restores_screen_and_program_state(qemu_env):
    env = qemu_env
    provider = env.unwrapped.provider
    assert provider.accel in ("kvm", "tcg")
    first, info = env.reset(seed=3, options={"task": "measure-region-mean"})
    assert info["timings"]["restore"] > 0
    start_state = _state(env)
    opened = list(env.unwrapped.task.spec.open)
    assert start_state["image_titles"] == opened and start_state["n_images"] == len(opened)

    run_steps(env, env.unwrapped.task.steps("oracle"))
    assert env.unwrapped.evaluation.score == 1.0, env.unwrapped.evaluation.to_dict()
    after = _state(env)
    assert after != start_state  # the oracle left a selection, a Results table, ...

    again, _ = env.reset(seed=3, options={"task": "measure-region-mean"})
    assert np.array_equal(first["screenshot"], again["screenshot"])
    assert _state(env) == start_state
    # The work directory went back too: only the staged input, no saved results.
    listing = provider.run_command("ls").output.split()
    assert listing == sorted(opened)


def test_gui_actions_and_failed_episode_in_the_vm(qemu_env):
    env = qemu_env
    env.reset(seed=0, options={"task": "count-nuclei"})
    obs, _, _, _, info = env.step("pyautogui.click(294, 52)")  # the Analyze menu opens
    assert "action_error" not in info
    _, reward, terminated, _, info = env.step("DONE")
    assert terminated and reward == 0.0 and info["evaluation"]["success"] is False


def test_two_envs_side_by_side_from_one_image(qemu_env):
    """Each env boots its own VM on its own overlay of the one base image and saved state."""
    other = gym.make("SciGUI-ImageJ-v0", provider="qemu")
    try:
        t0 = time.monotonic()
        obs_b, _ = other.reset(seed=0, options={"task": "count-nuclei"})
        obs_a, _ = qemu_env.reset(seed=0, options={"task": "count-nuclei"})
        print(f"\nsecond env up and reset in {time.monotonic() - t0:.1f} s")
        a, b = qemu_env.unwrapped.provider, other.unwrapped.provider
        assert a.vm.host_port != b.vm.host_port and a.vm.directory != b.vm.directory
        assert a.vm.image.disk == b.vm.image.disk
        assert np.array_equal(obs_a["screenshot"], obs_b["screenshot"])
        b.run_command("echo only-in-b > note.txt")
        assert "note.txt" not in a.run_command("ls").output
    finally:
        b_dir = other.unwrapped.provider.vm.directory
        other.close()
    assert not b_dir.exists() and our_processes(str(b_dir)) == []
