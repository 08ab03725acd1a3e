"""What the control server controls: one X display, its programs and files, on the machine the
server runs on (a VM guest or someone's remote host).

It offers the same primitives a provider's sandbox does (spawn / poll / kill / exec / read, the
window list, the clipboard), under the same method names the tool adapters call on a provider,
so an adapter's state channel (ImageJ's ``-eval`` client, say) runs here unchanged.
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import threading
from pathlib import Path
from typing import Any

import numpy as np

from sciagent_gym import actions as A
from sciagent_gym.controller.clipboard import Clipboard
from sciagent_gym.controller.settle import SettleConfig, settle_canonical, wait_settled
from sciagent_gym.controller.windows import WindowInfo, WindowLister
from sciagent_gym.controller.x11 import X11Controller
from sciagent_gym.providers import sandbox_agent as procs
from sciagent_gym.providers.sandbox import CommandResult


def safe_members(tar: tarfile.TarFile) -> list[tarfile.TarInfo]:
    """The members of ``tar`` if all stay inside the target directory; else ValueError."""
    members = tar.getmembers()
    for m in members:
        parts = Path(m.name).parts
        if m.name.startswith("/") or ".." in parts:
            raise ValueError(f"tar member {m.name!r} points outside the target directory")
        if not (m.isfile() or m.isdir() or m.issym()):
            raise ValueError(f"tar member {m.name!r} is not a file, directory or symlink")
        if m.issym():
            target = Path(m.name).parent / m.linkname
            if m.linkname.startswith("/") or ".." in target.parts:
                raise ValueError(f"symlink {m.name!r} -> {m.linkname!r} leaves the directory")
        m.mode &= 0o777  # no setuid/setgid bits from a client
    return members


def _screen_size(display_name: str) -> tuple[int, int]:
    from sciagent_gym.controller.xconnect import open_display

    dpy = open_display(display_name)
    try:
        screen = dpy.screen()
        return int(screen.width_in_pixels), int(screen.height_in_pixels)
    finally:
        dpy.close()


class Machine:
    """The display, programs and files one control server exposes."""

    #: Adapters drive a machine through the same calls as a provider, and their channel
    #: waits (``ToolAdapter.run_client``) scale by this. A server's programs run on its
    #: own machine at full speed, so no slack.
    ready_scale: float = 1.0

    def __init__(self, display_name: str, home: str, work: str | None = None,
                 tmp: str = "/tmp") -> None:
        self.display_name = display_name
        self.width, self.height = _screen_size(display_name)
        self.home, self.work, self.tmp = home, work or f"{home}/work", tmp
        Path(self.work).mkdir(parents=True, exist_ok=True)
        # One X connection is not thread-safe; the HTTP server is threaded.
        self._x = threading.RLock()
        self._procs = threading.Lock()
        self.controller = X11Controller(display_name, self.width, self.height)
        self._windows = WindowLister(display_name)
        self.clipboard = Clipboard(display_name)

    @property
    def paths(self) -> dict[str, str]:
        return {"home": self.home, "work": self.work, "tmp": self.tmp}

    # -- screen and input -------------------------------------------------------------------
    def grab(self) -> np.ndarray:
        with self._x:
            return self.controller.grab()

    def settle(self, config: SettleConfig, canonical: bool = False) -> np.ndarray:
        if canonical:
            return settle_canonical(self.grab, self.expose_all, config)
        frame, _ = wait_settled(self.grab, config)
        return frame

    def execute(self, actions: list[A.Action]) -> None:
        with self._x:
            for action in actions:
                self.controller.execute(action)

    def release_all(self) -> None:
        with self._x:
            self.controller.release_all()

    def expose_all(self) -> None:
        with self._x:
            self.controller.expose_all()

    def pointer(self) -> tuple[int, int]:
        with self._x:
            return self.controller.pointer()

    # -- windows (the provider method names adapters call) -----------------------------------
    def windows(self) -> list[WindowInfo]:
        with self._x:
            return self._windows.list()

    def close_window(self, window_id: int) -> None:
        with self._x:
            self._windows.close_window(window_id)

    def activate_window(self, window_id: int) -> None:
        with self._x:
            self._windows.activate(window_id)

    def nudge_window(self, window_id: int) -> None:
        with self._x:
            self._windows.nudge(window_id)

    # -- programs ----------------------------------------------------------------------------
    def spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None,
              cwd: str | None = None, log: str | None = None) -> int:
        environ = {"DISPLAY": self.display_name, "HOME": self.home, **(env or {})}
        with self._procs:
            # No parent-death signal: it would fire when this request's thread ends. The
            # programs end with the server instead (close(), or the service's cgroup).
            return procs.op_spawn({"name": name, "argv": argv, "env": environ,
                                   "cwd": cwd or self.work, "log": log,
                                   "pdeathsig": False})["pid"]

    def poll(self, name: str) -> dict[str, Any]:
        with self._procs:
            return procs.op_poll({"name": name})

    def kill(self, name: str) -> None:
        with self._procs:
            procs.op_kill({"name": name})

    def kill_all(self) -> None:
        with self._procs:
            procs.shutdown()

    def run_command(self, command: str, timeout: float = 30.0,
                    max_output: int = 8192) -> CommandResult:
        reply = procs.op_exec({"shell": command, "cwd": self.work, "timeout": timeout,
                               "pdeathsig": False,
                               "env": {"DISPLAY": self.display_name, "HOME": self.home},
                               "max_output": max_output})
        return CommandResult(reply["returncode"], reply["output"], reply["timed_out"],
                             reply["truncated"])

    # Adapters call these on a provider; here they are the same thing.
    def spawn_in_sandbox(self, name: str, argv: list[str]) -> None:
        self.spawn(name, argv, log=f"{self.tmp}/{name}.log")

    def helper_running(self, name: str) -> bool:
        return bool(self.poll(name)["running"])

    def kill_in_sandbox(self, name: str) -> None:
        self.kill(name)

    # -- files -------------------------------------------------------------------------------
    def read_file(self, path: str, remove: bool = False, max_bytes: int = 1 << 20) -> str | None:
        reply = procs.op_read({"path": path, "remove": remove, "max_bytes": max_bytes})
        return reply["data"]

    @staticmethod
    def read_bytes(path: str) -> bytes:
        return Path(path).read_bytes()

    @staticmethod
    def write_bytes(path: str, data: bytes) -> None:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        part = target.with_name(target.name + ".part")
        part.write_bytes(data)
        os.replace(part, target)

    @staticmethod
    def get_tree(path: str) -> bytes:
        """A directory as an uncompressed tar (its entries relative to it)."""
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            root = Path(path)
            for child in sorted(root.iterdir()) if root.is_dir() else []:
                tar.add(child, arcname=child.name)
        return buf.getvalue()

    @staticmethod
    def put_tree(path: str, data: bytes, clear: bool = False) -> None:
        """Unpack a tar into a directory, optionally emptying it first. Only regular files,
        directories and symlinks that stay inside it are accepted (see :func:`safe_members`)."""
        root = Path(path)
        if clear and root.is_dir():
            for child in root.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
        root.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            members = safe_members(tar)
            # Python < 3.11.4 (Debian 12's guest Python) has no extraction filters.
            tar.extractall(root, members=members)

    def close(self) -> None:
        self.kill_all()
        for part in (self.clipboard, self._windows, self.controller):
            try:
                part.close()
            except Exception:
                pass
