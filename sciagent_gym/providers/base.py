"""The one interface every provider offers; the env never knows which one it has."""

from __future__ import annotations

import abc
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from sciagent_gym.actions import types as A
from sciagent_gym.controller.windows import WindowInfo
from sciagent_gym.safe_fs import FreezeReport, freeze_copy
from sciagent_gym.transfer.command import CommandResult

if TYPE_CHECKING:
    from sciagent_gym.tasks.task import Task
    from sciagent_gym.tools import ToolAdapter


class Provider(abc.ABC):
    """Owns a sandbox's lifecycle: display, program, snapshot restore, commands, screen.

    Optional abilities are declared per class, so the env can refuse an option a provider
    cannot honour when it is made rather than ignore it: ``supports_soft_reset``
    (:meth:`soft_reset`) and ``supports_pool`` (:meth:`prefetch`, spare sandboxes prepared
    ahead). A class that implements one sets its flag; the base methods raise
    NotImplementedError.
    """

    #: Whether :meth:`soft_reset` can restore the running program in place.
    supports_soft_reset: ClassVar[bool] = False
    #: Whether :meth:`prefetch` prepares spare sandboxes (the env's ``pool_size``).
    supports_pool: ClassVar[bool] = False

    width: int
    height: int
    #: Seconds per phase of the last reset (reported as ``info["timings"]``).
    last_reset_timings: dict[str, float]
    #: Factor on every wait for the program (ready, channel answers): an emulated VM runs
    #: programs several times slower than the host.
    ready_scale: float = 1.0
    #: Whether the last ``wait_settled`` saw the screen go still before its cap (None: the
    #: provider cannot tell).
    last_settled: bool | None = None
    #: New at each launch of the program (a restart, not an in-place restore): adapters key
    #: what belongs to one running program by it (QGIS's channel key).
    launch_id: str = ""

    @abc.abstractmethod
    def reset(self, tool: ToolAdapter, task: Task) -> Task:
        """Restore the tool's snapshot, stage ``task``'s inputs, start the program, wait ready.

        Returns the task as staged (a provider with prepared sandboxes may return its own,
        already staged instance of the same variant)."""

    def soft_reset(self, tool: ToolAdapter, task: Task) -> Task | None:
        """Start ``task``'s episode in the program left running by the last one, restored in
        place; None when that is not possible from where it is (the env then calls
        :meth:`reset`). Only where ``supports_soft_reset``."""
        raise NotImplementedError(f"{type(self).__name__} cannot restore a running program in "
                                  "place (supports_soft_reset is False)")

    def prefetch(self, tool: ToolAdapter,
                 wanted: list[tuple[str, Callable[[dict[str, str]], Task]]]) -> None:
        """Prepare these variants (key, task factory), most likely first, in spare sandboxes
        while the episode runs. Only where ``supports_pool``."""
        raise NotImplementedError(f"{type(self).__name__} keeps no spare sandboxes "
                                  "(supports_pool is False)")

    @abc.abstractmethod
    def execute(self, action: A.Action) -> None:
        """Perform one GUI action on the display."""

    @abc.abstractmethod
    def screenshot(self) -> np.ndarray:
        """The screen now, (H, W, 3) uint8."""

    @abc.abstractmethod
    def wait_settled(self) -> np.ndarray:
        """Wait until the screen stops changing (bounded); return the last frame."""

    @abc.abstractmethod
    def windows(self) -> list[WindowInfo]:
        """Top-level windows on the display."""

    @abc.abstractmethod
    def run_command(self, command: str, timeout: float = 30.0) -> CommandResult:
        """Run a shell command in the task's working directory inside the sandbox."""

    @abc.abstractmethod
    def spawn_in_sandbox(self, name: str, argv: list[str]) -> None:
        """Start a helper program inside the sandbox without waiting for it."""

    @abc.abstractmethod
    def kill_in_sandbox(self, name: str) -> None:
        """End a helper started with :meth:`spawn_in_sandbox`."""

    @abc.abstractmethod
    def call_in_sandbox(self, name: str, *, code: str | None = None,
                        args: list[str] | None = None, argv: list[str] | None = None,
                        stdin: str = "") -> None:
        """Start a state-channel client next to the program whose stdout is its reply:
        Python ``code`` run with ``args``, or the program ``argv`` fed ``stdin``. Secrets
        travel in ``args`` or ``stdin``, never on a command line, and the client runs outside
        the work directory."""

    @abc.abstractmethod
    def collect_in_sandbox(self, name: str) -> dict:
        """``{"done": False}`` while a call runs, else ``{"done": True, "output",
        "returncode"}``; a finished call is forgotten once collected."""

    @abc.abstractmethod
    def read_file(self, path: str, remove: bool = False) -> str | None:
        """A text file as the sandbox sees it, or None if absent (optionally removing it)."""

    @abc.abstractmethod
    def close_window(self, window_id: int) -> None:
        """Ask the window manager to close a window (as its close button would)."""

    @abc.abstractmethod
    def activate_window(self, window_id: int) -> None:
        """Ask the window manager to raise and focus a window."""

    @abc.abstractmethod
    def set_clipboard(self, text: str) -> None:
        """Put text on the display's clipboard."""

    @abc.abstractmethod
    def get_clipboard(self) -> str:
        """The clipboard's text ("" when empty)."""

    def sync_work_dir(self) -> Path:
        """The task's working directory on the host, up to date (providers whose sandbox is
        elsewhere copy it back first); the evaluator reads files from here."""
        return self.host_work_dir

    def launch_command(self, name: str, argv: list[str]) -> None:
        """Start the agent's ``launch()`` program (a CLI action) without waiting for it, where
        the agent's commands run (the agent zone where the provider has one)."""
        self.spawn_in_sandbox(name, argv)

    def stop_agent_processes(self) -> None:  # noqa: B027 (optional, no-op default)
        """End every process the agent's CLI actions started (before the final state is
        read and before inputs are restaged)."""

    def freeze_work_dir(self, dest: Path) -> FreezeReport:
        """Stop the agent's processes, then copy the work directory into the new private
        directory ``dest`` (regular files only, size-capped, no links followed): the final
        state the evaluator scores and saves, the same however often it is read."""
        self.stop_agent_processes()
        return freeze_copy(self.sync_work_dir(), dest)

    def nudge_window(self, window_id: int) -> None:  # noqa: B027 (optional, no-op default)
        """Make a window lay itself out again (see WindowLister.nudge); optional."""

    @abc.abstractmethod
    def app_running(self) -> bool:
        """Whether the tool's program is still alive."""

    @abc.abstractmethod
    def app_log_tail(self) -> str:
        """The end of the program's output, for crash reports."""

    def limit_exceeded(self) -> str | None:
        """Why a sandbox zone was stopped for holding more memory than its budget (e.g.
        "agent zone used 4.30 GiB of 4.00 GiB (processes 4.00 GiB, tmpfs 300 MiB)"), or None.
        The env asks after every step and then ends the episode, so it must be cheap (a
        flag). None by default: the other providers' programs run in a VM or on a machine of
        their own, whose memory is theirs to bound."""
        return None

    @property
    @abc.abstractmethod
    def host_work_dir(self) -> Path:
        """The task's working directory as a host path (the evaluator reads it)."""

    @property
    @abc.abstractmethod
    def paths(self) -> dict[str, str]:
        """Paths as the program sees them: ``home``, ``work``, ``tmp``."""

    @property
    def last_grab_seconds(self) -> float:
        """How long the last screen grab took (reported as the step's ``grab`` timing)."""
        return 0.0

    @property
    def cli_isolated(self) -> bool:
        """Whether CLI actions run without a view of the host."""
        return True

    @abc.abstractmethod
    def close(self) -> None:
        """End every process this provider started."""
