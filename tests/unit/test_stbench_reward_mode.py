"""reward="stbench": ST-Bench's training reward paid from a query's stbench_target criteria,
while the partial score stays the paper's absolute per-query score behind the realistic gate
(fake provider, fixture tool; the agent's metrics.json is written into the work directory)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import sciagent_gym.benchmarks.stbench  # noqa: F401  registers the stbench_* checks
from sciagent_gym.env import SciGUIEnv
from sciagent_gym.errors import TaskSpecError
from sciagent_gym.tasks.spec import parse_spec
from sciagent_gym.tools.discovery import add_tools_root, remove_tools_root

FIXTURE_TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "tools"
SUM = "faketool/sum-numbers"
METRICS = ["total", "error"]


@pytest.fixture(scope="module", autouse=True)
def fixture_tools():
    add_tools_root(FIXTURE_TOOLS)
    yield
    remove_tools_root(FIXTURE_TOOLS)


def query_spec(**target_params):
    data = json.loads((FIXTURE_TOOLS / "task_specs" / f"{SUM}.json").read_text())
    data["evaluator"] = {"criteria": [
        {"name": "realistic output", "weight": 0, "gate": True,
         "getter": {"fn": "file_json", "path": "metrics.json"},
         "check": {"op": "stbench_realistic", "names": METRICS}},
        {"name": "total", "weight": 1,
         "getter": {"fn": "file_json", "path": "metrics.json", "key": "total"},
         "check": {"op": "stbench_target", "target": "> 0",
                   "reference": "$gold.numbers.sum", **target_params}},
        {"name": "error", "weight": 1,
         "getter": {"fn": "file_json", "path": "metrics.json", "key": "error"},
         "check": {"op": "stbench_target", "target": "< 0.5", "reference": 0.2}},
    ]}
    data["oracle"] = ["DONE"]
    return parse_spec(data, "query.json")


def play(report, reward="stbench"):
    """One episode whose agent wrote ``report`` (None: nothing) as metrics.json."""
    env = SciGUIEnv("faketool", task=SUM, provider="fake", screen_size=(160, 100),
                    reward=reward)
    env.specs[SUM] = query_spec()
    try:
        env.reset(seed=3)
        total = float(env.task.gold["numbers"]["sum"])
        if report is not None:
            text = report(total) if callable(report) else report
            (env.provider.host_work_dir / "metrics.json").write_text(json.dumps(text))
        _, r, terminated, _, info = env.step("DONE")
        assert terminated
        return r, env.evaluation.score, info.get("stbench"), total
    finally:
        env.close()


def test_the_reference_reached_pays_everything():
    r, partial, breakdown, _ = play(lambda t: {"total": t, "error": 0.1})
    # total: 0.10*1 + 0.40*1 + 0.50*min(t/t, 1); error (lower is better): 0.2/0.1 clipped to 1
    assert r == pytest.approx(1.0) and partial == 1.0
    assert [m["name"] for m in breakdown["metrics"]] == METRICS


def test_half_the_reference_earns_half_the_reference_component():
    r, partial, _, _ = play(lambda t: {"total": t / 2, "error": 0.4})
    total = 0.10 * 1 + 0.40 * 1 + 0.50 * 0.5     # half the reference
    error = 0.10 * 1 + 0.40 * 1 + 0.50 * (0.2 / 0.4)  # twice the reference error
    assert r == pytest.approx((total + error) / 2)
    assert partial == 1.0  # both targets met: the absolute score is the share of targets met


def test_defensive_zeros_score_zero_both_ways():
    r, partial, breakdown, _ = play({"total": 0, "error": 0})
    assert r == 0.0 and partial == 0.0  # the zero override and the realistic gate
    assert all(m["zero_override"] for m in breakdown["metrics"])


def test_minus_one_sentinel_fails_the_realistic_gate():
    r, partial, _, total = play(lambda t: {"total": t, "error": -1})
    assert partial == 0.0  # a -1 sentinel is a defensive default, whatever else is reported
    # the training reward has no realistic filter: total earns in full; error -1 meets "< 0.5"
    # and, lower being better, counts as at least as good as the reference
    assert r == pytest.approx((1.0 + (0.10 + 0.40 + 0.50)) / 2)


def test_no_report_and_a_wrong_type_score_zero():
    assert play(None)[:2] == (0.0, 0.0)
    r, partial, _, _ = play({"total": "12", "error": True})
    assert (r, partial) == (0.0, 0.0)


def test_partial_mode_pays_the_absolute_score_and_still_reports_the_breakdown():
    r, partial, breakdown, total = play(lambda t: {"total": t / 2, "error": 0.4},
                                        reward="partial")
    assert r == partial == 1.0
    # what a report needs to rebuild the query: each metric's value and definition
    assert breakdown["realistic"] is True
    assert breakdown["score"] == pytest.approx((0.75 + 0.75) / 2)
    by_name = {m["name"]: m for m in breakdown["metrics"]}
    assert by_name["total"]["value"] == pytest.approx(total / 2)
    assert by_name["total"]["definition"] == {"name": "total", "target": "> 0",
                                              "higher_is_better": True, "reference": total}
    assert by_name["error"]["definition"]["higher_is_better"] is False


def test_defensive_report_is_not_realistic_in_the_breakdown():
    assert play({"total": 0, "error": 0})[2]["realistic"] is False


def test_stbench_reward_needs_metric_criteria():
    env = SciGUIEnv("faketool", task=SUM, provider="fake", screen_size=(160, 100),
                    reward="stbench")
    try:
        with pytest.raises(ValueError, match="stbench_target"):
            env.reset(seed=0)
    finally:
        env.close()


@pytest.mark.parametrize("check, message", [
    ({"op": "stbench_target", "target": "about 3"}, "target"),
    ({"op": "stbench_target", "target": "> 1", "weight": 2}, "unknown parameter 'weight'"),
    ({"op": "stbench_realistic", "names": []}, "names"),
])
def test_bad_metric_criteria_are_rejected_at_load(check, message):
    data = json.loads((FIXTURE_TOOLS / "task_specs" / f"{SUM}.json").read_text())
    data["evaluator"] = {"criteria": [{"name": "m", "weight": 1, "check": check,
                                       "getter": {"fn": "file_json", "path": "m.json"}}]}
    with pytest.raises(TaskSpecError, match=message):
        parse_spec(data, "bad.json")
