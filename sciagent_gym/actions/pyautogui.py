"""The pyautogui-code form of actions, as LLM agents write it, in both directions.

:func:`parse_pyautogui` reads ``pyautogui.click(100, 200)``, ``hotkey('ctrl', 's')``,
``time.sleep(0.5)``, ``run("ls -l")`` ... Several statements per string (newlines or ``;``),
markdown code fences and import lines are tolerated, and the whole string may instead be one of
the tokens ``WAIT``, ``DONE`` or ``FAIL`` (:data:`SPECIAL_TOKENS`). The code is parsed with
:mod:`ast` and checked against the whitelist of :mod:`sciagent_gym.actions.pyautogui_calls`;
nothing is ever evaluated, since the code comes from an untrusted agent.

:func:`action_to_pyautogui` writes actions back as such code, so logs and prompts can show
actions the way agents write them.
"""

from __future__ import annotations

import ast
import re
import textwrap
from typing import Any

from .pyautogui_calls import MODULES, bind, resolve, unparse
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
    MAX_SOURCE_LENGTH,
    Screen,
    check_count,
    check_screen_size,
    check_step_limits,
    exception_text,
    guarded,
    short_repr,
    type_name,
)

#: Whole-string tokens and what they mean.
SPECIAL_TOKENS: dict[str, Action] = {"WAIT": Wait(1.0), "DONE": Done(), "FAIL": Fail()}

_FENCE = re.compile(r"^\s*```")


# --------------------------------------------------------------------------------------------
# code -> actions


def parse_pyautogui(source: str, screen_size: tuple[int, int]) -> list[Action]:
    """Parse pyautogui-style code (or a WAIT/DONE/FAIL token) without executing it."""
    screen = check_screen_size(screen_size)
    return guarded(compile_source, source, screen)


def compile_source(source: str, screen: Screen) -> list[Action]:
    """:func:`parse_pyautogui` on a checked screen, unguarded: for
    :func:`~sciagent_gym.actions.parse.parse_action`, which guards the whole step."""
    if not isinstance(source, str):
        raise ActionError(f"action code must be a string, got {type_name(source)}")
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
        raise ActionError(f"cannot parse action string: {exception_text(exc)}") from None

    aliases = _module_aliases(tree)
    calls = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom, ast.Pass))]
    if not calls:
        raise ActionError("empty action: no pyautogui call, run() or WAIT/DONE/FAIL token")
    check_count(len(calls))  # every call is at least one action: refuse before compiling
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
    aliases = {name: name for name in MODULES}
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.name in MODULES and alias.asname:
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
        raise ActionError(f"only function calls are allowed, got {unparse(stmt)!r}")
    call = stmt.value
    name, (signature, handler) = resolve(call.func, aliases)
    args = bind(call, name, signature)
    try:
        return handler(args, screen)
    except ActionError as exc:
        raise ActionError(f"{unparse(stmt)}: {exc}") from None


# --------------------------------------------------------------------------------------------
# action -> code


def _call(func: str, *args: Any, **kwargs: Any) -> str:
    parts = [repr(v) for v in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"{func}({', '.join(parts)})"


def _point_args(x: Any, y: Any) -> tuple[int, ...]:
    return () if x is None else (int(x), int(y))


def action_to_pyautogui(action: Action) -> str:
    """Equivalent pyautogui code, so logs and prompts can show actions the way agents write them.

    ``parse_action(action_to_pyautogui(a)) == [a]`` for every valid action except a drag with a
    ``start`` (written as moveTo + dragTo) and a scroll on both axes (scroll + hscroll).
    """
    a: Any = action
    if isinstance(a, Click):
        kwargs: dict[str, Any] = {}
        if a.clicks != 1:
            kwargs["clicks"] = int(a.clicks)
        if a.button != "left":
            kwargs["button"] = a.button
        return _call("pyautogui.click", int(a.x), int(a.y), **kwargs)
    if isinstance(a, Move):
        return _call("pyautogui.moveTo", int(a.x), int(a.y))
    if isinstance(a, Drag):
        kwargs = {} if a.button == "left" else {"button": a.button}
        drag = _call("pyautogui.dragTo", int(a.x), int(a.y), **kwargs)
        if a.start is None:
            return drag
        return _call("pyautogui.moveTo", int(a.start[0]), int(a.start[1])) + "\n" + drag
    if isinstance(a, (MouseDown, MouseUp)):
        func = "pyautogui.mouseDown" if isinstance(a, MouseDown) else "pyautogui.mouseUp"
        return _call(func, *_point_args(a.x, a.y), button=a.button)
    if isinstance(a, Scroll):
        point = _point_args(a.x, a.y)
        lines = []
        if a.dy or not a.dx:
            lines.append(_call("pyautogui.scroll", int(a.dy), *point))
        if a.dx:
            lines.append(_call("pyautogui.hscroll", int(a.dx), *point))
        return "\n".join(lines)
    if isinstance(a, TypeText):
        return _call("pyautogui.write", str(a.text))
    if isinstance(a, Press):
        if a.presses != 1:
            return _call("pyautogui.press", str(a.key), presses=int(a.presses))
        return _call("pyautogui.press", str(a.key))
    if isinstance(a, Hotkey):
        return _call("pyautogui.hotkey", *(str(k) for k in a.keys))
    if isinstance(a, KeyDown):
        return _call("pyautogui.keyDown", str(a.key))
    if isinstance(a, KeyUp):
        return _call("pyautogui.keyUp", str(a.key))
    if isinstance(a, Wait):
        return _call("time.sleep", float(a.seconds))
    if isinstance(a, Run):
        if a.timeout is None:
            return _call("run", str(a.command))
        return _call("run", str(a.command), timeout=float(a.timeout))
    if isinstance(a, Answer):
        return _call("answer", str(a.text))
    if isinstance(a, Done):
        return "DONE"
    if isinstance(a, Fail):
        return "FAIL"
    if isinstance(a, SetClipboard):
        return _call("computer.set_clipboard", str(a.text))
    if isinstance(a, Launch):
        return _call("computer.launch", str(a.command))
    if isinstance(a, ActivateWindow | CloseWindow):
        name = "activate_window" if isinstance(a, ActivateWindow) else "close_window"
        return _call(f"computer.{name}", str(a.title))
    if isinstance(a, GetClipboard | ListWindows):
        return "computer.get_clipboard()" if isinstance(a, GetClipboard) else \
            "computer.list_windows()"
    raise ActionError(f"unsupported action type: {type(action).__name__}")
