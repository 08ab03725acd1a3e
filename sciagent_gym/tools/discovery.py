"""Tool discovery: every ``envs/<tool>/tool.json``, read without importing the tool's code.

Discovery reads only ``tool.json`` (parsed and checked by :mod:`.manifest`), so importing
the package stays cheap and adding a tool touches no core file. A tool's getters and task
specs are loaded on demand, getters first (the specs' criteria name them).

Tools outside the package (the unit tests' fixture tool, a tool developed elsewhere) join with
:func:`add_tools_root`: a folder laid out like the repository's top level, ``envs/<tool>/``
and ``task_specs/<tool>/``. Its folders are appended to the ``__path__`` of
``sciagent_gym.envs`` and ``sciagent_gym.task_specs``, so its code imports as
``sciagent_gym.envs.<tool>.*`` like a packaged tool's and nothing else needs to know.
"""

from __future__ import annotations

import importlib
from functools import cache
from importlib import resources
from pathlib import Path

from sciagent_gym.tasks.spec import TaskSpec, load_specs
from sciagent_gym.tools.manifest import Requirement, ToolInfo, read_manifest

__all__ = ["Requirement", "ToolInfo", "add_tools_root", "discover", "envs_root",
           "load_tool_getters", "load_tool_specs", "remove_tools_root", "task_specs_root",
           "tool_info"]


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
        info = read_manifest(meta_path)
        if info.name in found:
            raise ValueError(f"two tools named {info.name!r}: {found[info.name].folder} "
                             f"and {meta_path.parent}")
        found[info.name] = info
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
