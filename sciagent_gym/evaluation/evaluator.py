"""Criteria -> a partial-credit score for a final state.

Specs are validated when loaded (:meth:`Criterion.from_dict`) so a typo in a task file fails
loudly at load time; scoring itself never raises: any getter/check failure is a failed criterion
whose detail says why.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

import numpy as np

from sciagent_gym.errors import SpecError

from .checks import CHECKS, VALIDATORS, ParamError
from .getters import GETTERS, GetterError
from .stages import StageResult, stage_order, stages_reached
from .state import FinalState

_CRITERION_KEYS = ("name", "weight", "gate", "getter", "check", "description", "stage",
                   "blocks_from")
_MAX_STR = 200
_MAX_ITEMS = 50
_MAX_DETAIL = 500


@dataclass(frozen=True)
class Criterion:
    """One scored condition: ``check(getter(state, **getter_params), **check_params)``.

    A failed ``gate`` makes every later criterion fail as skipped (e.g. "results.csv exists"
    gating the checks on its contents); inside a named ``stage`` only the rest of that stage.
    ``stage`` and ``blocks_from`` come from a staged evaluator (:mod:`.stages`): the criterion
    is skipped unless every stage named in ``blocks_from`` passed.
    """

    name: str
    getter: str
    getter_params: dict[str, Any]
    check: str
    check_params: dict[str, Any]
    weight: float = 1.0
    gate: bool = False
    description: str = ""
    stage: str = ""
    blocks_from: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "criterion") -> Criterion:
        """Parse the JSON form; every problem is a SpecError naming the field."""
        if not isinstance(d, Mapping):
            raise SpecError(where, f"must be an object, got {type(d).__name__}")
        for key in d:
            if key not in _CRITERION_KEYS:
                raise SpecError(
                    f"{where}.{key}",
                    f"unknown field (known: {', '.join(_CRITERION_KEYS)})",
                )
        name = d.get("name")
        if not isinstance(name, str) or not name.strip():
            raise SpecError(f"{where}.name", "missing or empty (every criterion needs a name)")
        weight = d.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)):
            raise SpecError(f"{where}.weight", f"must be a number, got {weight!r}")
        if not math.isfinite(weight) or weight < 0:
            raise SpecError(f"{where}.weight", f"must be a finite number >= 0, got {weight!r}")
        gate = d.get("gate", False)
        if not isinstance(gate, bool):
            raise SpecError(f"{where}.gate", f"must be true or false, got {gate!r}")
        description = d.get("description", "")
        if not isinstance(description, str):
            raise SpecError(f"{where}.description", "must be a string")
        stage = d.get("stage", "")
        if not isinstance(stage, str):
            raise SpecError(f"{where}.stage", "must be a string")
        blocks = d.get("blocks_from", ())
        blocks = (blocks,) if isinstance(blocks, str) else blocks
        if not isinstance(blocks, (list, tuple)) or not all(isinstance(b, str) for b in blocks):
            raise SpecError(f"{where}.blocks_from", "must be a list of stage names")
        if blocks and not stage:
            raise SpecError(f"{where}.blocks_from", "only a criterion of a stage can be blocked")
        getter, getter_params = _split(d.get("getter"), "fn", f"{where}.getter")
        check, check_params = _split(d.get("check"), "op", f"{where}.check")
        crit = cls(
            name=name,
            getter=getter,
            getter_params=getter_params,
            check=check,
            check_params=check_params,
            weight=float(weight),
            gate=gate,
            description=description,
            stage=stage,
            blocks_from=tuple(blocks),
        )
        crit.validate(where)
        return crit

    def validate(self, where: str = "criterion") -> None:
        """Check names and params against the registered functions' signatures."""
        fn = GETTERS.get(self.getter)
        if fn is None:
            raise SpecError(
                f"{where}.getter.fn",
                f"unknown getter {self.getter!r} (known: {', '.join(sorted(GETTERS))})",
            )
        _check_signature(fn, self.getter_params, "getter", self.getter, f"{where}.getter")
        op = CHECKS.get(self.check)
        if op is None:
            raise SpecError(
                f"{where}.check.op",
                f"unknown check {self.check!r} (known: {', '.join(sorted(CHECKS))})",
            )
        _check_signature(op, self.check_params, "check", self.check, f"{where}.check")
        validator = VALIDATORS.get(self.check)
        if validator is not None:
            try:
                validator(self.check_params)
            except ParamError as exc:
                raise SpecError(f"{where}.check.{exc.param}", exc.message) from None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form accepted by :meth:`from_dict`."""
        out: dict[str, Any] = {"name": self.name, "weight": self.weight, "gate": self.gate}
        if self.description:
            out["description"] = self.description
        if self.stage:
            out["stage"] = self.stage
        if self.blocks_from:
            out["blocks_from"] = list(self.blocks_from)
        out["getter"] = {"fn": self.getter, **self.getter_params}
        out["check"] = {"op": self.check, **self.check_params}
        return out


def _split(spec: Any, key: str, where: str) -> tuple[str, dict[str, Any]]:
    """{"fn": "x", **params} (or the bare string "x") -> ("x", params)."""
    if isinstance(spec, str):
        return spec, {}
    if spec is None:
        raise SpecError(where, "missing")
    if not isinstance(spec, Mapping):
        raise SpecError(where, f"must be an object with {key!r}, got {type(spec).__name__}")
    name = spec.get(key)
    if not isinstance(name, str) or not name:
        raise SpecError(f"{where}.{key}", "missing or not a string")
    params = {k: v for k, v in spec.items() if k != key}
    for k in params:
        if not isinstance(k, str):
            raise SpecError(where, f"parameter names must be strings, got {k!r}")
    return name, params


def _check_signature(
    fn: Callable[..., Any], params: Any, kind: str, name: str, where: str
) -> None:
    """Misspelt or missing parameters are spec errors, not scoring-time TypeErrors."""
    if not isinstance(params, Mapping):
        raise SpecError(where, f"parameters must be an object, got {type(params).__name__}")
    sig_params = list(inspect.signature(fn).parameters.values())[1:]  # skip state / value
    named = [
        p
        for p in sig_params
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig_params)
    accepted = [p.name for p in named]
    for key in params:
        if key not in accepted and not takes_any:
            raise SpecError(
                f"{where}.{key}",
                f"unknown parameter {key!r} for {kind} {name!r} "
                f"(accepted: {', '.join(accepted) or 'none'})",
            )
    for p in named:
        if p.default is inspect.Parameter.empty and p.name not in params:
            raise SpecError(where, f"missing parameter {p.name!r} for {kind} {name!r}")


def parse_criteria(items: Any, where: str = "evaluator.criteria") -> list[Criterion]:
    """A list of criterion dicts -> Criteria; names must be unique."""
    if not isinstance(items, Sequence) or isinstance(items, (str, bytes)):
        raise SpecError(where, f"must be a list, got {type(items).__name__}")
    out: list[Criterion] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        crit = Criterion.from_dict(item, f"{where}[{i}]")
        if crit.name in seen:
            raise SpecError(f"{where}[{i}].name", f"duplicate criterion name {crit.name!r}")
        earlier = {c.stage for c in out if c.stage and c.stage != crit.stage}
        for b in crit.blocks_from:
            if b not in earlier:
                raise SpecError(f"{where}[{i}].blocks_from", f"{b!r} is not an earlier stage")
        seen.add(crit.name)
        out.append(crit)
    return out


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
