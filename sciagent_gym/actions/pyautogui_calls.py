"""The whitelist of the pyautogui form: the functions agent code may call, how a call's
arguments bind to each, and the actions each call compiles to.

Callable are pyautogui's mouse and keyboard functions, ``time.sleep``, ``run()``, the computer
API beyond pyautogui (``computer.set_clipboard(...)`` and the rest, also as bare calls) and
``pyperclip.copy``/``paste``. Arguments must be literals (numbers, strings, lists of them), read
off the :mod:`ast`, so nothing an agent writes is ever evaluated.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .types import (
    Action,
    ActionError,
    ActivateWindow,
    Answer,
    Click,
    CloseWindow,
    Drag,
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
from .validate import (
    MAX_ACTIONS_PER_STEP,
    MAX_REPEAT,
    Screen,
    check_button,
    check_count,
    check_integer,
    check_key,
    check_keys,
    check_optional_point,
    check_seconds,
    check_text,
    is_number,
    short_repr,
    shorten,
    validate_action,
)

_MAX_NESTING = 4  # literal lists in pyautogui calls: a key list, an (x, y) pair

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
        count = check_integer(clicks or args.get("clicks", 1), "clicks", 1, MAX_REPEAT)
        x, y = _call_point(args, screen, required=False)
        if x is None or y is None:  # at the pointer: Click needs coordinates
            return [MouseDown(btn), MouseUp(btn)] * count
        return [Click(x, y, btn, count)]

    return handle


def _durations(args: dict[str, Any]) -> None:
    """Accept but ignore duration/interval; still reject nonsense values."""
    for name in ("duration", "interval"):
        if args.get(name) is not None:
            check_seconds(args[name], name)


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
    return check_optional_point(x, y, screen)


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
        clicks = check_integer(args["clicks"], "clicks", -MAX_REPEAT, MAX_REPEAT)
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
        return [Press(k) for k in check_keys(message, "write() key list", MAX_ACTIONS_PER_STEP)]
    return [TypeText(check_text(message, "message"))]


def _press(args: dict[str, Any], screen: Screen) -> list[Action]:
    _durations(args)
    presses = check_integer(args.get("presses", 1), "presses", 1, MAX_REPEAT)
    keys = args["keys"]
    if isinstance(keys, str):
        return [Press(check_key(keys), presses)]
    names = check_keys(keys, "press()", MAX_ACTIONS_PER_STEP)
    if len(names) == 1:
        return [Press(names[0], presses)]
    check_count(len(names) * presses)  # before building them
    return [Press(k) for _ in range(presses) for k in names]


def _hotkey(args: dict[str, Any], screen: Screen) -> list[Action]:
    _durations(args)
    flat: list[Any] = []
    for item in args["*"]:  # hotkey(['ctrl', 'c']) is a common slip; accept it
        flat.extend(item if isinstance(item, (list, tuple)) else [item])
    if not flat:
        raise ActionError("at least one key is needed")
    return [Hotkey(check_keys(flat, "hotkey keys"))]


def _key_down(args: dict[str, Any], screen: Screen) -> list[Action]:
    return [KeyDown(check_key(args["key"]))]


def _key_up(args: dict[str, Any], screen: Screen) -> list[Action]:
    return [KeyUp(check_key(args["key"]))]


def _sleep(args: dict[str, Any], screen: Screen) -> list[Action]:
    return [Wait(check_seconds(args["seconds"], "seconds"))]


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
#: The modules agent code may call into (``pyautogui.click``, or ``pg.click`` after
#: ``import pyautogui as pg``), and their whitelisted functions.
MODULES: dict[str, dict[str, tuple[_Signature, _Handler]]] = {
    "pyautogui": _PYAUTOGUI,
    "time": _TIME,
    "computer": _COMPUTER,
    "pyperclip": _PYPERCLIP,
}
_RELATIVE = {"move", "moveRel", "drag", "dragRel"}


# --------------------------------------------------------------------------------------------
# one call


def resolve(func: ast.expr, aliases: dict[str, str]) -> tuple[str, tuple[_Signature, _Handler]]:
    """The whitelisted function a call names, as ``(name, (signature, handler))``; ``aliases``
    maps the names the code imported to the modules of :data:`MODULES`."""
    if isinstance(func, ast.Name):
        if func.id in _BARE:
            return func.id, _BARE[func.id]
        name = func.id
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        module = aliases.get(func.value.id)
        name = f"{func.value.id}.{func.attr}"
        if module is not None and func.attr in MODULES[module]:
            return name, MODULES[module][func.attr]
        if module == "pyautogui" and func.attr in _RELATIVE:
            raise ActionError(
                f"relative mouse moves are not supported: {name}(); use moveTo/dragTo with "
                "absolute coordinates"
            )
    else:
        name = unparse(func)
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


def bind(call: ast.Call, name: str, signature: _Signature) -> dict[str, Any]:
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
        and is_number(node.operand.value)
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
        f"got {unparse(node)!r}"
    )


def unparse(node: ast.AST) -> str:
    """Shortened source of a node for messages; never fails, even on absurd nesting."""
    try:
        return shorten(ast.unparse(node))
    except (RecursionError, ValueError, MemoryError):
        return f"<{type(node).__name__.lower()}>"
