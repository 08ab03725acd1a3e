"""The host side of the control server: one method per route, over a kept-alive session."""

from __future__ import annotations

import io
import tarfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import requests

from sciagent_gym import actions as A
from sciagent_gym.controller.settle import SettleConfig
from sciagent_gym.controller.windows import WindowInfo
from sciagent_gym.errors import SciAgentError
from sciagent_gym.providers.sandbox import CommandResult


class ControlError(SciAgentError):
    """The control server refused a request or could not be reached."""


class ControlClient:
    def __init__(self, url: str, token: str, timeout: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self._token = token
        self._session = self._new_session()

    def _new_session(self) -> requests.Session:
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {self._token}"
        session.trust_env = False  # never route the control channel through a proxy
        return session

    def reconnect(self) -> None:
        """Drop kept-alive connections (after a VM snapshot restore they point at sockets the
        restored guest never had)."""
        self._session.close()
        self._session = self._new_session()

    def _request(self, method: str, path: str, *, timeout: float | None = None,
                 **kwargs: Any) -> requests.Response:
        try:
            reply = self._session.request(method, self.url + path,
                                          timeout=timeout or self.timeout, **kwargs)
        except requests.RequestException as exc:
            raise ControlError(f"control server at {self.url} unreachable: {exc}") from None
        if reply.status_code >= 400:
            try:
                reason = reply.json().get("error", reply.text)
            except ValueError:
                reason = reply.text[:500]
            raise ControlError(f"{method} {path}: HTTP {reply.status_code}: {reason}")
        return reply

    def _json(self, method: str, path: str, body: dict | None = None, **kwargs: Any) -> Any:
        if body is not None:
            kwargs["json"] = body
        return self._request(method, path, **kwargs).json()

    # -- server ------------------------------------------------------------------------------
    def health(self, timeout: float | None = None) -> dict[str, Any]:
        return self._json("GET", "/health", timeout=timeout)

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
    @staticmethod
    def _frame(reply: requests.Response) -> np.ndarray:
        width, height = int(reply.headers["X-Width"]), int(reply.headers["X-Height"])
        return np.frombuffer(reply.content, np.uint8).reshape(height, width, 3).copy()

    def screen(self) -> np.ndarray:
        return self._frame(self._request("GET", "/screen"))

    def screen_png(self) -> bytes:
        return self._request("GET", "/screen", params={"format": "png"}).content

    def settle(self, config: SettleConfig, canonical: bool = False) -> np.ndarray:
        body = {"quiet": config.quiet, "cap": config.cap, "interval": config.interval,
                "tolerance": config.tolerance, "canonical": canonical}
        return self._frame(self._request("POST", "/settle", json=body,
                                         timeout=self.timeout + 2 * config.cap))

    def execute(self, actions: list[A.Action]) -> None:
        from sciagent_gym.spaces import action_to_dict

        self._json("POST", "/actions", {"actions": [action_to_dict(a) for a in actions]})

    def release_all(self) -> None:
        self._json("POST", "/input/release", {})

    def expose_all(self) -> None:
        self._json("POST", "/input/expose", {})

    def pointer(self) -> tuple[int, int]:
        reply = self._json("GET", "/pointer")
        return int(reply["x"]), int(reply["y"])

    # -- windows and clipboard ---------------------------------------------------------------
    def windows(self) -> list[WindowInfo]:
        return [WindowInfo(**w) for w in self._json("GET", "/windows")["windows"]]

    def window_op(self, op: str, window_id: int) -> None:
        self._json("POST", f"/windows/{op}", {"id": int(window_id)})

    def get_clipboard(self) -> str:
        return self._json("GET", "/clipboard")["text"]

    def set_clipboard(self, text: str) -> None:
        self._json("POST", "/clipboard", {"text": text})

    def clear_clipboard(self) -> None:
        self._json("DELETE", "/clipboard")

    # -- programs and commands ---------------------------------------------------------------
    def launch(self, name: str, argv: list[str], env: dict[str, str] | None = None,
               cwd: str | None = None, log: str | None = None) -> int:
        body = {"name": name, "argv": list(argv), "env": env or {}, "cwd": cwd, "log": log}
        return int(self._json("POST", "/programs/launch", body)["pid"])

    def poll(self, name: str) -> dict[str, Any]:
        return self._json("GET", "/programs/poll", params={"name": name})

    def kill(self, name: str) -> None:
        self._json("POST", "/programs/kill", {"name": name})

    def run(self, command: str, timeout: float = 30.0) -> CommandResult:
        reply = self._json("POST", "/run", {"command": command, "timeout": timeout},
                           timeout=self.timeout + timeout)
        return CommandResult(reply["returncode"], reply["output"], reply["timed_out"],
                             reply["truncated"])

    # -- files -------------------------------------------------------------------------------
    def read_text(self, path: str, remove: bool = False, max_bytes: int = 1 << 20) -> str | None:
        params = {"path": path, "remove": int(remove), "max_bytes": max_bytes}
        return self._json("GET", "/files", params=params)["data"]

    def get_file(self, path: str) -> bytes:
        return self._request("GET", "/files/raw", params={"path": path}).content

    def put_file(self, path: str, data: bytes) -> None:
        self._request("PUT", "/files/raw", params={"path": path}, data=data)

    def get_tree(self, remote: str, local: Path) -> None:
        """Replace the local directory's contents with the remote directory's."""
        data = self._request("GET", "/tree", params={"path": remote}).content
        from sciagent_gym.server.machine import Machine

        Machine.put_tree(str(local), data, clear=True)

    def put_tree(self, local: Path, remote: str, clear: bool = False) -> None:
        """Copy a local directory's contents into a remote directory."""
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for child in sorted(Path(local).iterdir()) if Path(local).is_dir() else []:
                tar.add(child, arcname=child.name)
        self._request("PUT", "/tree", params={"path": remote, "clear": int(clear)},
                      data=buf.getvalue())

    # -- the tool's state channel ------------------------------------------------------------
    def tool_script(self, script: str, timeout: float = 30.0) -> str:
        return self._json("POST", "/tool/script", {"script": script, "timeout": timeout},
                          timeout=self.timeout + timeout)["output"]

    def tool_state(self) -> dict[str, Any]:
        return self._json("GET", "/tool/state")["state"]

    def close(self) -> None:
        self._session.close()
