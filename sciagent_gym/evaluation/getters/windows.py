"""Getters over the top-level windows listed at the end of the episode (``state.windows``).

Each window is a ``WindowInfo.to_dict()``: id, title, wm_class, x, y, width, height, active,
modal. The list is collected once by the env, so these getters are cheap and offline.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .registry import GetterError, register

if TYPE_CHECKING:
    from ..state import FinalState

WINDOW_FIELDS = ("id", "title", "wm_class", "x", "y", "width", "height", "active", "modal")


def _windows(state: FinalState) -> list[Mapping[str, Any]]:
    wins = state.windows
    if wins is None:
        raise GetterError("window list was not collected")
    bad = [w for w in wins if not isinstance(w, Mapping)]
    if bad:
        raise GetterError(f"window list holds a non-object entry: {bad[0]!r}")
    return list(wins)


def _title(w: Mapping[str, Any]) -> str:
    return str(w.get("title") or "")


def _compile(pattern: Any, what: str) -> re.Pattern[str]:
    if not isinstance(pattern, str):
        raise GetterError(f"{what} must be a string, got {pattern!r}")
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise GetterError(f"{what} {pattern!r} is not a valid regular expression: {exc}") from None


@register("window_titles")
def window_titles(state: FinalState) -> list[str]:
    """Titles of all top-level windows, in the window manager's stacking-list order."""
    return [_title(w) for w in _windows(state)]


@register("window_exists")
def window_exists(
    state: FinalState,
    title: str | None = None,
    title_regex: str | None = None,
    wm_class: str | None = None,
) -> bool:
    """True if one window matches every given filter (none given: any window at all).

    ``title`` is an exact match, ``title_regex`` a re.search, ``wm_class`` a case-insensitive
    match of the class name (Java apps report changing titles but stable classes).
    """
    rx = _compile(title_regex, "title_regex") if title_regex is not None else None
    cls = str(wm_class).casefold() if wm_class is not None else None
    for w in _windows(state):
        t = _title(w)
        if title is not None and t != title:
            continue
        if rx is not None and not rx.search(t):
            continue
        if cls is not None and str(w.get("wm_class") or "").casefold() != cls:
            continue
        return True
    return False


@register("modal_dialog")
def modal_dialog(state: FinalState) -> bool:
    """True if a dialog is open: a window in the modal state, or of EWMH type "dialog".

    Java and GTK file/option dialogs set the dialog window type but often not the modal state
    (seen with ImageJ's File > Open under openbox), so both count.
    """
    return any(bool(w.get("modal")) or w.get("window_type") == "dialog"
               for w in _windows(state))


@register("focused_window")
def focused_window(state: FinalState, field: str = "title") -> Any:
    """A field (title, wm_class, ...) of the active window; None when no window has focus."""
    if field not in WINDOW_FIELDS:
        raise GetterError(f"unknown window field {field!r} (known: {', '.join(WINDOW_FIELDS)})")
    for w in _windows(state):
        if w.get("active"):
            return _title(w) if field == "title" else w.get(field)
    return None


@register("window_count")
def window_count(state: FinalState, title_regex: str | None = None) -> int:
    """How many windows there are (whose title matches ``title_regex``, if given)."""
    wins = _windows(state)
    if title_regex is None:
        return len(wins)
    rx = _compile(title_regex, "title_regex")
    return sum(1 for w in wins if rx.search(_title(w)))
