"""The Win32 functions the backend calls, bound through ctypes on first use.

:func:`win_api` loads them from user32, kernel32, dwmapi and shcore with explicit prototypes
(and raises RuntimeError off Windows, so the package imports anywhere); :func:`send_inputs`
injects INPUT events. Callers reach both through this module (``winapi.win_api()``), which is
where tests put their stand-ins.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from types import SimpleNamespace
from typing import Any

from sciagent_gym.server.win32.inputs import INPUT

_HWND = _HANDLE = ctypes.c_void_p
_BOOL = _INT = _LONG = ctypes.c_int32
_UINT = _DWORD = ctypes.c_uint32
_WPARAM, _LPARAM = ctypes.c_size_t, ctypes.c_ssize_t


class POINT(ctypes.Structure):
    _fields_ = [("x", ctypes.c_int32), ("y", ctypes.c_int32)]


class RECT(ctypes.Structure):
    _fields_ = [("left", ctypes.c_int32), ("top", ctypes.c_int32),
                ("right", ctypes.c_int32), ("bottom", ctypes.c_int32)]


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
