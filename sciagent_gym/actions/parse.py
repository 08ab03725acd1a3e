""":func:`parse_action`: whatever an agent emits, as validated :mod:`sciagent_gym.actions.types`
objects.

It accepts

* **pyautogui code**, as LLM agents write it (``pyautogui.click(100, 200)``, ``WAIT``, ...:
  :mod:`sciagent_gym.actions.pyautogui`);
* **dicts in the human form** ``{"type": "click", "x": 10, "y": 20}``
  (:mod:`sciagent_gym.actions.human`);
* **samples of the structured action space** (dicts with an ``"action_type"``:
  :mod:`sciagent_gym.actions.space`);
* an **Action instance** or a list/tuple of them.

Every path ends in :func:`~sciagent_gym.actions.validate.validate_action` and the per-step caps
of :mod:`sciagent_gym.actions.validate`. The agent is untrusted (a random or reward-hacking
policy, or an LLM), so the parser is total: whatever it is given, :func:`parse_action` returns
or raises :class:`~sciagent_gym.errors.ActionError`, quickly, and a step stays within the caps
(checked at parse time, so a refused step does nothing).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .human import compile_dict
from .pyautogui import compile_source
from .space import from_space_sample
from .types import Action, ActionError
from .validate import (
    ACTION_CLASSES,
    Screen,
    check_count,
    check_screen_size,
    check_step_limits,
    guarded,
    plain_dict,
    validate_action,
)


def parse_action(action: Any, screen_size: tuple[int, int]) -> list[Action]:
    """Compile one agent action (any accepted form) into a list of validated actions.

    Raises only :class:`ActionError` for a bad action (and ValueError for a bad ``screen_size``,
    which is the caller's bug).
    """
    screen = check_screen_size(screen_size)
    return guarded(_parse_any, action, screen)


def _parse_any(action: Any, screen: Screen) -> list[Action]:
    if isinstance(action, str):
        actions = compile_source(action, screen)
    elif isinstance(action, Mapping):
        fields = plain_dict(action)
        if "action_type" in fields:
            actions = from_space_sample(fields, screen)
        else:
            actions = compile_dict(fields, screen)
    elif isinstance(action, ACTION_CLASSES):
        actions = [validate_action(action, screen)]
    elif isinstance(action, (list, tuple)):
        check_count(len(action))
        actions = []
        for i, item in enumerate(action):
            if not isinstance(item, ACTION_CLASSES):
                raise ActionError(
                    f"unsupported action type in item {i} of the list: {type(item).__name__} "
                    "(a list may only hold Action instances)"
                )
            actions.append(validate_action(item, screen))
    else:
        raise ActionError(f"unsupported action type: {type(action).__name__}")
    check_step_limits(actions)
    return actions
