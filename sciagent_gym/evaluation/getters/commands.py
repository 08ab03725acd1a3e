"""Getters over commands the env ran in the sandbox after the episode (``state.commands``).

A criterion cannot run a command while it is scored (getters are pure functions of a saved
state), so the env asks :func:`commands_needed` which commands the criteria want, runs them once
the episode is over and stores ``{"returncode", "output", "timed_out"}`` per command string.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .registry import GetterError, register

if TYPE_CHECKING:
    from ..state import FinalState

#: Getters whose values must be produced by the live sandbox before the state is final.
LIVE_GETTERS: frozenset[str] = frozenset({"command_output"})
FIELDS = ("output", "returncode", "timed_out")


@register("command_output")
def command_output(
    state: FinalState, command: str, field: str = "output", strip: bool = True
) -> Any:
    """The output (or ``returncode`` / ``timed_out``) of ``command`` as run after the episode.

    ``strip`` trims surrounding whitespace from the output, so "42\\n" compares equal to "42".
    """
    if field not in FIELDS:
        raise GetterError(f"unknown command field {field!r} (known: {', '.join(FIELDS)})")
    if not isinstance(command, str):
        raise GetterError(f"command must be a string, got {command!r}")
    result = (state.commands or {}).get(command)
    if result is None:
        raise GetterError(f"command {command!r} was not run after the episode")
    if not isinstance(result, Mapping):
        raise GetterError(f"command {command!r}: malformed result {result!r}")
    if field == "output":
        out = str(result.get("output") or "")
        return out.strip() if strip else out
    if field == "timed_out":
        return bool(result.get("timed_out", False))
    return result.get("returncode")


def _getter_of(criterion: Any) -> tuple[str | None, Mapping[str, Any]]:
    """(getter name, params) of a Criterion or of its JSON form (string or {"fn": ...})."""
    if isinstance(criterion, Mapping):
        spec = criterion.get("getter")
        if isinstance(spec, str):
            return spec, {}
        if isinstance(spec, Mapping):
            return spec.get("fn"), spec
        return None, {}
    params = getattr(criterion, "getter_params", None)
    return getattr(criterion, "getter", None), params if isinstance(params, Mapping) else {}


def commands_needed(criteria: Iterable[Any]) -> list[str]:
    """Distinct ``command`` params of ``command_output`` criteria, in order of appearance."""
    out: list[str] = []
    for c in criteria:
        name, params = _getter_of(c)
        cmd = params.get("command")
        if name == "command_output" and isinstance(cmd, str) and cmd not in out:
            out.append(cmd)
    return out
