"""Tool discovery: every ``envs/<tool>/tool.json``, read without importing the tool's code.

Discovery reads only ``tool.json``, so importing the package stays cheap and adding a tool
touches no core file. A tool's getters and task specs are loaded on demand, getters first
(the specs' criteria name them).

Tools outside the package (the unit tests' fixture tool, a tool developed elsewhere) join with
:func:`add_tools_root`: a folder laid out like the repository's top level, ``envs/<tool>/``
and ``task_specs/<tool>/``. Its folders are appended to the ``__path__`` of
``sciagent_gym.envs`` and ``sciagent_gym.task_specs``, so its code imports as
``sciagent_gym.envs.<tool>.*`` like a packaged tool's and nothing else needs to know.
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
    """A program the tool needs, and what provides it; or a Python module the tool's host
    side imports (``python``, installed with pip from ``pip``; e.g. pymatgen for generators).

    Programs outside the system's package manager (QuPath, say) are found through an
    environment variable naming the executable (``env``), then PATH, then ``search``: install
    locations, with ``~`` and ``$VARS`` expanded (a path whose variable is unset is skipped).
    """

    program: str = ""
    package: str = ""
    install: str = ""  # a command that installs it, when not a plain apt package
    env: str = ""
    search: tuple[str, ...] = ()
    python: str = ""  # a module to import, e.g. "pymatgen.core"
    pip: str = ""  # its pip requirement, e.g. "pymatgen>=2024.1"

    def __post_init__(self) -> None:
        if bool(self.program) == bool(self.python):
            raise ValueError("a requirement names a program or a python module, not "
                             f"{'both' if self.program else 'neither'}: {self}")
        if self.python and not self.pip:
            raise ValueError(f"python requirement {self.python!r} needs its 'pip' requirement")

    @property
    def name(self) -> str:
        return self.program or self.python

    def locate(self) -> Path | None:
        """Where the program (or the module) is, or None."""
        if self.python:
            import importlib.util

            try:
                spec = importlib.util.find_spec(self.python)
            except (ImportError, ValueError):
                return None
            return Path(spec.origin) if spec is not None and spec.origin else None
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
        if self.python:
            return MissingProgramError(f"python module {self.python}", self.pip,
                                       f"pip install '{self.pip}'")
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


def _package_paths(package: str) -> list[Path]:
    """The folders of ``sciagent_gym.envs`` or ``sciagent_gym.task_specs``: the packaged one
    first, then any added by :func:`add_tools_root`."""
    return [Path(p) for p in importlib.import_module(package).__path__]


def add_tools_root(root: str | Path) -> None:
    """Discover the tools under ``root/envs/`` (task specs under ``root/task_specs/``) beside
    the packaged ones, until :func:`remove_tools_root`. A tool whose name the package already
    has is refused by :func:`discover`."""
    root = Path(root).resolve()
    for package, folder in (("sciagent_gym.envs", root / "envs"),
                            ("sciagent_gym.task_specs", root / "task_specs")):
        if not folder.is_dir():
            raise FileNotFoundError(f"{root} is not a tools root: {folder} is missing")
        paths = importlib.import_module(package).__path__
        if str(folder) not in paths:
            paths.append(str(folder))
    discover.cache_clear()


def remove_tools_root(root: str | Path) -> None:
    """Forget a root added with :func:`add_tools_root` (modules already imported stay)."""
    root = Path(root).resolve()
    for package, folder in (("sciagent_gym.envs", root / "envs"),
                            ("sciagent_gym.task_specs", root / "task_specs")):
        paths = importlib.import_module(package).__path__
        if str(folder) in paths:
            paths.remove(str(folder))
    discover.cache_clear()


@cache
def discover() -> dict[str, ToolInfo]:
    """Every tool folder with a ``tool.json``, by tool name."""
    found: dict[str, ToolInfo] = {}
    roots = _package_paths("sciagent_gym.envs")
    for meta_path in [m for root in roots for m in sorted(root.glob("*/tool.json"))]:
        meta = json.loads(meta_path.read_text())
        if meta["name"] in found:
            raise ValueError(f"two tools named {meta['name']!r}: {found[meta['name']].folder} "
                             f"and {meta_path.parent}")
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
    roots = _package_paths("sciagent_gym.task_specs")
    for tool in names:
        root = next((r for r in roots if (r / tool).is_dir()), roots[0])
        specs.update(load_specs(root, tool))
    return specs
