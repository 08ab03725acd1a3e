"""Unit tests of the action front ends: keys, the pyautogui/dict parser and the action space.

Pure logic, no X display: these run everywhere and fast.
"""

from __future__ import annotations

import copy
import json
import pickle
import re
import string

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces as gspaces
from gymnasium.spaces.utils import flatten, flatten_space, unflatten
from gymnasium.utils.env_checker import check_env

from sciagent_gym.actions import types as A
from sciagent_gym.actions.human import DICT_FIELDS, action_to_dict
from sciagent_gym.actions.keys import (
    ALIASES,
    KEY_NAMES,
    MODIFIERS,
    is_modifier,
    keysym_name,
    keysym_value,
    normalize_key,
)
from sciagent_gym.actions.parse import parse_action
from sciagent_gym.actions.pyautogui import action_to_pyautogui
from sciagent_gym.actions.space import ACTION_TYPES, from_space_sample, make_action_space
from sciagent_gym.actions.text_space import PRINTABLE_ASCII, UnicodeText
from sciagent_gym.actions.types import (
    ActionError,
    Click,
    Done,
    Drag,
    Fail,
    Hotkey,
    KeyDown,
    KeyUp,
    MouseDown,
    MouseUp,
    Move,
    Press,
    Run,
    Scroll,
    TypeText,
    Wait,
)
from sciagent_gym.actions.validate import ACTION_CLASSES, MAX_TEXT_LENGTH, validate_action

SCREEN = (1280, 800)


def parse(action):
    return parse_action(action, SCREEN)


def error(action, match: str) -> None:
    with pytest.raises(ActionError, match=match):
        parse(action)


# ---------------------------------------------------------------------------------------------
# keys


def test_key_names_are_canonical_and_unique():
    assert len(KEY_NAMES) == len(set(KEY_NAMES))
    for name in KEY_NAMES:
        assert normalize_key(name) == name
    assert set(MODIFIERS) <= set(KEY_NAMES)
    assert MODIFIERS == ("ctrl", "shift", "alt", "win")
    for name in ["a", "A", "z", "0", "!", "~", "enter", "tab", "space", "f1", "f24", "num0",
                 "num9", "add", "decimal", "apps", "volumemute", "printscreen", "pause"]:
        assert name in KEY_NAMES
    assert " " not in KEY_NAMES  # spelled 'space'


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("return", "enter"), ("Return", "enter"), ("ENTER", "enter"), ("\n", "enter"),
        ("esc", "escape"), ("Escape", "escape"), ("control", "ctrl"), ("Ctrl", "ctrl"),
        ("cmd", "win"), ("command", "win"), ("super", "win"), ("meta", "win"), ("win", "win"),
        ("pgup", "pageup"), ("pgdn", "pagedown"), ("Page_Down", "pagedown"), ("del", "delete"),
        ("option", "alt"), ("prntscrn", "printscreen"), ("menu", "apps"), (" ", "space"),
        ("\t", "tab"), ("Caps Lock", "capslock"), ("F5", "f5"), ("a", "a"), ("A", "A"),
        ("!", "!"), ("shiftleft", "shiftleft"),
    ],
)
def test_normalize_key(given, canonical):
    assert normalize_key(given) == canonical


@pytest.mark.parametrize("bad", ["xyz", "", "é", "ctrl+s", "a_"])
def test_normalize_key_unknown_names_the_key(bad):
    with pytest.raises(ActionError, match=re.escape(f"unknown key {bad!r}")):
        normalize_key(bad)


def test_normalize_key_hints_at_hotkey_for_combinations():
    with pytest.raises(ActionError, match=r"use hotkey\(\) for key combinations"):
        normalize_key("ctrl+s")


def test_normalize_key_rejects_keys_without_keysym_and_non_strings():
    with pytest.raises(ActionError, match="'fn' has no X11 keysym"):
        normalize_key("fn")
    with pytest.raises(ActionError, match="key must be a string"):
        normalize_key(5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("key", "sym"),
    [
        ("enter", "Return"), ("ctrl", "Control_L"), ("a", "a"), ("A", "A"), ("!", "exclam"),
        ("f5", "F5"), ("win", "Super_L"), ("num5", "KP_5"), ("pageup", "Page_Up"),
        ("space", "space"), ("return", "Return"), ("volumemute", "XF86AudioMute"),
        ("backspace", "BackSpace"), ("\\", "backslash"), ("shiftright", "Shift_R"),
    ],
)
def test_keysym_name(key, sym):
    assert keysym_name(key) == sym


def test_keysym_values():
    assert keysym_value("a") == ord("a")
    assert keysym_value("enter") == 0xFF0D
    assert keysym_value("f1") == 0xFFBE
    assert keysym_value("f24") == 0xFFD5
    assert keysym_value("num0") == 0xFFB0
    assert keysym_value("volumemute") == 0x1008FF12
    for name in KEY_NAMES:
        assert keysym_name(name) and keysym_value(name) > 0


def test_keysyms_agree_with_python_xlib():
    xk = pytest.importorskip("Xlib.XK")
    for group in ("xf86", "korean"):
        xk.load_keysym_group(group)
    for name in KEY_NAMES:
        sym = keysym_name(name)
        xlib_name = sym.replace("XF86", "XF86_", 1) if sym.startswith("XF86") else sym
        assert xk.string_to_keysym(xlib_name) == keysym_value(name), name


def test_aliases_point_to_canonical_names():
    assert set(ALIASES.values()) <= set(KEY_NAMES)


def test_is_modifier():
    assert is_modifier("ctrl") and is_modifier("shiftright") and is_modifier("command")
    assert not is_modifier("a") and not is_modifier("left") and not is_modifier("enter")


# ---------------------------------------------------------------------------------------------
# pyautogui strings


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("pyautogui.click(100, 200)", [Click(100, 200)]),
        ("click(100, 200)", [Click(100, 200)]),
        ("pyautogui.click(x=10.6, y=20.4, button='right', clicks=2)",
         [Click(11, 20, "right", 2)]),
        ("pyautogui.click((5, 6))", [Click(5, 6)]),
        ("pyautogui.click(1, 2, button='PRIMARY')", [Click(1, 2, "left")]),
        ("pyautogui.doubleClick(5, 6)", [Click(5, 6, "left", 2)]),
        ("doubleClick(5, 6, button='right')", [Click(5, 6, "right", 2)]),
        ("pyautogui.rightClick(5, 6)", [Click(5, 6, "right")]),
        ("pyautogui.middleClick(5, 6)", [Click(5, 6, "middle")]),
        ("pyautogui.tripleClick(5, 6)", [Click(5, 6, "left", 3)]),
        ("pyautogui.leftClick(5, 6)", [Click(5, 6)]),
        ("pyautogui.moveTo(10, 20)", [Move(10, 20)]),
        ("pyautogui.moveTo(10, 20, duration=0.5)", [Move(10, 20)]),
        ("pyautogui.moveTo(10, 20, 0.5, tween=None)", [Move(10, 20)]),
        ("pyautogui.dragTo(300, 400, duration=1.0, button='left')", [Drag(300, 400)]),
        ("pyautogui.dragTo(300, 400, 0.5, None, 'right')", [Drag(300, 400, "right")]),
        ("pyautogui.mouseDown()", [MouseDown()]),
        ("pyautogui.mouseDown(10, 20, button='right')", [MouseDown("right", 10, 20)]),
        ("pyautogui.mouseUp(x=10, y=20)", [MouseUp("left", 10, 20)]),
        ("pyautogui.mouseUp(button='middle')", [MouseUp("middle")]),
        ("pyautogui.scroll(-3)", [Scroll(dy=-3)]),
        ("pyautogui.scroll(5, x=100, y=200)", [Scroll(dy=5, x=100, y=200)]),
        ("pyautogui.scroll(5, 100, 200)", [Scroll(dy=5, x=100, y=200)]),
        ("pyautogui.vscroll(2)", [Scroll(dy=2)]),
        ("pyautogui.hscroll(-2)", [Scroll(dx=-2)]),
        ("pyautogui.write('hello world')", [TypeText("hello world")]),
        ("pyautogui.write('Grüße ✓ 日本', interval=0.05)", [TypeText("Grüße ✓ 日本")]),
        ("pyautogui.typewrite('abc')", [TypeText("abc")]),
        ("pyautogui.typewrite(['a', 'b', 'enter'])", [Press("a"), Press("b"), Press("enter")]),
        ("pyautogui.write('line1\\nline2')", [TypeText("line1\nline2")]),
        ("pyautogui.press('enter')", [Press("enter")]),
        ("pyautogui.press('Return')", [Press("enter")]),
        ("pyautogui.press(['a', 'b'])", [Press("a"), Press("b")]),
        ("pyautogui.press('tab', presses=3)", [Press("tab", 3)]),
        ("pyautogui.press(['tab'], presses=3)", [Press("tab", 3)]),
        ("pyautogui.press(['a', 'b'], presses=2)", [Press("a"), Press("b")] * 2),
        ("pyautogui.hotkey('ctrl', 's')", [Hotkey(("ctrl", "s"))]),
        ("pyautogui.hotkey('Control', 'Shift', 'T')", [Hotkey(("ctrl", "shift", "T"))]),
        ("pyautogui.hotkey(['ctrl', 'c'])", [Hotkey(("ctrl", "c"))]),
        ("pyautogui.hotkey('ctrl', 'c', interval=0.1)", [Hotkey(("ctrl", "c"))]),
        ("pyautogui.keyDown('shift')", [KeyDown("shift")]),
        ("pyautogui.keyUp('shift')", [KeyUp("shift")]),
        ("time.sleep(0.5)", [Wait(0.5)]),
        ("time.sleep(2)", [Wait(2.0)]),
        ("pyautogui.sleep(1)", [Wait(1.0)]),
        ("sleep(0)", [Wait(0.0)]),
        ('run("ls -l")', [Run("ls -l")]),
        ('run("make", timeout=10)', [Run("make", 10.0)]),
        ("run(command='echo hi')", [Run("echo hi")]),
    ],
)
def test_parse_pyautogui(source, expected):
    assert parse(source) == expected


def test_click_without_coordinates_presses_at_the_pointer():
    assert parse("pyautogui.click()") == [MouseDown(), MouseUp()]
    assert parse("pyautogui.click(button='right', clicks=2)") == [
        MouseDown("right"), MouseUp("right"), MouseDown("right"), MouseUp("right")]
    assert parse("pyautogui.doubleClick()") == [MouseDown(), MouseUp()] * 2
    assert parse("pyautogui.rightClick()") == [MouseDown("right"), MouseUp("right")]


def test_multiple_statements_newlines_and_semicolons():
    source = "pyautogui.click(10, 20)\npyautogui.write('abc'); pyautogui.press('enter')\n"
    assert parse(source) == [Click(10, 20), TypeText("abc"), Press("enter")]


def test_code_fences_imports_and_indentation_are_tolerated():
    source = """```python
import pyautogui
import time
from pyautogui import click
pyautogui.click(1, 2)
time.sleep(0.5)
```"""
    assert parse(source) == [Click(1, 2), Wait(0.5)]
    assert parse("```\n    click(1, 2)\n    click(3, 4)\n```") == [Click(1, 2), Click(3, 4)]
    assert parse("`click(1, 2)`") == [Click(1, 2)]
    assert parse("import pyautogui as pg\npg.click(1, 2)") == [Click(1, 2)]
    assert parse("# move there\nclick(1, 2)  # go") == [Click(1, 2)]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("WAIT", Wait(1.0)), ("wait", Wait(1.0)), ("  Wait \n", Wait(1.0)),
        ("DONE", Done()), ("done", Done()), ("\tDONE\n", Done()),
        ("FAIL", Fail()), ("Fail", Fail()), ("```\nDONE\n```", Done()),
    ],
)
def test_special_tokens(source, expected):
    assert parse(source) == [expected]


@pytest.mark.parametrize(
    ("source", "match"),
    [
        ("pyautogui.click(1,", r"syntax error on line 1"),
        ("click(1, 2)\nclick(3,", r"syntax error on line 2"),
        ("```python\nclick(1, 2)\nfor\n```", r"syntax error on line 3"),
        ("pyautogui.position()", r"unknown function 'pyautogui.position'"),
        ("pyautogui.locateOnScreen('a.png')", r"unknown function 'pyautogui.locateOnScreen'"),
        ("print('hi')", r"unknown function 'print'"),
        ("eval('1')", r"unknown function 'eval'"),
        ("exec('import os')", r"unknown function 'exec'"),
        ("os.system('rm -rf /')", r"unknown function 'os.system'"),
        ("subprocess.run('ls')", r"unknown function 'subprocess.run'"),
        ("time.time()", r"unknown function 'time.time'"),
        ("pyautogui.run('x')", r"unknown function 'pyautogui.run'"),
        ("__import__('os').system('ls')", r"unknown function"),
        ("__import__('os')", r"unknown function '__import__'"),
        ("pyautogui.click.__globals__['os'].system('x')", r"unknown function"),
        ("(lambda: 1)()", r"unknown function"),
        ("pyautogui.moveRel(10, 0)", r"relative mouse moves are not supported"),
        ("click(x=foo, y=1)", r"argument 'x' of click\(\) must be a literal.*'foo'"),
        ("click(1 + 2, 3)", r"argument 'x' of click\(\) must be a literal"),
        ("pyautogui.write('a' * 3)", r"argument 'message' of pyautogui.write\(\) must be a lit"),
        ("click(*pos)", r"argument unpacking \(\*\) is not supported"),
        ("click(**kw)", r"argument unpacking \(\*\*\) is not supported"),
        ("click(1, 2, tween=pyautogui.easeInQuad)", r"unsupported argument 'tween' to click"),
        ("click(1, 2, foo=3)", r"unsupported argument 'foo' to click\(\)"),
        ("pyautogui.click(1, 2, _pause=False)", r"unsupported argument '_pause'"),
        ("pyautogui.moveTo(1, 2, 0.5, 'linear')", r"unsupported argument 'tween'"),
        ("dragTo(1, 2, mouseDownUp=False)", r"unsupported argument 'mouseDownUp'"),
        ("click(1, 2, 1, 0, 'left', 0, None, 9)", r"at most 7 positional arguments"),
        ("click(x=1, y=2, x=3)", r"multiple values for argument 'x'"),
        ("scroll()", r"scroll\(\) is missing argument 'clicks'"),
        ("pyautogui.press('xyz')", r"unknown key 'xyz'"),
        ("pyautogui.hotkey('ctrl', 'foo')", r"unknown key 'foo'"),
        ("pyautogui.typewrite(['a', 'nope'])", r"unknown key 'nope'"),
        ("pyautogui.keyDown('hyper')", r"unknown key 'hyper'"),
        ("pyautogui.click(1400, 20)", r"point \(1400, 20\) is off the 1280x800 screen"),
        ("pyautogui.click(1280, 0)", r"point \(1280, 0\) is off the 1280x800 screen"),
        ("pyautogui.moveTo(-1, 5)", r"point \(-1, 5\) is off the 1280x800 screen"),
        ("pyautogui.scroll(3, x=5, y=900)", r"point \(5, 900\) is off"),
        ("click(1, 2)\nclick(2000, 1)", r"line 2: .*point \(2000, 1\) is off"),
        ("click(1)", r"needs both x and y, y is missing"),
        ("moveTo()", r"x and y are required"),
        ("click(True, 2)", r"x must be a number, got bool"),
        ("click('a', 2)", r"x must be a number, got str"),
        ("time.sleep(-1)", r"seconds must not be negative"),
        ("pyautogui.moveTo(1, 2, duration=-0.5)", r"duration must not be negative"),
        ("pyautogui.click(1, 2, interval=-1)", r"interval must not be negative"),
        ("time.sleep(1e9)", r"seconds must be at most"),
        ("run('ls', timeout=0)", r"timeout must be positive"),
        ("run('')", r"command must not be empty"),
        ("pyautogui.click(1, 2, clicks=0)", r"clicks must be between 1 and 100"),
        ("pyautogui.press('a', presses=2.5)", r"presses must be an integer"),
        ("pyautogui.scroll(1.5)", r"clicks must be an integer"),
        ("pyautogui.click(1, 2, button='huge')", r"unknown button 'huge'"),
        ("pyautogui.write(5)", r"message must be a string"),
        ("pyautogui.hotkey()", r"at least one key"),
        ("pyautogui.press([])", r"at least one key"),
        ("x = 1", r"only function calls are allowed, got 'x = 1'"),
        ("pyautogui.FAILSAFE = False", r"only function calls are allowed"),
        ("'just text'", r"only function calls are allowed"),
        ("click(1, 2) if True else None", r"only function calls are allowed"),
        ("click(1, 2)\nDONE", r"line 2: DONE must be the whole action"),
        ("", r"empty action"),
        ("import pyautogui", r"empty action"),
        ("```python\n```", r"empty action"),
    ],
)
def test_parse_pyautogui_errors(source, match):
    error(source, match)


def test_too_long_text_is_rejected():
    error(f"pyautogui.write({'a' * (MAX_TEXT_LENGTH + 1)!r})",
          f"{MAX_TEXT_LENGTH + 1} characters long, the limit is {MAX_TEXT_LENGTH}")
    assert parse(f"pyautogui.write({'a' * MAX_TEXT_LENGTH!r})") == [TypeText("a" * MAX_TEXT_LENGTH)]


def test_nothing_is_ever_executed(tmp_path):
    target = tmp_path / "pwned"
    for source in [
        f"open({str(target)!r}, 'w')",
        f"pyautogui.write(open({str(target)!r}, 'w'))",
        f"__import__('pathlib').Path({str(target)!r}).touch()",
        f"pyautogui.click(x=__import__('pathlib').Path({str(target)!r}).touch(), y=1)",
    ]:
        with pytest.raises(ActionError):
            parse(source)
    assert not target.exists()


def test_screen_edges_are_on_screen():
    assert parse("click(0, 0)\nclick(1279, 799)") == [Click(0, 0), Click(1279, 799)]
    assert parse_action("click(639, 399)", (640, 400)) == [Click(639, 399)]
    with pytest.raises(ActionError, match="off the 640x400 screen"):
        parse_action("click(640, 10)", (640, 400))


# ---------------------------------------------------------------------------------------------
# human dicts


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ({"type": "click", "x": 10, "y": 20}, Click(10, 20)),
        ({"type": "click", "x": 10, "y": 20, "button": "right", "clicks": 2},
         Click(10, 20, "right", 2)),
        ({"type": "double_click", "x": 1.4, "y": 2.6}, Click(1, 3, "left", 2)),
        ({"type": "right_click", "x": 1, "y": 2}, Click(1, 2, "right")),
        ({"type": "move", "x": 1, "y": 2}, Move(1, 2)),
        ({"type": "drag", "x": 1, "y": 2}, Drag(1, 2)),
        ({"type": "drag", "x": 1, "y": 2, "start": [3, 4], "button": "middle"},
         Drag(1, 2, "middle", (3, 4))),
        ({"type": "mouse_down"}, MouseDown()),
        ({"type": "mouse_down", "x": 5, "y": 6, "button": "right"}, MouseDown("right", 5, 6)),
        ({"type": "mouse_up", "button": "right"}, MouseUp("right")),
        ({"type": "scroll", "dy": -3}, Scroll(dy=-3)),
        ({"type": "scroll", "dy": 0, "dx": 2, "x": 5, "y": 6}, Scroll(0, 2, 5, 6)),
        ({"type": "type", "text": "Grüße ✓"}, TypeText("Grüße ✓")),
        ({"type": "key", "key": "Return"}, Press("enter")),
        ({"type": "key", "key": "tab", "presses": 3}, Press("tab", 3)),
        ({"type": "hotkey", "keys": ["ctrl", "s"]}, Hotkey(("ctrl", "s"))),
        ({"type": "key_down", "key": "shift"}, KeyDown("shift")),
        ({"type": "key_up", "key": "shift"}, KeyUp("shift")),
        ({"type": "wait"}, Wait(1.0)),
        ({"type": "wait", "seconds": 0.25}, Wait(0.25)),
        ({"type": "run", "command": "ls"}, Run("ls")),
        ({"type": "run", "command": "ls", "timeout": 5}, Run("ls", 5.0)),
        ({"type": "done"}, Done()),
        ({"type": "fail"}, Fail()),
    ],
)
def test_parse_dict(action, expected):
    assert parse(action) == [expected]


def test_dict_types_match_action_types():
    assert tuple(DICT_FIELDS) == ACTION_TYPES


@pytest.mark.parametrize(
    ("action", "match"),
    [
        ({"type": "jump"}, r"unknown action type 'jump'"),
        ({"x": 1, "y": 2}, r"needs a 'type' field"),
        ({"type": "click", "x": 1}, r"click action is missing field 'y'"),
        ({"type": "click", "x": 1, "y": 2, "z": 3}, r"unknown field 'z' for a click action"),
        ({"type": "double_click", "x": 1, "y": 2, "clicks": 3}, r"unknown field 'clicks'"),
        ({"type": "done", "reason": "x"}, r"unknown field 'reason' for a done action"),
        ({"type": "type"}, r"type action is missing field 'text'"),
        ({"type": "key", "key": "nope"}, r"unknown key 'nope'"),
        ({"type": "hotkey", "keys": "ctrl+s"}, r"hotkey keys must be a list"),
        ({"type": "move", "x": 1400, "y": 20}, r"point \(1400, 20\) is off the 1280x800"),
        ({"type": "drag", "x": 1, "y": 2, "start": [5000, 1]}, r"start point \(5000, 1\)"),
        ({"type": "drag", "x": 1, "y": 2, "start": 7}, r"drag start must be an \(x, y\) pair"),
        ({"type": "mouse_down", "x": 5}, r"needs both x and y, y is missing"),
        ({"type": "wait", "seconds": -1}, r"seconds must not be negative"),
        ({"type": "type", "text": 5}, r"text must be a string"),
        ({"type": "type", "text": "a" * (MAX_TEXT_LENGTH + 1)}, r"characters long"),
        ({"type": "click", "x": 1, "y": 2, "button": "side"}, r"unknown button 'side'"),
    ],
)
def test_parse_dict_errors(action, match):
    error(action, match)


# ---------------------------------------------------------------------------------------------
# Action instances and unsupported inputs


def test_action_instances_are_validated_and_normalised():
    assert parse(Click(1, 2)) == [Click(1, 2)]
    assert parse(Press("Return")) == [Press("enter")]
    assert parse(Click(1.6, 2.2, "RIGHT")) == [Click(2, 2, "right")]  # type: ignore[arg-type]
    assert parse([Move(1, 2), Hotkey(("Control", "c"))]) == [Move(1, 2), Hotkey(("ctrl", "c"))]
    assert parse((Done(),)) == [Done()]
    assert parse([]) == []
    assert validate_action(Wait(2), SCREEN) == Wait(2.0)
    with pytest.raises(ActionError, match=r"point \(2000, 1\) is off the 1280x800 screen"):
        parse(Click(2000, 1))
    with pytest.raises(ActionError, match="unknown key 'nope'"):
        parse([Press("a"), Press("nope")])
    with pytest.raises(ActionError, match="clicks must be between"):
        parse(Click(1, 2, clicks=0))
    with pytest.raises(ActionError, match="hotkey keys must hold at least one key"):
        parse(Hotkey(()))


@pytest.mark.parametrize("bad", [42, 1.5, None, b"click(1, 2)", object(), {1, 2}])
def test_unsupported_action_types(bad):
    error(bad, f"unsupported action type: {type(bad).__name__}")


def test_list_may_only_hold_actions():
    error([Click(1, 2), "click(1, 2)"], r"unsupported action type in item 1 of the list: str")


# ---------------------------------------------------------------------------------------------
# the structured action space


def test_action_space_layout():
    space = make_action_space(1280, 800)
    assert isinstance(space, gspaces.Dict)
    assert set(space.spaces) == {"action_type", "coordinate", "start", "button", "key",
                                 "modifiers", "text", "scroll", "seconds"}
    assert space["action_type"] == gspaces.Discrete(len(ACTION_TYPES))
    assert len(ACTION_TYPES) == 24 and ACTION_TYPES[0] == "click" and ACTION_TYPES[16] == "fail"
    assert ACTION_TYPES[23] == "answer"  # appended: earlier indices keep their meaning
    assert ACTION_TYPES[-2] == "close_window"
    assert space["coordinate"] == gspaces.MultiDiscrete([1280, 800])
    assert space["start"] == space["coordinate"]
    assert space["button"] == gspaces.Discrete(3)
    assert space["key"] == gspaces.Discrete(len(KEY_NAMES))
    assert space["modifiers"] == gspaces.MultiBinary(4)
    assert space["text"] == UnicodeText(256, min_length=1)
    assert space["scroll"] == gspaces.MultiDiscrete([21, 21], start=[-10, -10])
    for _ in range(200):  # the sampled range is exactly the documented one
        dx, dy = space["scroll"].sample()
        assert -10 <= dx <= 10 and -10 <= dy <= 10
    assert space["seconds"].shape == () and float(space["seconds"].high) == 5.0
    assert make_action_space(640, 480, max_text=32)["text"].max_length == 32
    with pytest.raises(ValueError):
        make_action_space(0, 480)


def test_random_samples_all_convert():
    space = make_action_space(1280, 800)
    space.seed(1234)
    seen = set()
    for _ in range(500):
        sample = space.sample()
        assert space.contains(sample)
        actions = parse(sample)
        assert actions == from_space_sample(sample, SCREEN)
        assert len(actions) == 1
        seen.add(type(actions[0]))
        json.dumps(action_to_dict(actions[0]))
    assert len(seen) == len(ACTION_CLASSES) == 22  # every action class is reachable


def _sample(**fields):
    base = {
        "action_type": 0,
        "coordinate": np.array([10, 20], dtype=np.int32),
        "start": np.array([30, 40], dtype=np.int32),
        "button": 0,
        "key": KEY_NAMES.index("s"),
        "modifiers": np.array([0, 0, 0, 0], dtype=np.int8),
        "text": "hello",
        "scroll": np.array([0, -3], dtype=np.int32),
        "seconds": np.array(0.5, dtype=np.float32),
    }
    base.update(fields)
    return base


def test_space_contains():
    space = make_action_space(1280, 800)
    assert _sample() in space
    assert _sample(text="Grüße ✓ 日本") in space
    assert _sample(coordinate=np.array([1280, 0], dtype=np.int32)) not in space
    assert _sample(text="") not in space
    assert _sample(action_type=24) not in space


@pytest.mark.parametrize(
    ("kind", "fields", "expected"),
    [
        ("click", {"button": 2}, Click(10, 20, "right")),
        ("double_click", {}, Click(10, 20, "left", 2)),
        ("right_click", {"button": 0}, Click(10, 20, "right")),
        ("move", {}, Move(10, 20)),
        ("drag", {"button": 1}, Drag(10, 20, "middle", (30, 40))),
        ("mouse_down", {}, MouseDown("left", 10, 20)),
        ("mouse_up", {"button": 2}, MouseUp("right", 10, 20)),
        ("scroll", {}, Scroll(dy=-3, dx=0, x=10, y=20)),
        ("scroll", {"scroll": np.array([4, 0], dtype=np.int32)}, Scroll(0, 4, 10, 20)),
        ("type", {"text": "Grüße ✓"}, TypeText("Grüße ✓")),
        ("key", {"key": KEY_NAMES.index("enter")}, Press("enter")),
        ("hotkey", {"modifiers": np.array([1, 1, 0, 0], dtype=np.int8)},
         Hotkey(("ctrl", "shift", "s"))),
        ("hotkey", {"key": KEY_NAMES.index("ctrl"),
                    "modifiers": np.array([1, 0, 0, 0], dtype=np.int8)}, Hotkey(("ctrl",))),
        ("key_down", {"key": KEY_NAMES.index("shift")}, KeyDown("shift")),
        ("key_up", {}, KeyUp("s")),
        ("wait", {}, Wait(0.5)),
        ("run", {"text": "ls -l"}, Run("ls -l")),
        ("done", {}, Done()),
        ("fail", {}, Fail()),
    ],
)
def test_from_space_sample(kind, fields, expected):
    sample = _sample(action_type=ACTION_TYPES.index(kind), **fields)
    assert from_space_sample(sample, SCREEN) == [expected]
    assert from_space_sample({**sample, "action_type": kind}, SCREEN) == [expected]


def test_from_space_sample_needs_only_relevant_fields():
    assert from_space_sample({"action_type": 15}, SCREEN) == [Done()]
    assert from_space_sample({"action_type": 3, "coordinate": [5, 6]}, SCREEN) == [Move(5, 6)]
    assert parse({"action_type": np.int64(9), "key": np.int64(KEY_NAMES.index("a"))}) == [
        Press("a")]


@pytest.mark.parametrize(
    ("sample", "match"),
    [
        ({"action_type": 24}, r"action_type 24 is out of range \(0..23\)"),
        ({"action_type": -1}, r"action_type -1 is out of range"),
        ({"action_type": 1.5}, r"action_type must be an integer index"),
        ({"action_type": "jump"}, r"unknown action_type 'jump'"),
        ({"action_type": 0, "button": 0}, r"click action needs field 'coordinate'"),
        ({"action_type": 15, "colour": 1}, r"unknown field 'colour'"),
        ({"action_type": 0, "coordinate": [1, 2], "button": 3}, r"button 3 is out of range"),
        ({"action_type": 9, "key": len(KEY_NAMES)}, r"key \d+ is out of range"),
        ({"action_type": 0, "coordinate": [1, 2, 3], "button": 0}, r"coordinate must be 2"),
        ({"action_type": 3, "coordinate": [1300, 2]}, r"point \(1300, 2\) is off the 1280x800"),
        ({"action_type": 7, "coordinate": [1, 2], "scroll": [0, 11]}, r"scroll dy must be in"),
        ({"action_type": 13, "seconds": 6.0}, r"seconds must be at most 5"),
        ({"action_type": 13, "seconds": -0.5}, r"seconds must not be negative"),
        ({"action_type": 10, "key": 0, "modifiers": [2, 0, 0, 0]}, r"modifiers must be 0/1"),
        ({"action_type": 14, "text": ""}, r"command must not be empty"),
        ({"action_type": 8, "text": 5}, r"text must be a string"),
    ],
)
def test_from_space_sample_errors(sample, match):
    with pytest.raises(ActionError, match=match):
        from_space_sample(sample, SCREEN)


# ---------------------------------------------------------------------------------------------
# UnicodeText


def test_unicode_text_contains_any_unicode():
    space = UnicodeText(20)
    assert "Grüße ✓ 日本" in space
    assert "" in space  # min_length defaults to 0
    assert "a" * 20 in space
    assert "a" * 21 not in space
    assert 5 not in space and None not in space and b"abc" not in space
    assert "" not in UnicodeText(5, min_length=1)
    assert isinstance(space, gspaces.Text)


def test_unicode_text_samples_printable_ascii():
    space = UnicodeText(50, min_length=1, seed=3)
    allowed = set(string.ascii_letters + string.digits + string.punctuation + " ")
    assert set(PRINTABLE_ASCII) == allowed
    samples = [space.sample() for _ in range(50)]
    for text in samples:
        assert 1 <= len(text) <= 50 and set(text) <= allowed and text in space
    again = UnicodeText(50, min_length=1, seed=3)
    assert [again.sample() for _ in range(50)] == samples


def test_unicode_text_repr_eq_pickle_copy():
    space = UnicodeText(10)
    assert repr(space) == "UnicodeText(0, 10)"
    assert "sample_charset='abc'" in repr(UnicodeText(10, charset="abc"))
    assert space == UnicodeText(10)
    assert space != UnicodeText(11)
    assert space != UnicodeText(10, min_length=1)
    assert space != gspaces.Text(10)
    assert pickle.loads(pickle.dumps(space)) == space
    assert copy.deepcopy(space) == space
    full = make_action_space(1280, 800)
    assert pickle.loads(pickle.dumps(full)) == full
    assert copy.deepcopy(full) == full


def test_unicode_text_flattens_code_points():
    space = UnicodeText(8)
    flat = flatten(space, "Grüße ✓")
    assert flat.shape == (8,) and flat.dtype == np.int32
    assert unflatten(space, flat) == "Grüße ✓"
    assert flat in flatten_space(space)
    full = make_action_space(64, 48, max_text=8)
    sample = full.sample()
    assert flatten(full, sample) in flatten_space(full)


class _ActionSpaceEnv(gym.Env):
    """Minimal env that accepts the structured action space, for check_env."""

    def __init__(self) -> None:
        self.observation_space = gspaces.Dict(
            {"pixels": gspaces.Box(0, 255, (4,), np.uint8), "terminal": UnicodeText(64)}
        )
        self.action_space = make_action_space(64, 48, max_text=16)

    def _obs(self):
        return {"pixels": np.zeros(4, np.uint8), "terminal": ""}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self._obs(), {}

    def step(self, action):
        actions = from_space_sample(action, (64, 48))
        done = isinstance(actions[0], (Done, Fail))
        return self._obs(), 0.0, done, False, {}


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_check_env_accepts_the_spaces():
    check_env(_ActionSpaceEnv(), skip_render_check=True)


# ---------------------------------------------------------------------------------------------
# action -> dict / pyautogui

_REPRESENTABLE = [
    Click(10, 20), Click(10, 20, "right", 2), Click(0, 0, "middle", 3), Move(5, 6),
    Drag(300, 400), Drag(1, 2, "right"), MouseDown(), MouseDown("right", 3, 4), MouseUp(),
    MouseUp("middle", 7, 8), Scroll(dy=-3), Scroll(dy=5, x=100, y=200), Scroll(dx=2),
    Scroll(dx=-4, x=1, y=2), Scroll(), TypeText("hello"), TypeText("Grüße ✓ 日本 'q' \"dq\"\n\t\\"),
    TypeText(""), Press("enter"), Press("tab", 3), Press("'"), Press("\\"), Press("A"),
    Hotkey(("ctrl", "s")), Hotkey(("ctrl", "shift", "t")), KeyDown("shift"), KeyUp("shift"),
    Wait(1.0), Wait(0.25), Run("ls -l"), Run("echo 'hi' \"there\"", 10.0), Done(), Fail(),
]
_NOT_REPRESENTABLE = [Drag(1, 2, "left", (3, 4)), Scroll(dy=1, dx=2, x=5, y=6)]


@pytest.mark.parametrize("action", _REPRESENTABLE, ids=repr)
def test_pyautogui_round_trip(action):
    code = action_to_pyautogui(action)
    assert parse(code) == [action]


@pytest.mark.parametrize("action", _REPRESENTABLE + _NOT_REPRESENTABLE, ids=repr)
def test_dict_round_trip_and_json(action):
    data = action_to_dict(action)
    assert json.loads(json.dumps(data)) == data
    assert parse(data) == [action]
    assert data["type"] in ACTION_TYPES


def test_pyautogui_for_drag_with_start_and_two_axis_scroll_is_equivalent():
    assert parse(action_to_pyautogui(Drag(1, 2, "right", (3, 4)))) == [
        Move(3, 4), Drag(1, 2, "right")]
    assert parse(action_to_pyautogui(Scroll(dy=1, dx=2, x=5, y=6))) == [
        Scroll(dy=1, x=5, y=6), Scroll(dx=2, x=5, y=6)]


def test_conversions_accept_numpy_values():
    action = from_space_sample(_sample(action_type=ACTION_TYPES.index("wait")), SCREEN)[0]
    assert json.dumps(action_to_dict(action))
    assert action_to_pyautogui(action) == "time.sleep(0.5)"
    assert action_to_dict(Click(np.int32(3), np.int64(4))) == {  # type: ignore[arg-type]
        "type": "click", "x": 3, "y": 4, "button": "left", "clicks": 1}


def test_conversions_reject_non_actions():
    with pytest.raises(ActionError, match="unsupported action type: str"):
        action_to_dict("click(1, 2)")  # type: ignore[arg-type]
    with pytest.raises(ActionError, match="unsupported action type: int"):
        action_to_pyautogui(5)  # type: ignore[arg-type]


# -- the computer API beyond pyautogui -------------------------------------------------------

@pytest.mark.parametrize(("source", "expected"), [
    ('computer.set_clipboard("µm ok")', A.SetClipboard("µm ok")),
    ("pyperclip.copy('x')", A.SetClipboard("x")),
    ("pyperclip.paste()", A.GetClipboard()),
    ("computer.get_clipboard()", A.GetClipboard()),
    ("launch('xterm -e true')", A.Launch("xterm -e true")),
    ("computer.list_windows()", A.ListWindows()),
    ("activate_window(title='Log')", A.ActivateWindow("Log")),
    ("import computer as c\nc.close_window('Results')", A.CloseWindow("Results")),
])
def test_computer_api_calls(source, expected):
    [action] = parse(source)
    assert action == expected
    assert parse(action_to_dict(action)) == [action]
    assert parse(action_to_pyautogui(action)) == [action]


@pytest.mark.parametrize(("source", "message"), [
    ("computer.launch('')", "command must not be empty"),
    ("computer.activate_window()", "title"),
    ("computer.close_window(3)", "title must be a string"),
    ("computer.set_clipboard('a', 'b')", "at most 1 positional"),
    ("computer.shutdown()", "unknown function 'computer.shutdown'"),
])
def test_computer_api_errors(source, message):
    with pytest.raises(ActionError, match=message):
        parse(source)
