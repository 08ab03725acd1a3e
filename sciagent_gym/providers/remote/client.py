"""The host side of the control server: one method per route, over a kept-alive session.

The server may be someone else's machine (the remote provider) or a guest the agent has been
running commands in, so no reply is trusted: every reply is read with a size cap (no content
encodings, so no decompression bombs), JSON replies are checked for the shape and types each
route promises, frames for their size, and a downloaded tree is unpacked with the checks of
:func:`sciagent_gym.transfer.files.unpack_into` (files and directories only, inside the target,
bounded in size and count).
"""

from __future__ import annotations

import json
import tarfile
import tempfile
import time
from dataclasses import fields
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import requests

from sciagent_gym.actions import types as A
from sciagent_gym.controller.settle import SettleConfig
from sciagent_gym.controller.windows import WindowInfo
from sciagent_gym.errors import ControlError
from sciagent_gym.transfer.command import CommandResult
from sciagent_gym.transfer.files import PathRefused, TreeLimits, TreeTooLarge, unpack_into

MAX_JSON_REPLY = 16 << 20
MAX_ERROR_REPLY = 4096
MAX_SCREEN_SIDE = 16384
MAX_WINDOWS = 10_000
#: Retries of a request the server refused as busy (503), 0.2 s, 0.4 s, ... apart.
BUSY_RETRIES = 4
_WINDOW_FIELDS = {f.name: f.type for f in fields(WindowInfo)}
_TYPES: dict[str, tuple[type, ...]] = {"int": (int,), "str": (str,), "bool": (bool,),
                                       "str | None": (str, type(None)),
                                       "int | None": (int, type(None)),
                                       "float": (int, float)}


def expect(value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    """``value`` if it is of ``kind`` (a bool is not an int here); ControlError otherwise."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        ok = False
    else:
        ok = isinstance(value, kinds)
    if not ok:
        names = " or ".join(k.__name__ for k in kinds)
        raise ControlError(f"the control server's reply has {what} = {str(value)[:80]!r}, "
                           f"not {names}")
    return value


def _field(reply: Any, key: str, kind: type | tuple[type, ...], what: str) -> Any:
    if not isinstance(reply, dict) or key not in reply:
        raise ControlError(f"the control server's {what} reply has no {key!r}")
    return expect(reply[key], kind, f"{what}.{key}")


def window_info(item: Any) -> WindowInfo:
    """A WindowInfo from one entry of ``/windows``, every field present and of its type."""
    if not isinstance(item, dict) or set(item) != set(_WINDOW_FIELDS):
        raise ControlError(f"the control server sent a window that is not "
                           f"{sorted(_WINDOW_FIELDS)}: {str(item)[:200]}")
    for name, kind in _WINDOW_FIELDS.items():
        kinds = (kind,) if isinstance(kind, type) else _TYPES[str(kind)]
        expect(item[name], kinds, f"window.{name}")
    return WindowInfo(**item)


def command_result(reply: Any) -> CommandResult:
    return CommandResult(_field(reply, "returncode", (int, type(None)), "run"),
                         _field(reply, "output", str, "run"),
                         _field(reply, "timed_out", bool, "run"),
                         _field(reply, "truncated", bool, "run"))


class ControlClient:
    #: Limits of a downloaded tree (the work directory after an episode).
    tree_limits = TreeLimits()

    def __init__(self, url: str, token: str, timeout: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self._token = token
        #: (width, height) every frame must have, once known (the provider sets it).
        self.screen_size: tuple[int, int] | None = None
        self._session = self._new_session()

    def _new_session(self) -> requests.Session:
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {self._token}"
        session.headers["Accept-Encoding"] = "identity"  # nothing to decompress
        session.trust_env = False  # never route the control channel through a proxy
        return session

    def reconnect(self) -> None:
        """Drop kept-alive connections (after a VM snapshot restore they point at sockets the
        restored guest never had)."""
        self._session.close()
        self._session = self._new_session()

    # -- transport -----------------------------------------------------------------------------
    def _request(self, method: str, path: str, *, timeout: float | None = None,
                 **kwargs: Any) -> requests.Response:
        """The reply, its body not yet read (streamed): callers read it with a cap. A 503 (the
        server refused the connection unread: all its workers busy) is retried a few times."""
        for attempt in range(BUSY_RETRIES + 1):
            data = kwargs.get("data")
            if attempt and hasattr(data, "seek"):
                data.seek(0)
            try:
                reply = self._session.request(method, self.url + path, stream=True,
                                              timeout=timeout or self.timeout, **kwargs)
            except requests.RequestException as exc:
                raise ControlError(f"control server at {self.url} unreachable: {exc}") from None
            if reply.status_code != 503 or attempt == BUSY_RETRIES:
                break
            reply.close()
            time.sleep(0.2 * (attempt + 1))
        encoding = reply.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            reply.close()
            raise ControlError(f"{method} {path}: refusing a {encoding!r}-encoded reply")
        if reply.status_code >= 400:
            try:
                text = self._read(reply, MAX_ERROR_REPLY, f"{method} {path}", cut=True)
            except ControlError:
                text = b""
            try:
                reason = json.loads(text).get("error", "")
            except (ValueError, AttributeError):
                reason = ""
            if not isinstance(reason, str) or not reason:
                reason = text[:500].decode("utf-8", "replace")
            raise ControlError(f"{method} {path}: HTTP {reply.status_code}: {reason[:500]}")
        return reply

    def _read(self, reply: requests.Response, cap: int, what: str, cut: bool = False) -> bytes:
        """The body, at most ``cap`` bytes (more: ControlError, or with ``cut`` the first
        ``cap``)."""
        try:
            declared = int(reply.headers.get("Content-Length", "-1"))
            if declared > cap and not cut:
                raise ControlError(f"{what}: the reply of {declared} bytes exceeds {cap}")
            buf = bytearray()
            for chunk in reply.iter_content(1 << 16):
                buf += chunk
                if len(buf) > cap:
                    if cut:
                        return bytes(buf[:cap])
                    raise ControlError(f"{what}: the reply exceeds {cap} bytes")
            return bytes(buf)
        except (requests.RequestException, ValueError) as exc:
            raise ControlError(f"{what}: reading the reply failed: {exc}") from None
        finally:
            reply.close()

    def _spool(self, reply: requests.Response, cap: int, what: str) -> BinaryIO:
        """The body in an anonymous temporary file, at most ``cap`` bytes."""
        spool = tempfile.TemporaryFile()
        try:
            total = 0
            for chunk in reply.iter_content(1 << 20):
                total += len(chunk)
                if total > cap:
                    raise ControlError(f"{what}: the reply exceeds {cap} bytes")
                spool.write(chunk)
            spool.seek(0)
            return spool
        except requests.RequestException as exc:
            spool.close()
            raise ControlError(f"{what}: reading the reply failed: {exc}") from None
        except BaseException:
            spool.close()
            raise
        finally:
            reply.close()

    def _json(self, method: str, path: str, body: dict | None = None, **kwargs: Any) -> Any:
        if body is not None:
            kwargs["json"] = body
        data = self._read(self._request(method, path, **kwargs), MAX_JSON_REPLY,
                          f"{method} {path}")
        try:
            value = json.loads(data)
        except ValueError as exc:
            raise ControlError(f"{method} {path}: the reply is not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise ControlError(f"{method} {path}: the reply is not a JSON object")
        return value

    # -- server ------------------------------------------------------------------------------
    def health(self, timeout: float | None = None) -> dict[str, Any]:
        """``/health``, checked: size ints, string paths that are absolute, flags bools."""
        reply = self._json("GET", "/health", timeout=timeout)
        for key in ("width", "height"):
            side = _field(reply, key, int, "health")
            if not 0 < side <= MAX_SCREEN_SIDE:
                raise ControlError(f"the control server reports a screen {key} of {side}")
        paths = _field(reply, "paths", dict, "health")
        for key in ("home", "work", "tmp"):
            path = _field(paths, key, str, "health.paths")
            if not path.startswith("/") or ".." in path.split("/") or "\0" in path:
                raise ControlError(f"the control server's {key} path {path[:200]!r} is not "
                                   "absolute")
        if "cli_isolated" in reply:
            _field(reply, "cli_isolated", bool, "health")
        return reply

    def wait_healthy(self, timeout: float, what: str = "the control server") -> dict[str, Any]:
        """Poll /health until it answers; a wrong token fails at once instead of timing out."""
        deadline = time.monotonic() + timeout
        last = ""
        while True:
            try:
                return self.health(timeout=2.0)
            except ControlError as exc:
                if "HTTP 401" in str(exc):
                    raise
                last = str(exc)
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what} did not answer within {timeout:.0f}s ({last})")
            self.reconnect()
            time.sleep(0.1)

    # -- screen and input --------------------------------------------------------------------
    def _frame(self, reply: requests.Response, what: str) -> np.ndarray:
        try:
            width, height = int(reply.headers["X-Width"]), int(reply.headers["X-Height"])
        except (KeyError, ValueError):
            reply.close()
            raise ControlError(f"{what}: the frame has no valid X-Width/X-Height") from None
        if self.screen_size is not None and (width, height) != self.screen_size:
            reply.close()
            raise ControlError(f"{what}: a {width}x{height} frame, the screen is "
                               f"{self.screen_size[0]}x{self.screen_size[1]}")
        if not (0 < width <= MAX_SCREEN_SIDE and 0 < height <= MAX_SCREEN_SIDE):
            reply.close()
            raise ControlError(f"{what}: a frame of {width}x{height} pixels")
        size = width * height * 3
        data = self._read(reply, size, what)
        if len(data) != size:
            raise ControlError(f"{what}: {len(data)} bytes for a {width}x{height} RGB frame")
        return np.frombuffer(data, np.uint8).reshape(height, width, 3).copy()

    def screen(self) -> np.ndarray:
        return self._frame(self._request("GET", "/screen"), "GET /screen")

    def settle(self, config: SettleConfig, canonical: bool = False) -> np.ndarray:
        body = {"quiet": config.quiet, "cap": config.cap, "interval": config.interval,
                "tolerance": config.tolerance, "canonical": canonical, "mode": config.mode,
                "react": config.react, "busy_cap": config.busy_cap}
        return self._frame(self._request("POST", "/settle", json=body,
                                         timeout=self.timeout + 2 * config.cap), "POST /settle")

    def execute(self, actions: list[A.Action]) -> None:
        from sciagent_gym.actions.human import action_to_dict

        self._json("POST", "/actions", {"actions": [action_to_dict(a) for a in actions]})

    def release_all(self) -> None:
        self._json("POST", "/input/release", {})

    def expose_all(self) -> None:
        self._json("POST", "/input/expose", {})

    def pointer(self) -> tuple[int, int]:
        reply = self._json("GET", "/pointer")
        return _field(reply, "x", int, "pointer"), _field(reply, "y", int, "pointer")

    # -- windows and clipboard ---------------------------------------------------------------
    def windows(self) -> list[WindowInfo]:
        items = _field(self._json("GET", "/windows"), "windows", list, "windows")
        if len(items) > MAX_WINDOWS:
            raise ControlError(f"the control server lists {len(items)} windows")
        return [window_info(w) for w in items]

    def window_op(self, op: str, window_id: int) -> None:
        self._json("POST", f"/windows/{op}", {"id": int(window_id)})

    def get_clipboard(self) -> str:
        return _field(self._json("GET", "/clipboard"), "text", str, "clipboard")

    def set_clipboard(self, text: str) -> None:
        self._json("POST", "/clipboard", {"text": text})

    def clear_clipboard(self) -> None:
        self._json("DELETE", "/clipboard")

    # -- programs and commands ---------------------------------------------------------------
    def launch(self, name: str, argv: list[str], env: dict[str, str] | None = None,
               cwd: str | None = None, log: str | None = None) -> int:
        body = {"name": name, "argv": list(argv), "env": env or {}, "cwd": cwd, "log": log}
        return _field(self._json("POST", "/programs/launch", body), "pid", int, "launch")

    def poll(self, name: str) -> dict[str, Any]:
        reply = self._json("GET", "/programs/poll", params={"name": name})
        return {"running": _field(reply, "running", bool, "poll"),
                "returncode": _field(reply, "returncode", (int, type(None)), "poll")}

    def kill(self, name: str) -> None:
        self._json("POST", "/programs/kill", {"name": name})

    def call(self, name: str, *, code: str | None = None, args: list[str] | None = None,
             argv: list[str] | None = None, stdin: str = "") -> int:
        body = {"name": name, "code": code, "args": list(args or []),
                "argv": list(argv) if argv is not None else None, "stdin": stdin}
        return _field(self._json("POST", "/programs/call", body), "pid", int, "call")

    def collect(self, name: str) -> dict[str, Any]:
        reply = self._json("GET", "/programs/collect", params={"name": name})
        if not _field(reply, "done", bool, "collect"):
            return {"done": False}
        return {"done": True,
                "output": _field(reply, "output", (str, type(None)), "collect"),
                "returncode": _field(reply, "returncode", (int, type(None)), "collect"),
                **({"error": str(reply["error"])} if reply.get("error") else {})}

    def run(self, command: str, timeout: float = 30.0) -> CommandResult:
        return command_result(self._json("POST", "/run", {"command": command,
                                                          "timeout": timeout},
                                         timeout=self.timeout + timeout))

    # -- files -------------------------------------------------------------------------------
    def read_text(self, path: str, remove: bool = False, max_bytes: int = 1 << 20) -> str | None:
        params = {"path": path, "remove": int(remove), "max_bytes": max_bytes}
        data = _field(self._json("GET", "/files", params=params), "data", (str, type(None)),
                      "files")
        if data is not None and len(data) > max_bytes:
            raise ControlError(f"GET /files: {len(data)} characters for max_bytes={max_bytes}")
        return data

    def get_tree(self, remote: str, local: Path) -> None:
        """Replace the local directory's contents with the remote directory's: the archive
        bounded as it downloads, then unpacked with the checks of ``unpack_into``."""
        limits = self.tree_limits
        # The archive: contents plus a header per entry and padding.
        cap = limits.max_total_bytes + 1024 * (limits.max_entries + 10)
        reply = self._request("GET", "/tree", params={"path": remote})
        with self._spool(reply, cap, f"GET /tree {remote}") as spool:
            try:
                unpack_into(str(local), spool, limits)
            except (PathRefused, TreeTooLarge, ValueError) as exc:
                raise ControlError(f"GET /tree {remote}: refused the archive: {exc}") from None

    def put_tree(self, local: Path, remote: str, clear: bool = False) -> None:
        """Copy a local directory's contents into a remote directory (streamed from disk)."""
        with tempfile.TemporaryFile() as spool:
            with tarfile.open(fileobj=spool, mode="w") as tar:
                for child in sorted(Path(local).iterdir()) if Path(local).is_dir() else []:
                    tar.add(child, arcname=child.name)
            spool.seek(0)
            self._read(self._request("PUT", "/tree", params={"path": remote,
                                                             "clear": int(clear)},
                                     data=spool), MAX_JSON_REPLY, "PUT /tree")

    # -- the tool's state channel ------------------------------------------------------------
    def tool_script(self, script: str, timeout: float = 30.0) -> str | None:
        reply = self._json("POST", "/tool/script", {"script": script, "timeout": timeout},
                           timeout=self.timeout + timeout)
        return _field(reply, "output", (str, type(None)), "tool_script")

    def tool_state(self) -> dict[str, Any]:
        return _field(self._json("GET", "/tool/state"), "state", dict, "tool_state")

    def close(self) -> None:
        self._session.close()
