"""Actions: what an agent may do on an env, and the forms it may write them in.

The public surface, for users of the package::

    from sciagent_gym.actions import Click, parse_action, action_to_pyautogui

* the action dataclasses (:mod:`.types`) and :class:`~sciagent_gym.errors.ActionError`;
* :func:`parse_action` (:mod:`.parse`): any accepted form -> validated actions;
* :func:`make_action_space` (:mod:`.space`): the structured Gymnasium action space;
* :func:`action_to_dict` (:mod:`.human`) and :func:`action_to_pyautogui` (:mod:`.pyautogui`):
  actions back to the human dict form and to pyautogui code.

The modules of ``sciagent_gym`` itself import the submodules, never this file's names, so these
re-exports cannot form an import cycle. They resolve on first use (PEP 562) because importing
any submodule runs this file first, and the control server imports ``.types`` inside a bare VM
guest that has no Gymnasium (which :mod:`.space` needs).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sciagent_gym.errors import ActionError

    from .human import action_to_dict
    from .parse import parse_action
    from .pyautogui import action_to_pyautogui
    from .space import make_action_space
    from .types import (
        Action,
        ActivateWindow,
        Answer,
        Click,
        CloseWindow,
        Done,
        Drag,
        Fail,
        GetClipboard,
        Hotkey,
        KeyDown,
        KeyUp,
        Launch,
        ListWindows,
        MouseButton,
        MouseDown,
        MouseUp,
        Move,
        Press,
        Run,
        Scroll,
        SetClipboard,
        TypeText,
        Wait,
    )

__all__ = [
    "Action", "MouseButton", "Click", "Move", "Drag", "MouseDown", "MouseUp", "Scroll",
    "TypeText", "Press", "Hotkey", "KeyDown", "KeyUp", "Wait", "Run", "Answer", "Done", "Fail",
    "SetClipboard", "GetClipboard", "Launch", "ListWindows", "ActivateWindow", "CloseWindow",
    "ActionError", "parse_action", "make_action_space", "action_to_dict", "action_to_pyautogui",
]

#: Where the names of ``__all__`` not from :mod:`.types` live.
_HOME: dict[str, str] = {
    "ActionError": "sciagent_gym.errors",
    "parse_action": "sciagent_gym.actions.parse",
    "make_action_space": "sciagent_gym.actions.space",
    "action_to_dict": "sciagent_gym.actions.human",
    "action_to_pyautogui": "sciagent_gym.actions.pyautogui",
}


def __getattr__(name: str) -> Any:
    if name not in __all__:  # also how ``from sciagent_gym.actions import keys`` gets a submodule
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    home = _HOME.get(name, "sciagent_gym.actions.types")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
