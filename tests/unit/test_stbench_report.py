"""ST-Bench's evaluation of run directories: episodes of a query-pool task recorded by
run_episode, rebuilt into queries and scored by `report` (fake provider, fixture tool)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciagent_gym.benchmarks.stbench.report import query_records, task_tags
from sciagent_gym.cli.main import main
from sciagent_gym.env import SciGUIEnv
from sciagent_gym.runs.rollout import run_episode
from sciagent_gym.tasks.queries import split_sizes
from sciagent_gym.tasks.spec import parse_spec
from sciagent_gym.tools.discovery import add_tools_root, remove_tools_root

FIXTURE_TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "tools"
SUM = "faketool/sum-numbers"
QUERIES = [{"id": f"scope-{i}", "scope": f"scope {i}", "params": {"count": 3 + i % 4}}
           for i in range(20)]
TAGS = ["domain:hydrology", "category:prediction-modeling", "capability:modeling",
        "stage:modeling", "skill:predictive", "mas:synthesis"]


@pytest.fixture(scope="module", autouse=True)
def fixture_tools():
    add_tools_root(FIXTURE_TOOLS)
    yield
    remove_tools_root(FIXTURE_TOOLS)


def query_spec():
    data = json.loads((FIXTURE_TOOLS / "task_specs" / f"{SUM}.json").read_text())
    data.update(queries=QUERIES, tags=TAGS, oracle=["pyautogui.click(5, 5)", "DONE"])
    data["evaluator"] = {"criteria": [
        {"name": "realistic output", "weight": 0, "gate": True,
         "getter": {"fn": "file_json", "path": "metrics.json"},
         "check": {"op": "stbench_realistic", "names": ["total"]}},
        {"name": "total", "weight": 1,
         "getter": {"fn": "file_json", "path": "metrics.json", "key": "total"},
         "check": {"op": "stbench_target", "target": "> 0", "reference": "$gold.numbers.sum"}},
    ]}
    return parse_spec(data, "query.json")


def record_run(out: Path, share: float) -> list[dict]:
    """Every test query once, by an "agent" whose click writes metrics.json with ``share``
    of the true total (0: a defensive all-zero report)."""
    env = SciGUIEnv("faketool", task=SUM, provider="fake", screen_size=(160, 100),
                    split="test")
    env.specs[SUM] = query_spec()

    def write_metrics(provider, action):
        total = float(env.unwrapped.task.gold["numbers"]["sum"])
        (provider.host_work_dir / "metrics.json").write_text(json.dumps({"total": share * total}))

    results, seen = [], set()
    try:
        for seed in range(200):
            env.reset(seed=seed)
            if env.task.params["query"] in seen:
                continue
            env.provider.respond = write_metrics
            result = run_episode(env, "oracle", seed, out_dir=out / f"ep{seed}").to_dict()
            seen.add(result["query"])
            results.append(result)
            if len(seen) == split_sizes(20)["test"]:
                break
    finally:
        env.close()
    return results


def test_episodes_carry_their_query_and_metric_definitions(tmp_path):
    results = record_run(tmp_path, 0.5)
    assert len(results) == 5 and all(r["split"] == "test" for r in results)
    records = query_records(results, {SUM: query_spec()})
    assert {r.query_id for r in records} == {r["query"] for r in results}
    rec = records[0]
    assert rec.metrics[0].name == "total" and rec.metrics[0].reference > 0
    assert rec.tags == task_tags(query_spec())
    assert (rec.tags.domain, rec.tags.pipeline_stage, rec.tags.mas_challenge,
            rec.tags.difficulty) == ("hydrology", "modeling", "synthesis", "easy")


def test_report_scores_a_run_against_a_defensive_baseline(tmp_path, capsys):
    record_run(tmp_path / "good", 1.0)
    record_run(tmp_path / "zeros", 0.0)
    assert main(["report", str(tmp_path / "good"), "--baseline", str(tmp_path / "zeros"),
                 "--json", "--out", str(tmp_path / "out")]) == 0
    st = json.loads(capsys.readouterr().out)["stbench"]
    system = st["system"]
    # every test query realistic and its one target met: 1.0 x 1.0 for the one task
    assert (system["n_tasks"], system["n_queries"]) == (1, 5)
    assert system["composite"] == pytest.approx(1.0)
    comp = st["comparison"]
    # the all-zero baseline has no realistic output: score 0, so a win by 1.0
    assert comp["win_rate"] == 1.0 and comp["mean_gain"] == pytest.approx(1.0)
    assert comp["time"]["n_pairs"] == 5 and comp["tokens"]["ratio"] is None
    # labels come from the installed spec (the fixture's has no ST-Bench tags): one group
    assert [(c["value"], c["n_tasks"]) for c in st["cuts"]["domain"]] == [("", 1)]


def test_report_prints_the_st_bench_table(tmp_path, capsys):
    record_run(tmp_path / "half", 0.5)
    assert main(["report", str(tmp_path / "half"), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "ST-Bench evaluation (test split): composite 100.0 over 1 tasks" in out
    assert SUM in out


def test_baseline_without_queries_is_a_clear_error(tmp_path, capsys):
    record_run(tmp_path / "good", 1.0)
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "good"), "--baseline", str(tmp_path / "empty"),
                 "--out", str(tmp_path / "out")]) != 0
    assert "no ST-Bench queries" in capsys.readouterr().err
