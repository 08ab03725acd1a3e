"""The step language of oracles, negatives and cheats: validation, GUI-only-ness, step counts.

The forms themselves are documented in :mod:`sciagent_gym.tasks.spec`; running them is
:mod:`sciagent_gym.tasks.steps`.
"""

from __future__ import annotations

import re
from typing import Any

from sciagent_gym.errors import TaskSpecError


def _require(cond: bool, source: str, field_name: str, message: str) -> None:
    if not cond:
        raise TaskSpecError(source, field_name, message)


def _check_steps(steps: Any, source: str, where: str, toggles: frozenset[str] = frozenset()
                 ) -> None:
    _require(isinstance(steps, list), source, where, "must be a list of steps")
    for i, step in enumerate(steps):
        if isinstance(step, dict) and "toggle" in step:
            _require(set(step) == {"toggle", "then"} and step["toggle"] in toggles, source,
                     f"{where}[{i}]", f"a toggle step is {{toggle: <one of {sorted(toggles)}>, "
                     "then: [steps]}")
            _check_steps(step["then"], source, f"{where}[{i}].then", toggles)
            continue
        if isinstance(step, dict) and "await_window" in step:
            extra = set(step) - {"await_window", "focused", "gone", "timeout"}
            _require(not extra and isinstance(step["await_window"], str), source,
                     f"{where}[{i}]", "await_window takes a title regex, focused, gone and timeout")
            try:
                re.compile(step["await_window"])
            except re.error as exc:
                _require(False, source, f"{where}[{i}]", f"bad title regex: {exc}")
            continue
        if isinstance(step, dict) and set(step) == {"script", "answer"}:
            _require(isinstance(step["script"], str) and isinstance(step["answer"], str)
                     and "{output}" in step["answer"], source, f"{where}[{i}]",
                     "an answer step is {script: <tool script>, answer: '<text with {output}>'}")
            continue
        if isinstance(step, dict) and "in_window" in step:
            _require(set(step) == {"in_window", "do"} and isinstance(step["do"], list)
                     and all(isinstance(a, str) or (isinstance(a, dict) and set(a) == {"action"})
                             for a in step["do"]), source, f"{where}[{i}]",
                     "an in_window step is {in_window: <title regex>, do: [action, ...]}")
            _check_regex(step["in_window"], source, f"{where}[{i}].in_window")
            continue
        if isinstance(step, dict) and "read" in step:
            read = step["read"]
            _require(set(step) == {"read", "answer"} and isinstance(read, dict)
                     and not set(read) - {"region", "window", "pattern", "psm", "scale",
                                          "number", "timeout"}
                     and isinstance(read.get("pattern"), str)
                     and isinstance(read.get("number", False), bool)
                     and isinstance(read.get("timeout", 0), (int, float))
                     and 0 <= read.get("timeout", 0) <= 300
                     and isinstance(step["answer"], str) and "{output}" in step["answer"],
                     source, f"{where}[{i}]", "a read step is {read: {pattern, region, window, "
                     "psm, scale, number, timeout (0-300 s)}, answer: '<text with {output}>'}")
            region = read.get("region")
            _require(region is None or (isinstance(region, list) and len(region) == 4),
                     source, f"{where}[{i}].read.region", "must be [x, y, w, h]")
            _check_regex(read["pattern"], source, f"{where}[{i}].read.pattern")
            if "window" in read:
                _check_regex(read["window"], source, f"{where}[{i}].read.window")
            continue
        if isinstance(step, dict) and "perceive" in step:
            see = step["perceive"]
            _require(set(step) == {"perceive", "answer"} and isinstance(see, dict)
                     and not set(see) - {"fn", "region", "window", "args", "timeout"}
                     and isinstance(see.get("fn"), str)
                     and isinstance(see.get("args", {}), dict)
                     and isinstance(see.get("timeout", 0), (int, float))
                     and 0 <= see.get("timeout", 0) <= 300
                     and isinstance(step["answer"], str) and "{output}" in step["answer"],
                     source, f"{where}[{i}]", "a perceive step is {perceive: {fn, region, "
                     "window, args, timeout (0-300 s)}, answer: '<text with {output}>'}")
            region = see.get("region")
            _require(region is None or (isinstance(region, list) and len(region) == 4),
                     source, f"{where}[{i}].perceive.region", "must be [x, y, w, h]")
            if "window" in see:
                _check_regex(see["window"], source, f"{where}[{i}].perceive.window")
            continue
        ok = isinstance(step, str) or (isinstance(step, dict) and len(step) == 1
                                       and next(iter(step)) in ("action", "script", "run"))
        _require(ok, source, f"{where}[{i}]", "a step is an action string or one of "
                 "{action|script|run|await_window|in_window|read|perceive|toggle: ...}")


def _check_regex(pattern: Any, source: str, where: str) -> None:
    _require(isinstance(pattern, str), source, where, "must be a regex string")
    try:
        re.compile(pattern)
    except re.error as exc:
        _require(False, source, where, f"bad regex: {exc}")


def gui_only(steps: list[Any], allow_cli: bool = False) -> bool:
    """Whether ``steps`` reach the program only through ``step()`` as an agent of that modality
    could: no tool script, no answer read through the scripting channel, no shell command
    unless the modality allows one (a ``run(...)`` action string included)."""
    for step in steps:
        if isinstance(step, dict) and "toggle" in step:
            if not gui_only(step["then"], allow_cli):
                return False
            continue
        if isinstance(step, dict) and ("script" in step or ("run" in step and not allow_cli)):
            return False
        if not allow_cli:
            actions = step.get("do", []) if isinstance(step, dict) and "in_window" in step \
                else [step.get("action") if isinstance(step, dict) else step]
            for action in actions:
                if isinstance(action, dict) and "action" in action:
                    action = action["action"]
                kind = action.get("type") if isinstance(action, dict) else \
                    (action.strip().split("(", 1)[0] if isinstance(action, str) else "")
                if kind in ("run", "launch"):
                    return False
    return True


def count_oracle_steps(steps: list[Any]) -> int:
    """``step()`` calls the (expanded) steps make: an action, an answer or a windowed action
    each; waits on windows cost none."""
    n = 0
    for step in steps:
        if isinstance(step, str) or (isinstance(step, dict) and ("action" in step
                                                                   or "answer" in step)):
            n += 1
        elif isinstance(step, dict) and "in_window" in step:
            n += len(step["do"])
    return n
