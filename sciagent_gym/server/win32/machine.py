"""The control server's machine on a Windows desktop: :class:`Win32Machine`.

It is the X11 :class:`~sciagent_gym.server.machine.Machine` with its display-specific parts
swapped for the modules of this package (see its ``__init__``). Constructing it anywhere but on
Windows raises RuntimeError.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path, PureWindowsPath
from types import SimpleNamespace
from typing import Any

from sciagent_gym.server.machine import Machine
from sciagent_gym.server.win32 import winapi
from sciagent_gym.server.win32.clipboard import Win32Clipboard
from sciagent_gym.server.win32.controller import SendInputController
from sciagent_gym.server.win32.processes import Win32ProcessTable, shell_command_line
from sciagent_gym.server.win32.windows import Win32Windows
from sciagent_gym.transfer.command import CommandResult
from sciagent_gym.transfer.files import Confined

SM_CXSCREEN, SM_CYSCREEN = 0, 1
DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2 = -4


def _dpi_aware(api: SimpleNamespace) -> None:
    """Work in physical pixels (screen size, SendInput, BitBlt) whatever the scaling."""
    if api.SetProcessDpiAwarenessContext is not None and api.SetProcessDpiAwarenessContext(
            DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2):
        return
    if api.SetProcessDpiAwareness is not None and api.SetProcessDpiAwareness(2) == 0:
        return
    api.SetProcessDPIAware()


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


class Win32Machine(Machine):
    """The interactive Windows desktop, its programs and files, behind one control server.

    Paths are reported from the root of the server's current drive (``/sciagent/work``), so
    the server must start on the drive that holds ``home``.
    """

    def __init__(self, display_name: str, home: str, work: str | None = None,
                 tmp: str | None = None) -> None:
        winapi.require_windows()
        self.drive = drive = os.path.splitdrive(os.getcwd())[0]
        api = winapi.win_api()
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
