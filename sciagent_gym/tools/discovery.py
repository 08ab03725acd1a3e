"""Tool discovery: every ``envs/<tool>/tool.json``, read without importing the tool's code.

Discovery reads only ``tool.json``, so importing the package stays cheap and adding a tool
touches no core file. A tool's getters and task specs are loaded on demand, getters first
(the specs' criteria name them).
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

from sciagent_gym.errors import MissingProgramError
from sciagent_gym.tasks.spec import TaskSpec, load_specs


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


def load_tool_getters(name: str) -> None:
    """Import ``envs/<tool>/getters.py`` if the tool has one, registering its getters."""
    if (tool_info(name).folder / "getters.py").is_file():
        importlib.import_module(f"sciagent_gym.envs.{name}.getters")


def load_tool_specs(name: str | None = None) -> dict[str, TaskSpec]:
    """The task specs of tool ``name`` (of every tool when None), by task id, with the tools'
    getters registered first so the specs' criteria validate against them."""
    names = [name] if name else sorted(discover())
    for tool in names:
        load_tool_getters(tool)
    specs: dict[str, TaskSpec] = {}
    for tool in names:
        specs.update(load_specs(task_specs_root(), tool))
    return specs
