"""Where built guest images live, and what a finished one holds.

Images live in ``$SCIAGENT_CACHE/images/<name>/`` (default ``~/.cache/sciagent-gym``): the disk
``base.qcow2``, the ``vmlinuz`` and ``initrd.img`` a VM boots directly, and ``built.json``, the
build record (stage keys and timings, packages, screen); an image counts once it is complete.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciagent_gym.errors import ImageBuildError


def images_root(cache_dir: Path | str | None = None) -> Path:
    """Folder holding one sub-folder per image."""
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get("SCIAGENT_CACHE")
    base = Path(env) if env else Path.home() / ".cache" / "sciagent-gym"
    return base / "images"


@dataclass(frozen=True)
class BuiltImage:
    """A finished guest image: what a VM needs to boot it, and its build record."""

    name: str
    directory: Path
    disk: Path
    kernel: Path
    initrd: Path
    meta: dict[str, Any] = field(compare=False, repr=False)

    @property
    def screen(self) -> str:
        return self.meta.get("screen", "1280x800")

    @property
    def key(self) -> str:
        """Unique to one build of the disk (saved VM states are only valid on that build)."""
        disk = self.meta["stages"]["disk"]
        return disk.get("build_id") or disk["key"]

    @property
    def built_at(self) -> str:
        return self.meta.get("built_at", "")

    @property
    def disk_bytes(self) -> int:
        return self.disk.stat().st_size if self.disk.exists() else 0

    @classmethod
    def load(cls, directory: Path) -> BuiltImage:
        meta = json.loads((directory / "built.json").read_text())
        if not meta.get("complete"):
            raise ImageBuildError(f"image in {directory} is not completely built: run "
                                  f"'sciagent-gym image build {directory.name}'")
        return cls(name=meta["name"], directory=directory, disk=directory / "base.qcow2",
                   kernel=directory / "vmlinuz", initrd=directory / "initrd.img", meta=meta)


def list_images(cache_dir: Path | str | None = None) -> list[BuiltImage]:
    """Every completely built image under the cache folder."""
    found = []
    root = images_root(cache_dir)
    for meta in sorted(root.glob("*/built.json")):
        try:
            found.append(BuiltImage.load(meta.parent))
        except (ImageBuildError, OSError, KeyError, json.JSONDecodeError):
            continue
    return found


def get_image(name: str, cache_dir: Path | str | None = None) -> BuiltImage:
    """The built image ``name``; raise ImageBuildError saying how to build it if absent."""
    directory = images_root(cache_dir) / name
    if not (directory / "built.json").is_file():
        raise ImageBuildError(f"guest image {name!r} is not built: run "
                              f"'sciagent-gym image build {name}'")
    return BuiltImage.load(directory)
