"""``sciagent-gym replay``: recorded episodes re-executed on the real ImageJ reach the same
score; a tampered trajectory does not, and says so with exit code 1."""

from __future__ import annotations

import json

import pytest

from sciagent_gym.cli.main import main
from sciagent_gym.runs.replay import episode_dirs, replay_run

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    assert main(["run", "--env", "SciGUI-ImageJ-v0", "--task", "imagej/count-nuclei",
                 "--policy", "oracle", "--episodes", "1", "--out", str(out / "oracle"),
                 "-q"]) == 0
    assert main(["run", "--env", "SciGUI-ImageJ-v0", "--task", "imagej/count-nuclei",
                 "--policy", "random", "--max-steps", "4", "--seed", "3", "--episodes", "1",
                 "--out", str(out / "random"), "-q"]) == 0
    return out


def test_oracle_and_random_episodes_replay_to_the_same_score(run_dir, capsys):
    results = replay_run(run_dir / "oracle") + replay_run(run_dir / "random")
    assert [r.error for r in results] == [None, None]
    assert results[0].recorded_score == 1.0 and results[0].same
    assert results[1].same, results[1]
    assert results[1].steps == 4  # three random actions and the final DONE
    assert main(["replay", str(run_dir / "oracle")]) == 0
    assert "1/1 episodes reach the recorded score again" in capsys.readouterr().out


def test_tampered_trajectory_is_reported(run_dir, tmp_path, capsys):
    [ep] = episode_dirs(run_dir / "oracle")
    lines = (ep / "trajectory.jsonl").read_text().splitlines()
    scripted = [x for x in lines if '"scripted"' in x]
    assert scripted, "the oracle's macro steps are recorded between the actions"
    bad = tmp_path / "ep"
    bad.mkdir()
    (bad / "result.json").write_text((ep / "result.json").read_text())
    (bad / "trajectory.jsonl").write_text("\n".join(x for x in lines if x not in scripted))
    assert main(["replay", str(bad), "--json"]) == 1
    [row] = json.loads(capsys.readouterr().out)
    assert row["same"] is False and row["replayed_score"] < 1.0
    (bad / "trajectory.jsonl").write_text('{"action": "DONE"}\n{not json\n')
    with pytest.raises(ValueError, match="line 2"):
        replay_run(bad)
