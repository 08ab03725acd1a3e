"""The getter registry: name -> ``fn(state, **params)`` reading one value from a final state."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sciagent_gym.errors import GetterError  # noqa: F401 (what getters raise, beside register)

F = TypeVar("F", bound=Callable[..., Any])

GETTERS: dict[str, Callable[..., Any]] = {}


def register(name: str) -> Callable[[F], F]:
    """Register a getter under ``name`` (criteria refer to getters by this name)."""

    def deco(fn: F) -> F:
        old = GETTERS.get(name)
        if old is not None and (old.__module__, old.__qualname__) != (
            fn.__module__,
            fn.__qualname__,
        ):
            raise ValueError(f"getter {name!r} is already registered by {old.__module__}")
        GETTERS[name] = fn
        return fn

    return deco
