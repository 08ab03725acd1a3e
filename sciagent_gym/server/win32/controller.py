"""Input dispatch on the interactive desktop: how an Action becomes SendInput events.

:class:`SendInputController` is the X11Controller's interface on Windows: the screen of
:class:`~sciagent_gym.server.win32.screen.Win32Screen` plus the pointer, the GUI actions and
the keys and buttons still held.
"""

from __future__ import annotations

import ctypes
import time

from sciagent_gym.actions import types as A
from sciagent_gym.actions.keys import normalize_key
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


class SendInputController(Win32Screen):
    """Mouse, keyboard and screen of the interactive desktop (the X11Controller's interface)."""

    def __init__(self, width: int, height: int) -> None:
        super().__init__(width, height)
        self._held_keys: set[str] = set()
        self._held_buttons: set[str] = set()

    def pointer(self) -> tuple[int, int]:
        point = winapi.POINT()
        self._api.GetCursorPos(ctypes.byref(point))
        return point.x, point.y

    def execute(self, action: A.Action) -> None:
        """Perform one GUI action. Non-GUI actions (wait, run, done, fail) are not handled here."""
        handler = getattr(self, "_do_" + type(action).__name__.lower(), None)
        if handler is None:
            raise TypeError(f"{type(action).__name__} is not a GUI action")
        handler(action)

    def _do_click(self, a: A.Click) -> None:
        self._move(a.x, a.y)
        for _ in range(a.clicks):
            self._button(a.button, True)
            self._button(a.button, False)

    def _do_move(self, a: A.Move) -> None:
        self._move(a.x, a.y)

    def _do_drag(self, a: A.Drag) -> None:
        if a.start is not None:
            self._move(*a.start)
        x0, y0 = self.pointer()
        self._button(a.button, True)
        steps = 8  # intermediate motion so programs see a drag, not a jump
        for i in range(1, steps + 1):
            self._move(round(x0 + (a.x - x0) * i / steps), round(y0 + (a.y - y0) * i / steps))
            time.sleep(0.005)
        self._button(a.button, False)

    def _do_mousedown(self, a: A.MouseDown) -> None:
        if a.x is not None and a.y is not None:
            self._move(a.x, a.y)
        self._button(a.button, True)

    def _do_mouseup(self, a: A.MouseUp) -> None:
        if a.x is not None and a.y is not None:
            self._move(a.x, a.y)
        self._button(a.button, False)

    def _do_scroll(self, a: A.Scroll) -> None:
        if a.x is not None and a.y is not None:
            self._move(a.x, a.y)
        winapi.send_inputs(wheel_events(a.dy, a.dx))

    def _do_typetext(self, a: A.TypeText) -> None:
        for group in text_events(a.text, self._scan):
            winapi.send_inputs(group)

    def _do_press(self, a: A.Press) -> None:
        for _ in range(a.presses):
            winapi.send_inputs(tap_events(a.key, self._scan))

    def _do_hotkey(self, a: A.Hotkey) -> None:
        for key in a.keys:
            self._key(key, True)
        for key in reversed(a.keys):
            self._key(key, False)

    def _do_keydown(self, a: A.KeyDown) -> None:
        self._key(a.key, True)

    def _do_keyup(self, a: A.KeyUp) -> None:
        self._key(a.key, False)

    def release_all(self) -> None:
        """Let go of every key and button still held (after keyDown/mouseDown without up)."""
        for key in list(self._held_keys):
            self._key(key, False)
        for button in list(self._held_buttons):
            self._button(button, False)

    def _move(self, x: int, y: int) -> None:
        metric = self._api.GetSystemMetrics
        screen = (metric(SM_XVIRTUALSCREEN), metric(SM_YVIRTUALSCREEN),
                  metric(SM_CXVIRTUALSCREEN), metric(SM_CYVIRTUALSCREEN))
        winapi.send_inputs([move_event(int(x), int(y), screen)])

    def _button(self, button: str, down: bool) -> None:
        winapi.send_inputs([button_event(button, down)])
        (self._held_buttons.add if down else self._held_buttons.discard)(button)

    def _key(self, key: str, down: bool) -> None:
        winapi.send_inputs(key_events(key, not down, self._scan))
        (self._held_keys.add if down else self._held_keys.discard)(normalize_key(key))

    def _scan(self, vk: int) -> int:
        """The key's scan code (MAPVK_VK_TO_VSC), which some programs read instead of the VK."""
        return int(self._api.MapVirtualKeyW(vk, 0))

    def close(self) -> None:
        try:
            self.release_all()
        except Exception:
            pass
        super().close()
