"""Getters reading the app's internal state dumped through its own scripting channel."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..dotted import LookupFailure, dotted_get
from .registry import GetterError, register

if TYPE_CHECKING:
    from ..state import FinalState


@register("app_state")
def app_state(state: FinalState, key: str | None = None) -> Any:
    """The value at dotted ``key`` ("images.-1.title"); the whole dump if ``key`` is None."""
    if state.app_state is None:
        raise GetterError(f"app state unavailable: {state.app_state_error or 'no reason given'}")
    if key is None:
        return state.app_state
    try:
        return dotted_get(state.app_state, key)
    except LookupFailure as exc:
        raise GetterError(f"app state {key!r}: {exc}") from None
