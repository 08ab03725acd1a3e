"""Tools: folders of data under ``envs/<tool>/`` plus a thin adapter class.

A tool folder holds ``tool.json`` (env id, display name, the programs it needs and the packages
that provide them), ``adapter.py`` (a :class:`ToolAdapter` subclass named ``Adapter``), a
``snapshot/`` directory (the program's home directory as it is at the start of every episode)
and data generators. Discovery reads only ``tool.json``, so importing the package stays cheap and
adding a tool touches no core file.
"""

from __future__ import annotations

import importlib
import itertools
import json
import os
import secrets
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciagent_gym.controller.windows import WindowInfo
from sciagent_gym.errors import MissingProgramError, SciAgentError

if TYPE_CHECKING:
    from sciagent_gym.providers.base import Provider
    from sciagent_gym.tasks.task import Task


@dataclass(frozen=True)
class Requirement:
    """A program the tool needs, and what provides it.

    Programs outside the system's package manager (QuPath, say) are found through an
    environment variable naming the executable (``env``), then PATH, then ``search``: install
    locations, with ``~`` and ``$VARS`` expanded (a path whose variable is unset is skipped).
    """

    program: str
    package: str
    install: str = ""  # a command that installs it, when not a plain apt package
    env: str = ""
    search: tuple[str, ...] = ()

    def locate(self) -> Path | None:
        """Where the program is, or None."""
        if self.env and os.environ.get(self.env):
            path = Path(os.environ[self.env]).expanduser()
            return path if path.is_file() and os.access(path, os.X_OK) else None
        found = shutil.which(self.program)
        if found:
            return Path(found)
        if Path(self.program).is_absolute() and Path(self.program).exists():
            return Path(self.program)
        for pattern in self.search:
            expanded = os.path.expanduser(os.path.expandvars(pattern))
            if "$" in expanded:
                continue
            path = Path(expanded)
            if path.is_file() and os.access(path, os.X_OK):
                return path
        return None

    def missing(self) -> bool:
        return self.locate() is None

    def error(self) -> MissingProgramError:
        program = self.program
        if self.env and os.environ.get(self.env):
            program += f" ({self.env}={os.environ[self.env]} is not an executable file)"
        return MissingProgramError(program, self.package, self.install or None)


@dataclass(frozen=True)
class ToolInfo:
    name: str
    env_id: str
    display_name: str
    domain: str
    requires: tuple[Requirement, ...]
    folder: Path
    extra: dict = field(default_factory=dict)


def envs_root() -> Path:
    return Path(str(resources.files("sciagent_gym.envs")))


def task_specs_root() -> Path:
    return Path(str(resources.files("sciagent_gym.task_specs")))


@cache
def discover() -> dict[str, ToolInfo]:
    """Every tool folder with a ``tool.json``, by tool name."""
    found = {}
    for meta_path in sorted(envs_root().glob("*/tool.json")):
        meta = json.loads(meta_path.read_text())
        reqs = tuple(Requirement(**{**r, "search": tuple(r.get("search", ()))})
                     for r in meta.get("requires", []))
        found[meta["name"]] = ToolInfo(
            name=meta["name"], env_id=meta["env_id"], display_name=meta["display_name"],
            domain=meta.get("domain", ""), requires=reqs, folder=meta_path.parent,
            extra={k: v for k, v in meta.items()
                   if k not in ("name", "env_id", "display_name", "domain", "requires")},
        )
    return found


def tool_info(name: str) -> ToolInfo:
    tools = discover()
    if name not in tools:
        raise KeyError(f"unknown tool {name!r} (known: {', '.join(sorted(tools))})")
    return tools[name]


def load_adapter(name: str, getters: bool = True) -> ToolAdapter:
    """The tool's adapter; ``getters=False`` skips its evaluator getters (the control server
    needs only the adapter's state channel)."""
    info = tool_info(name)
    if getters:
        load_tool_getters(name)
    module = importlib.import_module(f"sciagent_gym.envs.{name}.adapter")
    return module.Adapter(info)


def load_tool_getters(name: str) -> None:
    """Import ``envs/<tool>/getters.py`` if the tool has one, registering its getters."""
    if (tool_info(name).folder / "getters.py").is_file():
        importlib.import_module(f"sciagent_gym.envs.{name}.getters")


class ToolAdapter:
    """What the core needs to know about one program. Subclasses stay thin."""

    #: Seconds to wait for the program's main window after launch.
    ready_timeout: float = 30.0

    def __init__(self, info: ToolInfo) -> None:
        self.info = info
        self._requests = itertools.count(1)

    def next_request_id(self) -> str:
        """A fresh name for one state-channel request (its request and answer files): a
        number and 64 random bits, so no process can guess and plant an answer in advance
        (the files live in the program zone's private /tmp, which the agent zone never sees;
        this guards against what the program's own console could do)."""
        return f"{next(self._requests)}-{secrets.token_hex(8)}"

    @property
    def generators(self) -> dict[str, Callable[..., dict[str, Any]]]:
        """``GENERATORS`` of the tool's ``data.py``, imported on first use: the control server
        in a guest runs adapters without numpy or scikit-image."""
        if not (self.info.folder / "data.py").is_file():
            return {}
        return importlib.import_module(f"sciagent_gym.envs.{self.name}.data").GENERATORS

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def snapshot_dir(self) -> Path:
        """The home directory every episode starts from (copied on each reset)."""
        return self.info.folder / "snapshot" / "home"

    def check_installed(self) -> None:
        """Raise MissingProgramError naming the package if a required program is absent."""
        for req in self.info.requires:
            if req.missing():
                raise req.error()

    # -- hooks for subclasses ----------------------------------------------------------------
    def launch_argv(self, provider: Provider, task: Task | None) -> list[str]:
        """The command that starts the program inside the sandbox for ``task`` (with its
        inputs open), or with nothing open when ``task`` is None (a VM snapshot's start)."""
        raise NotImplementedError

    def open_inputs(self, provider: Provider, task: Task) -> None:
        """Open ``task``'s inputs in the already running program (after a VM snapshot restore,
        where the program is up but no task was staged yet)."""
        raise NotImplementedError(f"{self.name} cannot open a task's inputs in a running "
                                  "program; use a provider that restarts it")

    def launch_env(self, provider: Provider) -> dict[str, str]:
        return {}

    def sandbox_ro_binds(self) -> list[str]:
        """Host directories the sandbox must show read-only at the same path (a program
        installed outside /usr, which every sandbox sees)."""
        return []

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        """True once the program shows what the task starts from (with ``task`` None: once
        its main window is up)."""
        raise NotImplementedError

    def after_ready(self, provider: Provider, task: Task | None) -> None:
        """Last touches once the window is up (e.g. clear timing text) so resets are identical."""

    def restore_in_place(self, provider: Provider, task: Task) -> bool:
        """Put the running program back where a fresh launch with ``task``'s (already
        restaged) inputs leaves it, before ``setup.script``, without restarting it: the env's
        ``soft_reset`` option. False when this tool cannot, or not from the state it is in;
        the env then restarts the program as usual."""
        return False

    def apply_start_state(self, provider: Provider, task: Task | None) -> None:
        """Run the spec's ``setup.script`` (e.g. a state-control task's random initial toggle
        states) through the scripting channel, once the program is ready."""
        script = task.setup_script if task is not None else ""
        if script.strip():
            self.run_script(provider, script)

    def dump_state(self, provider: Provider) -> dict[str, Any]:
        """The program's internal state through its own scripting channel, as JSON data."""
        raise NotImplementedError

    def run_script(self, provider: Provider, code: str, timeout: float = 30.0) -> str | None:
        """Run code in the program's own scripting language (oracles); returns its answer."""
        raise NotImplementedError

    # -- shared plumbing for state channels ---------------------------------------------------
    def run_client(self, provider: Provider, name: str, argv: list[str], answer: str,
                   timeout: float, error: type[SciAgentError] = SciAgentError,
                   check: Callable[[], None] | None = None, poll: float = 0.02) -> str:
        """Start a channel client ``argv`` in the sandbox and wait for its answer file.

        The program writes ``answer`` (a path in the sandbox) only once the reply is complete
        (written elsewhere, then renamed), so the first read that finds it is whole. ``check``
        runs between polls and raises to give up early (e.g. when the program showed an error
        dialog instead of answering). The client is always ended, answered or not.
        """
        timeout *= provider.ready_scale
        provider.spawn_in_sandbox(name, argv)
        try:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                text = provider.read_file(answer, remove=True)
                if text is not None:
                    return text
                if check is not None:
                    check()
                time.sleep(poll)
            raise error(f"{self.info.display_name} gave no answer within {timeout:.0f}s")
        finally:
            provider.kill_in_sandbox(name)
