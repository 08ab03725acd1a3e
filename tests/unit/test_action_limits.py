"""The action parser against a hostile agent: per-step caps and "only ActionError ever".

Whatever ``step()`` receives (huge numbers, junk strings, odd types, hostile dicts, steps that
would run for hours), :func:`parse_action` either returns validated actions within the per-step
caps or raises :class:`ActionError`, quickly. Pure logic: no display, no program, seconds.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
import pytest

from sciagent_gym.actions import types as A
from sciagent_gym.actions.human import DICT_FIELDS, parse_action_dict
from sciagent_gym.actions.parse import parse_action
from sciagent_gym.actions.pyautogui import parse_pyautogui
from sciagent_gym.actions.space import FIELDS, make_action_space
from sciagent_gym.actions.types import ActionError, Click, Run, TypeText, Wait
from sciagent_gym.actions.validate import (
    ACTION_CLASSES,
    MAX_ACTIONS_PER_STEP,
    MAX_CLIPBOARD_LENGTH,
    MAX_COMMAND_LENGTH,
    MAX_COMMANDS_PER_STEP,
    MAX_SOURCE_LENGTH,
    MAX_STEP_WAIT_SECONDS,
    MAX_TEXT_LENGTH,
    MAX_WAIT_SECONDS,
)

SCREEN = (1280, 800)
HUGE = "9" * 400  # the 400-digit literal of the original report


def parse(action: Any) -> list[A.Action]:
    return parse_action(action, SCREEN)


def refused(action: Any, match: str, seconds: float = 2.0) -> str:
    """Assert ``action`` is refused with an ActionError matching ``match``, within ``seconds``."""
    start = time.perf_counter()
    with pytest.raises(ActionError, match=match) as info:
        parse(action)
    assert time.perf_counter() - start < seconds
    message = str(info.value)
    assert len(message) < 1000, "error messages are fed back to the agent: keep them short"
    return message


def test_caps_have_the_documented_values():
    assert MAX_SOURCE_LENGTH == 20_000
    assert MAX_ACTIONS_PER_STEP == 100
    assert MAX_TEXT_LENGTH == MAX_COMMAND_LENGTH == MAX_CLIPBOARD_LENGTH == 4_096
    assert MAX_COMMANDS_PER_STEP == 4
    assert MAX_WAIT_SECONDS == MAX_STEP_WAIT_SECONDS == 10.0


# ---------------------------------------------------------------------------------------------
# numbers that do not fit


@pytest.mark.parametrize(
    ("action", "match"),
    [
        (f"pyautogui.click({HUGE}, 1)", r"x is out of range"),
        (f"pyautogui.click(-{HUGE}, 1)", r"x is out of range"),
        (f"pyautogui.click(1, {HUGE})", r"y is out of range"),
        (f"pyautogui.click(({HUGE}, 1))", r"x is out of range"),
        (f"pyautogui.click(1, 1, clicks={HUGE})", r"clicks is out of range"),
        (f"pyautogui.click(1, 1, duration={HUGE})", r"duration is out of range"),
        (f"pyautogui.press('a', presses={HUGE})", r"presses is out of range"),
        (f"pyautogui.scroll({HUGE})", r"clicks is out of range"),
        (f"time.sleep({HUGE})", r"seconds is out of range"),
        (f"run('ls', timeout={HUGE})", r"timeout is out of range"),
        (f"pyautogui.click(0x{'f' * 5000}, 1)", r"x is out of range"),  # no digit limit in hex
        ("pyautogui.click(1" + "0" * 5000 + ", 1)", r"syntax error.*limit"),
        ("pyautogui.click(1e309, 1)", r"x must be finite, got inf"),
        ("pyautogui.moveTo(-1e309, 1)", r"x must be finite, got -inf"),
        ("time.sleep(1e309)", r"seconds must be finite"),
        ({"type": "click", "x": 10**400, "y": 1}, r"x is out of range"),
        ({"type": "click", "x": 10**5000, "y": 1}, r"x is out of range"),
        ({"type": "click", "x": float("nan"), "y": 1}, r"x must be finite, got nan"),
        ({"type": "click", "x": 1, "y": 1, "clicks": 10**400}, r"clicks is out of range"),
        ({"type": "drag", "x": 1, "y": 1, "start": [10**400, 1]}, r"x is out of range"),
        ({"type": "wait", "seconds": float("inf")}, r"seconds must be finite"),
        ({"type": "run", "command": "ls", "timeout": float("nan")}, r"timeout must be finite"),
        ({"type": "scroll", "dy": 10**400}, r"dy is out of range"),
        ({"type": "key", "key": "a", "presses": -(10**400)}, r"presses is out of range"),
        (Click(10**400, 1), r"x is out of range"),
        ([Wait(10**400)], r"seconds is out of range"),
        ({"action_type": 10**400}, r"action_type .* is out of range"),
        ({"action_type": 10**5000}, r"action_type .* is out of range"),
        ({"action_type": float("inf")}, r"action_type must be an integer index"),
        ({"action_type": 9, "key": 10**400}, r"key .* is out of range"),
        ({"action_type": 0, "coordinate": [10**400, 1], "button": 0}, r"coordinate must be"),
        ({"action_type": 13, "seconds": 10**400}, r"seconds must be at most"),
    ],
)
def test_numbers_that_do_not_fit_are_action_errors(action, match):
    refused(action, match)


def test_bools_where_numbers_are_expected():
    refused({"type": "click", "x": True, "y": 1}, r"x must be a number, got bool True")
    refused("pyautogui.click(1, 1, clicks=True)", r"clicks must be a number, got bool")
    refused({"action_type": True}, r"action_type must be an integer index")


# ---------------------------------------------------------------------------------------------
# per-step caps


def test_the_6250_waits_step_is_refused_quickly():
    source = "\n".join(["time.sleep(10)"] * 6_250)  # 17 hours of sleeping in one step
    refused(source, r"characters long, the limit is 20000")
    refused([Wait(10.0)] * 6_250, r"too many actions in one step: 6250, the limit is 100")
    refused("\n".join(["WAIT"] * 6_250), r"characters long|only function calls|syntax")


def test_total_wait_per_step_is_capped():
    assert parse("time.sleep(4)\ntime.sleep(6)") == [Wait(4.0), Wait(6.0)]
    assert len(parse(";".join(["time.sleep(0.1)"] * 100))) == 100  # 10 s, summed exactly
    refused("time.sleep(4)\ntime.sleep(6.5)",
            r"this step waits 10\.5 s in total, the limit is 10 s per step")
    refused("\n".join(["time.sleep(10)"] * 100), r"waits 1000 s in total, the limit is 10 s")
    refused([Wait(5.0), Wait(5.0), Wait(0.5)], r"the limit is 10 s per step")
    refused("time.sleep(11)", r"seconds must be at most 10 seconds")
    refused({"type": "wait", "seconds": 600}, r"seconds must be at most 10 seconds")


def test_the_666600_clicks_step_is_refused_quickly():
    source = ";".join(["click(clicks=100)"] * 3_333)  # 3333 x 200 mouse events
    refused(source, r"characters long, the limit is 20000")
    fits = ";".join(["click(clicks=100)"] * 1_000)  # under the source cap: counted instead
    assert len(fits) < MAX_SOURCE_LENGTH
    refused(fits, r"too many actions in one step: 1000, the limit is 100")
    refused([Click(1, 1, clicks=100)] * 6_666, r"too many actions in one step: 6666")
    refused("pyautogui.click(1, 1, clicks=100)\npyautogui.click(1, 1)",
            r"too many actions in one step: 101, the limit is 100")
    refused("pyautogui.click(clicks=100)", r"too many actions in one step: 200")


def test_repeated_keys_count_against_the_action_cap():
    assert len(parse("pyautogui.press('a', presses=100)")) == 1
    refused("pyautogui.press('a', presses=100)\npyautogui.press('b')",
            r"too many actions in one step: 101")
    refused("pyautogui.press(['a', 'b'], presses=51)", r"too many actions in one step: 102")
    refused(f"pyautogui.press({['a'] * 2000!r}, presses=100)",
            r"press\(\) holds 2000 keys, the limit is 100")
    refused(f"pyautogui.write({['a'] * 101!r})", r"holds 101 keys, the limit is 100")
    refused({"type": "hotkey", "keys": ["ctrl"] * 100_000}, r"holds 100000 keys, the limit")


def test_a_step_may_hold_up_to_the_action_cap():
    assert len(parse(";".join(["click(1, 1)"] * MAX_ACTIONS_PER_STEP))) == MAX_ACTIONS_PER_STEP
    refused(";".join(["click(1, 1)"] * (MAX_ACTIONS_PER_STEP + 1)),
            r"too many actions in one step: 101, the limit is 100")


def test_cli_commands_per_step_are_capped():
    four = "\n".join(f"run('echo {i}')" for i in range(4))
    assert parse(four) == [Run(f"echo {i}") for i in range(4)]
    refused(four + "\ncomputer.launch('xterm')",
            r"too many CLI commands in one step: 5, the limit is 4")
    refused([Run("true")] * 5, r"too many CLI commands in one step: 5, the limit is 4")


def test_text_lengths_are_capped():
    refused(f"pyautogui.write({'a' * (MAX_TEXT_LENGTH + 1)!r})",
            r"message is 4097 characters long, the limit is 4096")
    refused({"type": "type", "text": "a" * 10_000_000}, r"text is 10000000 characters long")
    half = "a" * 3_000
    refused(f"pyautogui.write({half!r})\npyautogui.write({half!r})",
            r"this step types 6000 characters, the limit is 4096 per step")
    refused(f"run({'x' * (MAX_COMMAND_LENGTH + 1)!r})",
            r"command is 4097 characters long, the limit is 4096")
    refused({"type": "launch", "command": "x" * 5000}, r"command is 5000 characters long")
    refused(f"pyperclip.copy({'x' * (MAX_CLIPBOARD_LENGTH + 1)!r})",
            r"text is 4097 characters long, the limit is 4096")
    refused({"type": "set_clipboard", "text": "x" * 5000}, r"text is 5000 characters long")
    refused({"type": "activate_window", "title": "x" * 5000}, r"title is 5000 characters long")


def test_source_length_is_capped():
    refused("pyautogui.click(1, 1)" + " " * MAX_SOURCE_LENGTH,
            r"action string is 20021 characters long, the limit is 20000")
    refused("x" * 50_000_000, r"characters long, the limit is 20000")


def test_text_that_cannot_be_typed_is_refused():
    refused({"type": "type", "text": "a\x00b"}, r"text must not contain NUL")
    refused({"type": "run", "command": "ls\x00"}, r"command must not contain NUL")
    refused({"type": "type", "text": "\ud800"}, r"text contains a lone surrogate")
    refused("pyautogui.write('\ud800')", r"cannot parse action string|lone surrogate")


def test_results_hold_plain_builtin_values():
    class Sneaky(str):
        def __len__(self) -> int:
            return 0

    [typed] = parse({"type": "type", "text": Sneaky("x" * 10)})
    assert type(typed.text) is str
    refused({"type": "type", "text": Sneaky("x" * 5000)}, r"5000 characters long")
    [click] = parse({"type": "click", "x": np.float32(3.6), "y": np.int64(2)})
    assert click == Click(4, 2) and type(click.x) is int and type(click.y) is int


# ---------------------------------------------------------------------------------------------
# odd types and hostile containers


class RaisingDict(dict):
    def __getitem__(self, key: Any) -> Any:
        raise RuntimeError("boom")


class RaisingIterMapping(Mapping):
    def __getitem__(self, key: Any) -> Any:
        return "click"

    def __iter__(self) -> Iterator[Any]:
        raise KeyError("no iteration")

    def __len__(self) -> int:
        return 1


class EndlessMapping(Mapping):
    def __getitem__(self, key: Any) -> Any:
        return 1

    def __iter__(self) -> Iterator[Any]:
        i = 0
        while True:
            yield f"k{i}"
            i += 1

    def __len__(self) -> int:
        return 10**6


class BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class BadFloat(float):
    def __float__(self) -> float:
        raise ArithmeticError("no float")


def _deep_list(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def _self_list() -> list[Any]:
    value: list[Any] = []
    value.append(value)
    return value


@pytest.mark.parametrize(
    "action",
    [
        RaisingDict(type="click", x=1, y=1),
        RaisingIterMapping(),
        EndlessMapping(),
        {"type": "type", "text": BadRepr()},
        {"type": "click", "x": BadFloat(1.0), "y": 1},
        {"type": "click", "x": BadRepr(), "y": 1},
        {"type": BadRepr()},
        {BadRepr(): 1},
        {"type": "hotkey", "keys": _deep_list(100_000)},
        {"type": "hotkey", "keys": _self_list()},
        {"type": "type", "text": _deep_list(100_000)},
        {"type": "drag", "x": 1, "y": 1, "start": "ab"},
        {"type": "key", "key": "k" * 10_000_000},
        {"type": "key", "key": b"a"},
        {"type": "click", "x": 1, "y": 1, "button": "b" * 10_000_000},
        {"type": ["click"]},
        {"action_type": {}},
        {"action_type": [1]},
        {"action_type": 0, "coordinate": BadRepr(), "button": 0},
        {"action_type": 0, "coordinate": _deep_list(10_000), "button": 0},
        {"action_type": 10, "key": 1, "modifiers": [2**70, 0, 0, 0]},
        {"action_type": 13, "seconds": np.array([1.0, 2.0])},
        {"action_type": 8, "text": None},
        None, b"click(1, 1)", 10**400, float("nan"), BadRepr(), {1, 2}, [None], [BadRepr()],
        [Click(1, 1), "click(1, 1)"],
        A.TypeText(BadRepr()),  # type: ignore[arg-type]
        A.Hotkey(_deep_list(100_000)),  # type: ignore[arg-type]
        A.Drag(1, 1, start=(BadRepr(), 1)),  # type: ignore[arg-type]
        "pyautogui.write(" + "[" * 150 + "]" * 150 + ")",
        "pyautogui.click(" + "1+" * 5_000 + "1, 2)",
        "pyautogui.click(" + "-" * 19_000 + "1, 1)",
        "f(" * 190 + ")" * 190,
        "pyautogui.click(1, 1)\x00",
        "\ud800",
        "pyautogui.hotkey(" + ", ".join(["'a'"] * 3_000) + ")",
    ],
    ids=lambda a: type(a).__name__,
)
def test_odd_and_hostile_inputs_are_action_errors(action):
    refused(action, r".")


def test_dict_entry_points_are_guarded_too():
    with pytest.raises(ActionError):
        parse_action_dict(RaisingDict(type="click", x=1, y=1), SCREEN)
    with pytest.raises(ActionError, match="x is out of range"):
        parse_action_dict({"type": "click", "x": 10**400, "y": 1}, SCREEN)
    with pytest.raises(ActionError, match="x is out of range"):
        parse_pyautogui(f"click({HUGE}, 1)", SCREEN)


def test_a_bad_screen_size_is_still_a_programming_error():
    with pytest.raises(ValueError) as info:
        parse_action("click(1, 1)", (0, 10))
    assert not isinstance(info.value, ActionError)


# ---------------------------------------------------------------------------------------------
# fuzzing: random junk only ever gives ActionError

_FUNCS = [
    "pyautogui.click", "click", "doubleClick", "tripleClick", "rightClick", "pyautogui.moveTo",
    "dragTo", "mouseDown", "mouseUp", "scroll", "hscroll", "write", "typewrite", "press",
    "hotkey", "keyDown", "keyUp", "time.sleep", "sleep", "run", "computer.launch",
    "pyperclip.copy", "pyperclip.paste", "computer.set_clipboard", "computer.activate_window",
    "computer.list_windows", "pg.click", "os.system", "moveRel", "print", "(lambda: 1)",
]
_KWARGS = ["x", "y", "clicks", "presses", "button", "duration", "interval", "timeout", "keys",
           "message", "seconds", "tween", "command", "text", "z"]
_ARGS = [
    "0", "1", "-1", "640", "1279", "2.5", "1e309", "-1e309", "1e-9", "10", "11", "100", "101",
    HUGE, "-" + HUGE, "0x" + "f" * 300, "True", "None", "...", "1j", "b'x'", "f'{x}'", "x",
    "'left'", "'right'", "'enter'", "'ctrl'", "'a'", "'nope'", "'\\x00'", "'ls -l'", "''",
    "['ctrl', 'c']", "('a', 'b')", "(1, 2)", "(1, 2, 3)", "[[['a']]]", "[]", "{'a': 1}",
    "'" + "w" * 5_000 + "'", "['a'] * 3", "1 + 2", "-(-1)", "+5", "not 1", "*p", "**k",
]
_JUNK_CHARS = "()[]{},.;:=+-*/\\'\"`#@!$%^&|~<> \n\t\x00\u00e9\u2713\ud800" + "0123456789xyzAE"


def _junk_call(rng: random.Random) -> str:
    args = [rng.choice(_ARGS) for _ in range(rng.randint(0, 3))]
    args += [f"{rng.choice(_KWARGS)}={rng.choice(_ARGS)}" for _ in range(rng.randint(0, 2))]
    return f"{rng.choice(_FUNCS)}({', '.join(args)})"


def _junk_string(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.1:
        return "".join(rng.choice(_JUNK_CHARS) for _ in range(rng.randint(0, 60)))
    if roll < 0.15:
        return rng.choice(["WAIT", "DONE", "fail", "```", "import pyautogui as pg", ""])
    count = rng.choice([1, 1, 1, 2, 3, 5, 50, 101, 400])
    source = rng.choice(["\n", ";", "; "]).join(_junk_call(rng) for _ in range(count))
    if rng.random() < 0.2:  # fences, imports, indentation
        source = rng.choice(["```python\n", "import pyautogui as pg\n", "  ", "`"]) + source
    for _ in range(rng.choice([0, 0, 1, 3])):  # a few random edits
        i = rng.randint(0, len(source))
        source = source[:i] + rng.choice(_JUNK_CHARS) + source[i + rng.randint(0, 2):]
    return source


def _junk_value(rng: random.Random, depth: int = 0) -> Any:
    choices: list[Callable[[], Any]] = [
        lambda: rng.randint(-5, 2000),
        lambda: rng.choice([10**400, -(10**400), 2**64, 2**63, -(2**63) - 1, 10**5000]),
        lambda: rng.choice([float("inf"), float("-inf"), float("nan"), 1e308, -0.0, 5e-324]),
        lambda: rng.uniform(-10, 2000),
        lambda: rng.choice([True, False, None, b"a", bytearray(b"x"), object(), BadRepr(),
                            BadFloat(1.0), 1j, {1, 2}, range(3), Ellipsis]),
        lambda: rng.choice(["left", "right", "ctrl", "enter", "a", "", "ls", "\x00", "\ud800",
                            "click", "wait", "nope"]),
        lambda: "z" * rng.choice([0, 1, 4_096, 4_097, 100_000]),
        lambda: np.array(rng.choice([[1, 2], [1e309, 2], [1.5], [[1, 2]], [], ["a", "b"]])),
        lambda: rng.choice([np.int64(rng.randint(-3, 3)), np.float32("nan"), np.uint64(2**63)]),
    ]
    if depth < 3:
        choices += [
            lambda: [_junk_value(rng, depth + 1) for _ in range(rng.randint(0, 4))],
            lambda: tuple(_junk_value(rng, depth + 1) for _ in range(rng.randint(0, 3))),
            lambda: _junk_dict(rng, depth + 1),
        ]
    return rng.choice(choices)()


def _junk_dict(rng: random.Random, depth: int = 0) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    if rng.random() < 0.6:
        kind = rng.choice([*DICT_FIELDS, "jump", 3, None])
        out["type"] = kind
        required, optional = DICT_FIELDS.get(kind, ((), ()))  # type: ignore[arg-type]
        names = [*required, *optional] or ["x"]
    else:
        out["action_type"] = rng.choice([rng.randint(-2, 25), "click", "wait", 1.0, 1.5, None])
        names = list(FIELDS[1:])
    for _ in range(rng.randint(0, 5)):
        key = rng.choice(names) if rng.random() < 0.9 else _junk_value(rng, 3)
        plausible = rng.random() < 0.5
        value = rng.choice([rng.randint(0, 700), "left", "enter", [3, 4], 0.5, "ls", ["ctrl", "s"],
                            np.array([5, 6]), 1]) if plausible else _junk_value(rng, depth)
        try:
            out[key] = value
        except TypeError:  # an unhashable junk key
            pass
    return out


def _junk_action(rng: random.Random) -> Any:
    cls = rng.choice(ACTION_CLASSES)
    n = len(cls.__dataclass_fields__)
    return cls(*(_junk_value(rng, 2) for _ in range(n)))


def _assert_within_caps(actions: list[A.Action]) -> None:
    assert isinstance(actions, list)
    assert all(isinstance(a, ACTION_CLASSES) for a in actions)
    events = sum(a.clicks if isinstance(a, Click) else getattr(a, "presses", 1) for a in actions)
    assert events <= MAX_ACTIONS_PER_STEP
    assert math.fsum(a.seconds for a in actions if isinstance(a, Wait)) <= MAX_STEP_WAIT_SECONDS
    assert sum(isinstance(a, Run | A.Launch) for a in actions) <= MAX_COMMANDS_PER_STEP
    assert sum(len(a.text) for a in actions if isinstance(a, TypeText)) <= MAX_TEXT_LENGTH


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")
def test_fuzz_only_action_errors_ever_escape():
    rng = random.Random(14_7)
    space = make_action_space(*SCREEN)
    space.seed(7)
    makers: list[Callable[[], Any]] = [
        lambda: _junk_string(rng),
        lambda: _junk_dict(rng),
        lambda: _junk_action(rng),
        lambda: [_junk_action(rng) for _ in range(rng.randint(0, 5))],
        lambda: {**space.sample(), rng.choice(FIELDS): _junk_value(rng)},
        lambda: _junk_value(rng),
    ]
    start = time.perf_counter()
    outcomes = {"ok": 0, "refused": 0}
    for i in range(4_000):
        action = makers[i % len(makers)]()
        try:
            actions = parse(action)
        except ActionError as exc:
            assert str(exc) and len(str(exc)) < 1000
            outcomes["refused"] += 1
        except Exception as exc:  # noqa: BLE001 - the point of the test
            pytest.fail(f"case {i}: {type(exc).__name__}: {exc} from {type(action).__name__}")
        else:
            _assert_within_caps(actions)
            outcomes["ok"] += 1
    assert outcomes["ok"] > 300 and outcomes["refused"] > 1000, outcomes
    assert time.perf_counter() - start < 30
