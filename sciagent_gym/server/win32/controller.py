"""Input dispatch on the interactive desktop: how an Action becomes SendInput events.

:class:`SendInputController` is the X11Controller's interface on Windows: the screen of
:class:`~sciagent_gym.server.win32.screen.Win32Screen` plus the pointer and the primitives of
:class:`~sciagent_gym.controller.base.InputController` (which holds the GUI actions and the keys
and buttons still held) as SendInput events.
"""

from __future__ import annotations

import ctypes

from sciagent_gym.actions.keys import normalize_key
from sciagent_gym.controller.base import InputController
from sciagent_gym.server.win32 import winapi
from sciagent_gym.server.win32.inputs import (
    button_event,
    key_events,
    move_event,
    tap_events,
    text_events,
    wheel_events,
)
from sciagent_gym.server.win32.screen import Win32Screen

SM_XVIRTUALSCREEN, SM_YVIRTUALSCREEN, SM_CXVIRTUALSCREEN, SM_CYVIRTUALSCREEN = 76, 77, 78, 79


class SendInputController(InputController, Win32Screen):
    """Mouse, keyboard and screen of the interactive desktop (the X11Controller's interface).

    Keys and buttons go to SendInput by name, resolved as they are sent; held keys are
    remembered by canonical name. Events are delivered as sent (no flush).
    """

    def __init__(self, width: int, height: int) -> None:
        Win32Screen.__init__(self, width, height)
        InputController.__init__(self)

    def pointer(self) -> tuple[int, int]:
        point = winapi.POINT()
        self._api.GetCursorPos(ctypes.byref(point))
        return point.x, point.y

    # -- primitives (see InputController) ----------------------------------------------------
    def _move(self, x: int, y: int) -> None:
        metric = self._api.GetSystemMetrics
        screen = (metric(SM_XVIRTUALSCREEN), metric(SM_YVIRTUALSCREEN),
                  metric(SM_CXVIRTUALSCREEN), metric(SM_CYVIRTUALSCREEN))
        winapi.send_inputs([move_event(int(x), int(y), screen)])

    def _send_button(self, button: str, down: bool) -> None:
        winapi.send_inputs([button_event(button, down)])

    def _send_key(self, key: str, down: bool) -> None:
        winapi.send_inputs(key_events(key, not down, self._scan))

    def _held_key(self, key: str) -> str:
        return normalize_key(key)

    def _tap(self, key: str) -> None:
        winapi.send_inputs(tap_events(key, self._scan))

    def _type_text(self, text: str) -> None:
        for group in text_events(text, self._scan):
            winapi.send_inputs(group)

    def _scroll(self, dy: int, dx: int) -> None:
        winapi.send_inputs(wheel_events(dy, dx))  # every notch in one SendInput call

    def _scan(self, vk: int) -> int:
        """The key's scan code (MAPVK_VK_TO_VSC), which some programs read instead of the VK."""
        return int(self._api.MapVirtualKeyW(vk, 0))

    def _close_backend(self) -> None:
        Win32Screen.close(self)
