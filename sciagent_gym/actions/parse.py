"""Turn whatever an agent emits into validated :mod:`sciagent_gym.actions.types` objects.

:func:`parse_action` accepts

* **pyautogui code**, as LLM agents write it: ``pyautogui.click(100, 200)``,
  ``hotkey('ctrl', 's')``, ``time.sleep(0.5)``, ``run("ls -l")`` ... Several statements per
  string (newlines or ``;``), markdown code fences and import lines are tolerated, and the whole
  string may instead be one of the tokens ``WAIT``, ``DONE`` or ``FAIL``. The code is parsed
  with :mod:`ast` and checked against a whitelist of functions whose arguments must be
  literals; nothing is ever evaluated;
* **dicts in the human form** ``{"type": "click", "x": 10, "y": 20}`` (see :data:`DICT_FIELDS`,
  the inverse of :func:`sciagent_gym.actions.space.action_to_dict`);
* **samples of the structured action space** (dicts with an integer ``"action_type"``), handed to
  :func:`sciagent_gym.actions.space.from_space_sample`;
* an **Action instance** or a list/tuple of them.

Every path ends in :func:`validate_action`, so controllers only ever see on-screen integer
points, known buttons, canonical key names and bounded counts, as plain built-in values. Problems
raise :class:`~sciagent_gym.errors.ActionError` with a message that names the offending token,
because that message is fed back to the agent.

The agent is untrusted (a random or reward-hacking policy, or an LLM), so the parser is total:
whatever it is given, :func:`parse_action` returns or raises ``ActionError``, quickly, and a step
stays within the per-step caps below (checked at parse time, so a refused step does nothing).
"""

from __future__ import annotations

import ast
import itertools
import math
import numbers
import re
import reprlib
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from .keys import normalize_key
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

# Per-action and per-step caps. A step is what one ``env.step()`` call compiles to; a step that
# breaks a cap is refused whole with an ActionError naming the cap, so it does nothing.

#: Longest accepted source string of the pyautogui form: room for a long ``write()`` and a few
#: dozen calls, not for thousands of statements (the parser's time and memory stay small).
MAX_SOURCE_LENGTH = 20_000
#: Most primitive actions one step may hold. A click or key press repeated n times
#: (``clicks=``, ``presses=``) counts n, so one step cannot hide thousands of input events.
MAX_ACTIONS_PER_STEP = 100
#: Longest text one step may type (one ``write()``/``type`` action, or several together), and
#: the longest window title: typing is slow, so this bounds a step's duration.
MAX_TEXT_LENGTH = 4_096
#: Longest answer text (an answer is a value or a short list, not an essay).
MAX_ANSWER_LENGTH = 1_024
#: Longest command of one ``run()`` or ``computer.launch()``.
MAX_COMMAND_LENGTH = 4_096
#: Longest text one ``set_clipboard``/``pyperclip.copy`` may put on the clipboard.
MAX_CLIPBOARD_LENGTH = 4_096
#: Most CLI commands (``run``/``launch``) in one step: each may take the task's cli_timeout.
MAX_COMMANDS_PER_STEP = 4
#: Longest single wait (``time.sleep``, ``WAIT``, ``{"type": "wait"}``) and longest ignored
#: ``duration``/``interval`` argument, in seconds.
MAX_WAIT_SECONDS = 10.0
#: Most seconds one step may wait in total (the sum of its waits), so a step stays short.
MAX_STEP_WAIT_SECONDS = 10.0
#: Upper bound for click counts, key presses and scroll clicks of one action.
MAX_REPEAT = 100
#: Most keys one ``hotkey`` may hold down together.
MAX_HOTKEY_KEYS = 16

_MAX_FIELDS = 32  # an action dict has at most 9; more is junk, not worth iterating
_MAX_KEY_NAME = 64  # the longest key name or alias is 17 characters
_MAX_NESTING = 4  # literal lists in pyautogui calls: a key list, an (x, y) pair

BUTTONS: tuple[MouseButton, ...] = ("left", "middle", "right")
_BUTTON_ALIASES: dict[str, MouseButton] = {"primary": "left", "secondary": "right"}

#: Whole-string tokens and what they mean.
SPECIAL_TOKENS: dict[str, Action] = {"WAIT": Wait(1.0), "DONE": Done(), "FAIL": Fail()}

ACTION_CLASSES: tuple[type, ...] = (
    Click, Move, Drag, MouseDown, MouseUp, Scroll, TypeText, Press, Hotkey, KeyDown, KeyUp,
    Wait, Run, Answer, Done, Fail, SetClipboard, GetClipboard, Launch, ListWindows,
    ActivateWindow, CloseWindow,
)

Screen = tuple[int, int]
_T = TypeVar("_T")


# --------------------------------------------------------------------------------------------
# entry point


def parse_action(action: Any, screen_size: tuple[int, int]) -> list[Action]:
    """Compile one agent action (any accepted form) into a list of validated actions.

    Raises only :class:`ActionError` for a bad action (and ValueError for a bad ``screen_size``,
    which is the caller's bug).
    """
    screen = check_screen_size(screen_size)
    return _guarded(_parse_any, action, screen)


def _parse_any(action: Any, screen: Screen) -> list[Action]:
    if isinstance(action, str):
        actions = _parse_source(action, screen)
    elif isinstance(action, Mapping):
        fields = _plain_dict(action)
        if "action_type" in fields:
            from .space import from_space_sample  # spaces imports this module

            actions = from_space_sample(fields, screen)
        else:
            actions = _parse_dict(fields, screen)
    elif isinstance(action, ACTION_CLASSES):
        actions = [validate_action(action, screen)]
    elif isinstance(action, (list, tuple)):
        _check_count(len(action))
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


def _guarded(parse: Callable[[_T, Screen], list[Action]], action: _T,
             screen: Screen) -> list[Action]:
    """Run one parser so that any failure on hostile input surfaces as ActionError.

    The specific causes (huge integers, infinities, odd types) are checked where they occur;
    this catches what slips through (a dict subclass raising in ``__getitem__``, a RecursionError
    on absurd nesting, a MemoryError), because an exception escaping ``step()`` ends a rollout.
    """
    try:
        return parse(action, screen)
    except ActionError:
        raise
    except Exception as exc:  # noqa: BLE001 - the agent's input must not crash the env
        raise ActionError(
            f"cannot parse action {describe_value(action)}: {_exception_text(exc)}"
        ) from None


def _exception_text(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - a hostile __str__
        text = ""
    return _short(f"{type(exc).__name__}: {text}" if text else type(exc).__name__, 200)


def _plain_dict(action: Mapping[Any, Any]) -> dict[Any, Any]:
    """Copy a mapping's fields once, so a mapping's own hooks run only here and a huge (or
    endless) one is refused after a few fields."""
    fields: dict[Any, Any] = {}
    for key in itertools.islice(iter(action), _MAX_FIELDS + 1):
        if len(fields) == _MAX_FIELDS:
            raise ActionError(f"action dict has more than {_MAX_FIELDS} fields")
        fields[str.__str__(key) if isinstance(key, str) else key] = action[key]
    return fields


def _check_count(count: int) -> None:
    if count > MAX_ACTIONS_PER_STEP:
        raise ActionError(
            f"too many actions in one step: {count}, the limit is {MAX_ACTIONS_PER_STEP} per "
            "step (a click or key press repeated n times counts n)"
        )


def check_step_limits(actions: Sequence[Action]) -> None:
    """Refuse a step whose (validated) actions together break a per-step cap (``MAX_*``)."""
    _check_count(len(actions))
    events = typed = commands = 0
    waits: list[float] = []
    for a in actions:
        events += a.clicks if isinstance(a, Click) else a.presses if isinstance(a, Press) else 1
        if isinstance(a, Wait):
            waits.append(a.seconds)
        elif isinstance(a, TypeText):
            typed += len(a.text)
        elif isinstance(a, (Run, Launch)):
            commands += 1
    _check_count(events)
    waited = math.fsum(waits)  # exact: a hundred waits of 0.1 s are 10 s, not 10.000000000000002
    if waited > MAX_STEP_WAIT_SECONDS:
        raise ActionError(
            f"this step waits {waited:g} s in total, the limit is {MAX_STEP_WAIT_SECONDS:g} s "
            "per step"
        )
    if typed > MAX_TEXT_LENGTH:
        raise ActionError(
            f"this step types {typed} characters, the limit is {MAX_TEXT_LENGTH} per step"
        )
    if commands > MAX_COMMANDS_PER_STEP:
        raise ActionError(
            f"too many CLI commands in one step: {commands}, the limit is "
            f"{MAX_COMMANDS_PER_STEP} (run/launch) per step"
        )


def check_screen_size(screen_size: Any) -> Screen:
    """``(width, height)`` as positive ints; a bad size is a programming error, not ActionError."""
    try:
        width, height = (int(v) for v in screen_size)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"screen_size must be (width, height), got {screen_size!r}") from None
    if width <= 0 or height <= 0:
        raise ValueError(f"screen_size must be positive, got {screen_size!r}")
    return width, height


# --------------------------------------------------------------------------------------------
# validation shared by every front end


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _number(value: Any, name: str) -> float:
    """A finite float; a 400-digit integer or an infinity is the agent's error, named as such."""
    if not _is_number(value):
        raise ActionError(f"{name} must be a number, got {describe_value(value)}")
    try:
        number = float(value)
    except OverflowError:
        raise ActionError(f"{name} is out of range, got {describe_value(value)}") from None
    if not math.isfinite(number):
        raise ActionError(f"{name} must be finite, got {short_repr(value)}")
    return number


def _integer(value: Any, name: str, low: int, high: int) -> int:
    number = _number(value, name)
    if not number.is_integer():
        raise ActionError(f"{name} must be an integer, got {short_repr(value)}")
    if not low <= number <= high:
        raise ActionError(f"{name} must be between {low} and {high}, got {short_repr(value)}")
    return int(number)


def _seconds(value: Any, name: str, high: float = MAX_WAIT_SECONDS) -> float:
    number = _number(value, name)
    if number < 0:
        raise ActionError(f"{name} must not be negative, got {short_repr(value)}")
    if number > high:
        raise ActionError(f"{name} must be at most {high:g} seconds, got {short_repr(value)}")
    return number


def _text(value: Any, name: str, limit: int = MAX_TEXT_LENGTH, *,
          allow_empty: bool = True) -> str:
    """A plain ``str`` (never a subclass, which could misbehave in a controller) that a
    keyboard, a shell or a clipboard can take: bounded, no NUL, no lone surrogate."""
    if not isinstance(value, str):
        raise ActionError(f"{name} must be a string, got {describe_value(value)}")
    value = str.__str__(value)
    if len(value) > limit:
        raise ActionError(f"{name} is {len(value)} characters long, the limit is {limit}")
    if not value and not allow_empty:
        raise ActionError(f"{name} must not be empty")
    if "\x00" in value:
        raise ActionError(f"{name} must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ActionError(
            f"{name} contains a lone surrogate at position {exc.start}, which cannot be typed"
        ) from None
    return value


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxlong, _REPR.maxother = 2, 50, 40, 50
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 4


def short_repr(value: Any) -> str:
    """A repr for error messages that cannot fail or blow up: hostile values (huge integers,
    deep nesting, a raising ``__repr__``) come from the agent and go back to it."""
    try:
        if isinstance(value, int) and value.bit_length() > 128:  # repr fails past 4300 digits
            return f"<an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits>"
        return _short(_REPR.repr(value), 60)
    except Exception:  # noqa: BLE001 - the message must still be produced
        return f"<{_type_name(value)}>"


def describe_value(value: Any) -> str:
    """``type repr`` of a value, short and safe (see :func:`short_repr`)."""
    return f"{_type_name(value)} {short_repr(value)}"


def _type_name(value: Any) -> str:
    name = getattr(type(value), "__name__", None)
    return name if isinstance(name, str) else "object"


def check_point(x: Any, y: Any, screen: Screen, what: str = "point") -> tuple[int, int]:
    """Round a point to pixels and make sure it lies on the screen."""
    px = round(_number(x, "x"))
    py = round(_number(y, "y"))
    width, height = screen
    if not (0 <= px < width and 0 <= py < height):
        raise ActionError(
            f"{what} ({short_repr(px)}, {short_repr(py)}) is off the {width}x{height} screen"
        )
    return px, py


def _optional_point(
    x: Any, y: Any, screen: Screen, what: str = "point"
) -> tuple[int | None, int | None]:
    if x is None and y is None:
        return None, None
    if x is None or y is None:
        missing = "x" if x is None else "y"
        raise ActionError(f"{what} needs both x and y, {missing} is missing")
    return check_point(x, y, screen, what)


def check_button(button: Any) -> MouseButton:
    """Canonical mouse button name (pyautogui's 'primary'/'secondary' accepted)."""
    if isinstance(button, str) and len(button) <= _MAX_KEY_NAME:
        name = str.__str__(button).lower()
        name = _BUTTON_ALIASES.get(name, name)
        if name in BUTTONS:
            return name  # type: ignore[return-value]
    raise ActionError(
        f"unknown button {short_repr(button)} (expected one of {', '.join(BUTTONS)})"
    )


def _key(key: Any) -> str:
    """:func:`normalize_key`, after the checks that keep its messages short and safe."""
    if not isinstance(key, str):
        raise ActionError(f"key must be a string, got {describe_value(key)}")
    if len(key) > _MAX_KEY_NAME:
        raise ActionError(f"unknown key {short_repr(key)}")
    return normalize_key(str.__str__(key))


def _keys(keys: Any, name: str, limit: int = MAX_HOTKEY_KEYS) -> tuple[str, ...]:
    if isinstance(keys, str) or not isinstance(keys, (list, tuple)):
        raise ActionError(f"{name} must be a list of key names, got {describe_value(keys)}")
    if not keys:
        raise ActionError(f"{name} must hold at least one key")
    if len(keys) > limit:
        raise ActionError(f"{name} holds {len(keys)} keys, the limit is {limit}")
    return tuple(_key(k) for k in keys)


def validate_action(action: Action, screen_size: tuple[int, int]) -> Action:
    """Check one action against the screen and return it with canonical values.

    Floats are rounded to pixels, keys normalised and buttons lower-cased, so the returned object
    may differ from (but is equivalent to) the argument.
    """
    screen = check_screen_size(screen_size)
    a: Any = action
    if isinstance(a, Click):
        x, y = check_point(a.x, a.y, screen)
        clicks = _integer(a.clicks, "clicks", 1, MAX_REPEAT)
        return Click(x, y, check_button(a.button), clicks)
    if isinstance(a, Move):
        return Move(*check_point(a.x, a.y, screen))
    if isinstance(a, Drag):
        start = None
        if a.start is not None:
            if isinstance(a.start, str) or not isinstance(a.start, (list, tuple)) or len(
                a.start
            ) != 2:
                raise ActionError(
                    f"drag start must be an (x, y) pair, got {describe_value(a.start)}"
                )
            start = check_point(a.start[0], a.start[1], screen, "start point")
        x, y = check_point(a.x, a.y, screen)
        return Drag(x, y, check_button(a.button), start)
    if isinstance(a, (MouseDown, MouseUp)):
        x, y = _optional_point(a.x, a.y, screen)
        return (MouseDown if isinstance(a, MouseDown) else MouseUp)(check_button(a.button), x, y)
    if isinstance(a, Scroll):
        dy = _integer(a.dy, "dy", -MAX_REPEAT, MAX_REPEAT)
        dx = _integer(a.dx, "dx", -MAX_REPEAT, MAX_REPEAT)
        x, y = _optional_point(a.x, a.y, screen)
        return Scroll(dy, dx, x, y)
    if isinstance(a, TypeText):
        return TypeText(_text(a.text, "text"))
    if isinstance(a, Press):
        return Press(_key(a.key), _integer(a.presses, "presses", 1, MAX_REPEAT))
    if isinstance(a, Hotkey):
        return Hotkey(_keys(a.keys, "hotkey keys"))
    if isinstance(a, (KeyDown, KeyUp)):
        return (KeyDown if isinstance(a, KeyDown) else KeyUp)(_key(a.key))
    if isinstance(a, Wait):
        return Wait(_seconds(a.seconds, "seconds"))
    if isinstance(a, Run):
        command = _text(a.command, "command", MAX_COMMAND_LENGTH, allow_empty=False)
        timeout = None
        if a.timeout is not None:
            timeout = _number(a.timeout, "timeout")
            if timeout <= 0:
                raise ActionError(f"timeout must be positive, got {short_repr(a.timeout)}")
        return Run(command, timeout)
    if isinstance(a, Answer):
        return Answer(_text(a.text, "text", MAX_ANSWER_LENGTH, allow_empty=False))
    for plain in (Done, Fail, GetClipboard, ListWindows):
        if isinstance(a, plain):
            return plain()
    if isinstance(a, SetClipboard):
        return SetClipboard(_text(a.text, "text", MAX_CLIPBOARD_LENGTH))
    if isinstance(a, Launch):
        return Launch(_text(a.command, "command", MAX_COMMAND_LENGTH, allow_empty=False))
    if isinstance(a, (ActivateWindow, CloseWindow)):
        cls = ActivateWindow if isinstance(a, ActivateWindow) else CloseWindow
        return cls(_text(a.title, "title", allow_empty=False))
    raise ActionError(f"unsupported action type: {type(action).__name__}")


# --------------------------------------------------------------------------------------------
# human dict form

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
    return _guarded(_parse_dict, action, screen)


def _parse_dict(action: Mapping[Any, Any], screen: Screen) -> list[Action]:
    action = _plain_dict(action)
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
# pyautogui code form

_FENCE = re.compile(r"^\s*```")

#: Real pyautogui parameters we cannot honour; accepted only when None.
_UNSUPPORTED = ("tween", "logScreenshot", "_pause")


@dataclass(frozen=True)
class _Signature:
    """Parameters of one whitelisted function, in pyautogui's positional order."""

    params: tuple[str, ...]
    required: tuple[str, ...] = ()
    unsupported: tuple[str, ...] = _UNSUPPORTED
    varargs: bool = False  # hotkey(*keys)


_Handler = Callable[[dict[str, Any], Screen], list[Action]]


def _click_handler(clicks: int | None = None, button: MouseButton | None = None) -> _Handler:
    """click/doubleClick/rightClick/...: fixed clicks or button where the name implies them."""

    def handle(args: dict[str, Any], screen: Screen) -> list[Action]:
        _durations(args)
        btn = check_button(button or args.get("button") or "left")
        count = _integer(clicks or args.get("clicks", 1), "clicks", 1, MAX_REPEAT)
        x, y = _call_point(args, screen, required=False)
        if x is None or y is None:  # at the pointer: Click needs coordinates
            return [MouseDown(btn), MouseUp(btn)] * count
        return [Click(x, y, btn, count)]

    return handle


def _durations(args: dict[str, Any]) -> None:
    """Accept but ignore duration/interval; still reject nonsense values."""
    for name in ("duration", "interval"):
        if args.get(name) is not None:
            _seconds(args[name], name)


def _call_point(
    args: dict[str, Any], screen: Screen, *, required: bool
) -> tuple[int | None, int | None]:
    x, y = args.get("x"), args.get("y")
    if isinstance(x, (list, tuple)) and y is None:  # click((x, y)) as pyautogui allows
        if len(x) != 2:
            raise ActionError(f"point must be an (x, y) pair, got {short_repr(x)}")
        x, y = x
    if required and (x is None or y is None):
        raise ActionError("x and y are required")
    return _optional_point(x, y, screen)


def _move_to(args: dict[str, Any], screen: Screen) -> list[Action]:
    _durations(args)
    x, y = _call_point(args, screen, required=True)
    return [Move(x, y)]  # type: ignore[arg-type]


def _drag_to(args: dict[str, Any], screen: Screen) -> list[Action]:
    _durations(args)
    x, y = _call_point(args, screen, required=True)
    return [Drag(x, y, check_button(args.get("button") or "left"))]  # type: ignore[arg-type]


def _mouse_button(cls: type[MouseDown] | type[MouseUp]) -> _Handler:
    def handle(args: dict[str, Any], screen: Screen) -> list[Action]:
        _durations(args)
        x, y = _call_point(args, screen, required=False)
        return [cls(check_button(args.get("button") or "left"), x, y)]

    return handle


def _scroll(horizontal: bool) -> _Handler:
    def handle(args: dict[str, Any], screen: Screen) -> list[Action]:
        clicks = _integer(args["clicks"], "clicks", -MAX_REPEAT, MAX_REPEAT)
        x, y = _call_point(args, screen, required=False)
        if horizontal:
            return [Scroll(dx=clicks, x=x, y=y)]
        return [Scroll(dy=clicks, x=x, y=y)]

    return handle


def _write(args: dict[str, Any], screen: Screen) -> list[Action]:
    _durations(args)
    message = args["message"]
    if isinstance(message, (list, tuple)):  # typewrite(['a', 'enter']) presses key names
        if not message:
            return []
        return [Press(k) for k in _keys(message, "write() key list", MAX_ACTIONS_PER_STEP)]
    return [TypeText(_text(message, "message"))]


def _press(args: dict[str, Any], screen: Screen) -> list[Action]:
    _durations(args)
    presses = _integer(args.get("presses", 1), "presses", 1, MAX_REPEAT)
    keys = args["keys"]
    if isinstance(keys, str):
        return [Press(_key(keys), presses)]
    names = _keys(keys, "press()", MAX_ACTIONS_PER_STEP)
    if len(names) == 1:
        return [Press(names[0], presses)]
    _check_count(len(names) * presses)  # before building them
    return [Press(k) for _ in range(presses) for k in names]


def _hotkey(args: dict[str, Any], screen: Screen) -> list[Action]:
    _durations(args)
    flat: list[Any] = []
    for item in args["*"]:  # hotkey(['ctrl', 'c']) is a common slip; accept it
        flat.extend(item if isinstance(item, (list, tuple)) else [item])
    if not flat:
        raise ActionError("at least one key is needed")
    return [Hotkey(_keys(flat, "hotkey keys"))]


def _key_down(args: dict[str, Any], screen: Screen) -> list[Action]:
    return [KeyDown(_key(args["key"]))]


def _key_up(args: dict[str, Any], screen: Screen) -> list[Action]:
    return [KeyUp(_key(args["key"]))]


def _sleep(args: dict[str, Any], screen: Screen) -> list[Action]:
    return [Wait(_seconds(args["seconds"], "seconds"))]


def _run(args: dict[str, Any], screen: Screen) -> list[Action]:
    return [validate_action(Run(args["command"], args.get("timeout")), screen)]


def _one(build: Callable[[dict[str, Any]], Action]) -> _Handler:
    def handle(args: dict[str, Any], screen: Screen) -> list[Action]:
        return [validate_action(build(args), screen)]

    return handle


_S = _Signature
_PYAUTOGUI: dict[str, tuple[_Signature, _Handler]] = {
    "click": (_S(("x", "y", "clicks", "interval", "button", "duration", "tween")),
              _click_handler()),
    "leftClick": (_S(("x", "y", "interval", "duration", "tween")), _click_handler(1, "left")),
    "rightClick": (_S(("x", "y", "interval", "duration", "tween")), _click_handler(1, "right")),
    "middleClick": (_S(("x", "y", "interval", "duration", "tween")),
                    _click_handler(1, "middle")),
    "doubleClick": (_S(("x", "y", "interval", "button", "duration", "tween")),
                    _click_handler(2)),
    "tripleClick": (_S(("x", "y", "interval", "button", "duration", "tween")),
                    _click_handler(3)),
    "moveTo": (_S(("x", "y", "duration", "tween")), _move_to),
    "dragTo": (_S(("x", "y", "duration", "tween", "button"),
                  unsupported=(*_UNSUPPORTED, "mouseDownUp")), _drag_to),
    "mouseDown": (_S(("x", "y", "button", "duration", "tween")), _mouse_button(MouseDown)),
    "mouseUp": (_S(("x", "y", "button", "duration", "tween")), _mouse_button(MouseUp)),
    "scroll": (_S(("clicks", "x", "y"), ("clicks",)), _scroll(False)),
    "vscroll": (_S(("clicks", "x", "y"), ("clicks",)), _scroll(False)),
    "hscroll": (_S(("clicks", "x", "y"), ("clicks",)), _scroll(True)),
    "write": (_S(("message", "interval"), ("message",)), _write),
    "typewrite": (_S(("message", "interval"), ("message",)), _write),
    "press": (_S(("keys", "presses", "interval"), ("keys",)), _press),
    "hotkey": (_S(("interval",), varargs=True), _hotkey),
    "keyDown": (_S(("key",), ("key",)), _key_down),
    "keyUp": (_S(("key",), ("key",)), _key_up),
    "sleep": (_S(("seconds",), ("seconds",), ()), _sleep),
}
_TIME: dict[str, tuple[_Signature, _Handler]] = {"sleep": _PYAUTOGUI["sleep"]}
#: The computer API beyond pyautogui, as ``computer.<name>(...)`` or a bare call.
_COMPUTER: dict[str, tuple[_Signature, _Handler]] = {
    "answer": (_S(("text",), ("text",), ()), _one(lambda a: Answer(a["text"]))),
    "set_clipboard": (_S(("text",), ("text",), ()), _one(lambda a: SetClipboard(a["text"]))),
    "get_clipboard": (_S((), (), ()), _one(lambda a: GetClipboard())),
    "launch": (_S(("command",), ("command",), ()), _one(lambda a: Launch(a["command"]))),
    "list_windows": (_S((), (), ()), _one(lambda a: ListWindows())),
    "activate_window": (_S(("title",), ("title",), ()),
                        _one(lambda a: ActivateWindow(a["title"]))),
    "close_window": (_S(("title",), ("title",), ()), _one(lambda a: CloseWindow(a["title"]))),
}
#: pyperclip, which agents trained on OSWorld-style prompts use for the clipboard.
_PYPERCLIP: dict[str, tuple[_Signature, _Handler]] = {
    "copy": _COMPUTER["set_clipboard"],
    "paste": _COMPUTER["get_clipboard"],
}
_BARE: dict[str, tuple[_Signature, _Handler]] = {
    **_PYAUTOGUI,
    **_COMPUTER,
    "run": (_S(("command", "timeout"), ("command",), ()), _run),
}
_MODULES: dict[str, dict[str, tuple[_Signature, _Handler]]] = {
    "pyautogui": _PYAUTOGUI,
    "time": _TIME,
    "computer": _COMPUTER,
    "pyperclip": _PYPERCLIP,
}
_RELATIVE = {"move", "moveRel", "drag", "dragRel"}


def parse_pyautogui(source: str, screen_size: tuple[int, int]) -> list[Action]:
    """Parse pyautogui-style code (or a WAIT/DONE/FAIL token) without executing it."""
    screen = check_screen_size(screen_size)
    return _guarded(_parse_source, source, screen)


def _parse_source(source: str, screen: Screen) -> list[Action]:
    if not isinstance(source, str):
        raise ActionError(f"action code must be a string, got {_type_name(source)}")
    source = str.__str__(source)
    if len(source) > MAX_SOURCE_LENGTH:
        raise ActionError(
            f"action string is {len(source)} characters long, the limit is {MAX_SOURCE_LENGTH}"
        )
    token = SPECIAL_TOKENS.get(source.strip().upper())
    if token is not None:
        return [token]
    # Blank out fence lines rather than deleting them so line numbers still match the input.
    code = "\n".join("" if _FENCE.match(line) else line for line in source.split("\n"))
    stripped = code.strip()
    if len(stripped) > 1 and stripped[0] == stripped[-1] == "`":  # `click(1, 2)` inline code
        code = stripped[1:-1]
    token = SPECIAL_TOKENS.get(code.strip().upper())
    if token is not None:
        return [token]
    code = textwrap.dedent(code)
    try:
        tree = ast.parse(code, mode="exec")
    except SyntaxError as exc:
        line = (exc.text or "").strip()
        where = f" on line {exc.lineno}" if exc.lineno else ""
        shown = f": {short_repr(line)}" if line else ""
        raise ActionError(f"syntax error{where}: {exc.msg}{shown}") from None
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting
        raise ActionError(f"cannot parse action string: {_exception_text(exc)}") from None

    aliases = _module_aliases(tree)
    calls = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom, ast.Pass))]
    if not calls:
        raise ActionError("empty action: no pyautogui call, run() or WAIT/DONE/FAIL token")
    _check_count(len(calls))  # every call is at least one action: refuse before compiling
    many = len(calls) > 1
    actions: list[Action] = []
    for stmt in calls:
        try:
            actions.extend(_statement(stmt, aliases, screen))
        except ActionError as exc:
            if many:
                raise ActionError(f"line {stmt.lineno}: {exc}") from None
            raise
    check_step_limits(actions)
    return actions


def _module_aliases(tree: ast.Module) -> dict[str, str]:
    """``import pyautogui as pg`` makes ``pg.click`` valid; nothing else is imported."""
    aliases = {name: name for name in _MODULES}
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.name in _MODULES and alias.asname:
                    aliases[alias.asname] = alias.name
    return aliases


def _statement(
    stmt: ast.stmt, aliases: dict[str, str], screen: Screen
) -> list[Action]:
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Name) and (
            stmt.value.id.upper() in SPECIAL_TOKENS
        ):
            raise ActionError(f"{stmt.value.id} must be the whole action, not one statement of it")
        raise ActionError(f"only function calls are allowed, got {_unparse(stmt)!r}")
    call = stmt.value
    name, (signature, handler) = _resolve(call.func, aliases)
    args = _bind(call, name, signature)
    try:
        return handler(args, screen)
    except ActionError as exc:
        raise ActionError(f"{_unparse(stmt)}: {exc}") from None


def _resolve(func: ast.expr, aliases: dict[str, str]) -> tuple[str, tuple[_Signature, _Handler]]:
    if isinstance(func, ast.Name):
        if func.id in _BARE:
            return func.id, _BARE[func.id]
        name = func.id
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        module = aliases.get(func.value.id)
        name = f"{func.value.id}.{func.attr}"
        if module is not None and func.attr in _MODULES[module]:
            return name, _MODULES[module][func.attr]
        if module == "pyautogui" and func.attr in _RELATIVE:
            raise ActionError(
                f"relative mouse moves are not supported: {name}(); use moveTo/dragTo with "
                "absolute coordinates"
            )
    else:
        name = _unparse(func)
    if name in _RELATIVE:
        raise ActionError(
            f"relative mouse moves are not supported: {name}(); use moveTo/dragTo with absolute "
            "coordinates"
        )
    raise ActionError(
        f"unknown function {short_repr(name)}: only pyautogui mouse/keyboard calls, time.sleep, "
        "run() and the computer API (computer.set_clipboard/get_clipboard/launch/list_windows/"
        "activate_window/close_window) are allowed"
    )


def _bind(call: ast.Call, name: str, signature: _Signature) -> dict[str, Any]:
    """Match the call's arguments to the signature, then evaluate them as literals."""
    nodes: dict[str, ast.expr] = {}
    star: list[ast.expr] = []
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            raise ActionError(f"argument unpacking (*) is not supported in {name}()")
        if signature.varargs:
            star.append(arg)
        elif i < len(signature.params):
            nodes[signature.params[i]] = arg
        else:
            raise ActionError(
                f"{name}() takes at most {len(signature.params)} positional arguments, "
                f"got {len(call.args)}"
            )
    for kw in call.keywords:
        if kw.arg is None:
            raise ActionError(f"argument unpacking (**) is not supported in {name}()")
        if kw.arg not in signature.params and kw.arg not in signature.unsupported:
            raise ActionError(f"unsupported argument {short_repr(kw.arg)} to {name}()")
        if kw.arg in nodes:
            raise ActionError(
                f"{name}() got multiple values for argument {short_repr(kw.arg)}"
            )
        nodes[kw.arg] = kw.value
    args: dict[str, Any] = {}
    for param, node in nodes.items():
        if param in signature.unsupported:  # e.g. tween=pyautogui.easeInQuad
            if not (isinstance(node, ast.Constant) and node.value is None):
                raise ActionError(f"unsupported argument {param!r} to {name}()")
            continue
        args[param] = _literal(node, param, name)
    for param in signature.required:
        if param not in args:
            raise ActionError(f"{name}() is missing argument {param!r}")
    if signature.varargs:
        args["*"] = [_literal(node, f"#{i + 1}", name) for i, node in enumerate(star)]
    return args


_CONSTANT_TYPES = (int, float, str, bool, type(None))


def _literal(node: ast.expr, param: str, func: str, depth: int = 0) -> Any:
    """Value of a literal argument: numbers, strings, True/False/None, lists/tuples of them
    (nested a few levels at most: key lists and points need no more)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, _CONSTANT_TYPES):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.USub, ast.UAdd))
        and isinstance(node.operand, ast.Constant)
        and _is_number(node.operand.value)
    ):
        value = node.operand.value
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, (ast.List, ast.Tuple)):
        if depth >= _MAX_NESTING:
            raise ActionError(f"argument {param!r} of {func}() is nested too deeply")
        values = [_literal(elt, param, func, depth + 1) for elt in node.elts]
        return values if isinstance(node, ast.List) else tuple(values)
    raise ActionError(
        f"argument {param!r} of {func}() must be a literal (number, string, list), "
        f"got {_unparse(node)!r}"
    )


def _unparse(node: ast.AST) -> str:
    """Shortened source of a node for messages; never fails, even on absurd nesting."""
    try:
        return _short(ast.unparse(node))
    except (RecursionError, ValueError, MemoryError):
        return f"<{type(node).__name__.lower()}>"


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
