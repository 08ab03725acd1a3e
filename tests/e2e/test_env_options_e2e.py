"""Env options on the real app: dense reward, binary reward, splits, hints."""

from __future__ import annotations

import time

import gymnasium as gym
import pytest

import sciagent_gym  # noqa: F401
from sciagent_gym.evaluation.getters.ocr import normalize_ocr, ocr_region
from sciagent_gym.evaluation.getters.pixels import crop
from sciagent_gym.tasks.steps import await_window
from sciagent_gym.tasks.task import split_of

pytestmark = pytest.mark.e2e

COUNT_MACRO = ('selectImage("nuclei.tif"); setAutoThreshold("Otsu dark"); '
               'run("Set Measurements...", "area mean centroid redirect=None decimal=3"); '
               'run("Analyze Particles...", "size={min_size}-Infinity display clear"); '
               'saveAs("Results", "{work}/nuclei_results.csv");')


def _solve_by_macro(env) -> None:
    base = env.unwrapped
    code = COUNT_MACRO.format(min_size=base.task.params["min_size"],
                              work=base.provider.paths["work"])
    base.adapter.run_script(base.provider, code)


def test_dense_and_binary_rewards():
    results = {}
    for mode in ("dense", "binary"):
        env = gym.make("SciGUI-ImageJ-v0", task="count-nuclei", reward=mode)
        try:
            env.reset(seed=2)
            r0 = env.step("WAIT")[1]
            _solve_by_macro(env)
            r1 = env.step("WAIT")[1]
            _, r2, terminated, _, info = env.step("DONE")
            results[mode] = (r0, r1, r2, info["evaluation"]["score"])
        finally:
            env.close()
    r0, r1, r2, score = results["dense"]
    assert r0 == 0.0 and r1 > 0.5 and score == 1.0
    assert abs((r0 + r1 + r2) - score) < 1e-9
    assert results["binary"][:2] == (0.0, 0.0) and results["binary"][2] == 1.0


def test_splits_and_hints(imagej_env):
    env = gym.make("SciGUI-ImageJ-v0", split="test", hints=True)
    try:
        for seed in range(3):
            _, info = env.reset(seed=seed)
            assert info["split"] == "test" == split_of(info["task_id"], info["variant"])
            spec = env.unwrapped.task.spec
            if spec.hints:
                assert "\nHint: " in info["instruction"]
    finally:
        env.close()
    _, info = imagej_env.reset(seed=0)
    assert "Hint:" not in info["instruction"]
    fractions = [split_of("imagej/x", v) for v in range(2000)]
    assert abs(fractions.count("train") / 2000 - 0.8) < 0.03
    assert abs(fractions.count("test") / 2000 - 0.1) < 0.02
    with pytest.raises(ValueError, match="split"):
        gym.make("SciGUI-ImageJ-v0", split="holdout")


def test_window_ocr_and_command_getters_on_the_real_app(imagej_env):
    from sciagent_gym.evaluation import Criterion, evaluate

    imagej_env.reset(seed=0, options={"task": "count-nuclei"})
    base = imagej_env.unwrapped
    imagej_env.step("pyautogui.hotkey('ctrl', 'shift', 't')")   # Image > Adjust > Threshold
    # The dialog paints its controls in bursts after it maps (under load, gaps longer than the
    # settle window), so the test waits (as an agent would, with WAIT steps) until its text is
    # in the observation; the final state scores the last observed frame, and the criteria
    # below must read the text from it through the evaluation path.
    await_window(base.provider, "^Threshold$", focused=True)
    threshold = [w for w in base.provider.windows() if w.title == "Threshold"]
    assert threshold, [w.title for w in base.provider.windows()]
    t = threshold[0]
    deadline = time.monotonic() + 20
    frame = base._frame
    while "dark background" not in (seen := normalize_ocr(ocr_region(
            crop(frame, [t.x, t.y, t.width, t.height])))):
        assert time.monotonic() < deadline, f"the Threshold dialog never showed its text: {seen!r}"
        frame = imagej_env.step("WAIT")[0]["screenshot"]
    criteria = [Criterion.from_dict(d) for d in [
        {"name": "threshold window", "getter": {"fn": "window_exists", "title": "Threshold"},
         "check": {"op": "is_true"}},
        {"name": "no dialog yet", "getter": {"fn": "modal_dialog"}, "check": {"op": "is_false"}},
        {"name": "ocr", "getter": {"fn": "screen_contains", "text": "Dark background",
                                   "region": [t.x, t.y, t.width, t.height]},
         "check": {"op": "is_true"}},
        {"name": "checksum", "getter": {"fn": "command_output",
                                        "command": "sha256sum nuclei.tif | cut -c1-64"},
         "check": {"op": "equals", "expected": base.task.input_hashes["nuclei.tif"]}},
    ]]
    base._criteria = base.task.criteria() + criteria
    state = base.collect_final_state("done")
    results = {c.name: c for c in evaluate(criteria, state).criteria}
    assert all(c.passed for c in results.values()), {k: v.detail for k, v in results.items()}
    imagej_env.step("pyautogui.hotkey('ctrl', 'o')")             # File > Open: a dialog
    state = base.collect_final_state("done")
    dialog = Criterion.from_dict({"name": "dialog", "getter": {"fn": "modal_dialog"},
                                  "check": {"op": "is_true"}})
    assert evaluate([dialog], state).success


def test_resized_observation_and_step_timings():
    env = gym.make("SciGUI-ImageJ-v0", task="count-nuclei", obs_size=(320, 200), pool_size=0,
                   render_mode="rgb_array")
    try:
        obs, _ = env.reset(seed=0)
        assert obs["screenshot"].shape == (200, 320, 3)
        assert env.observation_space["screenshot"].shape == (200, 320, 3)
        assert env.render().shape == (800, 1280, 3)
        obs, _, _, _, info = env.step("pyautogui.click(1240, 780)")   # full-screen pixels
        assert "action_error" not in info and env.observation_space.contains(obs)
        t = dict(info["timings"])
        assert set(t) == {"parse", "execute", "settle", "grab", "total"}
        assert 0 < t["grab"] < t["total"] and t["settle"] > 0
    finally:
        env.close()


def test_expose_state_puts_the_program_state_in_info_only():
    env = gym.make("SciGUI-ImageJ-v0", task="count-nuclei", expose_state=True, pool_size=0)
    try:
        obs, info = env.reset(seed=0)
        assert isinstance(info["state"], dict) and info["state"]  # ImageJ's own dump
        assert set(obs) == {"screenshot", "instruction", "terminal"}  # not in the observation
        _, _, _, _, info = env.step("pyautogui.press('escape')")
        assert isinstance(info["state"], dict)
        assert info["parsed"] == [{"type": "key", "key": "escape", "presses": 1}]
    finally:
        env.close()


def test_state_is_not_exposed_by_default(imagej_env):
    _, info = imagej_env.reset(seed=0)
    assert "state" not in info
    _, _, _, _, info = imagej_env.step("pyautogui.click(5000, 5)")
    assert info["action_error"] and info["parsed"] == [] and "state" not in info
