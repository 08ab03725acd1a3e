"""Guest image recipes: what goes into the guest image of a tool.

A recipe is the ``image`` section of ``envs/<tool>/tool.json`` (Debian suite, screen size, disk
size; the packages are the tool's own, from its ``requires``); ``vm_images/guest/`` holds what
every guest shares (``base.json``: base packages, units to enable and to mask; ``rootfs/``: the
files copied into every guest).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciagent_gym.errors import ImageBuildError

_PACKAGE_NAME = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")
_SCREEN = re.compile(r"^[1-9][0-9]{2,4}x[1-9][0-9]{2,4}$")
_DISK_SIZE = re.compile(r"^[1-9][0-9]*[MG]$")


@dataclass(frozen=True)
class Recipe:
    """One guest image's recipe: a tool's ``image`` section plus the shared base."""

    name: str
    tool: str | None
    suite: str
    recipe_version: int
    screen: str
    disk_size: str
    packages: tuple[str, ...]          # the recipe's own packages
    base_packages: tuple[str, ...]     # what every guest needs (vm_images/guest/base.json)
    base: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    folder: Path | None = None

    @property
    def all_packages(self) -> tuple[str, ...]:
        """Base then recipe packages, without duplicates, order kept (debootstrap --include)."""
        return tuple(dict.fromkeys(self.base_packages + self.packages))


def recipes_root() -> Path:
    """The tool folders (``envs/``, shipped as ``sciagent_gym.envs``): a tool with an ``image``
    section in its ``tool.json`` has a guest image recipe."""
    from sciagent_gym.tools import envs_root

    return envs_root()


def guest_root() -> Path:
    """``$SCIAGENT_VM_IMAGES`` or the package's ``vm_images/`` (shipped as
    ``sciagent_gym.vm_images``): ``guest/`` in it is what every guest shares."""
    env = os.environ.get("SCIAGENT_VM_IMAGES")
    if env:
        return Path(env)
    from importlib import resources

    return Path(str(resources.files("sciagent_gym.vm_images")))


def _tool_meta(path: Path) -> dict[str, Any] | None:
    try:
        meta = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return meta if isinstance(meta, dict) else None


def available_recipes(root: Path | None = None) -> list[str]:
    """Tools whose ``tool.json`` has an ``image`` section."""
    root = root or recipes_root()
    return sorted(p.parent.name for p in root.glob("*/tool.json")
                  if "image" in (_tool_meta(p) or {}))


def recipe_data(meta: dict[str, Any]) -> dict[str, Any]:
    """The recipe fields of one ``tool.json``: its ``image`` section, named after the tool,
    with the tool's Debian packages unless the section lists its own."""
    from sciagent_gym.deps import tool_packages

    image = meta.get("image")
    if not isinstance(image, dict):
        raise ImageBuildError(f"tool {meta.get('name')!r}: 'image' must be an object")
    return {"name": meta.get("name"), "tool": meta.get("name"),
            "packages": tool_packages(meta), **image}


def parse_recipe(data: dict[str, Any], base: dict[str, Any], folder: Path | None = None
                 ) -> Recipe:
    """Validate recipe data; raise ImageBuildError naming the bad field."""
    where = f"{folder / 'tool.json'} 'image'" if folder else "recipe"

    def bad(msg: str) -> ImageBuildError:
        return ImageBuildError(f"{where}: {msg}")

    name = data.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", name):
        raise bad(f"'name' must be a lower-case identifier, got {name!r}")
    if folder is not None and folder.name != name:
        raise bad(f"'name' {name!r} differs from its folder name {folder.name!r}")
    suite = data.get("suite")
    if not isinstance(suite, str) or not re.fullmatch(r"[a-z]+", suite):
        raise bad(f"'suite' must be a Debian suite code name like 'bookworm', got {suite!r}")
    packages = data.get("packages", [])
    base_packages = base.get("packages", [])
    for label, pkgs in (("packages", packages), ("base packages", base_packages)):
        if not isinstance(pkgs, list) or not all(isinstance(p, str) for p in pkgs):
            raise bad(f"{label} must be a list of Debian package names")
        wrong = [p for p in pkgs if not _PACKAGE_NAME.match(p)]
        if wrong:
            raise bad(f"not Debian package names in {label}: {wrong}")
    screen = data.get("screen", "1280x800")
    if not isinstance(screen, str) or not _SCREEN.match(screen):
        raise bad(f"'screen' must look like 1280x800, got {screen!r}")
    disk_size = data.get("disk_size", "4G")
    if not isinstance(disk_size, str) or not _DISK_SIZE.match(disk_size):
        raise bad(f"'disk_size' must look like 4G or 3500M, got {disk_size!r}")
    version = data.get("recipe_version", 1)
    if not isinstance(version, int):
        raise bad(f"'recipe_version' must be an integer, got {version!r}")
    tool = data.get("tool")
    if tool is not None and not isinstance(tool, str):
        raise bad(f"'tool' must be a tool name, got {tool!r}")
    return Recipe(name=name, tool=tool, suite=suite, recipe_version=version, screen=screen,
                  disk_size=disk_size, packages=tuple(packages),
                  base_packages=tuple(base_packages), base=base, folder=folder)


def load_recipe(name: str, root: Path | None = None, guest: Path | None = None) -> Recipe:
    """The recipe of tool ``name`` (from ``root``, default the tool folders) over the shared
    guest base (from ``guest``, default ``vm_images/``)."""
    root = root or recipes_root()
    path = root / name / "tool.json"
    meta = _tool_meta(path) if path.is_file() else None
    if meta is None or "image" not in meta:
        known = ", ".join(available_recipes(root)) or "none"
        raise ImageBuildError(f"no image recipe {name!r} in {root} (known: {known}); a tool "
                              "gets one with an 'image' section in its tool.json")
    try:
        base = json.loads(((guest or guest_root()) / "guest" / "base.json").read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ImageBuildError(f"cannot read the guest base of recipe {name!r}: {exc}") from exc
    return parse_recipe(recipe_data(meta), base, folder=path.parent)
