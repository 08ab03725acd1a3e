"""Recorded runs on the real ImageJ exported as a Minari dataset and read back with Minari."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sciagent_gym.cli.main import main

minari = pytest.importorskip("minari", reason="install the [data] extra")
pytestmark = pytest.mark.e2e


def test_runs_become_a_minari_dataset(tmp_path, capsys):
    runs = tmp_path / "runs"
    assert main(["run", "--env", "SciGUI-ImageJ-v0", "--task", "imagej/count-nuclei",
                 "--policy", "oracle", "--out", str(runs / "oracle"), "-q"]) == 0
    assert main(["run", "--env", "SciGUI-ImageJ-v0", "--task", "imagej/count-nuclei",
                 "--policy", "random", "--max-steps", "3", "--seed", "5",
                 "--out", str(runs / "random"), "-q"]) == 0
    root = tmp_path / "datasets"
    assert main(["export-minari", str(runs / "oracle"), str(runs / "random"),
                 "--dataset-id", "sciagent/imagej-mixed-v0", "--size", "160x100",
                 "--root", str(root), "-q"]) == 0
    assert "2 episodes" in capsys.readouterr().out
    dataset = minari.load_dataset("sciagent/imagej-mixed-v0")
    episodes = list(dataset.iterate_episodes())
    assert [len(e.actions) for e in episodes][1] == 3
    for ep, run in zip(episodes, ("oracle", "random"), strict=True):
        [ep_dir] = [p for p in (runs / run).iterdir() if p.is_dir()]
        result = json.loads((ep_dir / "result.json").read_text())
        assert ep.observations.shape == (len(ep.actions) + 1, 100, 160, 3)
        assert ep.observations.dtype == np.uint8 and ep.observations.std() > 0
        assert ep.terminations[-1] and not ep.truncations.any()
        assert ep.actions[-1] == "DONE"
        assert ep.infos["score"][-1] == pytest.approx(result["score"])
    assert episodes[0].infos["score"][0] == 1.0
    assert json.loads(episodes[1].actions[0])[0]["type"]  # structured actions as JSON text
    assert main(["export-minari", str(runs / "oracle"), "--dataset-id", "x/y-v0",
                 "--size", "big", "--root", str(root)]) == 1
