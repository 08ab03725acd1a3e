"""The Windows clipboard as Unicode text."""

from __future__ import annotations

import contextlib
import ctypes
import time
from collections.abc import Iterator
from types import SimpleNamespace

from sciagent_gym.server.win32 import winapi

CF_UNICODETEXT = 13
GMEM_MOVEABLE = 0x0002
HWND_MESSAGE = -3
MAX_CLIPBOARD = 1_000_000


class Win32Clipboard:
    """The Windows clipboard as Unicode text (the X11 Clipboard's interface)."""

    def __init__(self) -> None:
        self._api = winapi.win_api()

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
