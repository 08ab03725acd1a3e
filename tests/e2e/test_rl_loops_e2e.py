"""The RL users' loops on the real DS9: the toggle task wrapped for stable-baselines3 (SB3's
checker), Gymnasium's RecordEpisodeStatistics and RecordVideo, and a short PPO run of
examples/train_ppo.py (that it trains and reports, not that it reaches its target)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from helpers import requires

import sciagent_gym  # noqa: F401
from sciagent_gym.wrappers import ScreenshotObservation, TargetActions, instruction_features

pytestmark = [pytest.mark.timeout(600), requires(tool="ds9")]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TARGETS = {"colour bar": [(168, 207), (665, 233)], "magnifier": [(168, 207), (318, 233)]}


def _example(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # SubprocVecEnv pickles functions of the module by name
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def toggle_env():
    env = gym.make("SciGUI-DS9-v0", task="ds9/toggle-colorbar", reward="binary", max_steps=6,
                   pool_size=0, render_mode="rgb_array")  # 6: two 2-click macros + DONE
    yield env
    env.close()


def test_instruction_features_are_stable_and_tell_on_from_off():
    on = instruction_features("Turn the colour bar on, and change nothing else.", 32)
    off = instruction_features("Turn the colour bar off, and change nothing else.", 32)
    assert on.dtype == np.float32 and on.shape == (32,) and set(np.unique(on)) <= {0.0, 1.0}
    assert not np.array_equal(on, off)
    assert np.array_equal(on, instruction_features("TURN the colour bar ON and change "
                                                   "nothing else", 32))


def test_target_actions_reject_points_off_screen(toggle_env):
    with pytest.raises(ValueError, match="off the 1280x800 screen"):
        TargetActions(toggle_env, {"outside": [(1280, 10)]})
    with pytest.raises(ValueError, match="no points"):
        TargetActions(toggle_env, {"empty": []})
    wrapped = TargetActions(toggle_env, TARGETS)
    with pytest.raises(ValueError, match="outside Discrete"):
        wrapped.action(3)


def test_wrapped_toggle_env_passes_sb3_checker_and_solves_the_task(toggle_env):
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker",
                                      reason="install the [rl] extra")
    wrapped = ScreenshotObservation(TargetActions(toggle_env, TARGETS), size=(96, 60),
                                    grayscale=True, instruction_features=32)
    assert wrapped.action_space.n == 3 and wrapped.env.names[-1] == "DONE"
    sb3_checker.check_env(wrapped, warn=True)
    # The right decision from the variant's state: toggle only when it must change.
    for seed in range(4):
        obs, _ = wrapped.reset(seed=seed)
        assert obs["screenshot"].shape == (60, 96, 1) and obs["instruction"].shape == (32,)
        assert wrapped.observation_space.contains(obs)
        toggle = toggle_env.unwrapped.task.toggles[0]
        actions = [0, 2] if toggle.positive else [2]
        for action in actions:
            obs, reward, terminated, truncated, info = wrapped.step(action)
        assert terminated and reward == 1.0 and info["evaluation"]["success"]
        # The magnifier is a wrong move: "change nothing else".
        wrapped.reset(seed=seed)
        for action in [1, *actions]:
            _, reward, *_, info = wrapped.step(action)
        assert reward == 0.0 and not info["evaluation"]["success"]


def test_record_episode_statistics_and_record_video(toggle_env, tmp_path):
    pytest.importorskip("moviepy", reason="install the [rl] extra")
    from gymnasium.wrappers import RecordEpisodeStatistics, RecordVideo

    env = RecordVideo(RecordEpisodeStatistics(toggle_env), str(tmp_path / "video"),
                      episode_trigger=lambda i: True, disable_logger=True)
    try:
        for seed in (0, 1):
            env.reset(seed=seed)
            _, _, terminated, _, info = env.step("WAIT")
            _, _, terminated, _, info = env.step("DONE")
            assert terminated
            stats = info["episode"]
            assert stats["l"] == 2 and stats["r"] in (0.0, 1.0) and stats["t"] > 0
    finally:
        if env.recording:  # the last episode's clip is written when recording stops
            env.stop_recording()
    videos = sorted((tmp_path / "video").glob("*.mp4"))
    assert len(videos) == 2 and all(v.stat().st_size > 1000 for v in videos)


def test_train_ppo_example_trains_and_reports(tmp_path):
    pytest.importorskip("stable_baselines3", reason="install the [rl] extra")
    train_ppo = _example("train_ppo")
    metrics = train_ppo.main(["--timesteps", "32", "--n-envs", "1", "--max-steps", "3",
                              "--eval-episodes", "2", "--out", str(tmp_path)])
    assert metrics["timesteps"] >= 32 and metrics["test_episodes"] == 2
    assert 0.0 <= metrics["ppo_test_success"] <= 1.0
    assert 0.0 <= metrics["random_test_success"] <= 1.0
    assert metrics["heldout_task"] == "ds9/toggle-grid"
    assert 0.0 <= metrics["ppo_heldout_task_success"] <= 1.0
    assert 0.0 <= metrics["always_done_heldout_task_success"] <= 1.0
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert saved["curve"] and all(w in (0.0, 1.0) for _, w in saved["curve"])
    assert (tmp_path / "learning_curve.png").stat().st_size > 5000
    assert (tmp_path / "ppo_toggle.zip").is_file()


@pytest.fixture
def process_mark(monkeypatch) -> bytes:
    """A token in the environment that every process this test starts inherits, so that the
    leftover check sees this test's processes only (not a parallel test's)."""
    token = f"SCIAGENT_TEST_MARK={uuid.uuid4().hex}"
    monkeypatch.setenv("SCIAGENT_TEST_MARK", token.split("=", 1)[1])
    return token.encode()


def _marked_pids(mark: bytes) -> set[int]:
    """Live processes started under ``mark`` whose command line mentions sciagent
    (displays, sandboxes, programs)."""
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if b"sciagent" in (entry / "cmdline").read_bytes() and \
                        mark in (entry / "environ").read_bytes() and \
                        (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0] != "Z":
                    out.add(int(entry.name))
            except OSError:
                continue
    return out


def _no_processes_left(mark: bytes, timeout: float = 30.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while True:
        left = sorted(_marked_pids(mark))
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)


def test_pomdp_example_reports_what_the_screen_reveals(tmp_path, process_mark):
    pomdp = _example("pomdp_observability")
    result = pomdp.main(["--episodes", "3", "--max-steps", "4", "--out", str(tmp_path)])
    assert result["observations"] >= 6  # reset + steps with a state dump each
    saved = json.loads((tmp_path / "observability.json").read_text())
    assert set(saved["variables"]) == set(pomdp.VARIABLES)
    for stats in saved["variables"].values():
        assert 0.0 <= stats["aliased"] <= 1.0 and 0.0 <= stats["knn_accuracy"] <= 1.0
        assert sum(stats["values"].values()) == result["observations"]
    assert (tmp_path / "observability.png").stat().st_size > 5000
    assert _no_processes_left(process_mark) == []


def test_rllib_example_trains_with_two_env_runners(tmp_path, process_mark, monkeypatch,
                                                   request):
    pytest.importorskip("ray.rllib", reason="install the [ray] extra")
    # Ray's session directory follows RAY_TMPDIR: a short one of ours (its socket paths must
    # stay under 108 bytes, which pytest's tmp_path exceeds), removed after, not /tmp/ray
    ray_tmp = tempfile.mkdtemp(prefix="sag-ray-")
    request.addfinalizer(lambda: shutil.rmtree(ray_tmp, ignore_errors=True))
    monkeypatch.setenv("RAY_TMPDIR", ray_tmp)
    rllib_ppo = _example("rllib_ppo")
    summary = rllib_ppo.main(["--env-runners", "2", "--iterations", "1", "--batch", "32",
                              "--pool-size", "0", "--out", str(tmp_path)])
    [row] = summary["history"]
    assert row["env_steps"] >= 32
    assert json.loads((tmp_path / "rllib_history.json").read_text())["env_runners"] == 2
    assert _no_processes_left(process_mark) == []  # the runners closed their envs
