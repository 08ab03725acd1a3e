"""The human dict form of actions, ``{"type": "click", "x": 10, "y": 20}``, in both directions.

It is what trajectory logs store and replays read back, and what the control server receives
over HTTP: :func:`action_to_dict` writes it, :func:`parse_action_dict` reads it (each the
inverse of the other), and :data:`DICT_FIELDS` lists the fields of each ``type``. Standard
library only: the control server parses these dicts inside a bare VM guest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .types import (
    Action,
    ActionError,
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
from .validate import Screen, check_screen_size, guarded, plain_dict, short_repr, validate_action

#: ``type`` -> (required fields, optional fields) of the human dict form.
DICT_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "click": (("x", "y"), ("button", "clicks")),
    "double_click": (("x", "y"), ("button",)),
    "right_click": (("x", "y"), ()),
    "move": (("x", "y"), ()),
    "drag": (("x", "y"), ("start", "button")),
    "mouse_down": ((), ("x", "y", "button")),
    "mouse_up": ((), ("x", "y", "button")),
    "scroll": ((), ("dy", "dx", "x", "y")),
    "type": (("text",), ()),
    "key": (("key",), ("presses",)),
    "hotkey": (("keys",), ()),
    "key_down": (("key",), ()),
    "key_up": (("key",), ()),
    "wait": ((), ("seconds",)),
    "run": (("command",), ("timeout",)),
    "done": ((), ()),
    "fail": ((), ()),
    "set_clipboard": (("text",), ()),
    "get_clipboard": ((), ()),
    "launch": (("command",), ()),
    "list_windows": ((), ()),
    "activate_window": (("title",), ()),
    "close_window": (("title",), ()),
    "answer": (("text",), ()),
}

#: Human dict types of the computer API and the action each builds from its one field.
_COMPUTER_DICT: dict[str, Callable[[Mapping[str, Any]], Action]] = {
    "answer": lambda d: Answer(d["text"]),
    "set_clipboard": lambda d: SetClipboard(d["text"]),
    "get_clipboard": lambda d: GetClipboard(),
    "launch": lambda d: Launch(d["command"]),
    "list_windows": lambda d: ListWindows(),
    "activate_window": lambda d: ActivateWindow(d["title"]),
    "close_window": lambda d: CloseWindow(d["title"]),
}


def parse_action_dict(action: Mapping[str, Any], screen_size: tuple[int, int]) -> list[Action]:
    """Parse one dict of the human form (``{"type": "click", "x": 1, "y": 2}``)."""
    screen = check_screen_size(screen_size)
    return guarded(compile_dict, action, screen)


def compile_dict(action: Mapping[Any, Any], screen: Screen) -> list[Action]:
    """:func:`parse_action_dict` on a checked screen, unguarded: for
    :func:`~sciagent_gym.actions.parse.parse_action`, which guards the whole step."""
    action = plain_dict(action)
    if "type" not in action:
        raise ActionError(
            "action dict needs a 'type' field (or an integer 'action_type' from the action space)"
        )
    kind = action["type"]
    if not isinstance(kind, str) or kind not in DICT_FIELDS:
        raise ActionError(
            f"unknown action type {short_repr(kind)} (expected one of {', '.join(DICT_FIELDS)})"
        )
    kind = str.__str__(kind)
    required, optional = DICT_FIELDS[kind]
    for name in action:
        if name != "type" and name not in required and name not in optional:
            allowed = ", ".join(required + optional) or "none"
            raise ActionError(
                f"unknown field {short_repr(name)} for a {kind} action (allowed fields: "
                f"{allowed})"
            )
    for name in required:
        if name not in action:
            raise ActionError(f"{kind} action is missing field {name!r}")

    def get(name: str, default: Any = None) -> Any:
        value = action.get(name)
        return default if value is None else value

    if kind in ("click", "double_click", "right_click"):
        clicks = {"click": get("clicks", 1), "double_click": 2, "right_click": 1}[kind]
        button = "right" if kind == "right_click" else get("button", "left")
        raw: Action = Click(action["x"], action["y"], button, clicks)
    elif kind == "move":
        raw = Move(action["x"], action["y"])
    elif kind == "drag":
        raw = Drag(action["x"], action["y"], get("button", "left"), get("start"))
    elif kind in ("mouse_down", "mouse_up"):
        cls = MouseDown if kind == "mouse_down" else MouseUp
        raw = cls(get("button", "left"), get("x"), get("y"))
    elif kind == "scroll":
        raw = Scroll(get("dy", 0), get("dx", 0), get("x"), get("y"))
    elif kind == "type":
        raw = TypeText(action["text"])
    elif kind == "key":
        raw = Press(action["key"], get("presses", 1))
    elif kind == "hotkey":
        raw = Hotkey(action["keys"])
    elif kind in ("key_down", "key_up"):
        raw = (KeyDown if kind == "key_down" else KeyUp)(action["key"])
    elif kind == "wait":
        raw = Wait(get("seconds", 1.0))
    elif kind == "run":
        raw = Run(action["command"], get("timeout"))
    elif kind in _COMPUTER_DICT:
        raw = _COMPUTER_DICT[kind](action)
    else:
        raw = Done() if kind == "done" else Fail()
    return [validate_action(raw, screen)]


# --------------------------------------------------------------------------------------------
# action -> dict


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def action_to_dict(action: Action) -> dict[str, Any]:
    """The human dict form of one action (JSON-serialisable; :func:`parse_action_dict` reads
    it back)."""
    a: Any = action
    if isinstance(a, Click):
        return {"type": "click", "x": int(a.x), "y": int(a.y), "button": a.button,
                "clicks": int(a.clicks)}
    if isinstance(a, Move):
        return {"type": "move", "x": int(a.x), "y": int(a.y)}
    if isinstance(a, Drag):
        out: dict[str, Any] = {"type": "drag", "x": int(a.x), "y": int(a.y), "button": a.button}
        if a.start is not None:
            out["start"] = [int(a.start[0]), int(a.start[1])]
        return out
    if isinstance(a, (MouseDown, MouseUp)):
        out = {"type": "mouse_down" if isinstance(a, MouseDown) else "mouse_up",
               "button": a.button}
        if a.x is not None:
            out.update(x=int(a.x), y=_opt_int(a.y))
        return out
    if isinstance(a, Scroll):
        out = {"type": "scroll", "dy": int(a.dy), "dx": int(a.dx)}
        if a.x is not None:
            out.update(x=int(a.x), y=_opt_int(a.y))
        return out
    if isinstance(a, TypeText):
        return {"type": "type", "text": str(a.text)}
    if isinstance(a, Press):
        return {"type": "key", "key": str(a.key), "presses": int(a.presses)}
    if isinstance(a, Hotkey):
        return {"type": "hotkey", "keys": [str(k) for k in a.keys]}
    if isinstance(a, KeyDown):
        return {"type": "key_down", "key": str(a.key)}
    if isinstance(a, KeyUp):
        return {"type": "key_up", "key": str(a.key)}
    if isinstance(a, Wait):
        return {"type": "wait", "seconds": float(a.seconds)}
    if isinstance(a, Run):
        out = {"type": "run", "command": str(a.command)}
        if a.timeout is not None:
            out["timeout"] = float(a.timeout)
        return out
    if isinstance(a, Answer):
        return {"type": "answer", "text": str(a.text)}
    if isinstance(a, Done):
        return {"type": "done"}
    if isinstance(a, Fail):
        return {"type": "fail"}
    if isinstance(a, SetClipboard):
        return {"type": "set_clipboard", "text": str(a.text)}
    if isinstance(a, GetClipboard):
        return {"type": "get_clipboard"}
    if isinstance(a, Launch):
        return {"type": "launch", "command": str(a.command)}
    if isinstance(a, ListWindows):
        return {"type": "list_windows"}
    if isinstance(a, ActivateWindow):
        return {"type": "activate_window", "title": str(a.title)}
    if isinstance(a, CloseWindow):
        return {"type": "close_window", "title": str(a.title)}
    raise ActionError(f"unsupported action type: {type(action).__name__}")
