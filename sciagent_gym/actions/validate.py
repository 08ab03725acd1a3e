"""What every action form ends in: the per-step caps and the checks of one action's values.

Every front end (pyautogui code, human dicts, space samples, Action instances) ends in
:func:`validate_action` and :func:`check_step_limits`, so controllers only ever see on-screen
integer points, known buttons, canonical key names and bounded counts, as plain built-in values.
Problems raise :class:`~sciagent_gym.errors.ActionError` with a message that names the offending
token, because that message is fed back to the agent.

The agent is untrusted (a random or reward-hacking policy, or an LLM), so every check is total
and quick, its messages stay short even for hostile values (:func:`short_repr`), and
:func:`guarded` turns whatever slips through into ``ActionError``. Standard library only: the
control server validates actions inside a bare VM guest.
"""

from __future__ import annotations

import itertools
import math
import numbers
import reprlib
from collections.abc import Callable, Mapping, Sequence
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

BUTTONS: tuple[MouseButton, ...] = ("left", "middle", "right")
_BUTTON_ALIASES: dict[str, MouseButton] = {"primary": "left", "secondary": "right"}

#: Every action dataclass, for ``isinstance`` checks (:data:`~.types.Action` is a union).
ACTION_CLASSES: tuple[type, ...] = (
    Click, Move, Drag, MouseDown, MouseUp, Scroll, TypeText, Press, Hotkey, KeyDown, KeyUp,
    Wait, Run, Answer, Done, Fail, SetClipboard, GetClipboard, Launch, ListWindows,
    ActivateWindow, CloseWindow,
)

#: A checked screen size (:func:`check_screen_size`): ``(width, height)`` in pixels.
Screen = tuple[int, int]
_T = TypeVar("_T")


# --------------------------------------------------------------------------------------------
# hostile input


def guarded(parse: Callable[[_T, Screen], list[Action]], action: _T,
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
            f"cannot parse action {describe_value(action)}: {exception_text(exc)}"
        ) from None


def exception_text(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - a hostile __str__
        text = ""
    return shorten(f"{type(exc).__name__}: {text}" if text else type(exc).__name__, 200)


def plain_dict(action: Mapping[Any, Any]) -> dict[Any, Any]:
    """Copy a mapping's fields once, so a mapping's own hooks run only here and a huge (or
    endless) one is refused after a few fields."""
    fields: dict[Any, Any] = {}
    for key in itertools.islice(iter(action), _MAX_FIELDS + 1):
        if len(fields) == _MAX_FIELDS:
            raise ActionError(f"action dict has more than {_MAX_FIELDS} fields")
        fields[str.__str__(key) if isinstance(key, str) else key] = action[key]
    return fields


# --------------------------------------------------------------------------------------------
# per-step caps


def check_count(count: int) -> None:
    if count > MAX_ACTIONS_PER_STEP:
        raise ActionError(
            f"too many actions in one step: {count}, the limit is {MAX_ACTIONS_PER_STEP} per "
            "step (a click or key press repeated n times counts n)"
        )


def check_step_limits(actions: Sequence[Action]) -> None:
    """Refuse a step whose (validated) actions together break a per-step cap (``MAX_*``)."""
    check_count(len(actions))
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
    check_count(events)
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
# values and actions


def is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_number(value: Any, name: str) -> float:
    """A finite float; a 400-digit integer or an infinity is the agent's error, named as such."""
    if not is_number(value):
        raise ActionError(f"{name} must be a number, got {describe_value(value)}")
    try:
        number = float(value)
    except OverflowError:
        raise ActionError(f"{name} is out of range, got {describe_value(value)}") from None
    if not math.isfinite(number):
        raise ActionError(f"{name} must be finite, got {short_repr(value)}")
    return number


def check_integer(value: Any, name: str, low: int, high: int) -> int:
    number = check_number(value, name)
    if not number.is_integer():
        raise ActionError(f"{name} must be an integer, got {short_repr(value)}")
    if not low <= number <= high:
        raise ActionError(f"{name} must be between {low} and {high}, got {short_repr(value)}")
    return int(number)


def check_seconds(value: Any, name: str, high: float = MAX_WAIT_SECONDS) -> float:
    number = check_number(value, name)
    if number < 0:
        raise ActionError(f"{name} must not be negative, got {short_repr(value)}")
    if number > high:
        raise ActionError(f"{name} must be at most {high:g} seconds, got {short_repr(value)}")
    return number


def check_text(value: Any, name: str, limit: int = MAX_TEXT_LENGTH, *,
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
        return shorten(_REPR.repr(value), 60)
    except Exception:  # noqa: BLE001 - the message must still be produced
        return f"<{type_name(value)}>"


def describe_value(value: Any) -> str:
    """``type repr`` of a value, short and safe (see :func:`short_repr`)."""
    return f"{type_name(value)} {short_repr(value)}"


def type_name(value: Any) -> str:
    name = getattr(type(value), "__name__", None)
    return name if isinstance(name, str) else "object"


def check_point(x: Any, y: Any, screen: Screen, what: str = "point") -> tuple[int, int]:
    """Round a point to pixels and make sure it lies on the screen."""
    px = round(check_number(x, "x"))
    py = round(check_number(y, "y"))
    width, height = screen
    if not (0 <= px < width and 0 <= py < height):
        raise ActionError(
            f"{what} ({short_repr(px)}, {short_repr(py)}) is off the {width}x{height} screen"
        )
    return px, py


def check_optional_point(
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


def check_key(key: Any) -> str:
    """:func:`normalize_key`, after the checks that keep its messages short and safe."""
    if not isinstance(key, str):
        raise ActionError(f"key must be a string, got {describe_value(key)}")
    if len(key) > _MAX_KEY_NAME:
        raise ActionError(f"unknown key {short_repr(key)}")
    return normalize_key(str.__str__(key))


def check_keys(keys: Any, name: str, limit: int = MAX_HOTKEY_KEYS) -> tuple[str, ...]:
    if isinstance(keys, str) or not isinstance(keys, (list, tuple)):
        raise ActionError(f"{name} must be a list of key names, got {describe_value(keys)}")
    if not keys:
        raise ActionError(f"{name} must hold at least one key")
    if len(keys) > limit:
        raise ActionError(f"{name} holds {len(keys)} keys, the limit is {limit}")
    return tuple(check_key(k) for k in keys)


def validate_action(action: Action, screen_size: tuple[int, int]) -> Action:
    """Check one action against the screen and return it with canonical values.

    Floats are rounded to pixels, keys normalised and buttons lower-cased, so the returned object
    may differ from (but is equivalent to) the argument.
    """
    screen = check_screen_size(screen_size)
    a: Any = action
    if isinstance(a, Click):
        x, y = check_point(a.x, a.y, screen)
        clicks = check_integer(a.clicks, "clicks", 1, MAX_REPEAT)
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
        x, y = check_optional_point(a.x, a.y, screen)
        return (MouseDown if isinstance(a, MouseDown) else MouseUp)(check_button(a.button), x, y)
    if isinstance(a, Scroll):
        dy = check_integer(a.dy, "dy", -MAX_REPEAT, MAX_REPEAT)
        dx = check_integer(a.dx, "dx", -MAX_REPEAT, MAX_REPEAT)
        x, y = check_optional_point(a.x, a.y, screen)
        return Scroll(dy, dx, x, y)
    if isinstance(a, TypeText):
        return TypeText(check_text(a.text, "text"))
    if isinstance(a, Press):
        return Press(check_key(a.key), check_integer(a.presses, "presses", 1, MAX_REPEAT))
    if isinstance(a, Hotkey):
        return Hotkey(check_keys(a.keys, "hotkey keys"))
    if isinstance(a, (KeyDown, KeyUp)):
        return (KeyDown if isinstance(a, KeyDown) else KeyUp)(check_key(a.key))
    if isinstance(a, Wait):
        return Wait(check_seconds(a.seconds, "seconds"))
    if isinstance(a, Run):
        command = check_text(a.command, "command", MAX_COMMAND_LENGTH, allow_empty=False)
        timeout = None
        if a.timeout is not None:
            timeout = check_number(a.timeout, "timeout")
            if timeout <= 0:
                raise ActionError(f"timeout must be positive, got {short_repr(a.timeout)}")
        return Run(command, timeout)
    if isinstance(a, Answer):
        return Answer(check_text(a.text, "text", MAX_ANSWER_LENGTH, allow_empty=False))
    for plain in (Done, Fail, GetClipboard, ListWindows):
        if isinstance(a, plain):
            return plain()
    if isinstance(a, SetClipboard):
        return SetClipboard(check_text(a.text, "text", MAX_CLIPBOARD_LENGTH))
    if isinstance(a, Launch):
        return Launch(check_text(a.command, "command", MAX_COMMAND_LENGTH, allow_empty=False))
    if isinstance(a, (ActivateWindow, CloseWindow)):
        cls = ActivateWindow if isinstance(a, ActivateWindow) else CloseWindow
        return cls(check_text(a.title, "title", allow_empty=False))
    raise ActionError(f"unsupported action type: {type(action).__name__}")


def shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
