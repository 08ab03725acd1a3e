"""The window list and window operations of the interactive desktop: top-level windows as
WindowInfo, closing, activation (with the foreground-lock workarounds) and re-layout."""

from __future__ import annotations

import ctypes
from collections.abc import Callable

from sciagent_gym.controller.windows import WindowInfo
from sciagent_gym.server.win32 import winapi
from sciagent_gym.server.win32.inputs import MOUSEEVENTF_MOVE, key_event, mouse_event
from sciagent_gym.server.win32.keys import VK_MENU

WM_CLOSE = 0x0010
GW_OWNER = 4
GWL_EXSTYLE = -20
WS_EX_TOOLWINDOW = 0x00000080
SW_RESTORE = 9
SWP_NOMOVE, SWP_NOZORDER, SWP_NOACTIVATE = 0x0002, 0x0004, 0x0010
DWMWA_EXTENDED_FRAME_BOUNDS, DWMWA_CLOAKED = 9, 14

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
        self._api = winapi.win_api()

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
        # the frame as drawn; GetWindowRect adds Windows 10's invisible borders
        rect = winapi.RECT()
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
            winapi.send_inputs([mouse_event(MOUSEEVENTF_MOVE)])
            if not self._foreground(window_id):
                winapi.send_inputs([key_event(VK_MENU, False)])
                try:
                    self._foreground(window_id)
                finally:
                    winapi.send_inputs([key_event(VK_MENU, True)])
        self._api.BringWindowToTop(window_id)

    def _foreground(self, hwnd: int) -> bool:
        self._api.SetForegroundWindow(hwnd)
        return self._api.GetForegroundWindow() == hwnd

    def nudge(self, window_id: int) -> None:
        """Resize a window by one pixel and back, so its toolkit lays it out again."""
        rect = winapi.RECT()
        self._api.GetWindowRect(window_id, ctypes.byref(rect))
        width, height = rect.right - rect.left, rect.bottom - rect.top
        flags = SWP_NOMOVE | SWP_NOZORDER | SWP_NOACTIVATE
        for w in (width + 1, width):
            self._api.SetWindowPos(window_id, None, 0, 0, w, height, flags)

    def close(self) -> None:
        pass
