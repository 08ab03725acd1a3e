"""Criteria -> a partial-credit score for a final state.

Criteria are validated when a spec is loaded (:mod:`.criterion`); scoring itself never raises:
any getter/check failure is a failed criterion whose detail says why.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

import numpy as np

from .checks import CHECKS
from .criterion import Criterion
from .getters import GETTERS, GetterError
from .stages import StageResult, stage_order, stages_reached
from .state import FinalState

_MAX_STR = 200
_MAX_ITEMS = 50
_MAX_DETAIL = 500


@dataclass
class CriterionResult:
    """The outcome of one criterion; ``value`` is a JSON-able, shortened copy of what was read."""

    name: str
    weight: float
    passed: bool
    detail: str
    value: Any = None
    stage: str = ""
    #: A graded check's share of the weight earned, in [0, 1] (an STS scored continuously, as
    #: CSMBench scores open answers); None for a pass/fail check, which earns all or nothing.
    credit: float | None = None

    @property
    def earned(self) -> float:
        """The share of the weight this criterion adds to the score."""
        return self.credit if self.credit is not None else float(self.passed)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "name": self.name,
            "weight": self.weight,
            "passed": self.passed,
            "detail": self.detail,
            "value": self.value,
        }
        if self.stage:
            out["stage"] = self.stage
        if self.credit is not None:
            out["credit"] = self.credit
        return out


#: What each broken requirement leaves of the score. A requirement is a weight-0 criterion that
#: is not a gate ("nothing else changed", "no extra entries", "the target stays in place"): it
#: earns nothing, and breaking it must cost something, or work that breaks it scores 1.0
#: without success (ds9's toggle negatives did). A gate costs everything; a requirement halves.
REQUIREMENT_PENALTY = 0.5


@dataclass
class EvaluationResult:
    """Score = earned weight / total weight (a pass/fail criterion earns its weight when it
    passes, a graded one its credit's share), halved for each broken requirement (a weight-0
    criterion that is not a gate); success = every criterion passed (and there is one).

    A staged evaluator also reports each stage and ``stages_reached``: how many stages passed
    before the first that did not.
    """

    score: float
    success: bool
    criteria: list[CriterionResult] = field(default_factory=list)
    stages: list[StageResult] = field(default_factory=list)

    @property
    def stages_reached(self) -> int:
        return stages_reached(self.stages)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "score": self.score,
            "success": self.success,
            "criteria": [c.to_dict() for c in self.criteria],
        }
        if self.stages:
            out["stages"] = [s.to_dict() for s in self.stages]
            out["stages_reached"] = self.stages_reached
        return out


def jsonable(v: Any, depth: int = 0) -> Any:
    """A JSON-safe, bounded copy of a getter value for reports (non-finite floats as strings)."""
    if isinstance(v, np.generic):
        v = v.item()
    if v is None or isinstance(v, (bool, int)):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if isinstance(v, str):
        return v if len(v) <= _MAX_STR else f"{v[:_MAX_STR]}... ({len(v)} chars)"
    if isinstance(v, np.ndarray):
        return f"array(shape={list(v.shape)}, dtype={v.dtype})"
    if isinstance(v, (bytes, bytearray)):
        return jsonable(f"<{len(v)} bytes>")
    if isinstance(v, PurePath):
        return jsonable(str(v))
    if depth >= 4:
        return jsonable(repr(v))
    if isinstance(v, Mapping):
        items = list(v.items())
        out = {str(k): jsonable(x, depth + 1) for k, x in items[:_MAX_ITEMS]}
        if len(items) > _MAX_ITEMS:
            out["..."] = f"{len(items) - _MAX_ITEMS} more keys"
        return out
    if isinstance(v, (list, tuple, set, frozenset)):
        seq = list(v) if not isinstance(v, (set, frozenset)) else sorted(v, key=repr)
        out_list = [jsonable(x, depth + 1) for x in seq[:_MAX_ITEMS]]
        if len(seq) > _MAX_ITEMS:
            out_list.append(f"... {len(seq) - _MAX_ITEMS} more items")
        return out_list
    return jsonable(repr(v))


def _short(text: str) -> str:
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 3] + "..."


def _run(c: Criterion, state: FinalState) -> CriterionResult:
    def fail(detail: str, value: Any = None) -> CriterionResult:
        return CriterionResult(c.name, c.weight, False, _short(detail), value, c.stage)

    getter = GETTERS.get(c.getter)
    if getter is None:
        return fail(f"unknown getter {c.getter!r}")
    op = CHECKS.get(c.check)
    if op is None:
        return fail(f"unknown check {c.check!r}")
    try:
        value = getter(state, **c.getter_params)
    except GetterError as exc:
        return fail(str(exc))
    except Exception as exc:  # a getter bug must cost this criterion, not the whole evaluation
        return fail(f"getter {c.getter!r} failed: {type(exc).__name__}: {exc}")
    shown = jsonable(value)
    try:
        passed, detail, *graded = op(value, **c.check_params)
    except Exception as exc:  # likewise for checks
        return fail(f"check {c.check!r} failed: {type(exc).__name__}: {exc}", shown)
    credit = min(1.0, max(0.0, float(graded[0]))) if graded and graded[0] is not None else None
    return CriterionResult(c.name, c.weight, bool(passed), _short(str(detail)), shown, c.stage,
                           credit)


def evaluate(
    criteria: Sequence[Criterion | Mapping[str, Any]], state: FinalState
) -> EvaluationResult:
    """Score ``state``; deterministic and never raises for problems in the state itself."""
    crits = [
        c if isinstance(c, Criterion) else Criterion.from_dict(c, f"criteria[{i}]")
        for i, c in enumerate(criteria)
    ]
    results: list[CriterionResult] = []
    broken = 0  # requirements (weight 0, not gates) that were checked and failed
    failed_gate: dict[str, str] = {}  # stage ("" = unstaged, which gates everything) -> gate
    stage_ok: dict[str, bool] = {}
    blocked: dict[str, str] = {}
    for c in crits:
        gate = failed_gate.get("") or failed_gate.get(c.stage)
        stop = next((b for b in c.blocks_from if not stage_ok.get(b, False)), None)
        if stop is not None:
            blocked.setdefault(c.stage, stop)
            result = CriterionResult(c.name, c.weight, False,
                                     f"blocked: stage '{stop}' did not pass", None, c.stage)
        elif gate is not None:
            result = CriterionResult(c.name, c.weight, False,
                                     f"skipped: gate '{gate}' failed", None, c.stage)
        else:
            result = _run(c, state)
            if c.gate and not result.passed:
                failed_gate[c.stage] = c.name
            elif c.weight == 0 and not result.passed:
                broken += 1
        results.append(result)
        if c.stage:
            stage_ok[c.stage] = stage_ok.get(c.stage, True) and result.passed
    stages = [_stage_result(name, [r for r in results if r.stage == name], blocked.get(name))
              for name in stage_order([c.stage for c in crits])]
    success = bool(results) and all(r.passed for r in results)
    total = math.fsum(r.weight for r in results)
    if total > 0:
        score = math.fsum(r.weight * r.earned for r in results) / total
        score *= REQUIREMENT_PENALTY ** broken
    else:  # no criteria, or only zero-weight ones: all-or-nothing
        score = 1.0 if success else 0.0
    return EvaluationResult(score=min(1.0, max(0.0, score)), success=success, criteria=results,
                            stages=stages)


def _stage_result(name: str, results: list[CriterionResult], blocked_by: str | None
                  ) -> StageResult:
    total = math.fsum(r.weight for r in results)
    passed = all(r.passed for r in results)
    score = (math.fsum(r.weight * r.earned for r in results) / total if total > 0
             else float(passed))
    return StageResult(name, passed, score, blocked_by)
