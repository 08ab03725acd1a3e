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
from dataclasses import dataclass
from typing import Any

from sciagent_gym.benchmarks.stbench.metrics import (
    Metric,
    QueryReward,
    is_realistic,
    metric_passes,
    score_query,
)
from sciagent_gym.errors import ParamError
from sciagent_gym.evaluation.checks import fmt, register_check
from sciagent_gym.evaluation.criterion import Criterion
from sciagent_gym.evaluation.getters import GETTERS
from sciagent_gym.evaluation.state import FinalState

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


@dataclass(frozen=True)
class StbenchOutcome:
    """A query's training reward with what it was scored against: each metric's definition
    (target, polarity, reference) beside its reward, and whether the report passed the
    realistic filter (None without a ``stbench_realistic`` criterion). Enough to rebuild the
    query for ST-Bench's evaluation metrics from a run's results."""

    reward: QueryReward
    metrics: tuple[Metric, ...]
    realistic: bool | None

    @property
    def score(self) -> float:
        return self.reward.score

    def to_dict(self) -> dict[str, Any]:
        out = self.reward.to_dict()
        out["metrics"] = [{**r, "definition": m.to_dict()}
                          for r, m in zip(out["metrics"], self.metrics, strict=True)]
        out["realistic"] = self.realistic
        return out


def _read(c: Criterion, state: FinalState) -> tuple[bool, Any]:
    try:
        return True, GETTERS[c.getter](state, **c.getter_params)
    except Exception:  # unreadable: not reported
        return False, None


def stbench_reward(criteria: Sequence[Criterion], state: FinalState) -> StbenchOutcome | None:
    """ST-Bench's training reward of the final state: the mean over the ``stbench_target``
    criteria of ``0.10 sanity + 0.40 target + 0.50 reference`` (see
    :mod:`sciagent_gym.benchmarks.stbench.metrics`), each metric named after its criterion. A value
    the getter cannot read counts as not reported (0). None when no criterion is a metric."""
    metrics: list[Metric] = []
    reported: dict[str, Any] = {}
    realistic: bool | None = None
    for c in criteria:
        if c.check == REALISTIC and realistic is None:
            ok, value = _read(c, state)
            realistic = ok and stbench_realistic(value, **c.check_params)[0]
        if c.check != TARGET:
            continue
        metrics.append(_metric(c.name, c.check_params))
        ok, value = _read(c, state)
        if ok:
            reported[c.name] = value
    if not metrics:
        return None
    return StbenchOutcome(score_query(metrics, reported), tuple(metrics), realistic)
