"""Host-side evaluation: read values from a final state (getters), compare them (checks),
and turn a list of weighted criteria into a partial-credit score."""

from __future__ import annotations

from .checks import CHECKS, register_check
from .evaluator import (
    Criterion,
    CriterionResult,
    EvaluationResult,
    SpecError,
    evaluate,
    parse_criteria,
)
from .getters import GETTERS, GetterError, register
from .state import FinalState
from .templating import resolve

__all__ = [
    "CHECKS",
    "GETTERS",
    "Criterion",
    "CriterionResult",
    "EvaluationResult",
    "FinalState",
    "GetterError",
    "SpecError",
    "evaluate",
    "parse_criteria",
    "register",
    "register_check",
    "resolve",
]
