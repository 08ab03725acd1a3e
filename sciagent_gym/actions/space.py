"""The structured (Gymnasium) action space, and conversions from and to actions.

RL policies act through :func:`make_action_space`, a :class:`gymnasium.spaces.Dict`. Every step
carries all fields; only those relevant to the chosen ``action_type`` are read, the rest are
ignored (they may hold anything, and may even be left out of the dict).

Fields
------

``action_type`` : ``Discrete(24)``
    Index into :data:`ACTION_TYPES`: 0 click, 1 double_click, 2 right_click, 3 move, 4 drag,
    5 mouse_down, 6 mouse_up, 7 scroll, 8 type, 9 key, 10 hotkey, 11 key_down, 12 key_up,
    13 wait, 14 run, 15 done, 16 fail, and the computer API beyond pyautogui: 17 set_clipboard,
    18 get_clipboard, 19 launch, 20 list_windows, 21 activate_window, 22 close_window, and
    23 answer (the task's answer as text, e.g. "742 Hz"; the last one counts).
    A string name from that tuple is accepted too.
``coordinate`` : ``MultiDiscrete([width, height])``
    Screen pixel ``(x, y)``: the point of click, double_click, right_click, move, mouse_down,
    mouse_up and scroll, and the end point of drag. Floats are rounded.
``start`` : ``MultiDiscrete([width, height])``
    Where a drag presses the button (used by drag only).
``button`` : ``Discrete(3)``
    0 left, 1 middle, 2 right; used by click, double_click, drag, mouse_down, mouse_up
    (right_click always uses the right button).
``key`` : ``Discrete(len(KEY_NAMES))``
    Index into :data:`sciagent_gym.actions.keys.KEY_NAMES` (canonical pyautogui names:
    printable ASCII characters, then ``enter``, ``tab``, ``space``, ...); the key of key,
    key_down and key_up, and the last (non-modifier) key of hotkey.
``modifiers`` : ``MultiBinary(4)``
    Flags for ctrl, shift, alt, win (:data:`~sciagent_gym.actions.keys.MODIFIERS`), held in hotkey.
    ``[1, 0, 0, 0]`` with ``key`` = ``s`` is ctrl+s. Used by hotkey only.
``text`` : :class:`~sciagent_gym.actions.text_space.UnicodeText` ``(max_text, min_length=1)``
    The text typed by type or put on the clipboard by set_clipboard, the shell command of run
    and launch, the text of answer, or the window title (a substring) of activate_window and
    close_window. Any Unicode string of 1..max_text characters is in the space; random
    samples are printable ASCII.
``scroll`` : ``MultiDiscrete([21, 21], start=[-10, -10])``
    Wheel clicks ``(dx, dy)`` for scroll, at ``coordinate``. pyautogui's convention: ``dy > 0``
    scrolls up, ``dx > 0`` scrolls right.
``seconds`` : ``Box(0.0, 5.0, (), float32)``
    Duration of wait.

done and fail read no field: done ends the episode claiming success, fail gives up.

:func:`from_space_sample` turns one such dict into actions (validated as
:func:`~sciagent_gym.actions.parse.parse_action` does). Actions go back to the human dict form
with :func:`~sciagent_gym.actions.human.action_to_dict` and to pyautogui code with
:func:`~sciagent_gym.actions.pyautogui.action_to_pyautogui`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from .keys import KEY_NAMES, MODIFIERS
from .text_space import UnicodeText
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
from .validate import (
    BUTTONS,
    MAX_TEXT_LENGTH,
    check_point,
    check_screen_size,
    short_repr,
    validate_action,
)

ACTION_TYPES: tuple[str, ...] = (
    "click", "double_click", "right_click", "move", "drag", "mouse_down", "mouse_up", "scroll",
    "type", "key", "hotkey", "key_down", "key_up", "wait", "run", "done", "fail",
    "set_clipboard", "get_clipboard", "launch", "list_windows", "activate_window", "close_window",
    "answer",
)

SCROLL_LIMIT = 10
WAIT_LIMIT = 5.0

#: The fields each action type reads (everything else in a sample is ignored).
TYPE_FIELDS: dict[str, tuple[str, ...]] = {
    "click": ("coordinate", "button"),
    "double_click": ("coordinate", "button"),
    "right_click": ("coordinate",),
    "move": ("coordinate",),
    "drag": ("start", "coordinate", "button"),
    "mouse_down": ("coordinate", "button"),
    "mouse_up": ("coordinate", "button"),
    "scroll": ("coordinate", "scroll"),
    "type": ("text",),
    "key": ("key",),
    "hotkey": ("modifiers", "key"),
    "key_down": ("key",),
    "key_up": ("key",),
    "wait": ("seconds",),
    "run": ("text",),
    "done": (),
    "fail": (),
    "set_clipboard": ("text",),
    "get_clipboard": (),
    "launch": ("text",),
    "list_windows": (),
    "activate_window": ("text",),
    "close_window": ("text",),
    "answer": ("text",),
}
_TEXT_ACTIONS: dict[str, type] = {"set_clipboard": SetClipboard, "launch": Launch,
                                  "answer": Answer,
                                  "activate_window": ActivateWindow, "close_window": CloseWindow}
FIELDS: tuple[str, ...] = (
    "action_type", "coordinate", "start", "button", "key", "modifiers", "text", "scroll",
    "seconds",
)


def make_action_space(width: int, height: int, max_text: int = 256) -> spaces.Dict:
    """The structured action space of a ``width`` x ``height`` screen (fields: module docstring)."""
    if width <= 0 or height <= 0:
        raise ValueError(f"screen size must be positive, got {width}x{height}")
    if not 1 <= max_text <= MAX_TEXT_LENGTH:
        raise ValueError(f"max_text must be between 1 and {MAX_TEXT_LENGTH}, got {max_text}")
    # Pixel coordinates are integers, so MultiDiscrete says exactly what is allowed.
    point = np.array([width, height], dtype=np.int64)
    scroll_span = 2 * SCROLL_LIMIT + 1
    return spaces.Dict(
        {
            "action_type": spaces.Discrete(len(ACTION_TYPES)),
            "coordinate": spaces.MultiDiscrete(point),
            "start": spaces.MultiDiscrete(point),
            "button": spaces.Discrete(len(BUTTONS)),
            "key": spaces.Discrete(len(KEY_NAMES)),
            "modifiers": spaces.MultiBinary(len(MODIFIERS)),
            "text": UnicodeText(max_length=max_text, min_length=1),
            "scroll": spaces.MultiDiscrete(
                [scroll_span, scroll_span], start=[-SCROLL_LIMIT, -SCROLL_LIMIT]
            ),
            "seconds": spaces.Box(low=0.0, high=WAIT_LIMIT, shape=(), dtype=np.float32),
        }
    )


# --------------------------------------------------------------------------------------------
# sample -> actions


def _scalar(value: Any, name: str) -> Any:
    """Unwrap 0-d / 1-element arrays that policies often return instead of plain numbers."""
    if isinstance(value, np.ndarray):
        if value.size != 1:
            raise ActionError(f"{name} must be a single number, got an array of shape "
                              f"{short_repr(value.shape)}")
        return value.reshape(()).item()
    if isinstance(value, np.generic):
        return value.item()
    return value


def _index(value: Any, name: str, n: int) -> int:
    """An index in ``0..n-1``; checked without float() so a 400-digit integer is merely out of
    range rather than an OverflowError."""
    value = _scalar(value, name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
        isinstance(value, float) and not value.is_integer()  # also inf and nan
    ):
        raise ActionError(f"{name} must be an integer index, got {short_repr(value)}")
    if not 0 <= value < n:
        raise ActionError(f"{name} {short_repr(value)} is out of range (0..{n - 1})")
    return int(value)


def _vector(value: Any, name: str, size: int) -> list[Any]:
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        arr = np.asarray(None)
    if arr.shape != (size,) or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
        or arr.dtype == np.bool_
    ):
        raise ActionError(f"{name} must be {size} numbers, got {short_repr(value)}")
    return arr.tolist()


def from_space_sample(sample: Mapping[str, Any], screen_size: tuple[int, int]) -> list[Action]:
    """Convert one element of :func:`make_action_space` into validated actions."""
    screen = check_screen_size(screen_size)
    if not isinstance(sample, Mapping):
        raise ActionError(f"action space sample must be a dict, got {type(sample).__name__}")
    for name in sample:
        if name not in FIELDS:
            raise ActionError(f"unknown field {short_repr(name)} in action space sample "
                              f"(fields: {', '.join(FIELDS)})")
    if "action_type" not in sample:
        raise ActionError("action space sample is missing field 'action_type'")
    raw_type = sample["action_type"]
    if isinstance(raw_type, str):
        if raw_type not in ACTION_TYPES:
            raise ActionError(f"unknown action_type {short_repr(raw_type)}")
        kind = raw_type
    else:
        kind = ACTION_TYPES[_index(raw_type, "action_type", len(ACTION_TYPES))]
    for name in TYPE_FIELDS[kind]:
        if name not in sample:
            raise ActionError(f"{kind} action needs field {name!r}")

    def point(name: str) -> tuple[int, int]:
        x, y = _vector(sample[name], name, 2)
        return check_point(x, y, screen, "start point" if name == "start" else "point")

    def button() -> str:
        return BUTTONS[_index(sample["button"], "button", len(BUTTONS))]

    def key() -> str:
        return KEY_NAMES[_index(sample["key"], "key", len(KEY_NAMES))]

    if kind in ("click", "double_click", "right_click"):
        x, y = point("coordinate")
        btn = "right" if kind == "right_click" else button()
        raw: Action = Click(x, y, btn, 2 if kind == "double_click" else 1)  # type: ignore[arg-type]
    elif kind == "move":
        raw = Move(*point("coordinate"))
    elif kind == "drag":
        start = point("start")
        raw = Drag(*point("coordinate"), button(), start)  # type: ignore[arg-type]
    elif kind in ("mouse_down", "mouse_up"):
        cls = MouseDown if kind == "mouse_down" else MouseUp
        raw = cls(button(), *point("coordinate"))  # type: ignore[arg-type]
    elif kind == "scroll":
        dx, dy = _vector(sample["scroll"], "scroll", 2)
        for name, value in (("scroll dx", dx), ("scroll dy", dy)):
            if isinstance(value, (int, float)) and abs(value) > SCROLL_LIMIT:  # nan: validated
                raise ActionError(
                    f"{name} must be in -{SCROLL_LIMIT}..{SCROLL_LIMIT}, got {short_repr(value)}"
                )
        raw = Scroll(dy, dx, *point("coordinate"))
    elif kind == "type":
        raw = TypeText(sample["text"])
    elif kind == "run":
        raw = Run(sample["text"])
    elif kind == "key":
        raw = Press(key())
    elif kind == "hotkey":
        flags = _vector(sample["modifiers"], "modifiers", len(MODIFIERS))
        if any(f not in (0, 1) for f in flags):
            raise ActionError(f"modifiers must be 0/1 flags, got {short_repr(flags)}")
        held = [m for m, f in zip(MODIFIERS, flags, strict=True) if f]
        last = key()
        raw = Hotkey(tuple(held) + ((last,) if last not in held else ()))
    elif kind in ("key_down", "key_up"):
        raw = (KeyDown if kind == "key_down" else KeyUp)(key())
    elif kind == "wait":
        seconds = _scalar(sample["seconds"], "seconds")
        if isinstance(seconds, (int, float)) and seconds > WAIT_LIMIT:
            raise ActionError(f"seconds must be at most {WAIT_LIMIT:g}, got {short_repr(seconds)}")
        raw = Wait(seconds)
    elif kind in _TEXT_ACTIONS:
        raw = _TEXT_ACTIONS[kind](sample["text"])
    elif kind == "get_clipboard":
        raw = GetClipboard()
    elif kind == "list_windows":
        raw = ListWindows()
    else:
        raw = Done() if kind == "done" else Fail()
    return [validate_action(raw, screen)]
