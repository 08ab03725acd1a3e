"""A private virtual X display: Xvfb on a free display number plus a window manager.

Xvfb chooses its own free display number (``-displayfd``), so envs in one process or on one
machine never collide and no number is hard-coded. openbox gives normal window placement, focus
and dialogs (without a window manager every window opens at (0, 0) and focus follows the pointer).
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import time

from sciagent_gym import processes
from sciagent_gym.errors import MissingProgramError

_OPENBOX_RC = """<?xml version="1.0" encoding="UTF-8"?>
<openbox_config xmlns="http://openbox.org/3.4/rc">
  <focus><focusNew>yes</focusNew><followMouse>no</followMouse></focus>
  <placement><policy>Smart</policy><center>yes</center></placement>
  <desktops><number>1</number></desktops>
  <theme><name>Clearlooks</name><animateIconify>no</animateIconify></theme>
  <menu><file>/dev/null</file></menu>
</openbox_config>
"""


class VirtualDisplay:
    """Owns one Xvfb server and its window manager; ``close()`` ends both."""

    def __init__(self, width: int = 1280, height: int = 800, depth: int = 24,
                 window_manager: bool = True, timeout: float = 10.0, glx: bool = True) -> None:
        for prog, package in (("Xvfb", "xvfb"), ("openbox", "openbox")):
            if (prog == "Xvfb" or window_manager) and shutil.which(prog) is None:
                raise MissingProgramError(prog, package)
        self.width, self.height = width, height
        # Without GLX, Xvfb loads no Mesa driver: 8 instead of 19 MB private memory, for
        # programs that draw no OpenGL (tool.json "display": {"glx": false}).
        self.glx = glx
        self._tmp = processes.owned_tempdir("display")
        processes.close_at_exit(self)
        self._xvfb: subprocess.Popen | None = None
        self._wm: subprocess.Popen | None = None
        try:
            self.name = self._start_xvfb(depth, timeout)
            if window_manager:
                self._start_wm(timeout)
        except BaseException:
            self.close()
            raise

    def _start_xvfb(self, depth: int, timeout: float) -> str:
        read_fd, write_fd = os.pipe()
        try:
            self._xvfb = processes.spawn(
                ["Xvfb", "-displayfd", str(write_fd), "-screen", "0",
                 f"{self.width}x{self.height}x{depth}", "-nolisten", "tcp", "-noreset",
                 "-dpi", "96", "-s", "0", "+extension", "XTEST", "+extension", "RANDR",
                 *(() if self.glx else ("-extension", "GLX"))],
                pass_fds=[write_fd], stderr=subprocess.DEVNULL,
                env=dict(os.environ, SCIAGENT_DISPLAY_DIR=str(self._tmp)),
            )
            os.close(write_fd)
            write_fd = -1
            buf = b""
            deadline = time.monotonic() + timeout
            while not buf.endswith(b"\n"):
                left = deadline - time.monotonic()
                ready, _, _ = select.select([read_fd], [], [], max(left, 0))
                if not ready:
                    raise TimeoutError(f"Xvfb did not report a display within {timeout:.0f}s")
                chunk = os.read(read_fd, 64)
                if not chunk:
                    raise RuntimeError(f"Xvfb exited with code {self._xvfb.wait()}")
                buf += chunk
            return f":{int(buf.strip())}"
        finally:
            os.close(read_fd)
            if write_fd >= 0:
                os.close(write_fd)

    def _start_wm(self, timeout: float) -> None:
        rc = self._tmp / "rc.xml"
        rc.write_text(_OPENBOX_RC)
        env = dict(os.environ, DISPLAY=self.name, HOME=str(self._tmp),
                   SCIAGENT_DISPLAY_DIR=str(self._tmp))
        self._wm = processes.spawn(["openbox", "--sm-disable", "--config-file", str(rc)], env=env)
        from sciagent_gym.controller.xconnect import open_display

        dpy = open_display(self.name)
        try:
            check = dpy.intern_atom("_NET_SUPPORTING_WM_CHECK")
            root = dpy.screen().root
            processes.wait_for(lambda: root.get_full_property(check, 0) is not None
                               or self._wm.poll() is not None,
                               timeout, what="the openbox window manager")
            if self._wm.poll() is not None:
                raise RuntimeError(f"openbox exited with code {self._wm.returncode}")
        finally:
            dpy.close()

    @property
    def marker(self) -> str:
        """A string in the environment of every process of this display (for leak checks)."""
        return str(self._tmp)

    @property
    def alive(self) -> bool:
        return self._xvfb is not None and self._xvfb.poll() is None

    @property
    def socket_path(self) -> str:
        return f"/tmp/.X11-unix/X{self.name[1:]}"

    def close(self) -> None:
        processes.terminate(self._wm)
        processes.terminate(self._xvfb)
        self._wm = self._xvfb = None
        shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self) -> VirtualDisplay:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
