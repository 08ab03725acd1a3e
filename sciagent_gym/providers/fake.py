"""``provider="fake"``: an in-memory stand-in for a display and a program, so that the env's own
logic (rewards, splits, truncation, action handling, evaluation) is unit-tested in milliseconds
with no X server and no program. A fake, and named so: nothing here is drawn by a program and no
command runs.

What it keeps:

- a screen: a numpy frame drawn from the GUI actions of the episode (the same actions give the
  same frame, different ones a different frame), and ``executed``, those actions in order;
- a private temporary directory with ``home/``, ``home/work/`` and ``tmp/``, the program's view
  and the host's being the same paths: a reset copies the tool's snapshot home and stages the
  task's inputs into ``work/`` as the local provider does, so file-based evaluation really runs;
- scripted commands (:meth:`script_command`): ``run()`` of a scripted command returns its output
  and writes its files into the work directory; any other command raises;
- a window list (the program's main window plus :meth:`open_window`), a clipboard, a pointer;
- the simulated program: ``app_state`` (the fixture tool's state dump returns it), ``respond``
  (a callable run after every GUI action, the program's reaction: a test writes a file, opens
  a window or crashes the program there) and :meth:`crash`;
- a zone's memory watchdog: :meth:`exceed_limit` makes ``limit_exceeded`` report a reason.

What it cannot do raises :class:`FakeProviderError` rather than pretend: start helper programs
in the sandbox (so a real tool's state channel fails as it would with a dead program), run an
unscripted command, restore a program in place or keep spare sandboxes (``supports_soft_reset``
and ``supports_pool`` are False). :meth:`close` removes the directory; nothing else is created.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sciagent_gym.actions import types as A
from sciagent_gym.controller.windows import WindowInfo
from sciagent_gym.errors import FakeProviderError
from sciagent_gym.processes import close_at_exit, owned_tempdir
from sciagent_gym.providers.base import Provider
from sciagent_gym.safe_fs import copy_into, empty_dir
from sciagent_gym.transfer.command import CommandResult

if TYPE_CHECKING:
    from sciagent_gym.tasks.task import Task
    from sciagent_gym.tools import ToolAdapter

MAIN_WINDOW = 1
_BACKGROUND = (32, 36, 40)
_WINDOW = (210, 210, 205)


@dataclass
class ScriptedCommand:
    """What ``run(command)`` does in the fake world: its output, exit status and the files it
    writes into the work directory (name relative to it -> text)."""

    output: str = ""
    returncode: int | None = 0
    timed_out: bool = False
    files: dict[str, str] = field(default_factory=dict)


class FakeProvider(Provider):
    """A display and a program in memory (see the module docstring); for unit tests only."""

    def __init__(self, width: int = 1280, height: int = 800, cli_isolated: bool = True) -> None:
        self.width, self.height = width, height
        self._cli_isolated = cli_isolated
        self._root: Path | None = owned_tempdir("sbx")
        close_at_exit(self)
        for sub in ("home/work", "tmp"):
            (self._root / sub).mkdir(parents=True)
        #: GUI actions performed this episode, in order (cleared by reset).
        self.executed: list[A.Action] = []
        #: Commands run this episode (run() and launch()), in order (cleared by reset).
        self.commands: list[str] = []
        #: What ``run(command)`` does, by exact command text; kept across resets.
        self.scripted: dict[str, ScriptedCommand] = {}
        #: The simulated program's internal state (what a state dump reads); reset per episode.
        self.app_state: dict[str, Any] = {}
        #: The program's reaction to each GUI action: ``respond(provider, action)``.
        self.respond: Callable[[FakeProvider, A.Action], None] | None = None
        #: True: the screen never goes still (``wait_settled`` reports a capped settle).
        self.animating = False
        self.resets = 0
        self.agent_stops = 0
        #: What :meth:`limit_exceeded` reports (set by :meth:`exceed_limit`; reset clears it).
        self.limit: str | None = None
        self.last_reset_timings: dict[str, float] = {}
        self._running = False
        self._log = ""
        self._clipboard = ""
        self._windows: list[WindowInfo] = []
        self._next_window = MAIN_WINDOW
        self.pointer_xy = (width - 1, height - 1)
        self._frame = self._draw()

    # -- the world outside the program -----------------------------------------------------
    def _live_root(self) -> Path:
        if self._root is None:
            raise FakeProviderError("the fake provider is closed")
        return self._root

    @property
    def host_work_dir(self) -> Path:
        return self._live_root() / "home" / "work"

    @property
    def paths(self) -> dict[str, str]:
        root = self._live_root()
        return {"home": str(root / "home"), "work": str(root / "home" / "work"),
                "tmp": str(root / "tmp")}

    @property
    def cli_isolated(self) -> bool:
        return self._cli_isolated

    @property
    def root(self) -> Path | None:
        """The temporary directory holding home, work and tmp (None once closed)."""
        return self._root

    # -- episode lifecycle -----------------------------------------------------------------
    def reset(self, tool: ToolAdapter, task: Task) -> Task:
        """Restore the snapshot home, stage ``task``, "start" the program with its main
        window, run the spec's start-state script through the tool's adapter (which fails
        here for a tool whose script needs a real program)."""
        t0 = time.monotonic()
        root = self._live_root()
        self.stop_agent_processes()
        self.executed, self.commands = [], []
        self._clipboard = ""
        self.pointer_xy = (self.width - 1, self.height - 1)
        home = root / "home"
        empty_dir(home)
        if tool.snapshot_dir.is_dir():
            copy_into(tool.snapshot_dir, home)
        (home / "work").mkdir(exist_ok=True)
        empty_dir(root / "tmp")
        t1 = time.monotonic()
        task.stage(home / "work")
        t2 = time.monotonic()
        self._running, self._log = True, f"{tool.info.display_name} (fake) started\n"
        self.limit = None
        self.app_state = {"open": list(task.spec.open)}
        self._windows = []
        self._next_window = MAIN_WINDOW
        self.open_window(tool.info.display_name, wm_class=tool.name)
        tool.apply_start_state(self, task)
        self.resets += 1
        self._frame = self._draw()
        self.last_reset_timings = {"restore": t1 - t0, "stage": t2 - t1,
                                   "total": time.monotonic() - t0}
        return task

    def crash(self, log: str = "Segmentation fault (fake)") -> None:
        """The program exits: its windows close and ``log`` ends its output."""
        self._running = False
        self._log += log + "\n"
        self._windows = []
        self._frame = self._draw()

    def app_running(self) -> bool:
        return self._root is not None and self._running

    def app_log_tail(self) -> str:
        return self._log[-4000:].strip()

    def exceed_limit(self, reason: str = "agent zone used 4.30 GiB of 4.00 GiB (fake)",
                     zone: str = "agent") -> None:
        """A zone passes its memory budget and its watchdog stops it: the agent's processes
        end, or with ``zone="program"`` the program exits too (as in the local provider,
        where that zone is the program's). Reported by :meth:`limit_exceeded` until reset."""
        if zone not in ("agent", "program"):
            raise ValueError(f"zone must be 'agent' or 'program', not {zone!r}")
        self.limit = reason
        self.stop_agent_processes()
        if zone == "program":
            self.crash("Killed (fake memory watchdog)")

    def limit_exceeded(self) -> str | None:
        return self.limit

    # -- the screen ----------------------------------------------------------------------------
    def _draw(self) -> np.ndarray:
        """Background, the main window while the program runs, a band at the top whose colour
        is a hash of the episode's actions, and a mark at every pointer position they used."""
        frame = np.empty((self.height, self.width, 3), np.uint8)
        frame[:] = _BACKGROUND
        if self._running and self._windows:
            frame[self.height // 10:, self.width // 10:] = _WINDOW
        digest = hashlib.sha256(repr(self.executed).encode()).digest()
        frame[: max(self.height // 20, 2)] = tuple(digest[:3])
        for i, act in enumerate(self.executed):
            x, y = getattr(act, "x", None), getattr(act, "y", None)
            if x is None or y is None:
                continue
            colour = (255, (37 * i) % 256, 0 if getattr(act, "button", "left") == "left" else 255)
            frame[max(y - 2, 0):y + 3, max(x - 2, 0):x + 3] = colour
        return frame

    def execute(self, action: A.Action) -> None:
        """Record a GUI action (and move the pointer where it points); then the program's
        ``respond`` hook, if any, reacts to it."""
        self._live_root()
        if isinstance(action, A.Run | A.Answer | A.Done | A.Fail | A.Launch):
            raise FakeProviderError(f"{type(action).__name__} is not a GUI action")
        self.executed.append(action)
        x, y = getattr(action, "x", None), getattr(action, "y", None)
        if x is not None and y is not None:
            self.pointer_xy = (x, y)
        if self.respond is not None and self._running:
            self.respond(self, action)
        self._frame = self._draw()

    def screenshot(self) -> np.ndarray:
        self._live_root()
        return self._frame.copy()

    def wait_settled(self) -> np.ndarray:
        self.last_settled = not self.animating
        return self.screenshot()

    # -- windows and clipboard ---------------------------------------------------------------
    def open_window(self, title: str, modal: bool = False, wm_class: str = "fake") -> int:
        """The program opens a window (focused, centred); returns its id."""
        self._live_root()
        wid, self._next_window = self._next_window, self._next_window + 1
        w, h = (self.width, self.height) if wid == MAIN_WINDOW else \
            (self.width // 2, self.height // 2)
        self._windows = [replace(win, active=False) for win in self._windows]
        self._windows.append(WindowInfo(wid, title, wm_class, (self.width - w) // 2,
                                        (self.height - h) // 2, w, h, True, modal,
                                        "dialog" if modal else "normal"))
        self._frame = self._draw()
        return wid

    def _window(self, window_id: int) -> WindowInfo:
        self._live_root()
        for win in self._windows:
            if win.id == window_id:
                return win
        raise FakeProviderError(f"no window with id {window_id} (open: "
                                f"{[w.id for w in self._windows]})")

    def windows(self) -> list[WindowInfo]:
        self._live_root()
        return list(self._windows)

    def close_window(self, window_id: int) -> None:
        self._window(window_id)
        self._windows = [w for w in self._windows if w.id != window_id]
        if self._windows and not any(w.active for w in self._windows):
            self._windows[-1] = replace(self._windows[-1], active=True)
        self._frame = self._draw()

    def activate_window(self, window_id: int) -> None:
        self._window(window_id)
        self._windows = [replace(w, active=w.id == window_id) for w in self._windows]

    def nudge_window(self, window_id: int) -> None:
        self._window(window_id)  # a fake window has no layout to redo

    def set_clipboard(self, text: str) -> None:
        self._live_root()
        self._clipboard = text

    def get_clipboard(self) -> str:
        self._live_root()
        return self._clipboard

    # -- commands ----------------------------------------------------------------------------
    def script_command(self, command: str, output: str = "", returncode: int | None = 0,
                       timed_out: bool = False, files: dict[str, str] | None = None) -> None:
        """Say what ``run(command)`` (exact text) does: its output and status, and the files
        (relative to the work directory) it writes."""
        for name in files or {}:
            if Path(name).is_absolute() or ".." in Path(name).parts:
                raise ValueError(f"a scripted command writes inside the work directory, not "
                                 f"{name!r}")
        self.scripted[command] = ScriptedCommand(output, returncode, timed_out, dict(files or {}))

    def _perform_scripted(self, command: str) -> ScriptedCommand:
        work = self.host_work_dir
        if command not in self.scripted:
            raise FakeProviderError(f"the fake provider runs no real commands and {command!r} "
                                    "has no scripted result (FakeProvider.script_command)")
        scripted = self.scripted[command]
        self.commands.append(command)
        for name, text in scripted.files.items():
            path = work / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return scripted

    def run_command(self, command: str, timeout: float = 30.0) -> CommandResult:
        scripted = self._perform_scripted(command)
        return CommandResult(None if scripted.timed_out else scripted.returncode,
                             scripted.output, timed_out=scripted.timed_out)

    def launch_command(self, name: str, argv: list[str]) -> None:
        """A scripted ``sh -c <command>`` only, done at once (its files written now)."""
        if len(argv) != 3 or argv[:2] != ["sh", "-c"]:
            raise FakeProviderError(f"the fake provider cannot start {argv!r}")
        self._perform_scripted(argv[2])

    def stop_agent_processes(self) -> None:
        self.agent_stops += 1  # scripted commands finish at once: nothing is left to stop

    def spawn_in_sandbox(self, name: str, argv: list[str]) -> None:
        raise FakeProviderError(f"the fake provider cannot start programs ({name}: {argv!r})")

    def kill_in_sandbox(self, name: str) -> None:
        """Nothing to end: :meth:`spawn_in_sandbox` never starts anything."""

    def call_in_sandbox(self, name: str, *, code: str | None = None,
                        args: list[str] | None = None, argv: list[str] | None = None,
                        stdin: str = "") -> None:
        raise FakeProviderError(f"the fake provider cannot start channel clients ({name})")

    def collect_in_sandbox(self, name: str) -> dict:
        return {"done": True, "output": None, "returncode": None}

    def read_file(self, path: str, remove: bool = False) -> str | None:
        root = self._live_root()
        target = Path(path)
        if not target.is_absolute() or not target.resolve().is_relative_to(root.resolve()):
            raise FakeProviderError(f"{path} is outside the fake sandbox ({root})")
        if not target.is_file():
            return None
        text = target.read_text(errors="replace")
        if remove:
            target.unlink()
        return text

    def close(self) -> None:
        """Remove the temporary directory; the program "exits". Safe to call twice."""
        self._running = False
        self._windows = []
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None
