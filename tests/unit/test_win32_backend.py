"""The Windows backend of the control server, checked where it can be: on Linux.

Nothing here calls Windows. These tests pin the parts that are pure (key table, coordinate
normalisation, INPUT structures and event lists, command builders, paths) and the process
table's bookkeeping, and that Win32Machine offers the same interface as the X11 Machine.
"""

from __future__ import annotations

import ast
import ctypes
import inspect
import io
import subprocess
import sys
import tarfile
import textwrap
import time
from pathlib import Path

import pytest

from sciagent_gym.actions import keys
from sciagent_gym.controller.base import InputController
from sciagent_gym.controller.clipboard import Clipboard
from sciagent_gym.controller.settle import SettleConfig
from sciagent_gym.controller.windows import WindowLister
from sciagent_gym.controller.x11 import X11Controller
from sciagent_gym.server import backend
from sciagent_gym.server.machine import Machine
from sciagent_gym.server.win32 import machine as win32_machine
from sciagent_gym.server.win32 import winapi
from sciagent_gym.server.win32.clipboard import Win32Clipboard
from sciagent_gym.server.win32.controller import SendInputController
from sciagent_gym.server.win32.inputs import (
    INPUT,
    INPUT_KEYBOARD,
    INPUT_MOUSE,
    KEYBDINPUT,
    KEYEVENTF_EXTENDEDKEY,
    KEYEVENTF_KEYUP,
    KEYEVENTF_UNICODE,
    MOUSEEVENTF_ABSOLUTE,
    MOUSEEVENTF_HWHEEL,
    MOUSEEVENTF_MOVE,
    MOUSEEVENTF_VIRTUALDESK,
    MOUSEEVENTF_WHEEL,
    MOUSEINPUT,
    absolute_coords,
    button_event,
    key_events,
    move_event,
    tap_events,
    text_events,
    wheel_events,
)
from sciagent_gym.server.win32.keys import (
    CHAR_VK,
    NAMED_VK,
    UNICODE_KEYS,
    VK_MENU,
    VK_RETURN,
    vk_for_key,
)
from sciagent_gym.server.win32.machine import Win32Machine, protocol_path
from sciagent_gym.server.win32.processes import (
    CREATE_NEW_PROCESS_GROUP,
    CREATE_NO_WINDOW,
    Win32ProcessTable,
    decode_output,
    shell_command_line,
    taskkill_argv,
)
from sciagent_gym.server.win32.winapi import PROTOTYPES
from sciagent_gym.server.win32.windows import (
    DWMWA_CLOAKED,
    DWMWA_EXTENDED_FRAME_BOUNDS,
    WM_CLOSE,
    WS_EX_TOOLWINDOW,
    Win32Windows,
    window_type,
)
from sciagent_gym.transfer.files import PathRefused, TreeLimits, windows_unsafe

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="checks the non-Windows side")

#: Key names with no virtual-key code: pressed as their character through KEYEVENTF_UNICODE.
UNICODE_ONLY = {"yen"}


# -- imports and construction ----------------------------------------------------------------
def test_module_imports_and_refuses_to_construct_off_windows(tmp_path):
    with pytest.raises(RuntimeError, match="Windows"):
        Win32Machine("win32", str(tmp_path))
    with pytest.raises(RuntimeError, match="Windows"):
        winapi.win_api()
    assert not (tmp_path / "work").exists()  # refused before touching anything


# -- same interface as Machine ---------------------------------------------------------------
def _public(cls: type) -> dict[str, object]:
    return {name: inspect.getattr_static(cls, name) for name in dir(cls)
            if not name.startswith("_")}


def _params(func) -> list[str]:
    return list(inspect.signature(func).parameters)


def _self_attributes(cls: type) -> set[str]:
    """Public attributes ``__init__`` assigns (``self.a = ...`` and ``self.a, self.b = ...``)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls.__init__)))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.value, ast.Name) and node.value.id == "self":
            found.add(node.attr)
    return {name for name in found if not name.startswith("_")}


def test_win32_machine_has_every_public_member_of_machine_with_the_same_parameters():
    ours = _public(Win32Machine)
    for name, member in _public(Machine).items():
        assert name in ours, name
        mine = ours[name]
        assert type(mine) is type(member), name  # staticmethod stays static, property stays
        if isinstance(member, property) or not callable(member):
            continue  # data attributes (e.g. ready_scale) are inherited, checked by type above
        func = member.__func__ if isinstance(member, staticmethod) else member
        mine = mine.__func__ if isinstance(mine, staticmethod) else mine
        assert _params(mine) == _params(func), name
    assert _params(Win32Machine.__init__) == _params(Machine.__init__)
    assert _self_attributes(Machine) <= _self_attributes(Win32Machine)


def test_expected_members_are_there():
    wanted = ("display_name width height home work tmp paths grab settle execute release_all "
              "expose_all pointer windows close_window activate_window nudge_window spawn poll "
              "kill kill_all run_command spawn_in_sandbox kill_in_sandbox "
              "read_file read_bytes write_bytes get_tree put_tree close clipboard").split()
    have = set(_public(Win32Machine)) | _self_attributes(Win32Machine)
    assert not [name for name in wanted if name not in have]


@pytest.mark.parametrize(("x11", "ours", "methods"), [
    (X11Controller, SendInputController,
     ["grab", "execute", "release_all", "expose_all", "pointer", "close"]),
    (WindowLister, Win32Windows, ["list", "close_window", "activate", "nudge", "close"]),
    (Clipboard, Win32Clipboard, ["get", "set", "close"]),
])
def test_parts_offer_what_machine_calls_on_them(x11, ours, methods):
    for name in methods:
        assert _params(getattr(ours, name)) == _params(getattr(x11, name)), name


#: What a backend of InputController may override: its primitives and the name-to-code hooks.
BACKEND_HOOKS = {"_button_code", "_key_code", "_tap_code", "_held_key", "_flush"}


@pytest.mark.parametrize("controller", [X11Controller, SendInputController])
def test_controllers_share_the_dispatch_and_override_only_primitives(controller):
    """Both controllers run InputController's actions, held keys and release_all; each gives
    every primitive, and overrides nothing else, taking the base's arguments (called
    positionally, so named for the backend: a keycode, a keysym, a key name)."""
    assert issubclass(controller, InputController)
    assert not controller.__abstractmethods__
    overridable = set(InputController.__abstractmethods__) | BACKEND_HOOKS
    for name, member in vars(InputController).items():
        if name.startswith("__") or not callable(member):
            continue
        mine = inspect.getattr_static(controller, name)
        if name not in overridable:
            assert mine is member, f"{controller.__name__} overrides shared {name}"
        else:
            kinds = [p.kind for p in inspect.signature(mine).parameters.values()]
            assert kinds == [p.kind for p in inspect.signature(member).parameters.values()], name


# -- keys ------------------------------------------------------------------------------------
def test_every_key_name_maps_to_a_virtual_key():
    missing = []
    for name in keys.KEY_NAMES:
        stroke = vk_for_key(name)
        if stroke is None:
            missing.append(name)
            continue
        vk, shift = stroke
        assert 1 <= vk <= 254, (name, vk)
        assert isinstance(shift, bool)
    assert set(missing) == UNICODE_ONLY == set(UNICODE_KEYS)
    # The tables hold nothing but canonical names.
    assert set(NAMED_VK) | set(UNICODE_KEYS) | set(CHAR_VK) \
        == set(keys.KEY_NAMES)


@pytest.mark.parametrize(("key", "stroke"), [
    ("a", (0x41, False)), ("A", (0x41, True)), ("z", (0x5A, False)), ("0", (0x30, False)),
    ("!", (0x31, True)), (")", (0x30, True)), ("-", (0xBD, False)), ("_", (0xBD, True)),
    ("/", (0xBF, False)), ("?", (0xBF, True)), ("\\", (0xDC, False)), ("|", (0xDC, True)),
    ("'", (0xDE, False)), ('"', (0xDE, True)), ("`", (0xC0, False)), ("~", (0xC0, True)),
    ("enter", (0x0D, False)), ("return", (0x0D, False)), ("\n", (0x0D, False)),
    ("esc", (0x1B, False)), ("pgdn", (0x22, False)), ("f1", (0x70, False)),
    ("f24", (0x87, False)), ("ctrl", (0x11, False)), ("cmd", (0x5B, False)),
    ("num7", (0x67, False)), ("divide", (0x6F, False)), ("volumeup", (0xAF, False)),
])
def test_key_examples(key, stroke):
    assert vk_for_key(key) == stroke


def test_tap_holds_shift_for_shifted_characters_and_hotkeys_do_not():
    def strokes(events):
        return [(e.ki.wVk, bool(e.ki.dwFlags & KEYEVENTF_KEYUP)) for e in events]

    assert strokes(tap_events("A")) == [(0x10, False), (0x41, False), (0x41, True),
                                        (0x10, True)]
    assert strokes(tap_events("a")) == [(0x41, False), (0x41, True)]
    assert strokes(key_events("A", up=False)) == [(0x41, False)]
    yen = tap_events("yen")
    assert [(e.ki.wScan, e.ki.dwFlags) for e in yen] == [
        (0xA5, KEYEVENTF_UNICODE), (0xA5, KEYEVENTF_UNICODE | KEYEVENTF_KEYUP)]


def test_extended_flag_on_navigation_keys_only():
    def extended(key):
        return bool(key_events(key, up=False)[0].ki.dwFlags & KEYEVENTF_EXTENDEDKEY)

    for key in ("up", "down", "left", "right", "home", "end", "pageup", "pagedown", "insert",
                "delete", "ctrlright", "altright", "win", "divide", "numlock", "printscreen"):
        assert extended(key), key
    for key in ("a", "enter", "num8", "shift", "ctrl", "alt", "f5", "escape", "space"):
        assert not extended(key), key


def test_scan_codes_are_passed_through():
    event = key_events("a", up=True, scan_of=lambda vk: vk + 1)[0]
    assert (event.ki.wVk, event.ki.wScan, event.ki.dwFlags) == (0x41, 0x42, KEYEVENTF_KEYUP)


# -- text and mouse events -------------------------------------------------------------------
def test_text_is_unicode_packets_except_newline_tab_backspace():
    groups = text_events("a\n\U0001F600")
    assert [(e.type, e.ki.wVk, e.ki.wScan, e.ki.dwFlags) for e in groups[0]] == [
        (INPUT_KEYBOARD, 0, ord("a"), KEYEVENTF_UNICODE),
        (INPUT_KEYBOARD, 0, ord("a"), KEYEVENTF_UNICODE | KEYEVENTF_KEYUP)]
    assert [(e.ki.wVk, e.ki.dwFlags) for e in groups[1]] == [
        (VK_RETURN, 0), (VK_RETURN, KEYEVENTF_KEYUP)]
    # Outside the BMP: a surrogate pair, each unit pressed and released.
    assert [e.ki.wScan for e in groups[2]] == [0xD83D, 0xD83D, 0xDE00, 0xDE00]
    assert len(groups) == 3


def test_wheel_signs_and_buttons():
    events = wheel_events(dy=2, dx=-1)
    assert [(e.type, e.mi.dwFlags, e.mi.mouseData) for e in events] == [
        (INPUT_MOUSE, MOUSEEVENTF_WHEEL, 120),
        (INPUT_MOUSE, MOUSEEVENTF_WHEEL, 120),
        (INPUT_MOUSE, MOUSEEVENTF_HWHEEL, 0xFFFFFFFF - 119)]  # -120 as a DWORD
    assert wheel_events(dy=-1, dx=0)[0].mi.mouseData == (-120) & 0xFFFFFFFF
    assert button_event("right", True).mi.dwFlags == 0x0008
    assert button_event("middle", False).mi.dwFlags == 0x0040


def test_move_event_is_absolute_on_the_virtual_desktop():
    event = move_event(1279, 799, (0, 0, 1280, 800))
    assert event.mi.dwFlags == 0x0001 | 0x8000 | 0x4000
    assert (event.mi.dx, event.mi.dy) == absolute_coords(1279, 799, 0, 0, 1280, 800)


@pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8, reason="64-bit layout")
def test_input_structures_have_the_windows_x64_layout():
    assert ctypes.sizeof(MOUSEINPUT) == 32
    assert ctypes.sizeof(KEYBDINPUT) == 24
    assert ctypes.sizeof(INPUT) == 40  # sizeof(INPUT) passed to SendInput on x64
    assert INPUT.u.offset == 8


# -- coordinates -----------------------------------------------------------------------------
def test_absolute_corners():
    assert absolute_coords(0, 0, 0, 0, 1280, 800) == (0, 0)
    nx, ny = absolute_coords(1279, 799, 0, 0, 1280, 800)
    assert 65000 < nx <= 65535 and 65000 < ny <= 65535
    assert absolute_coords(5000, -10, 0, 0, 1280, 800) == (65535, 0)  # clamped


@pytest.mark.parametrize("size", [640, 800, 1024, 1280, 1366, 1920, 2560, 3840])
def test_every_pixel_maps_back_to_itself(size):
    """Windows maps n to n * size / 65536 (floored; rounding gives the same pixel too)."""
    for x in range(size):
        n, _ = absolute_coords(x, 0, 0, 0, size, size)
        assert 0 <= n <= 65535
        assert n * size // 65536 == x
        assert round(n * size / 65536) == x


def test_virtual_screen_with_a_monitor_left_of_the_primary():
    left, width = -1920, 1920 + 1280  # our screen (the primary) starts at virtual x 1920
    n, _ = absolute_coords(0, 0, left, 0, width, 800)
    assert left + n * width // 65536 == 0
    n, _ = absolute_coords(1279, 0, left, 0, width, 800)
    assert left + n * width // 65536 == 1279


# -- programs --------------------------------------------------------------------------------
def test_taskkill_argv():
    assert taskkill_argv(1234, system_root=r"C:\Windows") == [
        r"C:\Windows\System32\taskkill.exe", "/PID", "1234", "/T", "/F"]
    assert taskkill_argv(7, system_root=r"D:\WINNT")[0] == r"D:\WINNT\System32\taskkill.exe"


def test_shell_command_line_keeps_inner_quotes_verbatim():
    cmd = r"C:\Windows\System32\cmd.exe"
    assert shell_command_line('echo "a b" & dir', comspec=cmd) == \
        r'"C:\Windows\System32\cmd.exe" /d /s /c "echo "a b" & dir"'


def test_creation_flags():
    assert CREATE_NEW_PROCESS_GROUP == 0x00000200  # winbase.h
    assert CREATE_NO_WINDOW == 0x08000000


def test_decode_output():
    assert decode_output("héllo".encode()) == "héllo"
    assert decode_output("é!".encode()[1:]) == "!"  # a tail cut inside a character
    assert decode_output(b"caf\xe9") == "caf\xe9"  # not UTF-8: the legacy code page


def _wait(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


def _posix_kill(proc: subprocess.Popen) -> None:
    proc.kill()
    proc.wait(5)


@pytest.fixture
def table():
    t = Win32ProcessTable(creationflags=0, kill_tree=_posix_kill)
    yield t
    t.kill_all()


def test_process_table_bookkeeping(table, tmp_path):
    log = tmp_path / "app.log"
    pid = table.spawn("app", ["sh", "-c", "echo started; exec sleep 30"], {"X": "1"},
                      str(tmp_path), str(log))
    assert pid > 0 and table.poll("app") == {"running": True, "returncode": None}
    _wait(lambda: "started" in log.read_text())
    second = table.spawn("app", ["sleep", "30"], None, None, None)  # replaces the first
    assert second != pid
    assert table.poll("app")["running"]
    table.spawn("helper", ["sh", "-c", "exit 3"], None, None, None)
    _wait(lambda: not table.poll("helper")["running"])
    assert table.poll("helper") == {"running": False, "returncode": 3}
    table.kill("app")
    assert table.poll("app") == {"running": False, "returncode": None}
    table.kill("never-started")


def test_process_table_run(table, tmp_path):
    done = table.run(["sh", "-c", "pwd; echo $SCI_X; exit 2"], str(tmp_path), {"SCI_X": "y"},
                     timeout=10, max_output=8192)
    assert (done.returncode, done.timed_out, done.truncated) == (2, False, False)
    assert done.output == f"{tmp_path}\ny\n"
    long = table.run(["sh", "-c", "seq 1 2000"], None, None, timeout=10, max_output=10)
    assert long.truncated and long.output == "1999\n2000\n"
    # exec: the killer here ends one process; taskkill /T ends the tree on Windows.
    slow = table.run(["sh", "-c", "echo begun; exec sleep 30"], None, None, timeout=0.5,
                     max_output=100)
    assert slow.timed_out and slow.output == "begun\n"


# -- windows, paths, trees -------------------------------------------------------------------
def test_window_type():
    assert window_type("#32770", False, 0) == "dialog"
    assert window_type("SunAwtDialog", True, 0) == "dialog"
    assert window_type("Chrome_WidgetWin_1", False, WS_EX_TOOLWINDOW) == "utility"
    assert window_type("OriginPro", False, 0) == "normal"


def test_protocol_path():
    assert protocol_path(r"C:\sciagent", "C:") == "/sciagent"
    assert protocol_path("c:/sciagent/work/", "C:") == "/sciagent/work"
    assert protocol_path("/sciagent", "D:") == "/sciagent"
    assert protocol_path("\\sciagent\\tmp", "C:") == "/sciagent/tmp"
    for bad, drive in (("sciagent", "C:"), ("C:sciagent", "C:"), (r"D:\sciagent", "C:"),
                       (r"\\host\share\sciagent", "C:")):
        with pytest.raises(ValueError):
            protocol_path(bad, drive)


def test_windows_unsafe_names():
    for name in ("C:evil", "C:/evil", "\\evil", "a\\..\\..\\evil", "..\\evil", "/evil"):
        assert windows_unsafe(name), name
    for name in ("a.txt", "sub/b.tif", "sub\\c", "notes..txt"):
        assert not windows_unsafe(name), name


def _tar(*names: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name in names:
            info = tarfile.TarInfo(name)
            info.size = 2
            tar.addfile(info, io.BytesIO(b"ok"))
    return buf.getvalue()


def test_put_tree_refuses_windows_escapes_and_unpacks_the_rest(fake, tmp_path):
    machine = Win32Machine("win32", str(tmp_path / "home"))
    work, limits = Path(machine.work), TreeLimits()
    for bad in ("C:evil.txt", "a\\..\\..\\evil.txt", "\\evil.txt"):
        with pytest.raises(PathRefused, match="outside"):
            machine.put_tree(machine.work, io.BytesIO(_tar("fine.txt", bad)), limits)
        assert not [p for p in work.iterdir() if p.name != "fine.txt"]
    machine.put_tree(f"{machine.work}/t", io.BytesIO(_tar("fine.txt", "sub/b.txt")), limits)
    assert (work / "t" / "sub" / "b.txt").read_bytes() == b"ok"
    for outside in (str(tmp_path), f"{machine.home}/../x", "C:/x", f"{machine.work}\\..\\.."):
        with pytest.raises(PathRefused):
            machine.put_tree(outside, io.BytesIO(_tar("fine.txt")), limits)


def test_prototypes_name_known_dlls_once():
    names = [name for _, name, _, _ in PROTOTYPES]
    assert len(names) == len(set(names))
    assert {dll for dll, _, _, _ in PROTOTYPES} == {"user32", "kernel32", "dwmapi",
                                                    "shcore"}


# -- backend choice --------------------------------------------------------------------------
class _Fake:
    def __init__(self, *args):
        self.args = args


def test_make_machine_picks_x11_off_windows(monkeypatch):
    monkeypatch.setattr(backend, "Machine", _Fake)
    machine = backend.make_machine(":5", "/home/u", None)
    assert isinstance(machine, _Fake) and machine.args == (":5", "/home/u", None, None)
    with pytest.raises(ValueError, match="display"):
        backend.make_machine(None, "/home/u", None)


def test_make_machine_picks_win32_on_windows(monkeypatch):
    monkeypatch.setattr(backend.sys, "platform", "win32")
    monkeypatch.setattr(win32_machine, "Win32Machine", _Fake)
    machine = backend.make_machine(None, "C:/sciagent", "C:/sciagent/work")
    assert isinstance(machine, _Fake) and machine.args == ("win32", "C:/sciagent",
                                                          "C:/sciagent/work", None)


# -- the glue, against a stand-in for the Win32 API ------------------------------------------
class FakeWin32:
    """Answers like a 1280x800 desktop with a few top-level windows and records what it is
    asked; stands in for :func:`winapi.win_api` so the classes' own logic runs on Linux."""

    WNDENUMPROC = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_ssize_t)
    SetProcessDpiAwareness = None  # as on a Windows without shcore

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.foreground = 0x100
        self.refusals = 0  # SetForegroundWindow calls to refuse (the foreground lock)
        # hwnd: title, class, frame rect, and optionally owner, visible, cloaked, exstyle
        self.table: dict[int, dict] = {
            0x100: {"title": "OriginPro 2024", "cls": "Origin", "rect": (0, 0, 1280, 760)},
            0x200: {"title": "Open", "cls": "#32770", "rect": (100, 100, 500, 400),
                    "owner": 0x100},
            0x300: {"title": "", "cls": "Shell_TrayWnd", "rect": (0, 760, 1280, 800)},
            0x400: {"title": "Settings", "cls": "ApplicationFrameWindow", "cloaked": 1,
                    "rect": (0, 0, 800, 600)},
            0x500: {"title": "Hidden", "cls": "Hidden", "visible": False, "rect": (0, 0, 9, 9)},
            0x600: {"title": "Program Manager", "cls": "Progman", "rect": (0, 0, 1280, 800)},
            0x700: {"title": "Palette", "cls": "Tool", "rect": (5, 5, 50, 50),
                    "exstyle": WS_EX_TOOLWINDOW},
        }
        self.disabled = {0x100}  # the modal "Open" dialog disables its owner

    def last_error(self) -> int:
        return 0

    def SetProcessDpiAwarenessContext(self, context):
        self.calls.append(("dpi", context))
        return 1

    def SetProcessDPIAware(self):
        return 1

    def GetSystemMetrics(self, index):
        return {0: 1280, 1: 800, 76: 0, 77: 0, 78: 1280, 79: 800}[index]

    def MapVirtualKeyW(self, vk, kind):
        return vk + 0x100

    def GetCursorPos(self, ref):
        ref._obj.x, ref._obj.y = 10, 20
        return 1

    def RedrawWindow(self, *args):
        self.calls.append(("redraw", *args))
        return 1

    def EnumWindows(self, callback, lparam):
        for hwnd in self.table:
            if not callback(hwnd, lparam):
                break
        return 1

    def IsWindowVisible(self, hwnd):
        return self.table[hwnd].get("visible", True)

    def DwmGetWindowAttribute(self, hwnd, attribute, ref, size):
        if attribute == DWMWA_CLOAKED:
            ref._obj.value = self.table[hwnd].get("cloaked", 0)
        else:
            rect = ref._obj
            rect.left, rect.top, rect.right, rect.bottom = self.table[hwnd]["rect"]
        return 0

    def GetWindowTextLengthW(self, hwnd):
        return len(self.table[hwnd]["title"])

    def GetWindowTextW(self, hwnd, buf, size):
        buf.value = self.table[hwnd]["title"][:size - 1]
        return len(buf.value)

    def GetClassNameW(self, hwnd, buf, size):
        buf.value = self.table[hwnd]["cls"]
        return len(buf.value)

    def GetWindowRect(self, hwnd, ref):
        return self.DwmGetWindowAttribute(hwnd, DWMWA_EXTENDED_FRAME_BOUNDS, ref, 16) == 0

    def GetWindow(self, hwnd, relation):
        return self.table[hwnd].get("owner")

    def IsWindowEnabled(self, hwnd):
        return hwnd not in self.disabled

    def GetWindowLongW(self, hwnd, index):
        return self.table[hwnd].get("exstyle", 0)

    def GetForegroundWindow(self):
        return self.foreground

    def SetForegroundWindow(self, hwnd):
        self.calls.append(("foreground", hwnd))
        if self.refusals:
            self.refusals -= 1
            return 0
        self.foreground = hwnd
        return 1

    def __getattr__(self, name):
        """Calls without an answer to model (PostMessageW, ShowWindow, ...): recorded."""
        def call(*args):
            self.calls.append((name, *args))
            return 0 if name == "IsIconic" else 1
        return call


class FakeMSS:
    """mss.MSS on a 1280x800 screen whose pixels are BGRA (1, 2, 3, 255)."""

    def grab(self, monitor):
        pixel = bytes((1, 2, 3, 255))
        return type("Shot", (), {"raw": pixel * (monitor["width"] * monitor["height"])})

    def close(self):
        pass


@pytest.fixture
def fake(monkeypatch):
    import mss

    api = FakeWin32()
    sent: list[list] = []
    monkeypatch.setattr(winapi, "require_windows", lambda: None)
    monkeypatch.setattr(winapi, "win_api", lambda: api)
    monkeypatch.setattr(winapi, "send_inputs", lambda events: sent.append(list(events)))
    monkeypatch.setattr(mss, "MSS", FakeMSS)
    api.sent = sent
    return api


def _describe(event) -> tuple:
    if event.type == INPUT_MOUSE:
        return ("mouse", event.mi.dwFlags, event.mi.dx, event.mi.dy, event.mi.mouseData)
    return ("key", event.ki.wVk, event.ki.wScan, event.ki.dwFlags)


def test_controller_performs_every_gui_action(fake):
    from sciagent_gym.actions import types as A

    ctl = SendInputController(1280, 800)
    flat = lambda: [_describe(e) for group in fake.sent for e in group]  # noqa: E731
    move = MOUSEEVENTF_MOVE | MOUSEEVENTF_ABSOLUTE | MOUSEEVENTF_VIRTUALDESK
    ctl.execute(A.Click(640, 400, "right", clicks=2))
    nx, ny = absolute_coords(640, 400, 0, 0, 1280, 800)
    assert flat() == [("mouse", move, nx, ny, 0), ("mouse", 0x08, 0, 0, 0),
                      ("mouse", 0x10, 0, 0, 0), ("mouse", 0x08, 0, 0, 0),
                      ("mouse", 0x10, 0, 0, 0)]
    fake.sent.clear()
    ctl.execute(A.Hotkey(("ctrl", "c")))
    assert flat() == [("key", 0x11, 0x111, 0), ("key", 0x43, 0x143, 0),
                      ("key", 0x43, 0x143, 2), ("key", 0x11, 0x111, 2)]
    fake.sent.clear()
    ctl.execute(A.Drag(100, 50, start=(0, 0)))  # starts where GetCursorPos says: (10, 20)
    events = flat()
    assert events[1] == ("mouse", 0x02, 0, 0, 0) and events[-1] == ("mouse", 0x04, 0, 0, 0)
    assert len(events) == 1 + 1 + 8 + 1
    fake.sent.clear()
    ctl.execute(A.Scroll(dy=-2, x=5, y=5))
    assert [e[1] for e in flat()] == [move, MOUSEEVENTF_WHEEL, MOUSEEVENTF_WHEEL]
    fake.sent.clear()
    ctl.execute(A.TypeText("hi\n"))
    assert len(fake.sent) == 3  # one group per character
    ctl.execute(A.Press("pgdn", presses=2))
    ctl.execute(A.KeyDown("shift"))
    ctl.execute(A.MouseDown("left", 3, 4))
    ctl.execute(A.Move(1, 1))
    ctl.execute(A.MouseUp("middle"))
    fake.sent.clear()
    ctl.release_all()  # shift and the left button were still held
    assert sorted(flat()) == [("key", 0x10, 0x110, 2), ("mouse", 0x04, 0, 0, 0)]
    with pytest.raises(TypeError):
        ctl.execute(A.Wait(1))
    assert ctl.pointer() == (10, 20)
    ctl.expose_all()
    assert fake.calls[-1][0] == "redraw"
    frame = ctl.grab()
    assert frame.shape == (800, 1280, 3) and tuple(frame[0, 0]) == (3, 2, 1)  # BGRA -> RGB


def test_window_list_filters_and_describes(fake):
    windows = {w.title: w for w in Win32Windows().list()}
    assert list(windows) == ["OriginPro 2024", "Open", "Palette"]  # no shell, cloaked, hidden
    main, dialog, palette = windows.values()
    assert (main.active, main.modal, main.window_type, main.wm_class) == (
        True, False, "normal", "Origin")
    assert (dialog.modal, dialog.window_type, dialog.x, dialog.width, dialog.height) == (
        True, "dialog", 100, 400, 300)
    assert palette.window_type == "utility" and not palette.active


def test_activation_falls_back_to_input_tricks(fake):
    windows = Win32Windows()
    windows.activate(0x200)  # allowed at once: no injected input
    assert fake.foreground == 0x200 and fake.sent == []
    fake.refusals = 2
    windows.activate(0x100)
    assert fake.foreground == 0x100
    assert [[_describe(e) for e in group] for group in fake.sent] == [
        [("mouse", MOUSEEVENTF_MOVE, 0, 0, 0)],
        [("key", VK_MENU, 0, 0)], [("key", VK_MENU, 0, KEYEVENTF_KEYUP)]]
    windows.close_window(0x200)
    windows.nudge(0x100)
    names = [call[0] for call in fake.calls]
    assert ("PostMessageW", 0x200, WM_CLOSE, 0, 0) in fake.calls
    assert names.count("SetWindowPos") == 2


def test_control_server_serves_a_win32_machine(fake, tmp_path, monkeypatch):
    """The HTTP routes against Win32Machine (its Windows calls faked, programs run by a
    POSIX-flavoured table): the server and the machine fit together."""
    import threading

    from sciagent_gym.actions import types as A
    from sciagent_gym.providers.remote.client import ControlClient
    from sciagent_gym.server.app import ControlServer

    machine = Win32Machine("win32", str(tmp_path / "home"))
    machine._table = Win32ProcessTable(creationflags=0, kill_tree=_posix_kill)
    token = "t" * 32
    server = ControlServer(("127.0.0.1", 0), machine, token)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    client = ControlClient(f"http://127.0.0.1:{server.server_address[1]}", token, timeout=10)
    try:
        health = client.health()
        home = (tmp_path / "home").as_posix()
        assert (health["display"], health["width"], health["height"]) == ("win32", 1280, 800)
        assert health["paths"] == {"home": home, "work": f"{home}/work",
                                   "tmp": f"{home}/tmp", "drive": ""}
        assert [w.title for w in client.windows()] == ["OriginPro 2024", "Open", "Palette"]
        client.window_op("activate", 0x100)
        assert fake.foreground == 0x100
        client.execute([A.Click(1, 2), A.TypeText("x")])
        assert len(fake.sent) == 4
        assert client.screen().shape == (800, 1280, 3)
        assert client.pointer() == (10, 20)
        client.launch("app", ["sleep", "30"], cwd=f"{home}/work", log=f"{home}/tmp/app.log")
        assert client.poll("app")["running"]
        client.kill("app")
        assert not client.poll("app")["running"]
        assert client.settle(SettleConfig(quiet=0.02, cap=1.0)).shape == (800, 1280, 3)
    finally:
        server.shutdown()
        server.server_close()
        machine.kill_all()
