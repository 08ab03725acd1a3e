"""ST-Bench's evaluation metrics (paper C.2, D.1) over per-query records of finished runs.

Each query a system ran leaves a :class:`QueryRecord` (the metrics dictionary it reported or
``None``, the query's targets, its cost, its task's tags). From those: per task
(:func:`task_scores`) the realistic output rate, the pass rate conditional on realistic output and
``score_t = realistic_rate * conditional_pass_rate`` (C.2's ``success_rate_t * pass_rate_t``,
named as in D.1); per system (:func:`system_score`) the headline composite, the sum of per-task
scores (out of the task count: "out of 100" for ST-Bench), and its mean; against a baseline
(:func:`compare`) win rate, mean score gain, time and token cost ratios and efficiency; cuts by
domain, category, difficulty and the four tag axes (:func:`cut_scores`, :func:`compare_cuts`).
Scores are fractions in [0, 1] (the paper prints percentages). Results are frozen dataclasses with
``to_dict()``, for ``report`` to print as tables. No I/O: the caller builds the records.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from sciagent_gym.benchmarks.stbench.metrics import Metric, is_number, is_realistic, passed_metrics

TAG_AXES: tuple[str, ...] = ("domain", "category", "difficulty", "capability", "pipeline_stage",
                             "cognitive_skill", "mas_challenge")  # fmt: skip
"""The axes results are cut by (paper C.4, D.2): the task's domain, its category, its declared
difficulty, and the four tag axes (capability dimension, pipeline stage, cognitive skill, MAS
challenge)."""

TIE_TOLERANCE = 1e-12
"""Two per-task scores closer than this are a tie, so float rounding (``0.1 + 0.2`` against
``0.3``) never turns a tie into a win."""

EFFICIENCY_FLOOR = 0.1
"""The clip of efficiency's denominator, ``max(rho - 1, 0.1)`` (paper C.2)."""


class _Row:
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the fields (nested dataclasses as dicts)."""
        return asdict(self)  # type: ignore[call-overload]


@dataclass(frozen=True)
class TaskTags:
    """A task's labels for evaluation cuts (paper C.4); empty strings when unlabelled."""

    domain: str = ""
    category: str = ""
    difficulty: str = ""
    capability: str = ""
    pipeline_stage: str = ""
    cognitive_skill: str = ""
    mas_challenge: str = ""


@dataclass(frozen=True)
class QueryRecord:
    """What one finished query of one system leaves for evaluation.

    Attributes:
        task_id, query_id: the query's identity; ``(task_id, query_id)`` pairs a system's query
            with the baseline's for cost ratios.
        split: ``"train"``, ``"val"`` or ``"test"``; ST-Bench reports on ``"test"``.
        reported: the agent's metrics dictionary (a mapping or its JSON text), or ``None`` when
            it reported nothing (crash, timeout, query never reached). ``None`` counts as a
            query without realistic output, not as a missing query.
        metrics: the query's defined metrics and targets.
        wall_seconds: wall-clock time the system spent on the query.
        tokens: tokens it consumed, or ``None`` where the system does not account tokens.
        tags: the task's labels; every record of a task must carry the same ones.
    """

    task_id: str
    query_id: str
    split: str
    reported: Mapping[str, object] | str | None
    metrics: tuple[Metric, ...]
    wall_seconds: float
    tokens: int | None = None
    tags: TaskTags = field(default_factory=TaskTags)

    def __post_init__(self) -> None:
        where = f"query {self.task_id}/{self.query_id}"
        if not self.metrics:
            raise ValueError(f"{where}: no metrics")
        if not _is_cost(self.wall_seconds):
            raise ValueError(f"{where}: wall_seconds {self.wall_seconds!r} is not a cost >= 0")
        if self.tokens is not None and not _is_cost(self.tokens):
            raise ValueError(f"{where}: tokens {self.tokens!r} is not a count >= 0")


def _is_cost(x: object) -> bool:
    return is_number(x) and float(x) >= 0  # type: ignore[arg-type]


@dataclass(frozen=True)
class TaskScore(_Row):
    """One system's absolute score on one task (paper C.2, D.1).

    ``realistic_rate`` is the share of the task's queries with realistic output;
    ``conditional_pass_rate`` the share of metric targets cleared on those queries
    (``n_passed / n_targets``, 0 when none is realistic); ``score`` their product.
    """

    task_id: str
    tags: TaskTags
    n_queries: int
    n_realistic: int
    n_targets: int
    n_passed: int
    realistic_rate: float
    conditional_pass_rate: float
    score: float


def _by_task(records: Iterable[QueryRecord], split: str | None) -> dict[str, list[QueryRecord]]:
    tasks: dict[str, list[QueryRecord]] = {}
    seen: set[tuple[str, str]] = set()
    for r in records:
        if split is not None and r.split != split:
            continue
        key = (r.task_id, r.query_id)
        if key in seen:
            raise ValueError(f"query {r.task_id}/{r.query_id} recorded twice")
        seen.add(key)
        group = tasks.setdefault(r.task_id, [])
        if group and group[0].tags != r.tags:
            raise ValueError(f"task {r.task_id}: its records carry different tags")
        group.append(r)
    return tasks


def _task_score(task_id: str, records: Sequence[QueryRecord]) -> TaskScore:
    n_realistic = n_targets = n_passed = 0
    for r in records:
        if is_realistic(r.reported, [m.name for m in r.metrics]):
            n_realistic += 1
            n_targets += len(r.metrics)
            n_passed += passed_metrics(r.metrics, r.reported)
    realistic_rate = n_realistic / len(records)
    conditional = n_passed / n_targets if n_targets else 0.0
    return TaskScore(task_id, records[0].tags, len(records), n_realistic, n_targets, n_passed,
                     realistic_rate, conditional, realistic_rate * conditional)


def task_scores(records: Iterable[QueryRecord], split: str | None = "test") -> list[TaskScore]:
    """Per-task absolute scores on ``split`` (all splits when ``None``), sorted by task id.

    ``score_t = realistic_rate_t * conditional_pass_rate_t``. A query is realistic when
    :func:`~sciagent_gym.benchmarks.stbench.metrics.is_realistic` holds for the values reported
    under its defined metric names. The conditional pass rate pools the metric targets of the task's
    realistic queries (D.1: "the share of inequality targets cleared on those queries"); since
    a task's queries share its metric list, this equals both the mean of per-query pass rates and
    the mean of per-metric pass rates, the other readings of C.2's wording.

    Raises:
        ValueError: a query recorded twice, or a task whose records disagree on its tags.
    """
    tasks = _by_task(records, split)
    return [_task_score(t, tasks[t]) for t in sorted(tasks)]


@dataclass(frozen=True)
class SystemScore(_Row):
    """One system's headline numbers on a split (paper C.2, D.1).

    ``composite`` is the sum of per-task scores (ST-Bench's headline, out of the task count),
    ``mean_score`` its mean per task. ``realistic_rate`` and ``conditional_pass_rate`` are D.1's
    two axes pooled over all the system's queries (realistic queries / queries; targets cleared /
    targets on realistic queries). ``mean_tokens`` is over the queries that account tokens,
    ``None`` if none does.
    """

    n_tasks: int
    n_queries: int
    composite: float
    mean_score: float
    realistic_rate: float
    conditional_pass_rate: float
    mean_wall_seconds: float
    mean_tokens: float | None
    tasks: tuple[TaskScore, ...]


def system_score(records: Iterable[QueryRecord], split: str | None = "test") -> SystemScore:
    """The system's composite and coverage/quality decomposition on ``split``.

    Raises:
        ValueError: no record on the split (an empty run has no score to report), or as
            :func:`task_scores`.
    """
    kept = [r for r in records if split is None or r.split == split]
    tasks = task_scores(kept, None)
    if not tasks:
        raise ValueError(f"no query records on split {split!r}")
    n_queries = sum(t.n_queries for t in tasks)
    n_targets = sum(t.n_targets for t in tasks)
    tokens = [r.tokens for r in kept if r.tokens is not None]
    composite = math.fsum(t.score for t in tasks)
    return SystemScore(
        n_tasks=len(tasks),
        n_queries=n_queries,
        composite=composite,
        mean_score=composite / len(tasks),
        realistic_rate=sum(t.n_realistic for t in tasks) / n_queries,
        conditional_pass_rate=sum(t.n_passed for t in tasks) / n_targets if n_targets else 0.0,
        mean_wall_seconds=math.fsum(r.wall_seconds for r in kept) / len(kept),
        mean_tokens=math.fsum(tokens) / len(tokens) if tokens else None,
        tasks=tuple(tasks),
    )


@dataclass(frozen=True)
class CostRatio(_Row):
    """``ratio = mean per-query cost of the system / that of the baseline`` (paper C.2's rho),
    over ``n_pairs`` queries both ran and both costed; ``ratio`` is ``None`` ("n/a") when no
    such query exists or the baseline's mean cost is 0."""

    ratio: float | None
    n_pairs: int
    system_mean: float | None
    baseline_mean: float | None


def cost_ratio(system: Mapping[Any, float | None],
               baseline: Mapping[Any, float | None]) -> CostRatio:
    """The cost ratio of two systems from per-query costs keyed by query.

    Only queries present in both mappings with a cost on both sides count, so the two means are
    over the same queries. This is what makes the token ratio honest where one side accounts
    tokens only for some queries (ST-Bench: "token accounting ... is not available for every MAS
    adapter"); for wall time, which every run logs, it pairs the same test queries.
    """
    keys = [k for k, c in system.items() if c is not None and baseline.get(k) is not None]
    if not keys:
        return CostRatio(None, 0, None, None)
    sys_mean = math.fsum(system[k] for k in keys) / len(keys)  # type: ignore[misc]
    base_mean = math.fsum(baseline[k] for k in keys) / len(keys)  # type: ignore[misc]
    ratio = sys_mean / base_mean if base_mean > 0 else None
    return CostRatio(ratio, len(keys), sys_mean, base_mean)


def efficiency(mean_gain: float, rho: float | None) -> float | None:
    """Paper C.2's efficiency ``eta = mean_gain / max(rho - 1, 0.1)``: score gained per unit of
    extra cost. The clip keeps systems about as cheap as the baseline (or cheaper) from dividing
    by ~0 or flipping the sign. ``None`` when the cost ratio is not available."""
    if rho is None:
        return None
    return mean_gain / max(rho - 1.0, EFFICIENCY_FLOOR)


@dataclass(frozen=True)
class TaskComparison(_Row):
    """One task's score for the system and the baseline; ``win`` is a strict improvement."""

    task_id: str
    tags: TaskTags
    score: float
    baseline_score: float
    gain: float
    win: bool


@dataclass(frozen=True)
class Comparison(_Row):
    """A system against a baseline on a split (paper C.2).

    ``win_rate``: share of tasks where the system scores strictly higher (a tie is not a win).
    ``mean_gain``: mean per-task ``score - baseline_score`` (the paper's Delta perf).
    ``time``/``tokens``: cost ratios (:class:`CostRatio`); ``eta_time``/``eta_tokens``: efficiency
    with each, ``None`` when its ratio is not available.
    """

    n_tasks: int
    win_rate: float
    mean_gain: float
    time: CostRatio
    tokens: CostRatio
    eta_time: float | None
    eta_tokens: float | None
    tasks: tuple[TaskComparison, ...]


def compare(system: Iterable[QueryRecord], baseline: Iterable[QueryRecord],
            split: str | None = "test") -> Comparison:
    """Win rate, mean score gain, cost ratios and efficiency of ``system`` over ``baseline``.

    The task set is the union of both runs' tasks on the split; a task one side has no record of
    scores 0 there (it produced nothing, as the paper scores a system that "fails entirely on a
    task"), and takes its tags from the other side.

    Raises:
        ValueError: neither run has a record on the split, or as :func:`task_scores`.
    """
    sys_records = [r for r in system if split is None or r.split == split]
    base_records = [r for r in baseline if split is None or r.split == split]
    mine = {t.task_id: t for t in task_scores(sys_records, None)}
    theirs = {t.task_id: t for t in task_scores(base_records, None)}
    ids = sorted(mine.keys() | theirs.keys())
    if not ids:
        raise ValueError(f"no query records on split {split!r} in either run")
    rows = []
    for t in ids:
        a, b = mine.get(t), theirs.get(t)
        score = a.score if a else 0.0
        base = b.score if b else 0.0
        tags = a.tags if a else b.tags  # type: ignore[union-attr]
        rows.append(TaskComparison(t, tags, score, base, score - base,
                                   score > base + TIE_TOLERANCE))
    win_rate = sum(r.win for r in rows) / len(rows)
    mean_gain = math.fsum(r.gain for r in rows) / len(rows)
    time = cost_ratio(
        {(r.task_id, r.query_id): r.wall_seconds for r in sys_records},
        {(r.task_id, r.query_id): r.wall_seconds for r in base_records},
    )
    tokens = cost_ratio(
        {(r.task_id, r.query_id): r.tokens for r in sys_records},
        {(r.task_id, r.query_id): r.tokens for r in base_records},
    )
    return Comparison(
        n_tasks=len(rows),
        win_rate=win_rate,
        mean_gain=mean_gain,
        time=time,
        tokens=tokens,
        eta_time=efficiency(mean_gain, time.ratio),
        eta_tokens=efficiency(mean_gain, tokens.ratio),
        tasks=tuple(rows),
    )


def generalizability(per_task: Iterable[QueryRecord], per_category: Iterable[QueryRecord],
                     split: str | None = "test") -> float:
    """Paper C.2's ``gen(M)``: mean per-task score of a method's per-task variant minus its
    per-category variant (near 0 or negative: the category-level workflow transfers)."""
    return compare(per_task, per_category, split).mean_gain


@dataclass(frozen=True)
class Cut(_Row):
    """One group of a cut: the tasks whose ``axis`` tag is ``value`` and their mean score."""

    axis: str
    value: str
    n_tasks: int
    mean_score: float


def _check_axis(axis: str) -> None:
    if axis not in TAG_AXES:
        raise ValueError(f"unknown cut axis {axis!r}; expected one of {', '.join(TAG_AXES)}")


def cut_scores(tasks: Iterable[TaskScore], axis: str) -> list[Cut]:
    """Mean per-task score by the value of one tag axis (paper D.2), groups sorted by value.

    Raises:
        ValueError: ``axis`` is not one of :data:`TAG_AXES`.
    """
    _check_axis(axis)
    groups: dict[str, list[float]] = {}
    for t in tasks:
        groups.setdefault(getattr(t.tags, axis), []).append(t.score)
    return [Cut(axis, v, len(s), math.fsum(s) / len(s)) for v, s in sorted(groups.items())]


@dataclass(frozen=True)
class CutComparison(_Row):
    """One group of a cut against the baseline (paper Table 4): mean scores, their gain, and
    the share of the group's tasks the system wins."""

    axis: str
    value: str
    n_tasks: int
    baseline_mean: float
    system_mean: float
    gain: float
    win_rate: float


def compare_cuts(comparison: Comparison, axis: str) -> list[CutComparison]:
    """A :func:`compare` result cut by one tag axis, groups sorted by value.

    Raises:
        ValueError: ``axis`` is not one of :data:`TAG_AXES`.
    """
    _check_axis(axis)
    groups: dict[str, list[TaskComparison]] = {}
    for t in comparison.tasks:
        groups.setdefault(getattr(t.tags, axis), []).append(t)
    out = []
    for v, rows in sorted(groups.items()):
        n = len(rows)
        base = math.fsum(r.baseline_score for r in rows) / n
        mine = math.fsum(r.score for r in rows) / n
        out.append(CutComparison(axis, v, n, base, mine, mine - base, sum(r.win for r in rows) / n))
    return out
