"""A criterion: which getter reads the final state, which check compares the value, and its
weight, gate and stage; validated when a spec is loaded (:meth:`Criterion.from_dict`), so a typo
in a task file fails loudly at load time rather than scoring 0 for ever."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sciagent_gym.errors import SpecError

from .checks import CHECKS, VALIDATORS, ParamError
from .getters import GETTERS

_CRITERION_KEYS = ("name", "weight", "gate", "getter", "check", "description", "stage",
                   "blocks_from")


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
