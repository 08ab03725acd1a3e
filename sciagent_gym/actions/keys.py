"""The key vocabulary shared by every action front end.

Agents name keys the way pyautogui does (``'enter'``, ``'ctrl'``, ``'pgdn'``, ``'a'``). This module
turns any accepted spelling into one canonical name (:func:`normalize_key`) and maps canonical
names to X11 keysyms (:func:`keysym_name`, :func:`keysym_value`) for the controller. It is plain
data on purpose: parsing and validating actions must work without an X display.

:data:`KEY_NAMES` holds only canonical names (every entry is a fixed point of
:func:`normalize_key`), so it can index the ``"key"`` field of the structured action space without
duplicates. Its order is part of that space: only ever append to it.

Accepted spellings beyond the canonical ones:

* every name in pyautogui's ``KEYBOARD_KEYS`` that has an X keysym (``'return'``, ``'esc'``,
  ``'del'``, ``'pgup'``, ``'pgdn'``, ``'prntscrn'``, ``'command'``, ``'option'``, ...);
* common extras: ``'control'``, ``'cmd'``, ``'super'``, ``'meta'``, ``'windows'``, ``'menu'``,
  ``'ins'``, ``'spacebar'``, ``'arrowup'`` (and the other arrows);
* ``' '``, ``'\\n'``, ``'\\r'`` and ``'\\t'`` (pyautogui accepts them as keys).

Multi-character names are case-insensitive and may contain ``_``, ``-`` or spaces
(``'Page_Down'``, ``'Caps Lock'``); single characters are case-sensitive (``'A'`` is a different key
from ``'a'``).
"""

from __future__ import annotations

from .types import ActionError

#: The modifiers a hotkey may hold, in the order the ``"modifiers"`` MultiBinary field uses.
MODIFIERS: tuple[str, ...] = ("ctrl", "shift", "alt", "win")

#: Printable ASCII characters other than the space (which is the named key ``'space'``).
_CHARS: str = "".join(chr(c) for c in range(0x21, 0x7F))

#: X keysym names of the printable ASCII characters that are not letters or digits.
_CHAR_KEYSYMS: dict[str, str] = {
    "!": "exclam", '"': "quotedbl", "#": "numbersign", "$": "dollar", "%": "percent",
    "&": "ampersand", "'": "apostrophe", "(": "parenleft", ")": "parenright", "*": "asterisk",
    "+": "plus", ",": "comma", "-": "minus", ".": "period", "/": "slash", ":": "colon",
    ";": "semicolon", "<": "less", "=": "equal", ">": "greater", "?": "question", "@": "at",
    "[": "bracketleft", "\\": "backslash", "]": "bracketright", "^": "asciicircum",
    "_": "underscore", "`": "grave", "{": "braceleft", "|": "bar", "}": "braceright",
    "~": "asciitilde",
}

#: Canonical named keys: (name, X keysym name, keysym value). Values are from X11's
#: keysymdef.h / XF86keysym.h so the controller needs no name lookup.
_NAMED: tuple[tuple[str, str, int], ...] = (
    ("enter", "Return", 0xFF0D),
    ("tab", "Tab", 0xFF09),
    ("space", "space", 0x20),
    ("backspace", "BackSpace", 0xFF08),
    ("delete", "Delete", 0xFFFF),
    ("escape", "Escape", 0xFF1B),
    ("up", "Up", 0xFF52),
    ("down", "Down", 0xFF54),
    ("left", "Left", 0xFF51),
    ("right", "Right", 0xFF53),
    ("home", "Home", 0xFF50),
    ("end", "End", 0xFF57),
    ("pageup", "Page_Up", 0xFF55),
    ("pagedown", "Page_Down", 0xFF56),
    ("insert", "Insert", 0xFF63),
    *((f"f{i}", f"F{i}", 0xFFBD + i) for i in range(1, 25)),
    ("shift", "Shift_L", 0xFFE1),
    ("shiftleft", "Shift_L", 0xFFE1),
    ("shiftright", "Shift_R", 0xFFE2),
    ("ctrl", "Control_L", 0xFFE3),
    ("ctrlleft", "Control_L", 0xFFE3),
    ("ctrlright", "Control_R", 0xFFE4),
    ("alt", "Alt_L", 0xFFE9),
    ("altleft", "Alt_L", 0xFFE9),
    ("altright", "Alt_R", 0xFFEA),
    ("win", "Super_L", 0xFFEB),
    ("winleft", "Super_L", 0xFFEB),
    ("winright", "Super_R", 0xFFEC),
    ("capslock", "Caps_Lock", 0xFFE5),
    ("numlock", "Num_Lock", 0xFF7F),
    ("scrolllock", "Scroll_Lock", 0xFF14),
    ("printscreen", "Print", 0xFF61),
    ("pause", "Pause", 0xFF13),
    ("apps", "Menu", 0xFF67),
    *((f"num{i}", f"KP_{i}", 0xFFB0 + i) for i in range(10)),
    ("add", "KP_Add", 0xFFAB),
    ("subtract", "KP_Subtract", 0xFFAD),
    ("multiply", "KP_Multiply", 0xFFAA),
    ("divide", "KP_Divide", 0xFFAF),
    ("decimal", "KP_Decimal", 0xFFAE),
    ("separator", "KP_Separator", 0xFFAC),
    ("clear", "Clear", 0xFF0B),
    ("help", "Help", 0xFF6A),
    ("select", "Select", 0xFF60),
    ("execute", "Execute", 0xFF62),
    ("volumemute", "XF86AudioMute", 0x1008FF12),
    ("volumedown", "XF86AudioLowerVolume", 0x1008FF11),
    ("volumeup", "XF86AudioRaiseVolume", 0x1008FF13),
    ("playpause", "XF86AudioPlay", 0x1008FF14),
    ("stop", "XF86AudioStop", 0x1008FF15),
    ("nexttrack", "XF86AudioNext", 0x1008FF17),
    ("prevtrack", "XF86AudioPrev", 0x1008FF16),
    ("browserback", "XF86Back", 0x1008FF26),
    ("browserforward", "XF86Forward", 0x1008FF27),
    ("browserrefresh", "XF86Refresh", 0x1008FF29),
    ("browserstop", "XF86Stop", 0x1008FF28),
    ("browsersearch", "XF86Search", 0x1008FF1B),
    ("browserfavorites", "XF86Favorites", 0x1008FF30),
    ("browserhome", "XF86HomePage", 0x1008FF18),
    ("launchmail", "XF86Mail", 0x1008FF19),
    ("launchmediaselect", "XF86AudioMedia", 0x1008FF32),
    ("launchapp1", "XF86MyComputer", 0x1008FF33),
    ("launchapp2", "XF86Calculator", 0x1008FF1D),
    ("sleep", "XF86Sleep", 0x1008FF2F),
    ("convert", "Henkan_Mode", 0xFF23),
    ("nonconvert", "Muhenkan", 0xFF22),
    ("modechange", "Mode_switch", 0xFF7E),
    ("kana", "Kana_Lock", 0xFF2D),
    ("kanji", "Kanji", 0xFF21),
    ("hangul", "Hangul", 0xFF31),
    ("hanja", "Hangul_Hanja", 0xFF34),
    ("junja", "Hangul_Jeonja", 0xFF38),
    ("yen", "yen", 0xA5),
)

#: Canonical key names: printable ASCII characters (except space), then named keys.
KEY_NAMES: tuple[str, ...] = tuple(_CHARS) + tuple(name for name, _, _ in _NAMED)

#: Alternative spellings -> canonical name. Keys are lower case without ``_``/``-``/spaces,
#: except the whitespace characters, which are matched exactly.
ALIASES: dict[str, str] = {
    " ": "space", "\n": "enter", "\r": "enter", "\t": "tab",
    "return": "enter", "esc": "escape", "del": "delete", "ins": "insert",
    "pgup": "pageup", "pgdn": "pagedown", "spacebar": "space",
    "arrowup": "up", "arrowdown": "down", "arrowleft": "left", "arrowright": "right",
    "control": "ctrl", "controlleft": "ctrlleft", "controlright": "ctrlright",
    "option": "alt", "optionleft": "altleft", "optionright": "altright",
    "command": "win", "cmd": "win", "super": "win", "meta": "win", "windows": "win",
    "print": "printscreen", "prntscrn": "printscreen", "prtsc": "printscreen",
    "prtscr": "printscreen", "menu": "apps", "hanguel": "hangul",
}

#: pyautogui key names that have no X keysym, so they cannot be pressed on an X display.
_NO_KEYSYM: frozenset[str] = frozenset({"fn", "accept", "final"})

_KEYSYM_NAMES: dict[str, str] = {
    **{c: _CHAR_KEYSYMS.get(c, c) for c in _CHARS},
    **{name: sym for name, sym, _ in _NAMED},
}
_KEYSYM_VALUES: dict[str, int] = {
    **{c: ord(c) for c in _CHARS},  # Latin-1 keysyms equal the code point
    **{name: value for name, _, value in _NAMED},
}
_CANONICAL: frozenset[str] = frozenset(KEY_NAMES)


def normalize_key(name: str) -> str:
    """Return the canonical name of a key, or raise :class:`ActionError` naming it."""
    if not isinstance(name, str):
        raise ActionError(f"key must be a string, got {type(name).__name__} {name!r}")
    if name in ALIASES:  # the whitespace characters
        return ALIASES[name]
    if len(name) == 1:
        if name in _CANONICAL:
            return name
        raise ActionError(f"unknown key {name!r} (type non-ASCII text with write())")
    folded = name.lower().replace("_", "").replace("-", "").replace(" ", "")
    folded = ALIASES.get(folded, folded)
    if folded in _CANONICAL and len(folded) > 1:
        return folded
    if folded in _NO_KEYSYM:
        raise ActionError(f"key {name!r} has no X11 keysym and cannot be pressed")
    if "+" in name:
        raise ActionError(f"unknown key {name!r} (use hotkey() for key combinations)")
    raise ActionError(f"unknown key {name!r}")


def keysym_name(key: str) -> str:
    """X11 keysym name of a key, as XStringToKeysym/xdotool spell it (``'enter'`` -> ``'Return'``).

    python-xlib's ``XK.string_to_keysym`` spells the XF86 ones with an underscore
    (``'XF86_AudioMute'``); prefer :func:`keysym_value` there.
    """
    return _KEYSYM_NAMES[normalize_key(key)]


def keysym_value(key: str) -> int:
    """Numeric X11 keysym of a key, so a controller can find its keycode without a name lookup."""
    return _KEYSYM_VALUES[normalize_key(key)]


def is_modifier(key: str) -> bool:
    """True for shift/ctrl/alt/win and their left/right variants."""
    return normalize_key(key).removesuffix("left").removesuffix("right") in MODIFIERS
