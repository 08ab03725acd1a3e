"""Demonstrations on the real DS9: GUI oracle episodes recorded by `sciagent-gym demos`, read
back by replay, report and Minari, and shown to a prompt agent as a worked example.

The sample (two tasks, two seeds) is generated here, once per module, never stored in the
repository.
"""

from __future__ import annotations

import json

import pytest
from helpers import requires

from sciagent_gym.cli.main import main
from sciagent_gym.runs.worked_examples import find_demo, load_demo

pytestmark = [requires(tool="ds9"), pytest.mark.timeout(600)]
TASKS = ("ds9/toggle-grid", "ds9/colormap-scale-gui")


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("demos") / "ds9"
    args = ["demos", "--tool", "ds9", "--seeds", "2", "--out", str(out), "-q",
            "--minari", "sciagent/ds9-demos-v0",
            "--minari-root", str(out.parent / "datasets")]
    for task in TASKS:
        args += ["--task", task]
    assert main(args) == 0
    return out


def test_every_demonstration_reaches_1_and_is_recorded_as_actions(demo_dir):
    manifest = json.loads((demo_dir / "demos.json").read_text())
    assert manifest["env"] == "SciGUI-DS9-v0" and manifest["failed"] == []
    episodes = manifest["episodes"]
    assert sorted((e["task_id"], e["seed"]) for e in episodes) == \
        sorted((t, s) for t in TASKS for s in (0, 1))
    for e in episodes:
        assert e["score"] == 1.0 and e["success"] and e["policy"] == "gui-oracle"
        assert e["steps"] == e["oracle_steps"]  # the recorded count is the reference count
        lines = [json.loads(x) for x in
                 (demo_dir / f"{e['task_id'].split('/')[1]}-seed{e['seed']}" /
                  "trajectory.jsonl").read_text().splitlines()]
        # nothing but waits on windows between the actions, and no tool script at all
        assert all(set(x["scripted"]) <= {"await_window", "focused", "gone", "timeout"}
                   for x in lines if "scripted" in x)
        actions = [x["action"] for x in lines if "step" in x]
        assert len(actions) == e["steps"] and actions[-1] == "DONE"
        assert all(isinstance(a, str) for a in actions)  # pyautogui form


def test_demonstrations_replay_and_report(demo_dir, capsys):
    assert main(["replay", str(demo_dir)]) == 0
    assert "4/4 episodes reach the recorded score again" in capsys.readouterr().out
    assert main(["report", str(demo_dir)]) == 0
    table = capsys.readouterr().out
    assert "*/Opt" in table and "task ds9/toggle-grid" in table


def test_demonstrations_are_a_minari_dataset(demo_dir):
    minari = pytest.importorskip("minari", reason="install the [data] extra")
    import os

    os.environ["MINARI_DATASETS_PATH"] = str(demo_dir.parent / "datasets")
    dataset = minari.load_dataset("sciagent/ds9-demos-v0")
    episodes = list(dataset.iterate_episodes())
    assert len(episodes) == 4
    for ep in episodes:
        assert ep.infos["score"][-1] == 1.0 and ep.actions[-1] == "DONE"
        assert ep.observations.shape[0] == len(ep.actions) + 1


def test_a_prompt_agent_sees_a_demonstration_of_another_variant(demo_dir, model_server,
                                                                 tmp_path):
    demo = find_demo(demo_dir, "ds9/toggle-grid")
    other = find_demo(demo_dir, "ds9/toggle-grid", not_variant=demo.variant)
    assert other is not None and other.variant != demo.variant
    assert find_demo(demo_dir, "ds9/header-keyword") is None
    assert load_demo(demo.directory).actions[-1] == "DONE"
    server = model_server([(200, "DONE")])
    out = tmp_path / "run"
    assert main(["run", "--env", "SciGUI-DS9-v0", "--task", "ds9/toggle-grid", "--policy",
                 "vlm", "--base-url", server.url, "--model", "scripted", "--seed", "0",
                 "--demos", str(demo_dir), "--out", str(out), "-q"]) == 0
    [ep] = [p for p in out.iterdir() if p.is_dir()]
    result = json.loads((ep / "result.json").read_text())
    shown = load_demo(result["demo"])
    assert shown.task_id == "ds9/toggle-grid" and shown.variant != result["variant"]
    messages = server.requests[0]["messages"]
    example = messages[1]["content"]
    assert messages[1]["role"] == "user" and "worked example" in example
    assert shown.instruction in example and shown.actions[0] in example
