"""The virtual-key table: action key names and characters as Windows virtual-key codes.

Pure data and one lookup (:func:`vk_for_key`); the INPUT events built from these codes are in
:mod:`sciagent_gym.server.win32.inputs`.
"""

from __future__ import annotations

from sciagent_gym.actions.keys import normalize_key

# winuser.h VK_* codes the event builders press by name
VK_SHIFT, VK_MENU, VK_RETURN, VK_TAB, VK_BACK = 0x10, 0x12, 0x0D, 0x09, 0x08

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
