"""A provider that drives a control server someone else runs (a Windows VM, a lab machine).

The env talks to it exactly as to the local provider. Files cross the wire as tar archives:
the task's inputs are staged in a host-side mirror of the remote work directory and pushed on
reset; the evaluator reads the mirror after :meth:`sync_work_dir` pulled the remote directory
back. An optional reset hook (a shell command, an http(s) URL to POST to, or a callable) reverts
the remote machine first, typically to a VM snapshot; without one the program is restarted.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import requests

from sciagent_gym.actions import types as A
from sciagent_gym.controller.settle import SettleConfig, for_tool
from sciagent_gym.controller.windows import WindowInfo
from sciagent_gym.errors import (
    AppCrashedError,
    ResetHookError,  # noqa: F401 (re-exported)
    SciAgentError,
)
from sciagent_gym.providers.base import Provider
from sciagent_gym.providers.remote.client import ControlClient, ControlError
from sciagent_gym.transfer.command import CommandResult

if TYPE_CHECKING:
    from sciagent_gym.tasks.task import Task
    from sciagent_gym.tools import ToolAdapter

APP = "app"
ResetHook = str | Callable[["RemoteProvider"], Any]


def run_reset_hook(hook: ResetHook, provider: RemoteProvider, timeout: float = 600.0) -> None:
    if callable(hook):
        hook(provider)
        return
    if hook.startswith(("http://", "https://")):
        try:
            with requests.post(hook, timeout=timeout, stream=True) as reply:
                if reply.status_code >= 400:
                    text = reply.raw.read(300, decode_content=False)
                    raise ResetHookError(f"reset hook {hook}: HTTP {reply.status_code}: "
                                         f"{text.decode('utf-8', 'replace')}")
        except requests.RequestException as exc:
            raise ResetHookError(f"reset hook {hook} unreachable: {exc}") from None
        return
    try:
        done = subprocess.run(hook, shell=True, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ResetHookError(f"reset hook {hook!r} ran longer than {timeout:.0f}s") from None
    if done.returncode != 0:
        output = (done.stdout + done.stderr).decode(errors="replace")[-500:]
        raise ResetHookError(f"reset hook {hook!r} exited {done.returncode}: {output}")


class RemoteProvider(Provider):
    """One remote display behind a control server (see :mod:`sciagent_gym.server`)."""

    #: Seconds to wait for the server after a reset hook (a VM restore, a reboot).
    health_timeout = 180.0

    def __init__(self, url: str, token: str, width: int = 1280, height: int = 800,
                 settle: SettleConfig | None = None, reset_hook: ResetHook | None = None,
                 timeout: float = 60.0, connect_timeout: float = 30.0) -> None:
        if not url or not token:
            raise ValueError("the remote provider needs url= and token= of a control server "
                             "(python -m sciagent_gym.server)")
        self.width, self.height = width, height
        self.settle_config = settle or SettleConfig.default()
        self._settle = self.settle_config  # with the running tool's own windows (for_tool)
        self.reset_hook = reset_hook
        self.last_reset_timings: dict[str, float] = {}
        self._last_grab = 0.0
        self._client = ControlClient(url, token, timeout)
        self._mirror = Path(tempfile.mkdtemp(prefix="sciagent-remote-")) / "work"
        self._paths: dict[str, str] = {}
        self._cli_isolated = False
        try:
            self._check(self._client.wait_healthy(connect_timeout))
        except BaseException:
            self.close()
            raise

    def _check(self, health: dict[str, Any]) -> None:
        """Take the display size, paths and isolation from a ``/health`` reply (its shape
        checked by the client): frames of any other size are refused from then on."""
        if (health["width"], health["height"]) != (self.width, self.height):
            raise SciAgentError(
                f"the remote display is {health['width']}x{health['height']} but the env's "
                f"screen_size is {self.width}x{self.height}; make them equal")
        self._paths = {k: v for k, v in health["paths"].items()
                       if isinstance(k, str) and isinstance(v, str) and len(v) < 4096}
        self._cli_isolated = health.get("cli_isolated") is True
        self._client.screen_size = (self.width, self.height)

    @property
    def client(self) -> ControlClient:
        return self._client

    # -- episode lifecycle -----------------------------------------------------------------
    def restore(self) -> None:
        """Bring the remote machine back to its start state: the reset hook, else a restart
        of the program (done by :meth:`reset`)."""
        if self.reset_hook is not None:
            run_reset_hook(self.reset_hook, self)
            self._client.reconnect()
            self._check(self._client.wait_healthy(self.health_timeout))
        else:
            self._client.kill(APP)

    def reset(self, tool: ToolAdapter, task: Task) -> Task:
        if tool.program_zone != "program":
            raise SciAgentError(f"{tool.info.env_id} runs its program in the agent zone (a "
                                "terminal whose shell is the agent's); this provider has no "
                                "agent zone to run it in: use provider='local'")
        t0 = time.monotonic()
        self.restore()
        client = self._client
        client.clear_clipboard()
        client.release_all()
        client.execute([A.Move(self.width - 1, self.height - 1)])
        t1 = time.monotonic()
        shutil.rmtree(self._mirror, ignore_errors=True)
        task.stage(self._mirror)
        client.put_tree(self._mirror, self._paths["work"], clear=True)
        t2 = time.monotonic()
        # A restored machine has the program open and canonical already (the snapshot was
        # taken so): it only needs the inputs. Otherwise start it as the local provider does.
        restored = self.app_running()
        if restored:
            tool.open_inputs(self, task)
        else:
            if tool.snapshot_dir.is_dir():
                client.put_tree(tool.snapshot_dir, self._paths["home"])
            self.launch_id = secrets.token_hex(8)
            client.launch(APP, tool.launch_argv(self, task), env=tool.launch_env(self),
                          cwd=self._paths["work"], log=f"{self._paths['tmp']}/app.log")
        t3 = time.monotonic()
        self.wait_ready(tool, task)
        client.expose_all()
        if not restored:
            tool.after_ready(self, task)
        tool.apply_start_state(self, task)
        t4 = time.monotonic()
        self._settle = for_tool(self.settle_config, dict(tool.info.settle))
        client.settle(self._settle, canonical=True)
        self.last_reset_timings = {"restore": t1 - t0, "stage": t2 - t1, "launch": t3 - t2,
                                   "ready": t4 - t3, "settle": time.monotonic() - t4,
                                   "total": time.monotonic() - t0}
        return task

    def start_program(self, tool: ToolAdapter) -> None:
        """Start the program with no task (what a VM snapshot is taken of) and wait until it
        is ready and the screen is canonical."""
        if tool.snapshot_dir.is_dir():
            self._client.put_tree(tool.snapshot_dir, self._paths["home"])
        self.launch_id = secrets.token_hex(8)
        self._client.launch(APP, tool.launch_argv(self, None), env=tool.launch_env(self),
                            cwd=self._paths["work"], log=f"{self._paths['tmp']}/app.log")
        self.wait_ready(tool, None)
        self._client.expose_all()
        tool.after_ready(self, None)
        self._client.execute([A.Move(self.width - 1, self.height - 1)])
        self._settle = for_tool(self.settle_config, dict(tool.info.settle))
        self._client.settle(self._settle, canonical=True)

    def wait_ready(self, tool: ToolAdapter, task: Task | None) -> None:
        timeout = tool.ready_timeout * self.ready_scale
        deadline = time.monotonic() + timeout
        while True:
            if not self.app_running():
                raise AppCrashedError(
                    f"{tool.info.display_name} is not running on the remote machine; its "
                    f"output ends with:\n{self.app_log_tail()}")
            windows = self.windows()
            if tool.is_ready(windows, task):
                return
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"{tool.info.display_name} showed no ready window within "
                    f"{timeout:.0f}s; windows: {[w.title for w in windows]}")
            time.sleep(0.05)

    # -- acting and observing ----------------------------------------------------------------
    def execute(self, action: A.Action) -> None:
        self._client.execute([action])

    def screenshot(self) -> np.ndarray:
        t0 = time.perf_counter()
        frame = self._client.screen()
        self._last_grab = time.perf_counter() - t0
        return frame

    def wait_settled(self) -> np.ndarray:
        return self._client.settle(self._settle)

    @property
    def last_grab_seconds(self) -> float:
        return self._last_grab

    def windows(self) -> list[WindowInfo]:
        return self._client.windows()

    def run_command(self, command: str, timeout: float = 30.0) -> CommandResult:
        return self._client.run(command, timeout)

    def spawn_in_sandbox(self, name: str, argv: list[str]) -> None:
        self._client.launch(name, argv, cwd=self._paths["work"],
                            log=f"{self._paths['tmp']}/{name}.log")

    def kill_in_sandbox(self, name: str) -> None:
        self._client.kill(name)

    def call_in_sandbox(self, name: str, *, code: str | None = None,
                        args: list[str] | None = None, argv: list[str] | None = None,
                        stdin: str = "") -> None:
        self._client.call(name, code=code, args=args, argv=argv, stdin=stdin)

    def collect_in_sandbox(self, name: str) -> dict:
        return self._client.collect(name)

    def read_file(self, path: str, remove: bool = False) -> str | None:
        return self._client.read_text(path, remove=remove)

    def close_window(self, window_id: int) -> None:
        self._client.window_op("close", window_id)

    def activate_window(self, window_id: int) -> None:
        self._client.window_op("activate", window_id)

    def nudge_window(self, window_id: int) -> None:
        self._client.window_op("nudge", window_id)

    def set_clipboard(self, text: str) -> None:
        self._client.set_clipboard(text)

    def get_clipboard(self) -> str:
        return self._client.get_clipboard()

    def app_running(self) -> bool:
        try:
            return bool(self._client.poll(APP)["running"])
        except ControlError:
            return False

    def app_log_tail(self) -> str:
        try:
            return (self._client.read_text(f"{self._paths['tmp']}/app.log",
                                           max_bytes=4000) or "").strip()
        except ControlError as exc:
            return f"(log unavailable: {exc})"

    @property
    def host_work_dir(self) -> Path:
        return self._mirror

    def sync_work_dir(self) -> Path:
        self._client.get_tree(self._paths["work"], self._mirror)
        return self._mirror

    @property
    def paths(self) -> dict[str, str]:
        return dict(self._paths)

    @property
    def cli_isolated(self) -> bool:
        """Only what the server declares: commands that run on the remote machine as the
        server's own user could still reach its token, programs and files."""
        return self._cli_isolated

    def close(self) -> None:
        client = getattr(self, "_client", None)
        if client is not None:
            client.close()
        mirror = getattr(self, "_mirror", None)
        if mirror is not None:
            shutil.rmtree(mirror.parent, ignore_errors=True)
