"""ST-Bench's evaluation metrics (paper C.2, D.1) on hand-made query records.

Tasks use one metric ``m >= 0.5`` unless said otherwise, so a query's report is one of:
PASS (realistic, clears the target), FAIL (realistic, misses it), ZERO (a defensive all-zero
report), SENT (a -1 sentinel) or None (nothing reported). Expected numbers are written as
``realistic_rate * conditional_pass_rate``.
"""

from __future__ import annotations

import json

import pytest

from sciagent_gym.benchmarks.stbench.evaluation import (
    TAG_AXES,
    QueryRecord,
    TaskTags,
    compare,
    compare_cuts,
    cost_ratio,
    cut_scores,
    efficiency,
    generalizability,
    system_score,
    task_scores,
)
from sciagent_gym.benchmarks.stbench.metrics import Metric

approx = pytest.approx

M = (Metric.parse("m", ">= 0.5"),)
PASS, FAIL, ZERO, SENT = {"m": 0.7}, {"m": 0.3}, {"m": 0.0}, {"m": -1}
HYDRO = TaskTags(
    "hydrology", "Model Comparison", "Easy", "Modeling", "Evaluation", "Predictive", "Synthesis"
)
METHANE = TaskTags(
    "methane", "Forecasting", "Hard", "Robustness", "Modeling", "Predictive", "Parallel Search"
)


def task(task_id, reports, *, tags=HYDRO, split="test", wall=10.0, tokens=None, metrics=M):
    """One record per report, query ids q0, q1, ...; wall/tokens a number or a list."""
    out = []
    for i, rep in enumerate(reports):
        w = wall[i] if isinstance(wall, list) else wall
        t = tokens[i] if isinstance(tokens, list) else tokens
        out.append(QueryRecord(task_id, f"q{i}", split, rep, metrics, w, t, tags))
    return out


# --- per-task score -------------------------------------------------------------------------


def test_task_score_is_realistic_rate_times_conditional_pass_rate():
    [t] = task_scores(task("a", [PASS, PASS, FAIL, ZERO]))
    assert (t.n_queries, t.n_realistic, t.n_targets, t.n_passed) == (4, 3, 3, 2)
    assert t.realistic_rate == approx(3 / 4)
    assert t.conditional_pass_rate == approx(2 / 3)
    assert t.score == approx(3 / 4 * 2 / 3)


def test_two_metric_task_pools_targets_over_realistic_queries():
    metrics = (Metric.parse("nse", ">= 0.5"), Metric.parse("rmse", "< 2"))
    reports = [
        {"nse": 0.6, "rmse": 1.5},  # realistic, 2 of 2 pass
        {"nse": 0.4, "rmse": 1.0},  # realistic, 1 of 2
        {"nse": 0, "rmse": 0},  # all zeros: not realistic (though rmse 0 < 2 would pass)
        None,  # nothing reported
    ]
    [t] = task_scores(task("a", reports, metrics=metrics))
    assert t.realistic_rate == approx(2 / 4)
    assert t.conditional_pass_rate == approx((2 + 1) / (2 + 2))
    assert t.score == approx(2 / 4 * (2 + 1) / (2 + 2))


def test_task_without_realistic_queries_scores_zero():
    [t] = task_scores(task("a", [ZERO, SENT, None, {"m": -0.4}, {"m": "0.9"}]))
    assert (t.n_realistic, t.realistic_rate, t.conditional_pass_rate, t.score) == (0, 0, 0, 0)


def test_sentinel_makes_an_otherwise_passing_query_unrealistic():
    metrics = (Metric.parse("nse", ">= 0.5"), Metric.parse("n", "lower is better"))
    [t] = task_scores(task("a", [{"nse": 0.9, "n": -1}, {"nse": 0.9, "n": 3}], metrics=metrics))
    assert t.score == approx(1 / 2 * (2 / 2))


def test_extra_keys_do_not_make_a_report_realistic():
    [t] = task_scores(task("a", [{"m": 0.0, "ok": 1}, PASS]))
    assert t.score == approx(1 / 2 * 1 / 1)


def test_json_text_reports_are_read():
    [t] = task_scores(task("a", [json.dumps(PASS), "{oops", json.dumps(FAIL)]))
    assert t.score == approx(2 / 3 * 1 / 2)


def test_split_filter():
    records = task("a", [PASS, FAIL]) + [QueryRecord("a", "t0", "train", ZERO, M, 1.0, None, HYDRO)]
    [t] = task_scores(records)  # test only
    assert t.score == approx(2 / 2 * 1 / 2)
    [t] = task_scores(records, split=None)  # all splits
    assert t.score == approx(2 / 3 * 1 / 2)
    [t] = task_scores(records, split="train")
    assert t.score == 0.0


def test_record_errors():
    with pytest.raises(ValueError, match="twice"):
        task_scores(task("a", [PASS]) + task("a", [FAIL]))
    with pytest.raises(ValueError, match="different tags"):
        task_scores(task("a", [PASS]) + [QueryRecord("a", "q9", "test", PASS, M, 1.0, None)])
    with pytest.raises(ValueError, match="wall_seconds"):
        QueryRecord("a", "q", "test", PASS, M, -1.0)
    with pytest.raises(ValueError, match="wall_seconds"):
        QueryRecord("a", "q", "test", PASS, M, float("nan"))
    with pytest.raises(ValueError, match="tokens"):
        QueryRecord("a", "q", "test", PASS, M, 1.0, -5)
    with pytest.raises(ValueError, match="no metrics"):
        QueryRecord("a", "q", "test", PASS, (), 1.0)


# --- system score ----------------------------------------------------------------------------


def test_system_composite_and_decomposition():
    records = (
        task("a", [PASS, PASS, FAIL, ZERO], wall=[10, 20, 30, 40], tokens=[100, None, 300, None])
        + task("b", [SENT, None], tags=METHANE, wall=5.0)
        + task("c", [PASS, FAIL], tags=METHANE, wall=5.0)
    )
    s = system_score(records)
    assert s.n_tasks == 3 and s.n_queries == 8
    a, b, c = 3 / 4 * 2 / 3, 0.0, 2 / 2 * 1 / 2
    assert s.composite == approx(a + b + c)
    assert s.mean_score == approx((a + b + c) / 3)
    assert s.realistic_rate == approx((3 + 0 + 2) / 8)
    assert s.conditional_pass_rate == approx((2 + 0 + 1) / (3 + 0 + 2))
    assert s.mean_wall_seconds == approx((10 + 20 + 30 + 40 + 5 * 4) / 8)
    assert s.mean_tokens == approx((100 + 300) / 2)
    assert [t.task_id for t in s.tasks] == ["a", "b", "c"]
    json.dumps(s.to_dict())


def test_system_without_tokens_and_empty_split():
    assert system_score(task("a", [PASS])).mean_tokens is None
    with pytest.raises(ValueError, match="no query records"):
        system_score(task("a", [PASS], split="train"))


# --- against a baseline ----------------------------------------------------------------------


def test_win_rate_counts_strict_wins_and_not_ties():
    system = (
        task("win", [PASS, FAIL])  # 2/2 * 1/2
        + task("tie", [PASS, ZERO])  # 1/2 * 1/1, the same 0.5 by another route
        + task("loss", [FAIL, ZERO])  # 1/2 * 0/1
        + task("zero", [ZERO])  # 0
    )
    baseline = (
        task("win", [FAIL, ZERO])  # 1/2 * 0/1
        + task("tie", [PASS, FAIL])  # 2/2 * 1/2
        + task("loss", [PASS, FAIL])  # 2/2 * 1/2
        + task("zero", [SENT])  # 0: a tie at zero
    )
    c = compare(system, baseline)
    assert c.n_tasks == 4
    assert c.win_rate == approx(1 / 4)
    gains = {t.task_id: t.gain for t in c.tasks}
    assert gains == approx({"win": 0.5 - 0.0, "tie": 0.5 - 0.5, "loss": 0.0 - 0.5, "zero": 0.0})
    assert c.mean_gain == approx(((0.5 - 0.0) + (0.5 - 0.5) + (0.0 - 0.5) + 0) / 4)
    assert [t.win for t in c.tasks] == [False, False, True, False]  # sorted: loss, tie, win, zero


def test_a_task_missing_from_one_side_scores_zero_there():
    system = task("a", [PASS])
    baseline = task("a", [FAIL]) + task("b", [PASS], tags=METHANE)
    c = compare(system, baseline)
    a, b = c.tasks
    assert (a.score, a.baseline_score) == approx((1 / 1 * 1 / 1, 1 / 1 * 0 / 1))
    assert (b.score, b.baseline_score, b.tags) == (0.0, approx(1 / 1 * 1 / 1), METHANE)
    assert c.win_rate == approx(1 / 2)
    assert c.mean_gain == approx(((1 - 0) + (0 - 1)) / 2)


def test_time_ratio_and_efficiency():
    system = task("a", [PASS, PASS], wall=[20.0, 40.0])  # 1.0
    baseline = task("a", [FAIL, ZERO], wall=[10.0, 10.0])  # 1/2 * 0 = 0
    c = compare(system, baseline)
    assert c.time.ratio == approx(((20 + 40) / 2) / ((10 + 10) / 2))
    assert c.time.n_pairs == 2
    assert c.mean_gain == approx(1.0 - 0.0)
    assert c.eta_time == approx((1.0 - 0.0) / max(3.0 - 1, 0.1))


def test_token_ratio_uses_only_queries_both_sides_account():
    system = task("a", [PASS, PASS, PASS], tokens=[None, 300, 500])
    baseline = task("a", [PASS, PASS, PASS], tokens=[100, 100, None])
    c = compare(system, baseline)
    assert c.tokens.n_pairs == 1  # only q1 has tokens on both sides
    assert c.tokens.ratio == approx(300 / 100)
    assert c.eta_tokens == approx((1.0 - 1.0) / max(3.0 - 1, 0.1))


def test_token_ratio_not_available():
    c = compare(task("a", [PASS], tokens=None), task("a", [FAIL], tokens=[50]))
    assert c.tokens.ratio is None and c.tokens.n_pairs == 0 and c.eta_tokens is None
    assert c.time.ratio == approx(10.0 / 10.0)


def test_cost_ratio_edge_cases():
    assert cost_ratio({"q": 5.0}, {"q": 0.0}).ratio is None  # baseline cost 0: undefined
    assert cost_ratio({"q": 5.0}, {"r": 1.0}).ratio is None  # no common query
    r = cost_ratio({"q": 6.0, "r": 2.0, "s": 9.0}, {"q": 2.0, "r": 2.0})
    assert (r.ratio, r.n_pairs) == (approx(((6 + 2) / 2) / ((2 + 2) / 2)), 2)


@pytest.mark.parametrize(
    ("gain", "rho", "expected"),
    [
        (0.2, 3.0, 0.2 / (3.0 - 1)),
        (0.2, 1.5, 0.2 / (1.5 - 1)),
        (0.2, 1.05, 0.2 / 0.1),  # rho - 1 = 0.05 clipped to 0.1
        (0.2, 1.0, 0.2 / 0.1),
        (0.2, 0.5, 0.2 / 0.1),  # cheaper than the baseline: still 0.1
        (-0.1, 2.0, -0.1 / (2.0 - 1)),
        (0.2, None, None),
    ],
)
def test_efficiency_clip(gain, rho, expected):
    assert efficiency(gain, rho) == (approx(expected) if expected is not None else None)


def test_generalizability_is_per_task_minus_per_category():
    per_task = task("a", [PASS, PASS]) + task("b", [FAIL], tags=METHANE)
    per_cat = task("a", [PASS, FAIL]) + task("b", [PASS], tags=METHANE)
    assert generalizability(per_task, per_cat) == approx(((1.0 - 0.5) + (0.0 - 1.0)) / 2)


def test_compare_needs_records():
    with pytest.raises(ValueError, match="no query records"):
        compare([], task("a", [PASS], split="val"))


# --- cuts ------------------------------------------------------------------------------------


def test_cut_scores_by_axis():
    records = (
        task("a", [PASS, FAIL])  # hydrology, 1/2
        + task("b", [ZERO])  # hydrology, 0
        + task("c", [PASS], tags=METHANE)  # methane, 1
    )
    tasks = task_scores(records)
    cuts = cut_scores(tasks, "domain")
    assert [(c.value, c.n_tasks) for c in cuts] == [("hydrology", 2), ("methane", 1)]
    assert cuts[0].mean_score == approx((0.5 + 0.0) / 2)
    assert cuts[1].mean_score == approx(1.0)
    diff = cut_scores(tasks, "difficulty")
    assert [(c.value, c.mean_score) for c in diff] == [
        ("Easy", approx((0.5 + 0.0) / 2)),
        ("Hard", approx(1.0)),
    ]
    [pred] = cut_scores(tasks, "cognitive_skill")  # both tags are Predictive
    assert (pred.n_tasks, pred.mean_score) == (3, approx((0.5 + 0.0 + 1.0) / 3))
    for axis in TAG_AXES:
        assert sum(c.n_tasks for c in cut_scores(tasks, axis)) == 3
    with pytest.raises(ValueError, match="unknown cut axis"):
        cut_scores(tasks, "colour")


def test_compare_cuts_gain_and_win_rate_per_group():
    system = task("a", [PASS]) + task("b", [FAIL]) + task("c", [PASS], tags=METHANE)
    baseline = task("a", [FAIL]) + task("b", [FAIL]) + task("c", [ZERO], tags=METHANE)
    c = compare(system, baseline)
    hydro, methane = compare_cuts(c, "mas_challenge")[::-1]  # sorted: Parallel Search, Synthesis
    assert (hydro.value, hydro.n_tasks) == ("Synthesis", 2)
    assert hydro.system_mean == approx((1.0 + 0.0) / 2)
    assert hydro.baseline_mean == approx((0.0 + 0.0) / 2)
    assert hydro.gain == approx((1.0 + 0.0) / 2 - (0.0 + 0.0) / 2)
    assert hydro.win_rate == approx(1 / 2)  # b is a tie at 0
    assert (methane.value, methane.gain, methane.win_rate) == ("Parallel Search", 1.0, 1.0)
    json.dumps([x.to_dict() for x in compare_cuts(c, "domain")])
    with pytest.raises(ValueError, match="unknown cut axis"):
        compare_cuts(c, "colour")
