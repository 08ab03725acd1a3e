"""Which machine the control server exposes: the interactive desktop on Windows
(:class:`~sciagent_gym.server.win32.machine.Win32Machine`, untested there), an X display elsewhere
(:class:`~sciagent_gym.server.machine.Machine`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from sciagent_gym.server.machine import Machine

if TYPE_CHECKING:
    from sciagent_gym.server.win32.machine import Win32Machine


def make_machine(display: str | None, home: str, work: str | None,
                 tmp: str | None = None) -> Machine | Win32Machine:
    """The machine for this platform. On Windows ``display`` only names the desktop in
    ``/health`` (there is one interactive desktop per session); elsewhere it is the X display."""
    if sys.platform == "win32":
        from sciagent_gym.server.win32 import machine as win32_machine

        return win32_machine.Win32Machine(display or "win32", home, work, tmp)
    if not display:
        raise ValueError("no X display: pass --display or set DISPLAY")
    return Machine(display, home, work, tmp)
