"""The control server: runs inside a VM guest or on a remote host and exposes the controller
the local provider uses (screen, input, windows, clipboard, programs, files, commands and the
tool's state channel) over token-authenticated HTTP. ``python -m sciagent_gym.server --help``.

Its dependencies are the standard library, numpy, python-xlib and mss (Debian packages
python3-numpy and python3-xlib, plus the pure-Python mss copied in), so it runs in a bare guest.
"""

from sciagent_gym.server.app import ROUTES, ControlServer

__all__ = ["ControlServer", "ROUTES"]
