"""Env options on the real app: dense reward, binary reward, splits, hints."""

from __future__ import annotations

import gymnasium as gym
import pytest

import sciagent_gym  # noqa: F401
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
