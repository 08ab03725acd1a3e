"""Host-side evaluation: read values from a final state (getters), compare them (checks),
and turn a list of weighted criteria into a partial-credit score."""

from __future__ import annotations

from . import answer_checks as _answer_checks  # noqa: F401  registers choice, sts_at_least
from .checks import CHECKS, register_check
from .cost import CHEAP_GETTERS, is_cheap
from .criterion import Criterion, SpecError, parse_criteria
from .evaluator import CriterionResult, EvaluationResult, evaluate
from .getters import GETTERS, GetterError, register
from .getters.commands import LIVE_GETTERS, commands_needed
from .state import FinalState

__all__ = [
    "CHEAP_GETTERS",
    "CHECKS",
    "GETTERS",
    "Criterion",
    "CriterionResult",
    "EvaluationResult",
    "FinalState",
    "GetterError",
    "LIVE_GETTERS",
    "SpecError",
    "commands_needed",
    "evaluate",
    "is_cheap",
    "parse_criteria",
    "register",
    "register_check",
]
