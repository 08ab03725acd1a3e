"""A prompt agent (the ``vlm`` policy) against a scripted model server drives the real env."""

from __future__ import annotations

import json
from pathlib import Path

from sciagent_gym.cli.main import main


def test_vlm_policy_runs_the_real_env_and_writes_a_run_dir(model_server, tmp_path, capsys):
    server = model_server([
        (200, "I will click the image.\n```python\npyautogui.click(300, 300)\n```"),
        (200, "```python\npyautogui.frobnicate()\n```"),
        (503, ""),
        (200, "DONE"),
    ])
    out = tmp_path / "run"
    rc = main(["run", "--env", "SciGUI-ImageJ-v0", "--task", "imagej/count-nuclei",
               "--policy", "vlm", "--base-url", server.url, "--model", "scripted",
               "--episodes", "1", "--out", str(out), "-q"])
    assert rc == 0
    [ep] = [p for p in out.iterdir() if p.is_dir()]
    lines = [json.loads(x) for x in (ep / "trajectory.jsonl").read_text().splitlines()]
    steps = [x for x in lines if "reply" in x]
    assert [x["reply"] for x in steps][0].startswith("I will click")
    assert steps[1]["action_error"]  # the env rejected the unknown function ...
    assert "frobnicate" in json.dumps(server.requests[2]["messages"][-1])  # ... and said so
    assert steps[-1]["action"] == "DONE" and steps[-1]["evaluation"] is not None
    result = json.loads((ep / "result.json").read_text())
    assert result["policy"] == "vlm" and 0.0 <= result["score"] <= 1.0
    assert result["agent"]["calls"] == 3 and result["agent"]["retries"] == 1
    assert result["agent"]["total_tokens"] == 3 * 107
    assert all((ep / x["screenshot"]).is_file() for x in steps)
    assert main(["report", str(out)]) == 0
    assert "imagej/count-nuclei" in capsys.readouterr().out
    assert Path(out / "summary.json").is_file()
