"""Programs on Windows: the table of programs started by name (killed as whole trees with
``taskkill /T``, as ``sandbox_agent`` keeps them on POSIX) and commands run through cmd.exe."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import PureWindowsPath
from typing import Any

from sciagent_gym.transfer.command import CommandResult

CREATE_NEW_PROCESS_GROUP = 0x00000200
CREATE_NO_WINDOW = 0x08000000


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
