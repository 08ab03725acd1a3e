"""One slot of the local provider: an Xvfb display, its window manager and the sandboxed
program, restored from the tool's snapshot on every reset."""

from __future__ import annotations

import os
import secrets
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sciagent_gym import processes
from sciagent_gym.actions import types as A
from sciagent_gym.controller.activity import ProcessActivity
from sciagent_gym.controller.clipboard import Clipboard
from sciagent_gym.controller.damage import XDamageSource
from sciagent_gym.controller.settle import SettleConfig, for_tool, settle_canonical, wait_settled
from sciagent_gym.controller.windows import WindowInfo, WindowLister
from sciagent_gym.controller.x11 import X11Controller
from sciagent_gym.errors import AppCrashedError, SciAgentError
from sciagent_gym.providers.base import Provider
from sciagent_gym.providers.local.display import VirtualDisplay
from sciagent_gym.providers.local.sandbox import Sandbox
from sciagent_gym.safe_fs import FreezeReport, copy_into, empty_dir, freeze_copy
from sciagent_gym.transfer.command import CommandResult

if TYPE_CHECKING:
    from sciagent_gym.tasks.task import Task
    from sciagent_gym.tools import ToolAdapter

APP = "app"
#: Starts of the program per reset: one more when it dies before its window is ready.
START_ATTEMPTS = 2


def _tree(root: Path) -> set[str]:
    """Relative paths of everything under ``root`` (links not followed)."""
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        for name in dirnames + filenames:
            out.add(name if rel == "." else f"{rel}/{name}")
    return out


class LocalSlot(Provider):
    """One Xvfb + openbox + sandboxed program, restored from the tool's snapshot on reset.

    The display lives as long as the slot; each reset stops both sandbox zones (which ends
    the program, the agent's commands and anything they started), copies the snapshot home
    directory back, stages the task's inputs and starts the program again, waiting for its
    window rather than sleeping. The agent zone (CLI actions) starts on the episode's first
    CLI action, so episodes without one do not pay for it.
    """

    def __init__(self, width: int = 1280, height: int = 800, isolation: str = "auto",
                 settle: SettleConfig | None = None, glx: bool = True) -> None:
        self.width, self.height = width, height
        self.settle_config = settle or SettleConfig.default()
        self._display: VirtualDisplay | None = None
        self._controller: X11Controller | None = None
        self._damage: XDamageSource | None = None  # paint events (settle mode "damage")
        self._tool_settle: dict = {}  # the tool's own damage-mode windows (tool.json "settle")
        self._windows: WindowLister | None = None
        self._sandbox: Sandbox | None = None
        self._agent: Sandbox | None = None
        self._stage_dir: Path | None = None
        self._clipboard: Clipboard | None = None
        self._isolation = isolation
        self._task_id: str | None = None  # the task the running program was started for
        #: What the program printed each time it died during start-up in the last reset.
        self.start_crashes: list[str] = []
        self._app_zone: Sandbox | None = None  # the zone the program runs in (see reset)
        self.last_reset_timings: dict[str, float] = {}
        try:
            self._display = VirtualDisplay(width, height, glx=glx)
            self._controller = X11Controller(self._display.name, width, height)
            if self.settle_config.mode == "damage":  # paints, and the slot's processes' states
                self._damage = XDamageSource.open(self._display.name, ProcessActivity(
                    lambda: [p.pid for p in (self._display._xvfb, self._display._wm,
                                             getattr(self._app_zone, "_proc", None)) if p]).busy)
            self._windows = WindowLister(self._display.name)
            self._sandbox = Sandbox(self._display.name, self._display.socket_path, isolation)
            self._agent = self._sandbox.agent_zone()
            self._clipboard = Clipboard(self._display.name)
        except BaseException:
            self.close()
            raise

    @property
    def display_name(self) -> str:
        return self._display.name

    @property
    def last_grab_seconds(self) -> float:
        return self._controller.last_grab_seconds

    @property
    def sandbox(self) -> Sandbox:
        return self._sandbox

    @property
    def agent_sandbox(self) -> Sandbox:
        """The agent zone (started on the episode's first CLI action)."""
        return self._agent

    @property
    def isolation(self) -> str:
        return self._sandbox.isolation

    @property
    def cli_isolated(self) -> bool:
        return self._sandbox.isolation == "bwrap"

    @property
    def host_work_dir(self) -> Path:
        return self._sandbox.host_work

    @property
    def paths(self) -> dict[str, str]:
        sbx = self._sandbox
        return {"home": sbx.home, "work": sbx.work, "tmp": sbx.tmp}

    # -- episode lifecycle -----------------------------------------------------------------
    def reset(self, tool: ToolAdapter, task: Task) -> Task:
        t0 = time.monotonic()
        self._tool_settle = dict(tool.info.settle)
        self.start_crashes = []
        for attempt in range(START_ATTEMPTS):
            t1, t2, t3 = self._start(tool, task)
            try:
                self._wait_ready(tool, task)
                break
            except AppCrashedError as exc:
                # The program died before the episode began (Avogadro 1.97 once aborted in
                # its start-up threads under CI load): nothing of the episode is lost, so a
                # fresh start from the snapshot is a clean recovery. Counted, never hidden.
                self.start_crashes.append(str(exc)[:2000])
                if attempt + 1 == START_ATTEMPTS:
                    raise
        self._controller.expose_all()
        tool.after_ready(self, task)
        tool.apply_start_state(self, task)
        t4 = time.monotonic()
        self._settle_canonical()
        self.last_reset_timings = {"restore": t1 - t0, "stage": t2 - t1, "launch": t3 - t2,
                                   "ready": t4 - t3, "settle": time.monotonic() - t4,
                                   "total": time.monotonic() - t0,
                                   "start_crashes": float(len(self.start_crashes))}
        self._task_id = task.spec.id
        return task

    def _start(self, tool: ToolAdapter, task: Task) -> tuple[float, float, float]:
        """Stop everything, restore the home, stage the task's inputs and launch the program;
        returns when each of the last three phases began."""
        sbx = self._sandbox
        self._agent.stop()
        sbx.stop()
        self._reset_input()
        self._restore_home(tool.snapshot_dir)
        t1 = time.monotonic()
        self._stage(task)
        t2 = time.monotonic()
        sbx.extra_ro_binds = tool.sandbox_ro_binds()
        sbx.extra_etc = tool.info.etc
        sbx.start()
        self.launch_id = secrets.token_hex(8)
        self._app_zone = self._zone_of(tool)
        if self._app_zone is self._agent:
            self._agent.extra_ro_binds = tool.sandbox_ro_binds()
            self._agent.extra_etc = tool.info.etc
            self._agent.start()
        self._app_zone.spawn(APP, tool.launch_argv(self, task), env=tool.launch_env(self),
                             log=f"{self._app_zone.tmp}/app.log")
        return t1, t2, time.monotonic()

    def soft_reset(self, tool: ToolAdapter, task: Task) -> bool:
        """Start ``task``'s episode in the program that is already running (same task as the
        last episode), restored in place by the tool's adapter instead of restarted.

        Home and work directory are restored as in a restart. False, with nothing
        the following restart would not redo, when the program is not running, ran another
        task, or the adapter cannot restore it from where it is."""
        if self._task_id != task.spec.id or not self.app_running():
            return False
        t0 = time.monotonic()
        self._agent.stop()  # every agent process ends before anything is restaged
        self._reset_input()
        self._restore_home(tool.snapshot_dir)
        t1 = time.monotonic()
        self._stage(task)
        t2 = time.monotonic()
        if self._home_tree() != self._expected_tree(tool.snapshot_dir):
            return False  # something appeared meanwhile: only a restart is sure to clear it
        try:
            if not tool.restore_in_place(self, task):
                return False
            tool.apply_start_state(self, task)
        except SciAgentError:
            return False
        t3 = time.monotonic()
        self._settle_canonical()
        self.last_reset_timings = {"restore": t1 - t0, "stage": t2 - t1, "in_place": t3 - t2,
                                   "settle": time.monotonic() - t3,
                                   "total": time.monotonic() - t0}
        return True

    def _zone_of(self, tool: ToolAdapter) -> Sandbox:
        """The zone ``tool``'s program runs in (see ``ToolAdapter.program_zone``)."""
        if tool.program_zone not in ("program", "agent"):
            raise ValueError(f"{tool.name}: program_zone must be 'program' or 'agent', not "
                             f"{tool.program_zone!r}")
        return self._agent if tool.program_zone == "agent" else self._sandbox

    def _settle_canonical(self) -> np.ndarray:
        return settle_canonical(self._controller.grab, self._controller.expose_all,
                                for_tool(self.settle_config, self._tool_settle),
                                damage=self._damage)

    def _reset_input(self) -> None:
        self._clipboard.close()  # the clipboard starts every episode empty
        self._controller.release_all()
        # The pointer starts every episode at the same place (hover effects are screen state).
        self._controller.execute(A.Move(self.width - 1, self.height - 1))

    def _restore_home(self, snapshot: Path) -> None:
        """Empty the home directory and copy the snapshot in. The directory itself stays:
        a running sandbox has it bound (soft resets), and a new bind would not be seen.
        Nothing follows a link the program zone may have planted (safe_fs)."""
        sbx = self._sandbox
        home = sbx.host_home
        owner = sbx.program_id if sbx.lease is not None and sbx.lease.switches_user else None
        uid, gid = (owner.uid, owner.gid) if owner else (None, None)
        empty_dir(home)
        if snapshot.is_dir():
            copy_into(snapshot, home, uid, gid)
        work = home / "work"
        if not work.is_dir() or work.is_symlink():
            work.unlink(missing_ok=True)
            work.mkdir()
        if uid is not None:
            os.chown(work, uid, gid, follow_symlinks=False)
        os.chmod(work, 0o775, follow_symlinks=False)

    def _home_tree(self) -> set[str]:
        return _tree(self._sandbox.host_home)

    def _expected_tree(self, snapshot: Path) -> set[str]:
        """What a restored and staged home holds: the snapshot, work/ and the inputs."""
        staged = {f"work/{p}" for p in _tree(self._stage_dir)} if self._stage_dir else set()
        return (_tree(snapshot) if snapshot.is_dir() else set()) | {"work"} | staged

    def _stage(self, task: Task) -> None:
        """Generate the task's inputs in a private host directory, then copy them into the
        work directory (owned by the program zone's user; never through planted links)."""
        if self._stage_dir is not None:
            shutil.rmtree(self._stage_dir, ignore_errors=True)
        self._stage_dir = processes.owned_tempdir("stage")
        processes.close_at_exit(self)
        task.stage(self._stage_dir)
        sbx = self._sandbox
        owner = sbx.program_id if sbx.lease is not None and sbx.lease.switches_user else None
        copy_into(self._stage_dir, sbx.host_work, *((owner.uid, owner.gid) if owner
                                                      else (None, None)))

    def _wait_ready(self, tool: ToolAdapter, task: Task) -> None:
        def ready() -> bool:
            if not self.app_running():
                raise AppCrashedError(
                    f"{tool.info.display_name} exited during start-up; its output ends with:\n"
                    f"{self.app_log_tail()}")
            return tool.is_ready(self.windows(), task)

        try:
            processes.wait_for(ready, tool.ready_timeout, interval=0.02,
                               what=f"{tool.info.display_name} to show its window")
        except TimeoutError as exc:
            titles = [w.title for w in self.windows()]
            raise TimeoutError(f"{exc}; windows now: {titles}; program output ends with:\n"
                               f"{self.app_log_tail()}") from None

    # -- acting and observing ----------------------------------------------------------------
    def execute(self, action: A.Action) -> None:
        self._controller.execute(action)

    def screenshot(self) -> np.ndarray:
        return self._controller.grab()

    def wait_settled(self) -> np.ndarray:
        frame, self.last_settled = wait_settled(
            self._controller.grab, for_tool(self.settle_config, self._tool_settle),
            damage=self._damage)
        return frame

    def windows(self) -> list[WindowInfo]:
        return self._windows.list()

    def _agent_zone(self) -> Sandbox:
        """The agent zone, started on first use in an episode."""
        if not self._agent.alive:
            self._agent.start()
        return self._agent

    def run_command(self, command: str, timeout: float = 30.0) -> CommandResult:
        return self._agent_zone().exec(shell=command, timeout=timeout)

    def launch_command(self, name: str, argv: list[str]) -> None:
        self._agent_zone().spawn(name, argv, log=None)

    def stop_agent_processes(self) -> None:
        self._agent.stop()

    def freeze_work_dir(self, dest: Path) -> FreezeReport:
        """Stop every agent-zone process, then copy the work directory to ``dest``."""
        self._agent.stop()
        return freeze_copy(self._sandbox.host_work, dest)

    def spawn_in_sandbox(self, name: str, argv: list[str]) -> None:
        self._sandbox.spawn(name, argv, log=f"{self._sandbox.tmp}/{name}.log",
                            cwd=self._sandbox.tmp)

    def call_in_sandbox(self, name: str, *, code: str | None = None,
                        args: list[str] | None = None, argv: list[str] | None = None,
                        stdin: str = "") -> None:
        self._sandbox.call(name, code=code, args=args, argv=argv, stdin=stdin,
                           log=f"{self._sandbox.tmp}/{name}.log")

    def collect_in_sandbox(self, name: str) -> dict:
        return self._sandbox.collect(name)

    def kill_in_sandbox(self, name: str) -> None:
        self._sandbox.kill(name)

    def read_file(self, path: str, remove: bool = False) -> str | None:
        return self._sandbox.read(path, remove=remove)

    def close_window(self, window_id: int) -> None:
        self._windows.close_window(window_id)

    def nudge_window(self, window_id: int) -> None:
        self._windows.nudge(window_id)

    def activate_window(self, window_id: int) -> None:
        self._windows.activate(window_id)

    def set_clipboard(self, text: str) -> None:
        self._clipboard.set(text)

    def get_clipboard(self) -> str:
        return self._clipboard.get()

    def app_running(self) -> bool:
        zone = self._app_zone or self._sandbox
        if zone is None or not zone.alive:
            return False
        try:
            return bool(zone.poll(APP)["running"])
        except Exception:
            return False

    def app_log_tail(self) -> str:
        zone = self._app_zone or self._sandbox
        try:
            return (zone.read(f"{zone.tmp}/app.log", 4000) or "").strip()
        except Exception as exc:
            return f"(log unavailable: {exc})"

    def limit_exceeded(self) -> str | None:
        """Why a zone's memory watchdog stopped it (its processes are killed at once, in the
        watchdog's thread); the zone is then stopped here too, which closes its channel. The
        same reason until the zone starts again (next use or reset)."""
        for zone in (self._agent, self._sandbox):
            if zone is not None and zone.limit_reason is not None:
                zone.stop()
                return zone.limit_reason
        return None

    def close(self) -> None:
        if self._stage_dir is not None:
            shutil.rmtree(self._stage_dir, ignore_errors=True)
            self._stage_dir = None
        for part in (self._clipboard, self._agent, self._sandbox, self._windows,
                     self._damage, self._controller, self._display):
            if part is not None:
                try:
                    part.close()
                except Exception:
                    pass
        self._sandbox = self._windows = self._controller = self._display = self._damage = None
        self._clipboard = self._agent = None

