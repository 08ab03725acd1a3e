"""ST-Bench's training reward and per-metric grading (Cheng et al., NeurIPS 2026), pure functions.

A query has named numeric metrics, each with an inequality target (``"> 0.3"``) or only a polarity
(``"lower is better"``); the agent reports a metrics dictionary. The **training reward** (paper
C.3) scores each metric ``s = 0.10 s_sanity + 0.40 s_target + 0.50 s_reference`` with a zero
override and 0.40/0.60 weights when the reference is missing, and averages over the query
(:func:`metric_reward`, :func:`query_reward`). The **absolute score's** pieces (paper C.2) are the
per-metric pass (:func:`metric_passes`) and the realistic-output filter (:func:`is_realistic`);
:mod:`sciagent_gym.benchmarks.stbench.evaluation` builds per-task scores from them. No I/O, no
state: the env's ``reward="stbench"``, the evaluator and ``report`` call the same functions.
Readings of what the paper leaves open: :data:`WEIGHTS_NO_REFERENCE`, :func:`s_target`,
:func:`s_reference`, :func:`is_realistic`.
"""

from __future__ import annotations

import json
import math
import numbers
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

Op = Literal[">=", ">", "<=", "<"]

WEIGHTS: tuple[float, float, float] = (0.10, 0.40, 0.50)
"""Weights of (sanity, target, reference) when the query's metric has a reference (paper C.3)."""

WEIGHTS_NO_REFERENCE: tuple[float, float] = (0.40, 0.60)
"""Weights of (sanity, target) when the reference is missing.

The paper says only that it "drops reference and renormalize[s] the remaining weights to 0.40 and
0.60". The remaining components, in the order the paper lists them, are sanity then target, so
sanity gets 0.40 and target 0.60. The other assignment (sanity 0.60) would pay more for *any*
finite number than for meeting the target: the defensive-default attractor the reward removes.
0.40/0.60 is not the proportional renormalisation of 0.10/0.40 (0.20/0.80); the paper's numbers
are used as printed."""

SENTINEL = -1
"""The defensive "could not compute" value the realistic filter rejects (paper C.2)."""

MAX_REPORT_CHARS = 1_000_000
"""Largest JSON text :func:`parse_report` will read; a larger report is unparsable (scores 0)."""

_OPS: dict[str, Op] = {">=": ">=", "≥": ">=", "=>": ">=", ">": ">", "<=": "<=", "≤": "<=",
                       "=<": "<=", "<": "<"}  # fmt: skip
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_TARGET_RE = re.compile(rf"^\s*(>=|=>|≥|>|<=|=<|≤|<)\s*({_NUMBER})\s*$")
_POLARITY_RE = re.compile(r"^\s*(higher|lower)[\s_-]+is[\s_-]+better\s*$", re.IGNORECASE)


def is_number(value: object) -> bool:
    """True for a finite real number: an int or float (or a NumPy scalar of either). Rejects NaN
    and +/-inf, bools (``True`` is no metric though Python counts it as 1), strings (even
    ``"0.5"``: the report is a dictionary of numbers; a string is what a defensive ``str(exc)``
    gives), ``None`` and everything else."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    try:
        return math.isfinite(float(value))
    except (OverflowError, ValueError, TypeError):  # e.g. an int too large for a float
        return False


@dataclass(frozen=True)
class Metric:
    """One named metric of a query: its target, its polarity and (optionally) its reference.

    Attributes:
        name: the key the agent must report, matched exactly (case-sensitive).
        op: the target's inequality, or ``None`` when the metric only has a polarity (ST-Bench's
            ``"lower is better"`` targets: no fixed threshold).
        threshold: the number ``op`` compares the value with; ``None`` exactly when ``op`` is.
        higher_is_better: polarity, for :func:`s_reference`. Apart from ``op`` because a target
            can bound a metric from the other side (a cluster count ``<= 12``, still read as
            higher-is-better); :meth:`parse` infers it from ``op`` when not given.
        reference: the cached reference value of this query's metric (ST-Bench: the single-agent
            baseline's; here the reference pipeline's), or ``None``: then :func:`metric_reward`
            uses :data:`WEIGHTS_NO_REFERENCE`.
    """

    name: str
    op: Op | None = None
    threshold: float | None = None
    higher_is_better: bool = True
    reference: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"metric name must be a non-empty string, got {self.name!r}")
        if self.op is not None and self.op not in (">=", ">", "<=", "<"):
            raise ValueError(f"metric {self.name!r}: op must be >=, >, <= or <, got {self.op!r}")
        if (self.op is None) != (self.threshold is None):
            raise ValueError(f"metric {self.name!r}: op and threshold go together")
        if self.threshold is not None and not is_number(self.threshold):
            raise ValueError(f"metric {self.name!r}: threshold {self.threshold!r} is not finite")
        if self.reference is not None and not is_number(self.reference):
            raise ValueError(f"metric {self.name!r}: reference {self.reference!r} is not finite")

    @classmethod
    def parse(cls, name: str, target: str, *, higher_is_better: bool | None = None,
              reference: float | None = None) -> Metric:
        """Build a metric from a target string as ST-Bench writes them.

        Accepts ``">= 0.6"``, ``"> 0.3"``, ``"<= 5"``, ``"< 1e-3"`` (also ``≥``/``≤``) and the
        threshold-free ``"higher is better"`` / ``"lower is better"``. Without an explicit
        ``higher_is_better``, ``>``/``>=`` mean higher is better and ``<``/``<=`` lower.

        Raises:
            ValueError: naming the metric and the unreadable target.
        """
        polarity = _POLARITY_RE.match(target) if isinstance(target, str) else None
        if polarity:
            hib = polarity.group(1).lower() == "higher"
            if higher_is_better is not None and higher_is_better != hib:
                raise ValueError(f"metric {name!r}: target {target!r} contradicts its polarity")
            return cls(name, None, None, hib, reference)
        match = _TARGET_RE.match(target) if isinstance(target, str) else None
        if not match:
            raise ValueError(f"metric {name!r}: cannot read target {target!r} "
                             "(expected e.g. '>= 0.6', '< 2' or 'lower is better')")
        op = _OPS[match.group(1)]
        if higher_is_better is None:
            higher_is_better = op in (">=", ">")
        return cls(name, op, float(match.group(2)), higher_is_better, reference)

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> Metric:
        """Build a metric from its JSON form, :meth:`to_dict`'s output:
        ``{"name": "nse", "target": ">= 0.6", "reference": 0.71}`` (``reference`` and
        ``higher_is_better`` optional).

        Raises:
            ValueError: a missing name or target, or as :meth:`parse`.
        """
        if not isinstance(spec, Mapping) or "name" not in spec or "target" not in spec:
            raise ValueError(f"a metric needs a name and a target, got {spec!r}")
        return cls.parse(spec["name"], spec["target"],
                         higher_is_better=spec.get("higher_is_better"),
                         reference=spec.get("reference"))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form :meth:`from_dict` reads back."""
        return {"name": self.name, "target": self.target,
                "higher_is_better": self.higher_is_better, "reference": self.reference}

    @property
    def target(self) -> str:
        """The target written back as a string (``">= 0.6"``, ``"lower is better"``)."""
        if self.op is None:
            return "higher is better" if self.higher_is_better else "lower is better"
        text = repr(float(self.threshold))  # type: ignore[arg-type]
        return f"{self.op} {text[:-2] if text.endswith('.0') else text}"


def s_sanity(value: object) -> float:
    """1.0 for a finite real number (:func:`is_number`), else 0.0 (paper C.3: "1 for a finite
    numeric value")."""
    return 1.0 if is_number(value) else 0.0


def s_target(metric: Metric, value: object) -> float:
    """1.0 if ``value`` is a finite number satisfying the metric's inequality, else 0.0.

    A metric without a threshold (``"lower is better"``) has no inequality to fail, so any finite
    number satisfies it (paper C.2 grades the target only "if the metric needs a threshold").
    A non-finite value never does (+inf would otherwise clear every ``>`` target).
    """
    if not is_number(value):
        return 0.0
    if metric.op is None:
        return 1.0
    v, t = float(value), float(metric.threshold)  # type: ignore[arg-type]
    holds = {">=": v >= t, ">": v > t, "<=": v <= t, "<": v < t}[metric.op]
    return 1.0 if holds else 0.0


def s_reference(value: object, reference: float, higher_is_better: bool = True) -> float:
    """The share of the reference the value reaches, in [0, 1] (paper C.3).

    The paper: "the proportion of the cached single-agent reference value the candidate
    reaches, clipped to [0, 1] and polarity-flipped for lower-is-better metrics", i.e.
    ``clip(value / reference)`` when higher is better and ``clip(reference / value)`` when lower
    is. This is exactly that when value and reference are positive (the usual case). Elsewhere
    the bare ratio is undefined (reference or value 0) or runs backwards (against a negative
    reference ``value / reference`` grows as the value gets *worse*), so it follows the ratio's
    intent, which agrees with it on the positive domain:

    1. a value at least as good as the reference (``>=`` it when higher is better, ``<=`` when
       lower) reaches all of it: 1.0. This covers reference 0 (the limit of ``clip(value / 0)``),
       negative references (an NSE of 0.3 against -0.5) and a negative value of a lower-is-better
       metric against a positive reference (where the literal ``clip(reference / value)`` says 0;
       a signed metric such as an AIC is better there, and an impossible negative error is no
       easier a lie than a tiny positive one, which the paper's ratio already rewards).
    2. a worse value on the reference's side of zero reaches the ratio of the smaller magnitude
       to the larger (``value / reference`` below a positive higher-is-better reference,
       ``reference / value`` above a lower-is-better one, mirrored for negative references: an
       NSE of -1 against -0.5 reaches 0.5).
    3. a worse value at or across zero from the reference reaches none of it: 0.0.

    The zero override (:func:`zero_override`) is applied on top by :func:`metric_reward`.
    """
    if not is_number(value) or not is_number(reference):
        return 0.0
    v, r = float(value), float(reference)
    if (v >= r) if higher_is_better else (v <= r):
        return 1.0
    if v * r > 0:  # strictly the same sign, both non-zero
        return min(abs(v), abs(r)) / max(abs(v), abs(r))
    return 0.0


def zero_override(value: object, reference: float | None) -> bool:
    """True when the paper's zero override applies: the value is exactly 0 and the reference is a
    non-zero number.

    C.3: "a candidate value of zero against a non-zero reference returns score zero for that
    metric, regardless of the other components". It removes the defensive-zero attractor (a
    ``return 0`` clears every ``<=``/``<`` target and, without the override, would earn sanity
    and target weight). It does not fire when the reference is 0 (then 0 may be the honest
    answer) or missing (there is nothing to compare the zero with; the 0.40/0.60 weights apply).
    """
    zero = is_number(value) and float(value) == 0.0  # type: ignore[arg-type]
    return zero and reference is not None and float(reference) != 0.0


@dataclass(frozen=True)
class MetricReward:
    """One metric's training reward and how it was reached, for ``info`` and reports.

    ``sanity``, ``target``, ``reference``: the components ``s_*`` (not the reference value);
    ``reference`` is ``None`` when the metric had none and its weight was dropped (two
    ``weights`` then). ``value``: the reported finite number, else ``None``; ``reported``: the
    name was in the report. ``score`` is 0 when ``zero_override`` is set, whatever the rest.
    """

    name: str
    reported: bool
    value: float | None
    sanity: float
    target: float
    reference: float | None
    weights: tuple[float, ...]
    zero_override: bool
    score: float

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (tuples as lists)."""
        return {**asdict(self), "weights": list(self.weights)}


def metric_reward(metric: Metric, value: object, *, reported: bool = True) -> MetricReward:
    """The training reward of one metric (paper C.3) with its components.

    ``s = 0.10 s_sanity + 0.40 s_target + 0.50 s_reference`` when ``metric.reference`` is set,
    ``0.40 s_sanity + 0.60 s_target`` when it is ``None`` (:data:`WEIGHTS_NO_REFERENCE`), and
    0 whatever the components when :func:`zero_override` fires. ``reported=False`` marks a metric
    the report did not contain (its ``value`` is ignored; the score is 0).
    """
    sanity = s_sanity(value) if reported else 0.0
    number = float(value) if sanity else None  # type: ignore[arg-type]
    target = s_target(metric, value) if sanity else 0.0
    override = bool(sanity) and zero_override(value, metric.reference)
    if metric.reference is None:
        ref_score: float | None = None
        weights: tuple[float, ...] = WEIGHTS_NO_REFERENCE
        total = weights[0] * sanity + weights[1] * target
    else:
        ref_score = s_reference(value, metric.reference, metric.higher_is_better) if sanity else 0.0
        weights = WEIGHTS
        total = weights[0] * sanity + weights[1] * target + weights[2] * ref_score
    score = 0.0 if override else min(1.0, max(0.0, total))
    return MetricReward(metric.name, reported, number, sanity, target, ref_score, weights,
                        override, score)


def parse_report(report: object) -> dict[str, object] | None:
    """The agent's metrics dictionary, or ``None`` when it cannot be read.

    Accepts a mapping, or a JSON object as ``str``/``bytes`` of at most
    :data:`MAX_REPORT_CHARS` (what an agent writes through the answer action). Keys that are not
    strings are dropped: they cannot match a metric name. Values are kept as they are; grading
    judges them. JSON's ``NaN``/``Infinity`` parse to floats that fail :func:`s_sanity`.
    """
    if isinstance(report, str | bytes | bytearray):
        if len(report) > MAX_REPORT_CHARS:
            return None
        try:  # bytes must be UTF-8 (a UnicodeDecodeError is a ValueError)
            report = json.loads(report)
        except (ValueError, RecursionError):
            return None
    if not isinstance(report, Mapping):
        return None
    return {k: v for k, v in report.items() if isinstance(k, str)}


@dataclass(frozen=True)
class QueryReward:
    """A query's training reward: the mean of its metrics' scores (paper C.3), and each one.

    ``parsed`` is False when the report was not a readable dictionary (then every metric scores
    0). This is what the env's ``info`` carries under ``reward="stbench"``.
    """

    score: float
    parsed: bool
    metrics: tuple[MetricReward, ...]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"score": self.score, "parsed": self.parsed,
                "metrics": [m.to_dict() for m in self.metrics]}


def _check_metrics(metrics: Sequence[Metric]) -> None:
    if not metrics:
        raise ValueError("a query needs at least one metric")
    names = [m.name for m in metrics]
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate metric names in {names}")


def score_query(metrics: Sequence[Metric], reported: object) -> QueryReward:
    """The training reward of one query, with the per-metric breakdown.

    The mean of :func:`metric_reward` over the query's *defined* metrics: a defined metric
    missing from the report scores 0, reported names that are not defined are ignored (they
    cannot raise the mean), and a report that :func:`parse_report` cannot read scores 0.

    Raises:
        ValueError: the query defines no metric, or one name twice (a spec error).
    """
    _check_metrics(metrics)
    report = parse_report(reported)
    found = report if report is not None else {}
    results = tuple(metric_reward(m, found.get(m.name), reported=m.name in found) for m in metrics)
    return QueryReward(math.fsum(r.score for r in results) / len(results), report is not None,
                       results)


def query_reward(metrics: Sequence[Metric], reported: object) -> float:
    """The training reward of one query in [0, 1]: :func:`score_query`'s ``score``."""
    return score_query(metrics, reported).score


# --- the absolute score's pieces (paper C.2) ---------------------------------------------


def metric_passes(metric: Metric, value: object) -> bool:
    """Paper C.2's per-metric pass: the value is a finite number satisfying the target.

    Of the paper's four conditions (parsable report, name match, finite number, the target "if
    the metric needs a threshold") the caller handles the first two by passing the value found
    under ``metric.name`` (or ``None``). A threshold-free metric passes on any finite number.
    """
    return s_target(metric, value) == 1.0


def query_pass_rate(metrics: Sequence[Metric], reported: object) -> float:
    """The share of the query's defined metrics that pass (:func:`metric_passes`); 0 for an
    unreadable report or missing names."""
    return passed_metrics(metrics, reported) / len(metrics)


def passed_metrics(metrics: Sequence[Metric], reported: object) -> int:
    """How many of the query's defined metrics pass (:func:`metric_passes`); 0 for an unreadable
    report. The evaluation pools these counts over a task's realistic queries.

    Raises:
        ValueError: the query defines no metric, or one name twice.
    """
    _check_metrics(metrics)
    report = parse_report(reported)
    if report is None:
        return 0
    return sum(metric_passes(m, report.get(m.name)) for m in metrics)


def is_realistic(reported: object, names: Iterable[str] | None = None) -> bool:
    """Paper C.2's realistic-output filter: the report includes at least one strictly positive
    finite number and no -1 sentinel.

    All-zero, ``-1`` and negative-only dictionaries are the defensive defaults of a failed
    analysis; they clear ``<=`` targets, so the absolute score counts only realistic queries. An
    unreadable report is not realistic. ``names`` restricts the check to those keys: the
    evaluation passes the query's metric names, reading "its reported metrics" as the values
    reported *for the query's metrics*, so an extra key (``"ok": 1``) cannot lift an all-zero
    report over the filter. Values that are not finite numbers (strings, NaN, bools) neither
    qualify nor disqualify a report (C.2 names only the positive value and the sentinel).
    """
    report = parse_report(reported)
    if report is None:
        return False
    wanted = set(names) if names is not None else set(report)
    numbers_ = [float(v) for k, v in report.items() if k in wanted and is_number(v)]
    return any(v > 0 for v in numbers_) and not any(v == SENTINEL for v in numbers_)
