"""Multi-stage evaluators: a long workflow scored stage by stage, so partial credit shows how far
an agent got (OSWorld-Science's stages and ``blocks_from``).

A spec's evaluator is either ``{"criteria": [...]}`` or::

    {"stages": [
        {"name": "open",    "criteria": [...]},
        {"name": "measure", "blocks_from": ["open"], "criteria": [...]},
        {"name": "export",  "blocks_from": ["measure"], "criteria": [...]}
    ]}

Stages are flattened into one list of criteria, each carrying its ``stage`` and the stage's
``blocks_from`` (the earlier stages that must pass before this one is scored), so everything
downstream (templating, cheap criteria, reports) keeps handling a plain list. A stage passes when
every criterion in it passes; a stage whose ``blocks_from`` names a stage that did not pass scores
nothing ("blocked"), because a measurement taken from an image that was never opened proves
nothing. A ``gate`` inside a stage skips the rest of that stage only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sciagent_gym.errors import SpecError

_STAGE_KEYS = ("name", "criteria", "blocks_from", "description")


def flatten_evaluator(evaluator: Any, where: str = "evaluator") -> list[dict[str, Any]]:
    """``{"criteria": [...]}`` or ``{"stages": [...]}`` -> one list of criterion dicts.

    Raises SpecError for a malformed stage list: unknown fields, duplicate or empty names, an
    empty stage, or a ``blocks_from`` that names no earlier stage (a stage cannot wait for one
    scored after it).
    """
    if not isinstance(evaluator, Mapping):
        raise SpecError(where, f"must be an object, got {type(evaluator).__name__}")
    has_criteria, has_stages = "criteria" in evaluator, "stages" in evaluator
    if has_criteria == has_stages:
        raise SpecError(where, "needs exactly one of 'criteria' and 'stages'")
    if has_criteria:
        items = evaluator["criteria"]
        if not isinstance(items, list) or not items:
            raise SpecError(f"{where}.criteria", "must be a non-empty list")
        return list(items)
    stages = evaluator["stages"]
    if not isinstance(stages, list) or len(stages) < 2:
        raise SpecError(f"{where}.stages", "must be a list of at least two stages")
    out: list[dict[str, Any]] = []
    seen: list[str] = []
    for i, stage in enumerate(stages):
        here = f"{where}.stages[{i}]"
        if not isinstance(stage, Mapping):
            raise SpecError(here, f"must be an object, got {type(stage).__name__}")
        unknown = sorted(set(stage) - set(_STAGE_KEYS))
        if unknown:
            raise SpecError(f"{here}.{unknown[0]}",
                            f"unknown field (known: {', '.join(_STAGE_KEYS)})")
        name = stage.get("name")
        if not isinstance(name, str) or not name.strip():
            raise SpecError(f"{here}.name", "missing or empty (every stage needs a name)")
        if name in seen:
            raise SpecError(f"{here}.name", f"duplicate stage name {name!r}")
        blocks = stage.get("blocks_from", [])
        blocks = [blocks] if isinstance(blocks, str) else blocks
        if not isinstance(blocks, list) or not all(isinstance(b, str) for b in blocks):
            raise SpecError(f"{here}.blocks_from", "must be a stage name or a list of them")
        for b in blocks:
            if b not in seen:
                raise SpecError(f"{here}.blocks_from",
                                f"{b!r} is not an earlier stage (earlier: {seen or 'none'})")
        crits = stage.get("criteria")
        if not isinstance(crits, list) or not crits:
            raise SpecError(f"{here}.criteria", "must be a non-empty list")
        for j, c in enumerate(crits):
            if not isinstance(c, Mapping):
                raise SpecError(f"{here}.criteria[{j}]", "must be an object")
            if "stage" in c or "blocks_from" in c:
                raise SpecError(f"{here}.criteria[{j}]",
                                "'stage' and 'blocks_from' belong to the stage, not a criterion")
            out.append({**c, "stage": name, **({"blocks_from": blocks} if blocks else {})})
        seen.append(name)
    return out


def stage_order(stage_names: Sequence[str]) -> list[str]:
    """The distinct non-empty stage names in first-seen order."""
    order: list[str] = []
    for s in stage_names:
        if s and s not in order:
            order.append(s)
    return order


@dataclass
class StageResult:
    """One stage's outcome: ``score`` is its passed weight over its total weight."""

    name: str
    passed: bool
    score: float
    blocked_by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "score": self.score,
                "blocked_by": self.blocked_by}


def stages_reached(stages: Sequence[StageResult]) -> int:
    """How many stages passed before the first that did not: how far the agent got."""
    n = 0
    for s in stages:
        if not s.passed:
            break
        n += 1
    return n
