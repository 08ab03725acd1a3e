"""The command line on the real app: run -> rescore -> report, and list/doctor."""

from __future__ import annotations

import json

import pytest

from sciagent_gym.cli.main import main
from sciagent_gym.evaluation import FinalState, evaluate

pytestmark = pytest.mark.e2e


def test_run_rescore_report_round_trip(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "--env", "SciGUI-ImageJ-v0", "--task", "count-nuclei",
                 "--policy", "oracle", "--episodes", "1", "--out", str(out), "-q"]) == 0
    assert main(["run", "--env", "SciGUI-ImageJ-v0", "--task", "count-nuclei",
                 "--policy", "random", "--episodes", "1", "--max-steps", "3", "--seed", "5",
                 "--out", str(out / "random"), "-q"]) == 0
    printed = capsys.readouterr().out
    assert "score=1.000 success=True" in printed
    [ep] = sorted(out.glob("ep000-seed0"))
    lines = [json.loads(x) for x in (ep / "trajectory.jsonl").read_text().splitlines()]
    assert lines[0]["reset"]["task_id"] == "imagej/count-nuclei"
    assert lines[-1]["evaluation"]["score"] == 1.0
    assert (ep / lines[-1]["screenshot"]).is_file()
    assert (ep / "final_state" / "app_state.json").is_file()

    results = {p.parent.name: json.loads(p.read_text()) for p in out.rglob("result.json")}
    assert results["ep000-seed0"]["end"] == "script"
    assert results["ep000-seed5"]["end"] in ("budget", "agent")  # random says DONE at most then

    assert main(["rescore", str(out), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 2 and not any(r["changed"] for r in rows)
    # rescoring reads the saved files again: a spoiled results table now fails
    [table] = [p for p in (ep / "final_state").rglob("*") if p.suffix in (".csv", ".tsv")
               and p.is_file()]
    table.write_text("nothing here\n")
    assert main(["rescore", str(out), "--json"]) == 0
    rows = {r["directory"].rsplit("/", 1)[-1]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["ep000-seed0"]["changed"] and rows["ep000-seed0"]["new_score"] < 1.0

    assert main(["report", str(out)]) == 0
    table = capsys.readouterr().out
    assert "task imagej/count-nuclei" in table and "Steps*" in table
    assert (out / "report.csv").is_file() and (out / "report.png").is_file()


def test_saved_final_state_scores_identically_20_times(tmp_path, imagej_env):
    from sciagent_gym.tasks.steps import run_steps

    imagej_env.reset(seed=4, options={"task": "count-nuclei"})
    base = imagej_env.unwrapped
    run_steps(imagej_env, base.task.steps("oracle"))
    saved = base.final_state.save(tmp_path / "state")
    criteria = base.task.criteria()
    results = [evaluate(criteria, FinalState.load(saved)).to_dict() for _ in range(20)]
    assert all(r == results[0] for r in results) and results[0]["score"] == 1.0


def test_list_and_doctor(capsys):
    assert main(["list", "--variants"]) == 0
    out = capsys.readouterr().out
    assert "SciGUI-ImageJ-v0" in out and "parameter combinations" in out
    assert main(["doctor"]) == 0
    assert "all required components present" in capsys.readouterr().out


def test_audit_command_prints_the_table_and_json(tmp_path, capsys):
    tasks = ["--task", "praat/rename-object", "--task", "praat/measure-duration"]
    assert main(["audit", "--tool", "praat", *tasks, "-q", "--out", str(tmp_path)]) == 0
    table = capsys.readouterr().out
    assert "praat/rename-object" in table and "praat/measure-duration" in table
    assert main(["audit", "--tool", "praat", *tasks, "--json", "--no-cross"]) == 0
    [report] = json.loads(capsys.readouterr().out)
    cases = {(c["task_id"], c["case"]) for c in report["cases"]}
    assert {("praat/rename-object", "oracle"), ("praat/measure-duration", "noop")} <= cases
    assert all(c["ok"] for c in report["cases"]) and report["cross"] == []
    saved = json.loads((tmp_path / "audit-praat.json").read_text())
    assert len(saved["cross"]) == 2 and not any(x["success"] for x in saved["cross"])
