"""Reward functions by name: what ``gym.make(..., reward=NAME)`` pays.

The evaluator's score is one definition of success; a training loop may want another view of
the same episode (a binary signal, shaped progress, a ported benchmark's own reward). Each view
is a :class:`Reward` registered under a name: it reads the episode's end (:class:`EpisodeEnd`:
the criteria, the frozen final state, the evaluation, whether the agent gave up) and returns the
final step's reward. Built in: ``partial``, ``binary`` and ``dense``. A ported benchmark's
package registers its own (``sciagent_gym.benchmarks.stbench`` registers ``stbench``), so the
env has no branch per benchmark and a new reward is one :func:`register_reward` call.

An :class:`EpisodeReport` adds a named breakdown to the final step's ``info`` whatever the
reward (ST-Bench's per-metric training reward, which its report rebuilds the evaluation from).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sciagent_gym.evaluation.criterion import Criterion
from sciagent_gym.evaluation.evaluator import EvaluationResult
from sciagent_gym.evaluation.state import FinalState


@dataclass(frozen=True)
class EpisodeEnd:
    """What a reward sees when an episode ends. ``gave_up``: ``FAIL`` on a feasible task.
    ``paid``: what the env already paid during the episode (a dense reward's progress)."""

    criteria: Sequence[Criterion]
    state: FinalState
    evaluation: EvaluationResult
    gave_up: bool
    paid: float = 0.0


@dataclass(frozen=True)
class Reward:
    """A named reward. ``final`` pays the last step. ``dense``: the env also pays, after every
    step, the change in a progress score from the cheap criteria (``evaluation.cost``), and
    ``final`` gets what was paid in ``EpisodeEnd.paid``. ``refuses``: given a task's evaluator
    (the spec's criteria list), why this reward cannot score it, or None; the env raises at
    reset rather than pay 0 for ever. ``audit``: for the cheat audit, why paying this
    episode (a cheat's) would pay for work not done, or None; the evaluator's score is audited
    directly, so only a reward that reads the criteria its own way (no gates, shaping) needs
    one."""

    name: str
    final: Callable[[EpisodeEnd], float]
    doc: str
    dense: bool = False
    refuses: Callable[[Sequence[Mapping[str, Any]]], str | None] | None = None
    audit: Callable[[EpisodeEnd], str | None] | None = None


@dataclass(frozen=True)
class EpisodeReport:
    """A breakdown the env puts in the final step's ``info[key]`` when ``build`` returns one
    (a JSON-able dict; None: not this kind of task)."""

    key: str
    build: Callable[[Sequence[Criterion], FinalState], Mapping[str, Any] | None]


REWARDS: dict[str, Reward] = {}
REPORTS: dict[str, EpisodeReport] = {}


def register_reward(reward: Reward) -> Reward:
    """Make ``reward`` available as ``reward=reward.name``; a name is registered once."""
    if reward.name in REWARDS and REWARDS[reward.name] is not reward:
        raise ValueError(f"reward {reward.name!r} is already registered")
    REWARDS[reward.name] = reward
    return reward


def register_report(report: EpisodeReport) -> EpisodeReport:
    """Put ``report``'s breakdown in ``info[report.key]`` at the end of every episode."""
    if report.key in REPORTS and REPORTS[report.key] is not report:
        raise ValueError(f"episode report {report.key!r} is already registered")
    REPORTS[report.key] = report
    return report


def get_reward(name: str) -> Reward:
    """The reward registered as ``name``; a ValueError names the known ones."""
    try:
        return REWARDS[name]
    except KeyError:
        raise ValueError(f"reward must be one of {tuple(REWARDS)}, not {name!r}") from None


def episode_reports(criteria: Sequence[Criterion], state: FinalState) -> dict[str, Any]:
    """Every registered report that has something to say about this episode, by key."""
    out = {}
    for key, report in REPORTS.items():
        value = report.build(criteria, state)
        if value is not None:
            out[key] = value
    return out


def cheat_findings(end: EpisodeEnd) -> str | None:
    """What the registered rewards' audits find wrong in paying ``end`` (a cheat's episode),
    joined with "; ", or None when none does."""
    found = [f for r in REWARDS.values() if r.audit is not None
             for f in [r.audit(end)] if f]
    return "; ".join(found) or None


def _partial(end: EpisodeEnd) -> float:
    return float(end.evaluation.score)


def _binary(end: EpisodeEnd) -> float:
    return 1.0 if end.evaluation.success else 0.0


def _dense(end: EpisodeEnd) -> float:
    return float(end.evaluation.score) - end.paid


register_reward(Reward("partial", _partial, "the evaluator's score at the end"))
register_reward(Reward("binary", _binary, "1.0 on success (every criterion passed), else 0"))
register_reward(Reward(
    "dense", _dense, dense=True,
    doc="after every step, the change in a progress score from the cheap criteria only "
        "(files, tables, status, windows, pixels) with every criterion's weight in the total; "
        "the final step adds the rest, so an episode's rewards sum to its final partial score"))
