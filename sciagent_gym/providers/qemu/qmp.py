"""A minimal client of QEMU's machine protocol (QMP) over a unix socket."""

from __future__ import annotations

import json
import os
import socket
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sciagent_gym.errors import QemuError


class QMPClient:
    """A minimal QMP client over a unix socket: one command at a time, events set aside."""

    def __init__(self, path: str | Path, timeout: float = 30.0) -> None:
        self.path, self.timeout = str(path), timeout
        self.events: deque[dict[str, Any]] = deque(maxlen=256)  # recent async events
        self._sock: socket.socket | None = None
        self._file: Any = None
        self._id = 0

    def connect(self) -> dict[str, Any]:
        """Connect, read the greeting, leave capabilities negotiation mode; return greeting."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            connect_unix(sock, self.path)
        except OSError:
            sock.close()
            raise
        self._sock, self._file = sock, sock.makefile("rb")
        greeting = self._read()
        if "QMP" not in greeting:
            self.close()
            raise QemuError(f"not a QMP greeting: {greeting}")
        self.execute("qmp_capabilities")
        return greeting

    def execute(self, command: str, arguments: Mapping[str, Any] | None = None,
                timeout: float | None = None) -> Any:
        """Run ``command``; return its ``return`` value or raise QemuError(class: desc)."""
        if self._sock is None:
            raise QemuError("QMP is not connected")
        self._id += 1
        msg: dict[str, Any] = {"execute": command, "id": self._id}
        if arguments:
            msg["arguments"] = dict(arguments)
        self._sock.settimeout(timeout or self.timeout)
        self._sock.sendall(json.dumps(msg).encode() + b"\r\n")
        while True:
            reply = self._read()
            if "event" in reply:
                self.events.append(reply)
                continue
            if reply.get("id") not in (None, self._id):
                continue
            if "error" in reply:
                err = reply["error"]
                raise QemuError(f"{command}: {err.get('class', 'Error')}: {err.get('desc', '')}")
            return reply.get("return")

    def _read(self) -> dict[str, Any]:
        try:
            line = self._file.readline()
        except TimeoutError as exc:
            raise QemuError("QMP: no answer from QEMU (timed out)") from exc
        if not line:
            raise QemuError("QMP: QEMU closed the connection")
        return json.loads(line)

    def close(self) -> None:
        for obj in (self._file, self._sock):
            if obj is not None:
                try:
                    obj.close()
                except OSError:
                    pass
        self._sock = self._file = None


# A unix socket address holds 107 bytes; pytest's and users' work folders can be deeper.
_SUN_PATH_MAX = 107


def connect_unix(sock: socket.socket, path: str) -> None:
    """Connect ``sock`` to ``path``, through a short /proc/self/fd alias of its folder when
    the full path does not fit a socket address (the kernel would refuse or truncate it)."""
    if len(os.fsencode(path)) <= _SUN_PATH_MAX:
        sock.connect(path)
        return
    folder, name = os.path.split(path)
    fd = os.open(folder or ".", os.O_PATH | os.O_DIRECTORY)
    try:
        sock.connect(f"/proc/self/fd/{fd}/{name}")
    finally:
        os.close(fd)
