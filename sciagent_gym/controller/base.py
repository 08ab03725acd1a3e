"""Input dispatch shared by every backend: how a GUI Action becomes low-level input events.

:class:`InputController` turns each :mod:`sciagent_gym.actions.types` GUI action into calls of a
few primitives (move the pointer, press or release a button or a key, tap a key, type text,
scroll, read the pointer) and keeps the keys and buttons still held, so that
:meth:`~InputController.release_all` can let go of them. A backend implements the primitives:
:class:`~sciagent_gym.controller.x11.X11Controller` through XTest,
:class:`~sciagent_gym.server.win32.controller.SendInputController` through SendInput.

Nothing here imports a windowing system: the Windows server imports this module where Xlib is
absent.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Hashable

from sciagent_gym.actions import types as A


class InputController(ABC):
    """Performs GUI actions through a backend's primitives; remembers what is held.

    Keys and buttons reach the primitives as *codes*: whatever the backend resolves a name to
    (:meth:`_key_code`, :meth:`_tap_code`, :meth:`_button_code`; the name itself unless
    overridden). The held sets hold codes (keys as :meth:`_held_key` gives them), and
    :meth:`release_all` releases them as codes, without resolving names again.
    """

    def __init__(self) -> None:
        self._held_keys: set[Hashable] = set()
        self._held_buttons: set[Hashable] = set()

    # -- public ------------------------------------------------------------------------------
    @abstractmethod
    def pointer(self) -> tuple[int, int]:
        """The pointer's position on the screen."""

    def execute(self, action: A.Action) -> None:
        """Perform one GUI action. Non-GUI actions (wait, run, done, fail) are not handled here."""
        handler = getattr(self, "_do_" + type(action).__name__.lower(), None)
        if handler is None:
            raise TypeError(f"{type(action).__name__} is not a GUI action")
        handler(action)
        self._flush()

    def release_all(self) -> None:
        """Let go of every key and button still held (after keyDown/mouseDown without up)."""
        for code in list(self._held_keys):
            self._key(code, False)
        for code in list(self._held_buttons):
            self._send_button(code, False)
            self._held_buttons.discard(code)
        self._flush()

    def close(self) -> None:
        """Let go of what is held (best effort), then free the backend's resources."""
        try:
            self.release_all()
        except Exception:
            pass
        self._close_backend()

    # -- actions -----------------------------------------------------------------------------
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
        self._flush()
        steps = 8  # intermediate motion so programs see a drag, not a jump
        for i in range(1, steps + 1):
            self._move(round(x0 + (a.x - x0) * i / steps), round(y0 + (a.y - y0) * i / steps))
            self._flush()
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
        self._scroll(a.dy, a.dx)

    def _do_typetext(self, a: A.TypeText) -> None:
        self._type_text(a.text)

    def _do_press(self, a: A.Press) -> None:
        code = self._tap_code(a.key)
        for _ in range(a.presses):
            self._tap(code)

    def _do_hotkey(self, a: A.Hotkey) -> None:
        codes = [self._key_code(k) for k in a.keys]
        for code in codes:
            self._key(code, True)
        for code in reversed(codes):
            self._key(code, False)

    def _do_keydown(self, a: A.KeyDown) -> None:
        self._key(self._key_code(a.key), True)

    def _do_keyup(self, a: A.KeyUp) -> None:
        self._key(self._key_code(a.key), False)

    # -- held keys and buttons ---------------------------------------------------------------
    def _button(self, name: str, down: bool) -> None:
        code = self._button_code(name)
        self._send_button(code, down)
        (self._held_buttons.add if down else self._held_buttons.discard)(code)

    def _key(self, code: Hashable, down: bool) -> None:
        self._send_key(code, down)
        (self._held_keys.add if down else self._held_keys.discard)(self._held_key(code))

    # -- backend: names to codes (the name itself unless overridden) -------------------------
    def _button_code(self, name: str) -> Hashable:
        """A button name ("left", "middle", "right") as :meth:`_send_button` takes it."""
        return name

    def _key_code(self, name: str) -> Hashable:
        """A key name as :meth:`_send_key` takes it: the key alone, no Shift (hotkeys,
        keyDown, keyUp)."""
        return name

    def _tap_code(self, name: str) -> Hashable:
        """A key name as :meth:`_tap` takes it (resolved once per press action)."""
        return name

    def _held_key(self, code: Hashable) -> Hashable:
        """How a key code is remembered while held (what :meth:`release_all` releases)."""
        return code

    # -- backend: primitives -----------------------------------------------------------------
    @abstractmethod
    def _move(self, x: int, y: int) -> None:
        """Move the pointer to screen pixel (x, y)."""

    @abstractmethod
    def _send_button(self, code: Hashable, down: bool) -> None:
        """Press or release one mouse button."""

    @abstractmethod
    def _send_key(self, code: Hashable, down: bool) -> None:
        """Press or release one key, as itself (no Shift added)."""

    @abstractmethod
    def _tap(self, code: Hashable) -> None:
        """Press and release one key as ``press()`` means it (Shift held for shifted
        characters)."""

    @abstractmethod
    def _type_text(self, text: str) -> None:
        """Type ``text``, character by character."""

    @abstractmethod
    def _scroll(self, dy: int, dx: int) -> None:
        """Turn the wheel ``dy`` notches (> 0: up) then ``dx`` notches (> 0: right), one
        event per notch (sent one by one or as one batch, as the backend does)."""

    def _flush(self) -> None:  # noqa: B027 (a hook, empty unless events queue)
        """Push queued events to the system (after each action and each drag step); nothing
        to do where events are delivered as they are sent."""

    @abstractmethod
    def _close_backend(self) -> None:
        """Free the backend's connections and handles (after :meth:`close` released all)."""
