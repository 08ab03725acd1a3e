"""Getters about how the episode ended rather than what it produced."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .registry import register

if TYPE_CHECKING:
    from ..state import FinalState


@register("agent_status")
def agent_status(state: FinalState) -> str:
    """The agent's final status: done, fail, truncated or running (infeasible tasks want fail)."""
    return state.agent_status


@register("terminal_text")
def terminal_text(state: FinalState) -> str:
    """The last CLI output the agent saw."""
    return state.terminal
