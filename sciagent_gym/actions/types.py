"""The one internal action model.

Every way of acting on an env (pyautogui strings, dicts of the structured action space, wrapper
actions, oracle scripts) compiles to a list of these frozen dataclasses, and only they reach a
controller. Coordinates are screen pixels of the env's display; key names are the normalised
pyautogui names listed in :mod:`sciagent_gym.actions.keys`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sciagent_gym.errors import ActionError  # noqa: F401 (actions and their error together)

MouseButton = Literal["left", "middle", "right"]


@dataclass(frozen=True)
class Click:
    x: int
    y: int
    button: MouseButton = "left"
    clicks: int = 1


@dataclass(frozen=True)
class Move:
    x: int
    y: int


@dataclass(frozen=True)
class Drag:
    """Press at ``start`` (or where the pointer is), move to (x, y), release."""

    x: int
    y: int
    button: MouseButton = "left"
    start: tuple[int, int] | None = None


@dataclass(frozen=True)
class MouseDown:
    button: MouseButton = "left"
    x: int | None = None
    y: int | None = None


@dataclass(frozen=True)
class MouseUp:
    button: MouseButton = "left"
    x: int | None = None
    y: int | None = None


@dataclass(frozen=True)
class Scroll:
    """Wheel clicks: ``dy > 0`` scrolls up, ``dx > 0`` right (pyautogui's convention)."""

    dy: int = 0
    dx: int = 0
    x: int | None = None
    y: int | None = None


@dataclass(frozen=True)
class TypeText:
    text: str


@dataclass(frozen=True)
class Press:
    key: str
    presses: int = 1


@dataclass(frozen=True)
class Hotkey:
    keys: tuple[str, ...]


@dataclass(frozen=True)
class KeyDown:
    key: str


@dataclass(frozen=True)
class KeyUp:
    key: str


@dataclass(frozen=True)
class Wait:
    seconds: float = 1.0


@dataclass(frozen=True)
class Run:
    """A shell command run in the task's working directory inside the sandbox."""

    command: str
    timeout: float | None = None


@dataclass(frozen=True)
class Answer:
    """Give the task's answer as text ("742 Hz"); the last answer of an episode counts.

    It does not end the episode (``DONE`` does), so an agent may answer and then tidy up.
    """

    text: str


@dataclass(frozen=True)
class Done:
    pass


@dataclass(frozen=True)
class Fail:
    pass


# -- the computer API beyond pyautogui (MatToolBench's clipboard, program control, windows) --

@dataclass(frozen=True)
class SetClipboard:
    """Put text on the display's clipboard (then paste it with ctrl+v, as a person would)."""

    text: str


@dataclass(frozen=True)
class GetClipboard:
    """Read the clipboard; the text comes back in the ``terminal`` observation."""


@dataclass(frozen=True)
class Launch:
    """Start a program in the background inside the sandbox (a CLI action: same permission)."""

    command: str


@dataclass(frozen=True)
class ListWindows:
    """List the open windows (title, position, size, focus) into the ``terminal`` observation."""


@dataclass(frozen=True)
class ActivateWindow:
    """Raise and focus the first window whose title contains ``title``."""

    title: str


@dataclass(frozen=True)
class CloseWindow:
    """Close the first window whose title contains ``title``, as its close button would."""

    title: str


Action = (Click | Move | Drag | MouseDown | MouseUp | Scroll | TypeText | Press | Hotkey
          | KeyDown | KeyUp | Wait | Run | Answer | Done | Fail | SetClipboard | GetClipboard
          | Launch | ListWindows | ActivateWindow | CloseWindow)

#: Actions that touch the display (they need a settled screen afterwards).
GUI_ACTIONS = (Click, Move, Drag, MouseDown, MouseUp, Scroll, TypeText, Press, Hotkey, KeyDown,
               KeyUp, ActivateWindow, CloseWindow)

#: Actions of the computer API that a provider performs itself (not input events).
COMPUTER_ACTIONS = (SetClipboard, GetClipboard, Launch, ListWindows, ActivateWindow, CloseWindow)
