"""ST-Bench (Cheng et al., NeurIPS 2026) ported: a query's metrics are ``stbench_target``
criteria (:mod:`.criteria`, which registers the checks), its training reward is
``reward="stbench"`` (:mod:`.metrics`, paper C.3), every episode of such a task carries the
reward's per-metric breakdown in ``info["stbench"]``, and ``sciagent-gym report`` rebuilds the
paper's evaluation from it (:mod:`.evaluation`, :mod:`.report`; paper C.2, D.1). The query
pools a task draws its variants from are the task format's (``sciagent_gym.tasks.queries``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sciagent_gym.benchmarks.registry import Benchmark, register_benchmark
from sciagent_gym.benchmarks.stbench.criteria import TARGET, StbenchOutcome, stbench_reward
from sciagent_gym.benchmarks.stbench.report import add_options, report_section
from sciagent_gym.evaluation.rewards import (
    EpisodeEnd,
    EpisodeReport,
    Reward,
    register_report,
    register_reward,
)

__all__ = ["StbenchOutcome", "stbench_reward", "training_finding"]


def _refuses(evaluator: Sequence[Mapping[str, Any]]) -> str | None:
    if any(c.get("check", {}).get("op") == TARGET for c in evaluator):
        return None
    return "its metrics are not stbench_target criteria (it has none)"


def _final(end: EpisodeEnd) -> float:
    # ST-Bench's reward applies no gate, but giving up on a feasible task earns nothing
    if end.gave_up:
        return 0.0
    outcome = stbench_reward(end.criteria, end.state)
    return outcome.score if outcome is not None else 0.0


def training_finding(outcome: StbenchOutcome | None) -> str | None:
    """What is wrong when a cheat's training outcome meets a metric's target: the reward
    applies no gate, and the paper's reward gives any finite report its sanity credit (0.10)
    and a failing value its share of the reference, which is shaping; a met target is payment
    for work the cheat did not do."""
    if outcome is None:
        return None
    met = [m.name for m in outcome.reward.metrics if m.target > 0]
    if not met:
        return None
    return f"reward='stbench' pays {outcome.score:.3f}: target met by {', '.join(met)}"


def _audit(end: EpisodeEnd) -> str | None:
    return training_finding(stbench_reward(end.criteria, end.state))


def _breakdown(criteria, state) -> dict[str, Any] | None:
    outcome = stbench_reward(criteria, state)
    return outcome.to_dict() if outcome is not None else None


register_reward(Reward(
    "stbench", _final, refuses=_refuses, audit=_audit,
    doc="ST-Bench's continuous training reward at the end (tasks whose metrics are "
        "stbench_target criteria; no gate applies, FAIL on a feasible task earns 0)"))
register_report(EpisodeReport("stbench", _breakdown))
register_benchmark(Benchmark("stbench", "ST-Bench", report_section, add_options))
