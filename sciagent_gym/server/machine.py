"""What the control server controls: one X display, its programs and files, on the machine the
server runs on (a VM guest or someone's remote host).

It offers the same primitives a provider's sandbox does (spawn / poll / kill / exec / read, the
window list, the clipboard), under the same method names the tool adapters call on a provider,
so an adapter's state channel (ImageJ's ``-eval`` client, say) runs here unchanged.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from sciagent_gym.actions import types as A
from sciagent_gym.controller.clipboard import Clipboard
from sciagent_gym.controller.damage import XDamageSource
from sciagent_gym.controller.settle import SettleConfig, settle_canonical, wait_settled
from sciagent_gym.controller.windows import WindowInfo, WindowLister
from sciagent_gym.controller.x11 import X11Controller
from sciagent_gym.isolation import sandbox_agent as procs
from sciagent_gym.server.zones import UserZones
from sciagent_gym.transfer.command import CommandResult
from sciagent_gym.transfer.files import Confined, TreeLimits


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
    #: What a provider's ``launch_id`` is: programs here are launched by the host's provider.
    launch_id: str = ""

    def __init__(self, display_name: str, home: str, work: str | None = None,
                 tmp: str | None = None) -> None:
        self.display_name = display_name
        self.width, self.height = _screen_size(display_name)
        self._init_files(home, work, tmp)
        # One X connection is not thread-safe; the HTTP server is threaded.
        self._x = threading.RLock()
        self.controller = X11Controller(display_name, self.width, self.height)
        self._windows = WindowLister(display_name)
        self.clipboard = Clipboard(display_name)

    def _init_files(self, home: str, work: str | None, tmp: str | None) -> None:
        """Directories, file confinement and programs: the part of a machine without X."""
        self.home = os.path.abspath(home)
        self.work = os.path.abspath(work or f"{self.home}/work")
        # Answer files and logs: a private directory, not the shared /tmp.
        self.tmp = os.path.abspath(tmp or f"{self.home}/tmp")
        Path(self.work).mkdir(parents=True, exist_ok=True)
        Path(self.tmp).mkdir(mode=0o700, parents=True, exist_ok=True)
        #: Every file route is confined to these directories.
        self.files = Confined([self.home, self.work, self.tmp])
        #: Set by :meth:`use_zones`: programs and commands then run as two other users.
        self.zones: UserZones | None = None
        self._procs = threading.Lock()

    @property
    def paths(self) -> dict[str, str]:
        return {"home": self.home, "work": self.work, "tmp": self.tmp}

    @property
    def cli_isolated(self) -> bool:
        """Whether commands run in a zone of their own (told to clients in ``/health``)."""
        return self.zones is not None

    def use_zones(self, zones: UserZones) -> None:
        """Run programs as ``zones.program`` and commands as ``zones.agent`` from now on.

        The work directory goes to the program user and the group both share (setgid, so
        what either writes stays shared); the private tmp and the rest of the home become
        the program user's alone (the home itself only traversable, to reach work)."""
        prog, group = zones.program.uid, zones.program.gid
        os.chown(self.home, prog, group)
        os.chmod(self.home, 0o711)
        os.chown(self.work, prog, zones.shared_gid)
        os.chmod(self.work, 0o2770)
        os.chown(self.tmp, prog, group)
        os.chmod(self.tmp, 0o700)
        self.zones = zones
        self.files = Confined([self.home, self.work, self.tmp], owner=(prog, -1))
        self._seal_home()

    def _seal_home(self) -> None:
        """Nothing in the program's home but work is open to other users (the agent)."""
        if self.zones is None:
            return
        keep = {os.path.basename(self.work), os.path.basename(self.tmp)}
        with os.scandir(self.home) as entries:
            for entry in entries:
                if entry.name not in keep and not entry.is_symlink():
                    os.chmod(entry.path, os.stat(entry.path).st_mode & 0o700)

    # -- screen and input -------------------------------------------------------------------
    def grab(self) -> np.ndarray:
        with self._x:
            return self.controller.grab()

    def settle(self, config: SettleConfig, canonical: bool = False) -> np.ndarray:
        damage = None
        if config.mode == "damage":  # its own connection, opened on first use, kept
            if getattr(self, "_damage", None) is None:
                self._damage = XDamageSource.open(self.display_name)
            damage = self._damage
        if canonical:
            return settle_canonical(self.grab, self.expose_all, config, damage=damage)
        frame, _ = wait_settled(self.grab, config, damage=damage)
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
        """Start a program (as the program user with zones); ``cwd`` and ``log`` must lie in
        the served directories."""
        environ = {"DISPLAY": self.display_name, "HOME": self.home, **(env or {})}
        cwd = self.files.check(cwd) if cwd else self.work
        if log:
            self.files.check(log)
        if self.zones is not None:
            argv, log = self.zones.program_argv(argv, log), None
        with self._procs:
            # No parent-death signal: it would fire when this request's thread ends. The
            # programs end with the server instead (close(), or the service's cgroup).
            return procs.op_spawn({"name": name, "argv": argv, "env": environ,
                                   "cwd": cwd, "log": log,
                                   "pdeathsig": False})["pid"]

    def call(self, name: str, *, code: str | None = None, args: list[str] | None = None,
             argv: list[str] | None = None, stdin: str = "") -> int:
        """Start a channel client whose stdout is its reply (as the program user with zones),
        in the served /tmp. This server is threaded, so it never forks itself: Python ``code``
        runs in a fresh ``python3 -I`` that reads its arguments and the code from stdin."""
        if (code is None) == (argv is None):
            raise ValueError("a call needs exactly one of code and argv")
        if code is not None:
            import json

            argv = ["/usr/bin/python3", "-I", "-S", "-c", procs.STDIN_CLIENT]
            stdin = json.dumps([str(a) for a in args or []]) + "\n" + code
        log = self.files.check(f"{self.tmp}/{name}.log")
        if self.zones is not None:
            argv, log = self.zones.program_argv(argv, log, keep_stdout=True), None
        environ = {"DISPLAY": self.display_name, "HOME": self.home}
        with self._procs:
            return procs.op_call({"name": name, "argv": argv, "stdin": stdin, "env": environ,
                                  "cwd": self.tmp, "log": log, "pdeathsig": False})["pid"]

    def collect(self, name: str) -> dict[str, Any]:
        with self._procs:
            return procs.op_collect({"name": name})

    # Adapters call these on a provider; here they are the same thing.
    def call_in_sandbox(self, name: str, *, code: str | None = None,
                        args: list[str] | None = None, argv: list[str] | None = None,
                        stdin: str = "") -> None:
        self.call(name, code=code, args=args, argv=argv, stdin=stdin)

    def collect_in_sandbox(self, name: str) -> dict[str, Any]:
        return self.collect(name)

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
        """An agent's shell command in the work directory: in the agent zone with zones, else
        as this server's own user (then ``cli_isolated`` is False)."""
        req: dict[str, Any] = {"cwd": self.work, "timeout": timeout, "pdeathsig": False,
                               "max_output": max_output}
        if self.zones is not None:
            req["argv"] = self.zones.agent_argv(command, self.work, self.display_name)
        else:
            req["shell"] = command
            req["env"] = {"DISPLAY": self.display_name, "HOME": self.home}
        reply = procs.op_exec(req)
        return CommandResult(reply["returncode"], reply["output"], reply["timed_out"],
                             reply["truncated"])

    # Adapters call these on a provider; here they are the same thing.
    def spawn_in_sandbox(self, name: str, argv: list[str]) -> None:
        self.spawn(name, argv, log=f"{self.tmp}/{name}.log")

    def kill_in_sandbox(self, name: str) -> None:
        self.kill(name)

    # -- files (all confined to home, work and tmp: see server.files) -----------------------
    def read_file(self, path: str, remove: bool = False, max_bytes: int = 1 << 20) -> str | None:
        """The last ``max_bytes`` of a text file (None if absent), optionally removed."""
        data = self.files.read_tail(path, max_bytes, remove=remove)
        return None if data is None else data.decode("utf-8", "replace")

    def read_bytes(self, path: str) -> BinaryIO:
        """A regular file opened for reading (the caller closes it and checks its size)."""
        return self.files.open_read(path)

    def write_bytes(self, path: str, read: Callable[[int], bytes], length: int) -> None:
        """Write ``length`` bytes pulled from ``read`` to ``path`` (streamed, never whole)."""
        self.files.write(path, read, length)

    def get_tree(self, path: str, out: BinaryIO, limits: TreeLimits) -> None:
        """A directory as an uncompressed tar on ``out``: files and directories only."""
        self.files.write_tar(path, out, limits)

    def put_tree(self, path: str, src: BinaryIO, limits: TreeLimits,
                 clear: bool = False) -> None:
        """Unpack an uncompressed tar into a directory, optionally emptied first; only files
        and directories, staying inside it (see :func:`server.files.extract_tar`)."""
        self.files.read_tar(path, src, limits, clear=clear)
        if os.path.abspath(path) == self.home:
            self._seal_home()

    def close(self) -> None:
        self.kill_all()
        for part in (self.clipboard, self._windows, getattr(self, "_damage", None),
                     self.controller):
            try:
                part.close()
            except Exception:
                pass
