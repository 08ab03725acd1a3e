"""Mouse, keyboard and screen of one X display, through XTest and MIT-SHM.

Input goes through the XTEST extension on an explicit display connection, so every env drives its
own display and nothing depends on ``$DISPLAY``. Text is typed key by key by keysym, holding Shift
where the keymap needs it, because synthetic ``XSendEvent`` key events (what pynput's ``type()``
sends for ordinary characters) are ignored by Java AWT and many Qt/GTK widgets. Characters missing
from the keymap are typed by borrowing a spare keycode, as xdotool does.
"""

from __future__ import annotations

import time

import numpy as np
from Xlib import XK, X
from Xlib.ext import xtest

from sciagent_gym.actions.keys import keysym_value
from sciagent_gym.controller.base import InputController
from sciagent_gym.controller.xconnect import open_display

_BUTTONS = {"left": 1, "middle": 2, "right": 3}
_SPECIAL_CHARS = {"\n": "Return", "\r": "Return", "\t": "Tab", "\b": "BackSpace"}


def _char_keysym(ch: str) -> int:
    if ch in _SPECIAL_CHARS:
        return XK.string_to_keysym(_SPECIAL_CHARS[ch])
    code = ord(ch)
    if 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xFF:
        return code  # Latin-1 keysyms equal the code point
    return 0x01000000 | code  # X's Unicode keysym range


class X11Controller(InputController):
    """Executes :mod:`sciagent_gym.actions.types` on one X display and grabs its screen.

    The GUI actions and the held keys and buttons are :class:`InputController`'s; here are its
    primitives as XTest events, flushed (``XSync``) after each action, each drag step and each
    typed character. Held keys are keycodes, held buttons X button numbers.
    """

    def __init__(self, display_name: str, width: int, height: int) -> None:
        import mss

        super().__init__()
        self.display_name = display_name
        self.width, self.height = width, height
        self._dpy = open_display(display_name)
        self._root = self._dpy.screen().root
        if not self._dpy.has_extension("XTEST"):
            raise RuntimeError(f"display {display_name} has no XTEST extension")
        self._sct = mss.MSS(display=display_name)
        self._monitor = {"left": 0, "top": 0, "width": width, "height": height}
        self._keymap: dict[int, tuple[int, int]] = {}
        self._borrowed: dict[int, int] = {}
        self._spare: list[int] = []
        self.last_grab_seconds = 0.0
        self._load_keymap()

    # -- screen ------------------------------------------------------------------------------
    def grab(self) -> np.ndarray:
        """The screen as a fresh (H, W, 3) uint8 RGB array."""
        t0 = time.perf_counter()
        shot = self._sct.grab(self._monitor)
        # Read mss's buffer in place (``.bgra``/``.rgb`` copy it first) and copy one channel
        # at a time: 1.2 ms here against 7.5 ms for .bgra plus a reversed-slice copy.
        bgra = np.frombuffer(shot.raw, dtype=np.uint8).reshape(self.height, self.width, 4)
        rgb = np.empty((self.height, self.width, 3), dtype=np.uint8)
        rgb[..., 0] = bgra[..., 2]
        rgb[..., 1] = bgra[..., 1]
        rgb[..., 2] = bgra[..., 0]
        self.last_grab_seconds = time.perf_counter() - t0
        return rgb

    def expose_all(self) -> None:
        """Make every window repaint itself, as ``xrefresh`` does.

        Maps and removes a screen-sized override-redirect window so that each client gets
        Expose events. Programs that painted during start-up layout changes (Java's menu bar,
        ImageJ's image info line) otherwise keep half-drawn pixels that differ between resets.
        """
        screen = self._dpy.screen()
        cover = self._root.create_window(
            0, 0, self.width, self.height, 0, screen.root_depth, X.InputOutput,
            X.CopyFromParent, override_redirect=True, background_pixel=screen.black_pixel)
        cover.map()
        self._dpy.sync()
        cover.destroy()
        self._dpy.sync()

    def pointer(self) -> tuple[int, int]:
        p = self._root.query_pointer()
        return p.root_x, p.root_y

    # -- primitives (see InputController) ----------------------------------------------------
    def _move(self, x: int, y: int) -> None:
        xtest.fake_input(self._dpy, X.MotionNotify, x=int(x), y=int(y))

    def _button_code(self, name: str) -> int:
        return _BUTTONS[name]

    def _send_button(self, button: int, down: bool) -> None:
        xtest.fake_input(self._dpy, X.ButtonPress if down else X.ButtonRelease, button)

    def _key_code(self, name: str) -> int:
        return self._keycode_for(keysym_value(name))[0]

    def _send_key(self, code: int, down: bool) -> None:
        xtest.fake_input(self._dpy, X.KeyPress if down else X.KeyRelease, code)

    def _tap_code(self, name: str) -> int:
        return keysym_value(name)

    def _tap(self, sym: int) -> None:
        """One keysym pressed and released, Shift held if the keymap has it shifted."""
        code, shift = self._keycode_for(sym)
        shift_code = self._keymap[XK.XK_Shift_L][0] if shift else None
        if shift_code is not None:
            self._key(shift_code, True)
        self._key(code, True)
        self._key(code, False)
        if shift_code is not None:
            self._key(shift_code, False)

    def _type_text(self, text: str) -> None:
        for ch in text:
            self._tap(_char_keysym(ch))
            self._dpy.sync()

    def _scroll(self, dy: int, dx: int) -> None:
        # Wheel notches are buttons 4-7, pressed and released (never held).
        for amount, up, down in ((dy, 4, 5), (dx, 7, 6)):
            button = up if amount > 0 else down
            for _ in range(abs(amount)):
                xtest.fake_input(self._dpy, X.ButtonPress, button)
                xtest.fake_input(self._dpy, X.ButtonRelease, button)

    def _flush(self) -> None:
        self._dpy.sync()

    # -- keymap ------------------------------------------------------------------------------
    def _load_keymap(self) -> None:
        first = self._dpy.display.info.min_keycode
        count = self._dpy.display.info.max_keycode - first + 1
        for offset, syms in enumerate(self._dpy.get_keyboard_mapping(first, count)):
            code = first + offset
            if not any(syms):
                self._spare.append(code)
            for index, sym in enumerate(syms[:2]):  # unshifted and shifted levels
                if sym and sym not in self._keymap:
                    self._keymap[sym] = (code, index)

    def _keycode_for(self, sym: int) -> tuple[int, bool]:
        """(keycode, needs shift) for a keysym, borrowing a spare keycode if it is unmapped."""
        if sym in self._keymap:
            code, index = self._keymap[sym]
            return code, index == 1
        if sym in self._borrowed:
            return self._borrowed[sym], False
        if not self._spare:  # recycle the oldest borrowed keycode
            old_sym, code = next(iter(self._borrowed.items()))
            del self._borrowed[old_sym]
        else:
            code = self._spare.pop()
        self._dpy.change_keyboard_mapping(code, [(sym, sym)])
        self._dpy.sync()
        time.sleep(0.02)  # clients must see the MappingNotify before the key event
        self._borrowed[sym] = code
        return code, False

    def _close_backend(self) -> None:
        try:
            self._sct.close()
        finally:
            self._dpy.close()
