"""ST-Bench queries as ordinary criteria, and its training reward computed from the same ones.

A query's metrics are criteria whose check is ``stbench_target`` (one per metric: the getter
reads the reported value, e.g. ``file_json`` of ``metrics.json`` at the metric's key; the check
holds the inequality target, the polarity and the reference value, usually ``$gold.…`` from the
reference pipeline run at staging). A ``stbench_realistic`` gate (weight 0, ``"gate": true``,
first) over the whole report is ST-Bench's realistic-output filter. The partial-credit score is
then the paper's absolute per-query score (the share of targets met, 0 for a defensive report),
and :func:`stbench_reward` the continuous training reward (paper C.3), read from the same
criteria with no gate applied, which ``reward="stbench"`` pays. One definition, two scores.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sciagent_gym.errors import ParamError
from sciagent_gym.evaluation.checks import fmt, register_check
from sciagent_gym.evaluation.evaluator import Criterion
from sciagent_gym.evaluation.getters import GETTERS
from sciagent_gym.evaluation.state import FinalState
from sciagent_gym.evaluation.stbench import (
    Metric,
    QueryReward,
    is_realistic,
    metric_passes,
    score_query,
)

TARGET = "stbench_target"
REALISTIC = "stbench_realistic"


def _metric(name: str, params: Mapping[str, Any]) -> Metric:
    return Metric.parse(name, params["target"], higher_is_better=params.get("higher_is_better"),
                        reference=params.get("reference"))


def _v_target(params: Mapping[str, Any]) -> None:
    extra = set(params) - {"target", "reference", "higher_is_better"}
    if extra or not isinstance(params.get("target"), str):
        raise ParamError("target", "stbench_target takes target (\">= 0.6\", \"lower is "
                         "better\"), reference and higher_is_better")
    ref = params.get("reference")
    if isinstance(ref, str) and ref.startswith("$"):
        ref = None  # filled from gold values when the task is staged
    try:
        _metric("metric", {**params, "reference": ref})
    except ValueError as exc:
        raise ParamError("target", str(exc)) from None


def _v_realistic(params: Mapping[str, Any]) -> None:
    names = params.get("names")
    if set(params) != {"names"} or not isinstance(names, list) or not names \
            or not all(isinstance(n, str) for n in names):
        raise ParamError("names", "stbench_realistic takes names: the query's metric names")


@register_check(TARGET, _v_target)
def stbench_target(value: Any, target: str, reference: float | None = None,
                   higher_is_better: bool | None = None) -> tuple[bool, str]:
    """The reported value is a finite number that meets the metric's target (paper C.2)."""
    metric = _metric("metric", {"target": target, "reference": reference,
                                "higher_is_better": higher_is_better})
    ok = metric_passes(metric, value)
    ref = "" if reference is None else f", reference {fmt(reference)}"
    return ok, f"got {fmt(value)}, target {metric.target}{ref}"


@register_check(REALISTIC, _v_realistic)
def stbench_realistic(value: Any, names: list[str]) -> tuple[bool, str]:
    """A realistic report (paper C.2): among the query's metrics at least one strictly positive
    number and no -1 sentinel; all zeros, -1 or no numbers are defensive defaults."""
    ok = is_realistic(value, names)
    return ok, "realistic output" if ok else f"defensive or missing output: {fmt(value)}"


def stbench_reward(criteria: Sequence[Criterion], state: FinalState) -> QueryReward | None:
    """ST-Bench's training reward of the final state: the mean over the ``stbench_target``
    criteria of ``0.10 sanity + 0.40 target + 0.50 reference`` (see
    :mod:`sciagent_gym.evaluation.stbench`), each metric named after its criterion. A value
    the getter cannot read counts as not reported (0). None when no criterion is a metric."""
    metrics: list[Metric] = []
    reported: dict[str, Any] = {}
    for c in criteria:
        if c.check != TARGET:
            continue
        metrics.append(_metric(c.name, c.check_params))
        try:
            reported[c.name] = GETTERS[c.getter](state, **c.getter_params)
        except Exception:  # unreadable: the metric was not reported
            continue
    return score_query(metrics, reported) if metrics else None
