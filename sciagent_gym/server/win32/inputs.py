"""SendInput's INPUT structures (winuser.h) and the event lists that perform mouse and key
actions: absolute moves, buttons, wheel notches, key strokes and Unicode text.

Pure: building events needs no Windows; :func:`sciagent_gym.server.win32.winapi.send_inputs`
injects them.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

from sciagent_gym.actions.keys import normalize_key
from sciagent_gym.server.win32.keys import (
    EXTENDED_VK,
    TEXT_KEYS,
    UNICODE_KEYS,
    VK_SHIFT,
    vk_for_key,
)

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


# -- events ----------------------------------------------------------------------------------
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
