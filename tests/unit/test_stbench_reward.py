"""ST-Bench's training reward (paper C.3) and per-metric grading (C.2) on hand-computed cases.

Every expected number is written as the paper's arithmetic (weights times components) so a
reader can check it against ``s = 0.10 s_sanity + 0.40 s_target + 0.50 s_reference``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from sciagent_gym.benchmarks.stbench.metrics import (
    MAX_REPORT_CHARS,
    WEIGHTS,
    WEIGHTS_NO_REFERENCE,
    Metric,
    is_number,
    is_realistic,
    metric_passes,
    metric_reward,
    parse_report,
    passed_metrics,
    query_pass_rate,
    query_reward,
    s_reference,
    s_sanity,
    s_target,
    score_query,
    zero_override,
)

approx = pytest.approx

NSE = Metric.parse("nse", ">= 0.3", reference=0.5)  # higher is better
RMSE = Metric.parse("rmse", "< 2", reference=2.0)  # lower is better
NAN, INF = float("nan"), float("inf")


# --- Metric and target parsing -----------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "op", "threshold", "higher"),
    [
        (">= 0.6", ">=", 0.6, True),
        ("> 0.3", ">", 0.3, True),
        ("<= 5", "<=", 5.0, False),
        ("< 1e-3", "<", 0.001, False),
        ("≥ 2", ">=", 2.0, True),
        ("≤-0.5", "<=", -0.5, False),
        ("  >=0.6  ", ">=", 0.6, True),
        ("lower is better", None, None, False),
        ("Higher is better", None, None, True),
        ("lower-is-better", None, None, False),
    ],
)
def test_parse_targets(target, op, threshold, higher):
    m = Metric.parse("x", target)
    assert (m.op, m.threshold, m.higher_is_better, m.reference) == (op, threshold, higher, None)


def test_parse_keeps_an_explicit_polarity_and_the_reference():
    m = Metric.parse("n_clusters", "<= 12", higher_is_better=True, reference=8)
    assert (m.op, m.threshold, m.higher_is_better, m.reference) == ("<=", 12.0, True, 8)
    assert m.target == "<= 12"
    assert Metric.parse("e", "lower is better").target == "lower is better"


@pytest.mark.parametrize("target", ["about 0.5", "== 3", ">= ", "0.5", "> 1.2.3", "", None])
def test_parse_rejects_unreadable_targets_naming_the_metric(target):
    with pytest.raises(ValueError, match="'skill'"):
        Metric.parse("skill", target)


def test_metric_json_round_trip():
    for m in (
        NSE,
        RMSE,
        Metric.parse("n", "<= 12", higher_is_better=True),
        Metric.parse("e", "lower is better", reference=0.25),
        Metric.parse("t", "> 1e-07"),
    ):
        assert Metric.from_dict(json.loads(json.dumps(m.to_dict()))) == m
    with pytest.raises(ValueError, match="name and a target"):
        Metric.from_dict({"name": "nse"})


def test_metric_rejects_inconsistent_fields():
    with pytest.raises(ValueError, match="go together"):
        Metric("a", ">=", None)
    with pytest.raises(ValueError, match="op must be"):
        Metric("a", "==", 1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not finite"):
        Metric("a", ">", NAN)
    with pytest.raises(ValueError, match="reference"):
        Metric("a", ">", 0.1, reference=INF)
    with pytest.raises(ValueError, match="contradicts"):
        Metric.parse("a", "lower is better", higher_is_better=True)
    with pytest.raises(ValueError, match="non-empty"):
        Metric("", ">", 0.1)


# --- s_sanity ------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0.5, 0, -3, 2, 0.0, -1, np.float64(0.3), np.int64(7), 1e300])
def test_sanity_accepts_finite_reals(value):
    assert is_number(value) and s_sanity(value) == 1.0


@pytest.mark.parametrize(
    "value",
    [
        NAN,
        INF,
        -INF,
        np.float64("nan"),
        True,
        False,
        np.bool_(True),
        "0.5",
        "",
        None,
        [0.5],
        {"v": 1},
        10**400,
        complex(1, 0),
    ],
)
def test_sanity_rejects_non_numbers(value):
    assert not is_number(value) and s_sanity(value) == 0.0


# --- s_target ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "value", "expected"),
    [
        (">= 0.3", 0.3, 1.0),  # the boundary satisfies >=
        (">= 0.3", 0.29, 0.0),
        ("> 0.3", 0.3, 0.0),  # ...but not >
        ("> 0.3", 0.31, 1.0),
        ("<= 2", 2, 1.0),
        ("<= 2", 2.01, 0.0),
        ("< 2", 2, 0.0),
        ("< 2", -5, 1.0),
        ("> 0.3", INF, 0.0),  # inf would clear every > target
        ("< 2", -INF, 0.0),
        ("< 2", NAN, 0.0),
        ("> 0.3", True, 0.0),
        ("> 0.3", "0.9", 0.0),
        ("lower is better", 123.4, 1.0),  # no threshold: any finite number
        ("lower is better", NAN, 0.0),
    ],
)
def test_target(target, value, expected):
    assert s_target(Metric.parse("m", target), value) == expected


# --- s_reference ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "reference", "higher", "expected"),
    [
        # higher is better: value / reference, clipped to [0, 1]
        (0.4, 0.5, True, 0.4 / 0.5),
        (0.5, 0.5, True, 1.0),
        (0.9, 0.5, True, 1.0),  # 0.9 / 0.5 = 1.8, clipped to 1
        (-0.2, 0.5, True, 0.0),  # -0.2 / 0.5 < 0, clipped to 0
        # lower is better: the polarity flip, reference / value, clipped
        (2.5, 2.0, False, 2.0 / 2.5),
        (2.0, 2.0, False, 1.0),
        (1.0, 2.0, False, 1.0),  # 2.0 / 1.0 = 2, clipped to 1
        (-1.0, 2.0, False, 1.0),  # lower than the reference: at least as good
        # reference 0: reached by any value at least as good, else nothing
        (0.3, 0.0, True, 1.0),
        (0.0, 0.0, True, 1.0),
        (-0.2, 0.0, True, 0.0),
        (0.2, 0.0, False, 0.0),  # 0 / 0.2 = 0
        (0.0, 0.0, False, 1.0),
        # negative references: the ratio of magnitudes, in the polarity's direction
        (0.3, -0.5, True, 1.0),  # NSE 0.3 beats a reference of -0.5
        (-1.0, -0.5, True, 0.5 / 1.0),
        (-0.25, -0.5, True, 1.0),
        (-1.0, -2.0, False, 1.0 / 2.0),  # lower is better, worse than -2
        (-3.0, -2.0, False, 1.0),
        (1.0, -2.0, False, 0.0),  # across zero: none of it
        # not a number
        (NAN, 0.5, True, 0.0),
        ("0.5", 0.5, True, 0.0),
    ],
)
def test_reference_share(value, reference, higher, expected):
    assert s_reference(value, reference, higher) == approx(expected)


def test_reference_share_is_the_papers_ratio_on_positive_values():
    for v in (0.05, 0.3, 0.77, 1.4, 9.0):
        for r in (0.1, 0.5, 2.0):
            assert s_reference(v, r, True) == approx(min(1.0, max(0.0, v / r)))
            assert s_reference(v, r, False) == approx(min(1.0, max(0.0, r / v)))


# --- metric_reward: weights, the zero override, the missing reference -----------------------


def test_weights_are_the_papers():
    assert WEIGHTS == (0.10, 0.40, 0.50)
    assert WEIGHTS_NO_REFERENCE == (0.40, 0.60)


@pytest.mark.parametrize(
    ("metric", "value", "expected"),
    [
        (NSE, 0.4, 0.10 * 1 + 0.40 * 1 + 0.50 * (0.4 / 0.5)),
        (NSE, 0.2, 0.10 * 1 + 0.40 * 0 + 0.50 * (0.2 / 0.5)),
        (NSE, 0.9, 0.10 * 1 + 0.40 * 1 + 0.50 * 1),  # 0.9 / 0.5 clipped to 1
        (NSE, -0.3, 0.10 * 1 + 0.40 * 0 + 0.50 * 0),
        (RMSE, 2.5, 0.10 * 1 + 0.40 * 0 + 0.50 * (2.0 / 2.5)),
        (RMSE, 1.5, 0.10 * 1 + 0.40 * 1 + 0.50 * 1),  # 2.0 / 1.5 clipped to 1
        (RMSE, 2.0, 0.10 * 1 + 0.40 * 0 + 0.50 * 1),  # < 2 fails at 2, reference reached
        (
            Metric.parse("mae", "lower is better", reference=2.0),
            2.5,
            0.10 * 1 + 0.40 * 1 + 0.50 * (2.0 / 2.5),
        ),
    ],
)
def test_metric_reward_with_reference(metric, value, expected):
    r = metric_reward(metric, value)
    assert r.score == approx(expected)
    assert r.weights == (0.10, 0.40, 0.50) and not r.zero_override


def test_metric_reward_components_are_reported():
    r = metric_reward(NSE, 0.4)
    assert (r.name, r.reported, r.value, r.sanity, r.target) == ("nse", True, 0.4, 1.0, 1.0)
    assert r.reference == approx(0.4 / 0.5)


@pytest.mark.parametrize("value", [0, 0.0, -0.0, np.float64(0.0)])
def test_zero_against_a_nonzero_reference_scores_zero(value):
    # lower is better: without the override 0.10*1 + 0.40*1 + 0.50*1 = 1.0 for a defensive 0
    r = metric_reward(RMSE, value)
    assert r.zero_override and r.score == 0.0
    assert (r.sanity, r.target, r.reference) == (1.0, 1.0, 1.0)  # components still shown
    # higher is better, a target 0 clears: 0.10*1 + 0.40*1 + 0.50*0 would be 0.5
    r = metric_reward(Metric.parse("r", ">= 0", reference=0.5), value)
    assert r.zero_override and r.score == 0.0


def test_zero_override_does_not_fire_against_a_zero_reference():
    r = metric_reward(Metric.parse("bias", ">= 0", reference=0.0), 0.0)
    assert not r.zero_override
    assert r.score == approx(0.10 * 1 + 0.40 * 1 + 0.50 * 1)
    assert not zero_override(0.0, 0.0)
    assert zero_override(0.0, -0.3)
    assert not zero_override(1e-9, 0.5)
    assert not zero_override(False, 0.5)  # a bool is no value at all (sanity 0)


def test_missing_reference_uses_040_060():
    nse = Metric.parse("nse", ">= 0.3")  # no reference
    assert metric_reward(nse, 0.4).score == approx(0.40 * 1 + 0.60 * 1)
    assert metric_reward(nse, 0.2).score == approx(0.40 * 1 + 0.60 * 0)
    assert metric_reward(nse, NAN).score == 0.0
    r = metric_reward(nse, 0.2)
    assert r.weights == (0.40, 0.60) and r.reference is None


def test_zero_override_does_not_fire_without_a_reference():
    r = metric_reward(Metric.parse("rmse", "< 2"), 0.0)
    assert not r.zero_override
    assert r.score == approx(0.40 * 1 + 0.60 * 1)


@pytest.mark.parametrize("value", [NAN, INF, -INF, True, False, "0.4", None, [0.4]])
def test_non_numbers_score_zero(value):
    for metric in (NSE, RMSE, Metric.parse("nse", ">= 0.3")):
        r = metric_reward(metric, value)
        assert r.score == 0.0 and r.sanity == 0.0 and r.target == 0.0 and r.value is None


def test_unreported_metric_scores_zero():
    r = metric_reward(NSE, 0.4, reported=False)
    assert r.score == 0.0 and not r.reported


# --- query_reward ----------------------------------------------------------------------------


def test_query_reward_is_the_mean_over_metrics():
    expected = (
        (0.10 * 1 + 0.40 * 1 + 0.50 * (0.4 / 0.5)) + (0.10 * 1 + 0.40 * 0 + 0.50 * (2.0 / 2.5))
    ) / 2
    assert query_reward([NSE, RMSE], {"nse": 0.4, "rmse": 2.5}) == approx(expected)


def test_missing_metric_scores_zero_and_extra_names_are_ignored():
    expected = ((0.10 * 1 + 0.40 * 1 + 0.50 * (0.4 / 0.5)) + 0) / 2
    assert query_reward([NSE, RMSE], {"nse": 0.4}) == approx(expected)
    assert query_reward([NSE, RMSE], {"nse": 0.4, "extra": 99.0, "RMSE": 1.0}) == approx(expected)


def test_mixed_reference_and_missing_reference_in_one_query():
    no_ref = Metric.parse("kge", ">= 0.5")
    expected = ((0.10 * 1 + 0.40 * 1 + 0.50 * 1) + (0.40 * 1 + 0.60 * 0)) / 2
    assert query_reward([NSE, no_ref], {"nse": 0.6, "kge": 0.1}) == approx(expected)


@pytest.mark.parametrize(
    "report",
    [
        None,
        [0.4, 2.5],
        0.4,
        "not json",
        "[0.4, 2.5]",
        "",
        b"\xff\xfe",
        "x" * (MAX_REPORT_CHARS + 1),
    ],
)
def test_unreadable_report_scores_zero(report):
    q = score_query([NSE, RMSE], report)
    assert q.score == 0.0 and not q.parsed
    assert all(not m.reported for m in q.metrics)


def test_json_report_is_read():
    expected = ((0.10 * 1 + 0.40 * 1 + 0.50 * (0.4 / 0.5)) + 0) / 2  # NaN: sanity 0, all 0
    assert query_reward([NSE, RMSE], '{"nse": 0.4, "rmse": NaN}') == approx(expected)
    assert query_reward([NSE, RMSE], b'{"nse": 0.4, "rmse": NaN}') == approx(expected)
    assert parse_report({1: 0.5, "a": 1}) == {"a": 1}  # non-string keys cannot match a name


def test_breakdown_for_info_is_json_ready():
    q = score_query([NSE, RMSE], {"nse": 0.4, "rmse": 0})
    d = json.loads(json.dumps(q.to_dict()))
    assert d["parsed"] is True
    assert [m["name"] for m in d["metrics"]] == ["nse", "rmse"]
    assert d["metrics"][1]["zero_override"] is True and d["metrics"][1]["score"] == 0.0
    assert d["score"] == approx(((0.10 * 1 + 0.40 * 1 + 0.50 * (0.4 / 0.5)) + 0) / 2)
    assert d["metrics"][0]["weights"] == [0.10, 0.40, 0.50]


def test_query_spec_errors():
    with pytest.raises(ValueError, match="at least one metric"):
        query_reward([], {"a": 1})
    with pytest.raises(ValueError, match="duplicate"):
        query_reward([NSE, NSE], {"nse": 1})


def test_reward_bounds():
    for value in (-1e9, -1, 0, 1e-9, 0.3, 0.5, 2, 1e9):
        for metric in (NSE, RMSE, Metric.parse("x", "lower is better", reference=-2.0)):
            s = metric_reward(metric, value).score
            assert 0.0 <= s <= 1.0 and math.isfinite(s)


# --- the absolute score's pieces (C.2) -------------------------------------------------------


def test_metric_passes():
    assert metric_passes(NSE, 0.3) and not metric_passes(NSE, 0.29)
    assert metric_passes(RMSE, 0.0)  # pass ignores the zero override; the realistic filter acts
    assert not metric_passes(NSE, NAN) and not metric_passes(NSE, None)
    assert metric_passes(Metric.parse("m", "lower is better"), 5.0)


def test_query_pass_rate():
    assert query_pass_rate([NSE, RMSE], {"nse": 0.4, "rmse": 3.0}) == approx(1 / 2)
    assert query_pass_rate([NSE, RMSE], {"nse": 0.4, "rmse": 1.0}) == approx(2 / 2)
    assert query_pass_rate([NSE, RMSE], {"nse": 0.4}) == approx(1 / 2)  # missing name fails
    assert query_pass_rate([NSE, RMSE], {"NSE": 0.4, "rmse": 1.0}) == approx(1 / 2)  # exact
    assert query_pass_rate([NSE, RMSE], "garbage") == 0.0
    assert passed_metrics([NSE, RMSE], {"nse": 0.4, "rmse": 1.0}) == 2


@pytest.mark.parametrize(
    ("report", "realistic"),
    [
        ({"nse": 0.6, "rmse": 0.0}, True),
        ({"nse": 0.0, "rmse": 0}, False),  # all zeros
        ({"nse": 0.6, "rmse": -1}, False),  # a -1 sentinel
        ({"nse": 0.6, "rmse": -1.0}, False),
        ({"nse": -0.2, "rmse": -3.0}, False),  # negative values only
        ({"nse": 1e-12, "rmse": -0.5}, True),  # strictly positive is enough
        ({}, False),
        (None, False),
        ("no json", False),
        ({"nse": True, "rmse": 0}, False),  # a bool is not a positive number
        ({"nse": "0.7", "rmse": 0}, False),  # nor is a string
        ({"nse": NAN, "rmse": 0.2}, True),  # NaN neither helps nor disqualifies
        ({"nse": INF, "rmse": 0}, False),
        ('{"nse": 0.6, "rmse": 1.2}', True),
    ],
)
def test_is_realistic(report, realistic):
    assert is_realistic(report) is realistic
    assert is_realistic(report, ["nse", "rmse"]) is realistic


def test_is_realistic_reads_only_the_querys_metrics_when_named():
    assert is_realistic({"nse": 0, "ok": 1}) is True
    assert is_realistic({"nse": 0, "ok": 1}, ["nse"]) is False  # an extra key lifts nothing
    assert is_realistic({"nse": 0.5, "status": -1}, ["nse"]) is True
    assert is_realistic({"nse": 0.5, "status": -1}) is False
