"""The control server's machine on a Windows desktop: :class:`Win32Machine`.

UNTESTED ON WINDOWS. Nothing in the Win32 half of this module has run on Windows: it is written
against the documented Win32 API (winuser.h, winbase.h, dwmapi.h) and only its pure parts (key
table, coordinate normalisation, INPUT structures and event lists, command builders, the process
table's bookkeeping) are tested, on Linux (tests/test_win32_backend.py). See
vm_images/windows/README.md, "What is untested here".

It is the X11 :class:`~sciagent_gym.server.machine.Machine` with its display-specific parts
swapped: input through ``SendInput``, windows through ``EnumWindows``, the clipboard through
``OpenClipboard``, programs through a process table that kills trees with ``taskkill /T``
(``sandbox_agent`` relies on POSIX sessions). Settling, text files, tar trees and the provider
method names are inherited unchanged; file paths are confined as on Linux, also against names
only Windows reads as escapes (``C:x``, ``\\x``). The module imports anywhere; the Windows calls
are bound on first use, and constructing :class:`Win32Machine` elsewhere raises RuntimeError.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path, PureWindowsPath
from types import SimpleNamespace
from typing import Any

import numpy as np

from sciagent_gym.actions import types as A
from sciagent_gym.actions.keys import normalize_key
from sciagent_gym.controller.windows import WindowInfo
from sciagent_gym.providers.local.sandbox import CommandResult
from sciagent_gym.server.files import Confined
from sciagent_gym.server.files import windows_unsafe as windows_unsafe  # re-exported
from sciagent_gym.server.machine import Machine

# -- winuser.h constants ---------------------------------------------------------------------
INPUT_MOUSE, INPUT_KEYBOARD = 0, 1
MOUSEEVENTF_MOVE = 0x0001
MOUSEEVENTF_WHEEL = 0x0800
MOUSEEVENTF_HWHEEL = 0x1000
MOUSEEVENTF_VIRTUALDESK = 0x4000
MOUSEEVENTF_ABSOLUTE = 0x8000
#: Mouse button -> (down flag, up flag).
BUTTON_FLAGS: dict[str, tuple[int, int]] = {
    "left": (0x0002, 0x0004), "right": (0x0008, 0x0010), "middle": (0x0020, 0x0040)}
KEYEVENTF_EXTENDEDKEY = 0x0001
KEYEVENTF_KEYUP = 0x0002
KEYEVENTF_UNICODE = 0x0004
WHEEL_DELTA = 120
VK_SHIFT, VK_MENU, VK_RETURN, VK_TAB, VK_BACK = 0x10, 0x12, 0x0D, 0x09, 0x08
SM_CXSCREEN, SM_CYSCREEN = 0, 1
SM_XVIRTUALSCREEN, SM_YVIRTUALSCREEN, SM_CXVIRTUALSCREEN, SM_CYVIRTUALSCREEN = 76, 77, 78, 79
WM_CLOSE = 0x0010
GW_OWNER = 4
GWL_EXSTYLE = -20
WS_EX_TOOLWINDOW = 0x00000080
SW_RESTORE = 9
SWP_NOMOVE, SWP_NOZORDER, SWP_NOACTIVATE = 0x0002, 0x0004, 0x0010
RDW_INVALIDATE, RDW_ERASE, RDW_ALLCHILDREN, RDW_FRAME = 0x0001, 0x0004, 0x0080, 0x0400
DWMWA_EXTENDED_FRAME_BOUNDS, DWMWA_CLOAKED = 9, 14
CF_UNICODETEXT = 13
GMEM_MOVEABLE = 0x0002
HWND_MESSAGE = -3
DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2 = -4
CREATE_NEW_PROCESS_GROUP = 0x00000200
CREATE_NO_WINDOW = 0x08000000
MAX_CLIPBOARD = 1_000_000

# -- keys ------------------------------------------------------------------------------------
#: Named keys of :data:`sciagent_gym.actions.keys.KEY_NAMES` -> virtual-key code (winuser.h VK_*).
NAMED_VK: dict[str, int] = {
    "enter": 0x0D, "tab": 0x09, "space": 0x20, "backspace": 0x08, "delete": 0x2E,
    "escape": 0x1B, "up": 0x26, "down": 0x28, "left": 0x25, "right": 0x27, "home": 0x24,
    "end": 0x23, "pageup": 0x21, "pagedown": 0x22, "insert": 0x2D,
    **{f"f{i}": 0x6F + i for i in range(1, 25)},  # VK_F1 = 0x70 .. VK_F24 = 0x87
    "shift": 0x10, "shiftleft": 0xA0, "shiftright": 0xA1,
    "ctrl": 0x11, "ctrlleft": 0xA2, "ctrlright": 0xA3,
    "alt": 0x12, "altleft": 0xA4, "altright": 0xA5,
    "win": 0x5B, "winleft": 0x5B, "winright": 0x5C,
    "capslock": 0x14, "numlock": 0x90, "scrolllock": 0x91, "printscreen": 0x2C,
    "pause": 0x13, "apps": 0x5D,
    **{f"num{i}": 0x60 + i for i in range(10)},
    "multiply": 0x6A, "add": 0x6B, "separator": 0x6C, "subtract": 0x6D, "decimal": 0x6E,
    "divide": 0x6F, "clear": 0x0C, "select": 0x29, "execute": 0x2B, "help": 0x2F,
    "browserback": 0xA6, "browserforward": 0xA7, "browserrefresh": 0xA8, "browserstop": 0xA9,
    "browsersearch": 0xAA, "browserfavorites": 0xAB, "browserhome": 0xAC,
    "volumemute": 0xAD, "volumedown": 0xAE, "volumeup": 0xAF, "nexttrack": 0xB0,
    "prevtrack": 0xB1, "stop": 0xB2, "playpause": 0xB3, "launchmail": 0xB4,
    "launchmediaselect": 0xB5, "launchapp1": 0xB6, "launchapp2": 0xB7, "sleep": 0x5F,
    "kana": 0x15, "hangul": 0x15, "junja": 0x17, "kanji": 0x19, "hanja": 0x19,
    "convert": 0x1C, "nonconvert": 0x1D, "modechange": 0x1F,
}

#: Keys with no virtual-key code of their own: pressed as the character they stand for.
UNICODE_KEYS: dict[str, str] = {"yen": "\u00a5"}

_UNSHIFTED: dict[str, int] = {
    **{c: ord(c) for c in "0123456789"},
    **{c: ord(c.upper()) for c in "abcdefghijklmnopqrstuvwxyz"},
    "`": 0xC0, "-": 0xBD, "=": 0xBB, "[": 0xDB, "]": 0xDD, "\\": 0xDC, ";": 0xBA, "'": 0xDE,
    ",": 0xBC, ".": 0xBE, "/": 0xBF,  # VK_OEM_*
}
_SHIFTED = dict(zip("~!@#$%^&*()_+{}|:\"<>?", "`1234567890-=[]\\;',./", strict=True))

#: Printable ASCII -> (virtual key, needs Shift) on the US English layout, which the guest
#: must use (as the X11 guests do): VK_OEM_* codes name physical keys, not characters.
CHAR_VK: dict[str, tuple[int, bool]] = {
    **{c: (vk, False) for c, vk in _UNSHIFTED.items()},
    **{c: (ord(c), True) for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"},
    **{c: (_UNSHIFTED[base], True) for c, base in _SHIFTED.items()},
}

#: Keys whose scan code has the E0 prefix: without KEYEVENTF_EXTENDEDKEY Windows takes the
#: arrows, Insert/Delete/Home/End/PgUp/PgDn for their numeric-keypad twins (and Shift+arrow
#: loses the Shift when NumLock is on).
EXTENDED_VK: frozenset[int] = frozenset(
    {*range(0x21, 0x29), 0x2C, 0x2D, 0x2E, 0x5B, 0x5C, 0x5D, 0x5F, 0x6F, 0x90, 0xA3, 0xA5,
     *range(0xA6, 0xB8)})

#: Characters that TypeText sends as key strokes, as the X11 controller does (a VK_PACKET
#: newline reaches many programs as Ctrl+Enter or nothing).
TEXT_KEYS: dict[str, int] = {"\n": VK_RETURN, "\r": VK_RETURN, "\t": VK_TAB, "\b": VK_BACK}


def vk_for_key(key: str) -> tuple[int, bool] | None:
    """(virtual-key code, needs Shift) of a key name, or None for :data:`UNICODE_KEYS`."""
    name = normalize_key(key)
    if name in UNICODE_KEYS:
        return None
    if name in CHAR_VK:
        return CHAR_VK[name]
    return NAMED_VK[name], False


def absolute_coords(x: int, y: int, left: int, top: int, width: int,
                    height: int) -> tuple[int, int]:
    """Screen pixel (x, y) as SendInput's absolute 0..65535 coordinates on a virtual screen
    of ``width`` x ``height`` at (``left``, ``top``).

    Windows maps n back to ``left + n * width / 65536`` (ReactOS, which follows Windows,
    shifts right by 16). The smallest n that lands on the pixel, ``ceil(65536 * dx / width)``,
    is within 1/2 pixel of its left edge, so floor and round both give the pixel back (the
    naive ``dx * 65535 // (width - 1)`` is one pixel short near the top-left).
    """
    def norm(offset: int, size: int) -> int:
        return min(max(-(-65536 * offset // size), 0), 65535)

    return norm(x - left, width), norm(y - top, height)


# -- SendInput structures (winuser.h), in fixed-size types so they are checkable anywhere ----
class MOUSEINPUT(ctypes.Structure):
    _fields_ = [("dx", ctypes.c_int32), ("dy", ctypes.c_int32),
                ("mouseData", ctypes.c_uint32), ("dwFlags", ctypes.c_uint32),
                ("time", ctypes.c_uint32), ("dwExtraInfo", ctypes.c_size_t)]


class KEYBDINPUT(ctypes.Structure):
    _fields_ = [("wVk", ctypes.c_uint16), ("wScan", ctypes.c_uint16),
                ("dwFlags", ctypes.c_uint32), ("time", ctypes.c_uint32),
                ("dwExtraInfo", ctypes.c_size_t)]


class HARDWAREINPUT(ctypes.Structure):
    _fields_ = [("uMsg", ctypes.c_uint32), ("wParamL", ctypes.c_uint16),
                ("wParamH", ctypes.c_uint16)]


class _INPUTUNION(ctypes.Union):
    _fields_ = [("mi", MOUSEINPUT), ("ki", KEYBDINPUT), ("hi", HARDWAREINPUT)]


class INPUT(ctypes.Structure):
    _anonymous_ = ("u",)
    _fields_ = [("type", ctypes.c_uint32), ("u", _INPUTUNION)]


class POINT(ctypes.Structure):
    _fields_ = [("x", ctypes.c_int32), ("y", ctypes.c_int32)]


class RECT(ctypes.Structure):
    _fields_ = [("left", ctypes.c_int32), ("top", ctypes.c_int32),
                ("right", ctypes.c_int32), ("bottom", ctypes.c_int32)]


def mouse_event(flags: int, dx: int = 0, dy: int = 0, data: int = 0) -> INPUT:
    """One mouse INPUT; ``data`` is a signed wheel delta (a DWORD holding a negative int)."""
    event = INPUT(type=INPUT_MOUSE)
    event.mi = MOUSEINPUT(dx=dx, dy=dy, mouseData=data & 0xFFFFFFFF, dwFlags=flags)
    return event


def move_event(x: int, y: int, screen: tuple[int, int, int, int]) -> INPUT:
    """An absolute move to pixel (x, y); ``screen`` is the virtual screen (left, top, w, h)."""
    nx, ny = absolute_coords(x, y, *screen)
    return mouse_event(MOUSEEVENTF_MOVE | MOUSEEVENTF_ABSOLUTE | MOUSEEVENTF_VIRTUALDESK, nx, ny)


def button_event(button: str, down: bool) -> INPUT:
    return mouse_event(BUTTON_FLAGS[button][0 if down else 1])


def wheel_events(dy: int, dx: int) -> list[INPUT]:
    """One notch per event: ``dy > 0`` up (away from the user), ``dx > 0`` right, as pyautogui
    and the X11 buttons 4-7 mean them."""
    events = [mouse_event(MOUSEEVENTF_WHEEL, data=WHEEL_DELTA if dy > 0 else -WHEEL_DELTA)
              for _ in range(abs(dy))]
    events += [mouse_event(MOUSEEVENTF_HWHEEL, data=WHEEL_DELTA if dx > 0 else -WHEEL_DELTA)
               for _ in range(abs(dx))]
    return events


def key_event(vk: int, up: bool, scan: int = 0) -> INPUT:
    flags = (KEYEVENTF_EXTENDEDKEY if vk in EXTENDED_VK else 0) | (KEYEVENTF_KEYUP if up else 0)
    event = INPUT(type=INPUT_KEYBOARD)
    event.ki = KEYBDINPUT(wVk=vk, wScan=scan, dwFlags=flags)
    return event


def unicode_events(text: str, up: bool | None = None) -> list[INPUT]:
    """VK_PACKET events for ``text``, one per UTF-16 unit (a surrogate pair is two units):
    down and up for each unit, or only downs / only ups when ``up`` is given."""
    data = text.encode("utf-16-le")
    units = [int.from_bytes(data[i:i + 2], "little") for i in range(0, len(data), 2)]
    phases = (False, True) if up is None else (up,)
    events = []
    for unit in units:
        for release in phases:
            event = INPUT(type=INPUT_KEYBOARD)
            event.ki = KEYBDINPUT(wVk=0, wScan=unit, dwFlags=KEYEVENTF_UNICODE
                                  | (KEYEVENTF_KEYUP if release else 0))
            events.append(event)
    return events


def text_events(text: str, scan_of: Callable[[int], int] = lambda vk: 0) -> list[list[INPUT]]:
    """The events that type ``text``, grouped per character (sent one group at a time)."""
    groups = []
    for ch in text:
        if ch in TEXT_KEYS:
            vk = TEXT_KEYS[ch]
            groups.append([key_event(vk, False, scan_of(vk)), key_event(vk, True, scan_of(vk))])
        else:
            groups.append(unicode_events(ch))
    return groups


def key_events(key: str, up: bool, scan_of: Callable[[int], int] = lambda vk: 0) -> list[INPUT]:
    """Press or release one named key as itself, without Shift (hotkeys and keyDown/keyUp
    use the key alone, as the X11 controller does)."""
    stroke = vk_for_key(key)
    if stroke is None:
        return unicode_events(UNICODE_KEYS[normalize_key(key)], up)
    return [key_event(stroke[0], up, scan_of(stroke[0]))]


def tap_events(key: str, scan_of: Callable[[int], int] = lambda vk: 0) -> list[INPUT]:
    """One press of ``key`` as ``press()`` means it: Shift held for shifted characters."""
    stroke = vk_for_key(key)
    if stroke is None:
        return unicode_events(UNICODE_KEYS[normalize_key(key)])
    vk, shift = stroke
    events = [key_event(vk, False, scan_of(vk)), key_event(vk, True, scan_of(vk))]
    if shift:
        scan = scan_of(VK_SHIFT)
        events = [key_event(VK_SHIFT, False, scan), *events, key_event(VK_SHIFT, True, scan)]
    return events


# -- the Win32 API, bound on first use -------------------------------------------------------
_HWND = _HANDLE = ctypes.c_void_p
_BOOL = _INT = _LONG = ctypes.c_int32
_UINT = _DWORD = ctypes.c_uint32
_WPARAM, _LPARAM = ctypes.c_size_t, ctypes.c_ssize_t

#: (dll, function, restype, argtypes). Explicit types matter on 64-bit Windows, where ctypes'
#: default ``int`` would truncate returned handles and pointers. EnumWindows' callback type
#: exists only on Windows, so its argtypes are set in :func:`win_api`.
PROTOTYPES: tuple[tuple[str, str, Any, tuple[Any, ...] | None], ...] = (
    ("user32", "SendInput", _UINT, (_UINT, ctypes.POINTER(INPUT), _INT)),
    ("user32", "GetSystemMetrics", _INT, (_INT,)),
    ("user32", "GetCursorPos", _BOOL, (ctypes.POINTER(POINT),)),
    ("user32", "MapVirtualKeyW", _UINT, (_UINT, _UINT)),
    ("user32", "EnumWindows", _BOOL, None),
    ("user32", "IsWindowVisible", _BOOL, (_HWND,)),
    ("user32", "GetWindowTextLengthW", _INT, (_HWND,)),
    ("user32", "GetWindowTextW", _INT, (_HWND, ctypes.c_wchar_p, _INT)),
    ("user32", "GetClassNameW", _INT, (_HWND, ctypes.c_wchar_p, _INT)),
    ("user32", "GetWindowRect", _BOOL, (_HWND, ctypes.POINTER(RECT))),
    ("user32", "GetForegroundWindow", _HWND, ()),
    ("user32", "GetWindow", _HWND, (_HWND, _UINT)),
    ("user32", "IsWindowEnabled", _BOOL, (_HWND,)),
    ("user32", "IsIconic", _BOOL, (_HWND,)),
    ("user32", "GetWindowLongW", _LONG, (_HWND, _INT)),
    ("user32", "PostMessageW", _BOOL, (_HWND, _UINT, _WPARAM, _LPARAM)),
    ("user32", "SetForegroundWindow", _BOOL, (_HWND,)),
    ("user32", "BringWindowToTop", _BOOL, (_HWND,)),
    ("user32", "ShowWindow", _BOOL, (_HWND, _INT)),
    ("user32", "SetWindowPos", _BOOL, (_HWND, _HWND, _INT, _INT, _INT, _INT, _UINT)),
    ("user32", "RedrawWindow", _BOOL, (_HWND, ctypes.c_void_p, _HANDLE, _UINT)),
    ("user32", "OpenClipboard", _BOOL, (_HWND,)),
    ("user32", "CloseClipboard", _BOOL, ()),
    ("user32", "EmptyClipboard", _BOOL, ()),
    ("user32", "IsClipboardFormatAvailable", _BOOL, (_UINT,)),
    ("user32", "GetClipboardData", _HANDLE, (_UINT,)),
    ("user32", "SetClipboardData", _HANDLE, (_UINT, _HANDLE)),
    ("user32", "CreateWindowExW", _HWND, (_DWORD, ctypes.c_wchar_p, ctypes.c_wchar_p, _DWORD,
                                          _INT, _INT, _INT, _INT, _HWND, _HANDLE, _HANDLE,
                                          ctypes.c_void_p)),
    ("user32", "DestroyWindow", _BOOL, (_HWND,)),
    ("user32", "SetProcessDPIAware", _BOOL, ()),
    ("user32", "SetProcessDpiAwarenessContext", _BOOL, (_HANDLE,)),  # Windows 10 1703+
    ("shcore", "SetProcessDpiAwareness", _LONG, (_INT,)),  # Windows 8.1+
    ("kernel32", "GlobalAlloc", _HANDLE, (_UINT, ctypes.c_size_t)),
    ("kernel32", "GlobalLock", ctypes.c_void_p, (_HANDLE,)),
    ("kernel32", "GlobalUnlock", _BOOL, (_HANDLE,)),
    ("kernel32", "GlobalFree", _HANDLE, (_HANDLE,)),
    ("kernel32", "GlobalSize", ctypes.c_size_t, (_HANDLE,)),
    ("dwmapi", "DwmGetWindowAttribute", _LONG, (_HWND, _DWORD, ctypes.c_void_p, _DWORD)),
)


def require_windows() -> None:
    if sys.platform != "win32":
        raise RuntimeError(
            f"Win32Machine drives a Windows desktop and runs only on Windows (this is "
            f"{sys.platform}); use sciagent_gym.server.machine.Machine for an X display")


@functools.cache
def win_api() -> SimpleNamespace:
    """The functions of :data:`PROTOTYPES` (None where this Windows lacks one), plus
    ``WNDENUMPROC`` and ``last_error``."""
    require_windows()
    api = SimpleNamespace(WNDENUMPROC=ctypes.WINFUNCTYPE(_BOOL, _HWND, _LPARAM),
                          last_error=ctypes.get_last_error)
    dlls: dict[str, Any] = {}
    for dll_name, name, restype, argtypes in PROTOTYPES:
        if dll_name not in dlls:
            try:
                dlls[dll_name] = ctypes.WinDLL(dll_name, use_last_error=True)
            except OSError:
                dlls[dll_name] = None
        func = getattr(dlls[dll_name], name, None)
        if func is not None:
            func.restype = restype
            func.argtypes = argtypes if argtypes is not None else (api.WNDENUMPROC, _LPARAM)
        setattr(api, name, func)
    return api


def send_inputs(events: list[INPUT]) -> None:
    """Inject events; raise when Windows refuses (a locked or secure desktop, or a target
    window of a higher integrity level than the server: UIPI)."""
    if not events:
        return
    api = win_api()
    array = (INPUT * len(events))(*events)
    sent = api.SendInput(len(events), array, ctypes.sizeof(INPUT))
    if sent != len(events):
        raise OSError(f"SendInput inserted {sent} of {len(events)} events (error "
                      f"{api.last_error()}): is the desktop locked, or the program elevated?")


def _dpi_aware(api: SimpleNamespace) -> None:
    """Work in physical pixels (screen size, SendInput, BitBlt) whatever the scaling."""
    if api.SetProcessDpiAwarenessContext is not None and api.SetProcessDpiAwarenessContext(
            DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2):
        return
    if api.SetProcessDpiAwareness is not None and api.SetProcessDpiAwareness(2) == 0:
        return
    api.SetProcessDPIAware()


# -- screen and input ------------------------------------------------------------------------
class SendInputController:
    """Mouse, keyboard and screen of the interactive desktop (the X11Controller's interface)."""

    def __init__(self, width: int, height: int) -> None:
        import mss

        self.width, self.height = width, height
        self._api = win_api()
        self._sct = (getattr(mss, "MSS", None) or mss.mss)()
        self._monitor = {"left": 0, "top": 0, "width": width, "height": height}
        self._held_keys: set[str] = set()
        self._held_buttons: set[str] = set()
        self.last_grab_seconds = 0.0

    def grab(self) -> np.ndarray:
        """The primary monitor as a fresh (H, W, 3) uint8 RGB array (as X11Controller.grab)."""
        t0 = time.perf_counter()
        shot = self._sct.grab(self._monitor)
        bgra = np.frombuffer(shot.raw, dtype=np.uint8).reshape(self.height, self.width, 4)
        rgb = np.empty((self.height, self.width, 3), dtype=np.uint8)
        rgb[..., 0] = bgra[..., 2]
        rgb[..., 1] = bgra[..., 1]
        rgb[..., 2] = bgra[..., 0]
        self.last_grab_seconds = time.perf_counter() - t0
        return rgb

    def expose_all(self) -> None:
        """Make every window repaint (the desktop and all its descendants), as xrefresh does."""
        self._api.RedrawWindow(None, None, None,
                               RDW_INVALIDATE | RDW_ERASE | RDW_FRAME | RDW_ALLCHILDREN)

    def pointer(self) -> tuple[int, int]:
        point = POINT()
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
        send_inputs(wheel_events(a.dy, a.dx))

    def _do_typetext(self, a: A.TypeText) -> None:
        for group in text_events(a.text, self._scan):
            send_inputs(group)

    def _do_press(self, a: A.Press) -> None:
        for _ in range(a.presses):
            send_inputs(tap_events(a.key, self._scan))

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
        send_inputs([move_event(int(x), int(y), screen)])

    def _button(self, button: str, down: bool) -> None:
        send_inputs([button_event(button, down)])
        (self._held_buttons.add if down else self._held_buttons.discard)(button)

    def _key(self, key: str, down: bool) -> None:
        send_inputs(key_events(key, not down, self._scan))
        (self._held_keys.add if down else self._held_keys.discard)(normalize_key(key))

    def _scan(self, vk: int) -> int:
        """The key's scan code (MAPVK_VK_TO_VSC), which some programs read instead of the VK."""
        return int(self._api.MapVirtualKeyW(vk, 0))

    def close(self) -> None:
        try:
            self.release_all()
        except Exception:
            pass
        self._sct.close()


# -- windows ---------------------------------------------------------------------------------
#: Top-level windows of the shell itself (desktop, taskbars), never a program's.
SHELL_CLASSES = frozenset({"Progman", "WorkerW", "Shell_TrayWnd", "Shell_SecondaryTrayWnd"})


def window_type(class_name: str, modal: bool, exstyle: int) -> str:
    """An EWMH-like window type (as WindowInfo.window_type holds on X11)."""
    if exstyle & WS_EX_TOOLWINDOW:
        return "utility"
    if modal or class_name == "#32770":  # the standard dialog class
        return "dialog"
    return "normal"


class Win32Windows:
    """Visible, titled, uncloaked top-level windows (the WindowLister's interface)."""

    def __init__(self) -> None:
        self._api = win_api()

    def list(self) -> list[WindowInfo]:
        api, handles = self._api, []

        @api.WNDENUMPROC
        def collect(hwnd: int | None, _: int) -> bool:
            if hwnd:
                handles.append(hwnd)
            return True

        api.EnumWindows(collect, 0)
        foreground = api.GetForegroundWindow() or 0
        return [info for hwnd in handles if (info := self._info(hwnd, foreground)) is not None]

    def _text(self, getter: Callable[..., int], hwnd: int, size: int) -> str:
        buf = ctypes.create_unicode_buffer(size)
        getter(hwnd, buf, size)
        return buf.value

    def _info(self, hwnd: int, foreground: int) -> WindowInfo | None:
        api = self._api
        if not api.IsWindowVisible(hwnd):
            return None
        cloaked = ctypes.c_uint32(0)  # hidden by DWM: suspended store apps, other desktops
        if api.DwmGetWindowAttribute(hwnd, DWMWA_CLOAKED, ctypes.byref(cloaked),
                                     ctypes.sizeof(cloaked)) == 0 and cloaked.value:
            return None
        length = api.GetWindowTextLengthW(hwnd)
        title = self._text(api.GetWindowTextW, hwnd, length + 1) if length > 0 else ""
        class_name = self._text(api.GetClassNameW, hwnd, 256)
        if not title or class_name in SHELL_CLASSES:
            return None
        rect = RECT()  # the frame as drawn; GetWindowRect adds Windows 10's invisible borders
        if api.DwmGetWindowAttribute(hwnd, DWMWA_EXTENDED_FRAME_BOUNDS, ctypes.byref(rect),
                                     ctypes.sizeof(rect)) != 0:
            api.GetWindowRect(hwnd, ctypes.byref(rect))
        width, height = rect.right - rect.left, rect.bottom - rect.top
        if width <= 0 or height <= 0:
            return None
        owner = api.GetWindow(hwnd, GW_OWNER)
        modal = bool(owner) and not api.IsWindowEnabled(owner)  # a modal dialog disables it
        exstyle = api.GetWindowLongW(hwnd, GWL_EXSTYLE)
        return WindowInfo(id=hwnd, title=title, wm_class=class_name, x=rect.left, y=rect.top,
                          width=width, height=height, active=hwnd == foreground, modal=modal,
                          window_type=window_type(class_name, modal, exstyle))

    def close_window(self, window_id: int) -> None:
        """Post WM_CLOSE, which is what the close button sends."""
        self._api.PostMessageW(window_id, WM_CLOSE, 0, 0)

    def activate(self, window_id: int) -> None:
        """Restore, raise and focus a window.

        SetForegroundWindow is refused unless this process "received the last input event":
        an injected null mouse move makes that true, else an Alt press around the call (the
        usual trick; its release can open the window's menu bar, hence the last resort).
        """
        if self._api.IsIconic(window_id):
            self._api.ShowWindow(window_id, SW_RESTORE)
        if not self._foreground(window_id):
            send_inputs([mouse_event(MOUSEEVENTF_MOVE)])
            if not self._foreground(window_id):
                send_inputs([key_event(VK_MENU, False)])
                try:
                    self._foreground(window_id)
                finally:
                    send_inputs([key_event(VK_MENU, True)])
        self._api.BringWindowToTop(window_id)

    def _foreground(self, hwnd: int) -> bool:
        self._api.SetForegroundWindow(hwnd)
        return self._api.GetForegroundWindow() == hwnd

    def nudge(self, window_id: int) -> None:
        """Resize a window by one pixel and back, so its toolkit lays it out again."""
        rect = RECT()
        self._api.GetWindowRect(window_id, ctypes.byref(rect))
        width, height = rect.right - rect.left, rect.bottom - rect.top
        flags = SWP_NOMOVE | SWP_NOZORDER | SWP_NOACTIVATE
        for w in (width + 1, width):
            self._api.SetWindowPos(window_id, None, 0, 0, w, height, flags)

    def close(self) -> None:
        pass


# -- clipboard -------------------------------------------------------------------------------
class Win32Clipboard:
    """The Windows clipboard as Unicode text (the X11 Clipboard's interface)."""

    def __init__(self) -> None:
        self._api = win_api()

    @contextlib.contextmanager
    def _opened(self, timeout: float = 2.0) -> Iterator[SimpleNamespace]:
        """Open the clipboard for a hidden message-only window: a NULL owner would make
        EmptyClipboard leave no owner, and SetClipboardData then fails (documented)."""
        api = self._api
        owner = api.CreateWindowExW(0, "STATIC", None, 0, 0, 0, 0, 0, HWND_MESSAGE, None, None,
                                    None)
        try:
            deadline = time.monotonic() + timeout
            while not api.OpenClipboard(owner):  # another program may hold it for a moment
                if time.monotonic() > deadline:
                    raise OSError(f"the clipboard stayed open by another program for "
                                  f"{timeout:.0f}s (error {api.last_error()})")
                time.sleep(0.01)
            try:
                yield api
            finally:
                api.CloseClipboard()
        finally:
            if owner:
                api.DestroyWindow(owner)

    def get(self) -> str:
        with self._opened() as api:
            if not api.IsClipboardFormatAvailable(CF_UNICODETEXT):
                return ""
            handle = api.GetClipboardData(CF_UNICODETEXT)
            pointer = api.GlobalLock(handle) if handle else None
            if not pointer:
                return ""
            try:
                units = min(api.GlobalSize(handle) // 2, MAX_CLIPBOARD + 1)
                return ctypes.wstring_at(pointer, units).split("\0", 1)[0][:MAX_CLIPBOARD]
            finally:
                api.GlobalUnlock(handle)

    def set(self, text: str) -> None:
        data = (text + "\0").encode("utf-16-le")
        with self._opened() as api:
            api.EmptyClipboard()
            handle = api.GlobalAlloc(GMEM_MOVEABLE, len(data))
            if not handle:
                raise MemoryError(f"GlobalAlloc of {len(data)} bytes failed")
            pointer = api.GlobalLock(handle)
            if not pointer:
                api.GlobalFree(handle)
                raise OSError(f"GlobalLock failed (error {api.last_error()})")
            ctypes.memmove(pointer, data, len(data))
            api.GlobalUnlock(handle)
            if not api.SetClipboardData(CF_UNICODETEXT, handle):
                api.GlobalFree(handle)  # the system owns the memory only after success
                raise OSError(f"SetClipboardData failed (error {api.last_error()})")

    def close(self) -> None:
        """Empty the clipboard (closing the X11 one ends its owner, which empties it)."""
        with self._opened() as api:
            api.EmptyClipboard()


# -- programs --------------------------------------------------------------------------------
def taskkill_argv(pid: int, system_root: str | None = None) -> list[str]:
    """Force-kill a process and all its descendants. The full path keeps a ``taskkill.exe``
    in the working directory (which the agent can write) from being run instead."""
    root = system_root or os.environ.get("SystemRoot", r"C:\Windows")
    return [str(PureWindowsPath(root, "System32", "taskkill.exe")), "/PID", str(pid), "/T", "/F"]


def shell_command_line(command: str, comspec: str | None = None) -> str:
    """The command line that runs ``command`` in cmd.exe. A string, not a list:
    ``subprocess.list2cmdline`` would escape inner quotes with backslashes, which cmd does
    not understand; ``/s /c "..."`` makes cmd strip only the outer quotes. ``/d`` skips the
    AutoRun commands of the registry."""
    comspec = comspec or os.environ.get("ComSpec", r"C:\Windows\System32\cmd.exe")
    return f'"{comspec}" /d /s /c "{command}"'


def decode_output(data: bytes) -> str:
    """Command output as text: UTF-8, else the console's OEM code page (cmd's built-ins)."""
    start = 0
    while start < min(3, len(data)) and 0x80 <= data[start] <= 0xBF:
        start += 1  # a tail cut inside a UTF-8 character
    try:
        return data[start:].decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("oem" if sys.platform == "win32" else "latin-1", "replace")


def taskkill_tree(proc: subprocess.Popen) -> None:
    """End ``proc`` and its descendants. Descendants whose parent already exited are not
    found by ``/T`` (launchers); the Popen handle keeps the pid from being reused."""
    if proc.poll() is None:
        try:
            subprocess.run(taskkill_argv(proc.pid), capture_output=True, timeout=15,
                           creationflags=CREATE_NO_WINDOW)
        except subprocess.TimeoutExpired:
            pass
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()  # TerminateProcess on the process itself
        proc.wait(5)


class Win32ProcessTable:
    """Programs started by name, as ``sandbox_agent`` keeps them on POSIX.

    ``creationflags`` and ``kill_tree`` are parameters so that the bookkeeping can be tested
    off Windows; by default each program gets its own process group and no console window (a
    console window would show in the screenshots), and a kill takes its whole tree.
    """

    def __init__(self, creationflags: int = CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW,
                 kill_tree: Callable[[subprocess.Popen], None] = taskkill_tree) -> None:
        self._children: dict[str, subprocess.Popen] = {}
        self._flags, self._kill_tree = creationflags, kill_tree

    def spawn(self, name: str, argv: list[str], env: dict[str, str] | None,
              cwd: str | None, log: str | None) -> int:
        self.kill(name)
        out = open(os.path.abspath(log), "ab") if log else subprocess.DEVNULL
        try:
            proc = subprocess.Popen(argv, cwd=os.path.abspath(cwd) if cwd else None,
                                    env={**os.environ, **(env or {})},
                                    stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, creationflags=self._flags)
        finally:
            if out is not subprocess.DEVNULL:
                out.close()
        self._children[name] = proc
        return proc.pid

    def poll(self, name: str) -> dict[str, Any]:
        proc = self._children.get(name)
        if proc is None:
            return {"running": False, "returncode": None}
        code = proc.poll()
        return {"running": code is None, "returncode": code}

    def kill(self, name: str) -> None:
        proc = self._children.pop(name, None)
        if proc is not None:
            self._kill_tree(proc)

    def kill_all(self) -> None:
        for name in list(self._children):
            self.kill(name)

    def run(self, command: str | list[str], cwd: str | None, env: dict[str, str] | None,
            timeout: float, max_output: int) -> CommandResult:
        """Run to completion (or ``timeout``, then kill the tree); keep the output's tail."""
        proc = subprocess.Popen(command, cwd=os.path.abspath(cwd) if cwd else None,
                                env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                creationflags=self._flags)
        timed_out = False
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            self._kill_tree(proc)
            try:
                out, _ = proc.communicate(timeout=5)
            except subprocess.TimeoutExpired:  # a grandchild still holds the pipe
                proc.kill()
                out = b""
        return CommandResult(proc.returncode, decode_output(out[-max_output:]), timed_out,
                             len(out) > max_output)


# -- paths -----------------------------------------------------------------------------------
def protocol_path(path: str, current_drive: str) -> str:
    """``path`` as the control protocol spells paths: from the root of the server's current
    drive, with forward slashes (``C:\\sciagent`` -> ``/sciagent`` on drive C:). The routes
    accept only paths that start with ``/``, and Windows resolves those on the current drive."""
    p = PureWindowsPath(path)
    if not p.root:
        raise ValueError(f"{path!r} is not an absolute path")
    if p.drive and p.drive.upper() != current_drive.upper():
        raise ValueError(f"{path!r} is not on the server's current drive {current_drive}: "
                         f"start the server from that drive (Task Scheduler: 'Start in')")
    return p.as_posix()[len(p.drive):]


# -- the machine -----------------------------------------------------------------------------
class Win32Machine(Machine):
    """The interactive Windows desktop, its programs and files, behind one control server.

    Paths are reported from the root of the server's current drive (``/sciagent/work``), so
    the server must start on the drive that holds ``home``.
    """

    def __init__(self, display_name: str, home: str, work: str | None = None,
                 tmp: str | None = None) -> None:
        require_windows()
        self.drive = drive = os.path.splitdrive(os.getcwd())[0]
        api = win_api()
        _dpi_aware(api)  # before any size is read
        self.display_name = display_name
        self.width = int(api.GetSystemMetrics(SM_CXSCREEN))
        self.height = int(api.GetSystemMetrics(SM_CYSCREEN))
        self.home = protocol_path(home, drive)
        self.work = protocol_path(work, drive) if work else f"{self.home}/work"
        self.tmp = protocol_path(tmp, drive) if tmp else f"{self.home}/tmp"
        for path in (self.work, self.tmp):
            Path(path).mkdir(parents=True, exist_ok=True)
        self.files = Confined([self.home, self.work, self.tmp], windows=True)
        self.zones = None  # commands run as the server's user: cli_isolated is False
        self._x = threading.RLock()  # one input stream: actions must not interleave
        self._procs = threading.Lock()
        self._table = Win32ProcessTable()
        self.controller = SendInputController(self.width, self.height)
        self._windows = Win32Windows()
        self.clipboard = Win32Clipboard()

    @property
    def paths(self) -> dict[str, str]:
        """Machine's paths plus ``drive`` (``C:``): a Windows program wants ``C:\\sciagent\\x``
        on its command line, where ``/sciagent/x`` may read as a switch."""
        return {**super().paths, "drive": self.drive}

    def _env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return {"HOME": os.path.abspath(self.home), **(extra or {})}

    def spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None,
              cwd: str | None = None, log: str | None = None) -> int:
        cwd = self.files.check(cwd) if cwd else self.work
        if log:
            self.files.check(log)
        with self._procs:
            return self._table.spawn(name, argv, self._env(env), cwd, log)

    def poll(self, name: str) -> dict[str, Any]:
        with self._procs:
            return self._table.poll(name)

    def kill(self, name: str) -> None:
        with self._procs:
            self._table.kill(name)

    def kill_all(self) -> None:
        with self._procs:
            self._table.kill_all()

    def run_command(self, command: str, timeout: float = 30.0,
                    max_output: int = 8192) -> CommandResult:
        return self._table.run(shell_command_line(command), self.work, self._env(), timeout,
                               max_output)
