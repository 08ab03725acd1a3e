"""The GUI step forms the KAlgebra oracles are made of: the console line, the file dialogs, the
2D Graph's fields, the Variables panel's read, and console-language snippets the oracles type.

Coordinates are relative to the main window's client area (``in_window``), measured on
KAlgebra 22.12 under openbox at 1280x800.
"""

from __future__ import annotations

from typing import Any

W = "^KAlgebra$"
LOAD_DIALOG = "^Choose a script"
SAVE_DIALOG = "^Save As"
PLOT_DIALOG = "^Select where to put the rendered plot"
TAB_CALC, TAB_2D = (42, 34), (125, 34)
INPUT_LINE = (310, 451)
ADD_TAB, ADD_FIELD = (682, 464), (756, 58)
#: the 2D Graph's status bar (the coordinates of the curve point under the pointer)
STATUS_BAR = [0, 482, 300, 18]
STATUS_BAR_SCREEN = [190, 639, 300, 18]
#: the Variables panel beside the console (name and value columns)
VARIABLES = [645, 40, 255, 440]
VARIABLES_SCREEN = [835, 197, 255, 440]
NUMBER = "(-?[0-9]+(?:[.,][0-9]{{1,6}})?)"


def main() -> list[dict]:
    return [{"await_window": W, "focused": True}]


def click(x: int, y: int) -> dict:
    return {"in_window": W, "do": [f"pyautogui.click({x}, {y})"]}


def enter(expr: str) -> str:
    """One console (or field) entry: type it and press Enter."""
    assert "'" not in expr
    return f"pyautogui.write('{expr}')\npyautogui.press('enter')"


def console(*exprs: str) -> list[Any]:
    return [click(*INPUT_LINE), *(enter(e) for e in exprs)]


def read_ans(unit: str = "") -> dict:
    """Read the newest result off the Variables panel's ``ans`` row (six significant digits).

    Not off the console: that is a QtWebEngine view, which Chromium's renderer paints late (or
    blank for a moment) on a loaded machine, while the panel is a Qt view. Every oracle reads
    after a file dialog has opened and closed: KAlgebra opens it only once it has evaluated
    everything typed before, so the panel is up to date (a screen that has stopped changing
    proves nothing while the program is still busy). OCR sometimes sees the column gap as
    "=", "=:", ")" or "(", so the pattern skips up to four such marks (never a minus sign)."""
    pattern = "(?m)^\\s*ans[^\\w\\n-]{{0,4}}" + NUMBER
    return {"read": {"region": VARIABLES, "window": W, "pattern": pattern, "number": True},
            "answer": "{output}" + (f" {unit}" if unit else "")}


def dialog(hotkey: str, title: str, path: str) -> list[Any]:
    return [f"pyautogui.hotkey('ctrl', '{hotkey}')", {"await_window": title, "focused": True},
            enter(path), {"await_window": title, "gone": True}]


def load_script(name: str) -> list[Any]:
    return dialog("l", LOAD_DIALOG, "{work}/" + name)


def export_log(name: str) -> list[Any]:
    return dialog("s", SAVE_DIALOG, "{work}/" + name)


def save_script(name: str) -> list[Any]:
    return dialog("g", SAVE_DIALOG, "{work}/" + name)


def save_plot(name: str) -> list[Any]:
    return dialog("s", PLOT_DIALOG, "{work}/" + name)


def plot(*exprs: str) -> list[Any]:
    """Open the 2D Graph tab and add each function through the Add tab's expression field."""
    steps: list[Any] = [click(*TAB_2D)]
    for i, e in enumerate(exprs):
        if i:
            steps.append(click(*ADD_TAB))
        steps += [click(*ADD_FIELD), enter(e)]
    return steps


# numeric calculus in the console language: a central-difference derivative of a loaded f and
# Newton's method on it (the oracle's way; an agent may differentiate symbolically instead)
FP = "fp:=x->(f(x+0.000001)-f(x-0.000001))/0.000002"
FPP = "fpp:=x->(fp(x+0.0001)-fp(x-0.0001))/0.0002"
NT = "nt:=(x,n)->piecewise{{n=0?x, ?nt(x-fp(x)/((fp(x+0.0001)-fp(x-0.0001))/0.0002),n-1)}}"
