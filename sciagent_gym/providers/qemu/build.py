"""Build a tool's guest image, redoing only the stages whose inputs changed.

A build has three stages (:mod:`.stages`), each skipped when the key of its inputs is unchanged:

1. ``debootstrap`` (the slow one, ~90 s): a minbase Debian root filesystem with the packages.
2. ``configure``: users ``user`` (programs) and ``agent`` (CLI commands) sharing group
   ``sciwork`` (the work directory's), the tool's snapshot home, this package, the units.
   Keyed on a hash of everything copied, so a code change redoes only stages 2 and 3.
3. ``disk``: ``mkfs.ext4 -d`` (no root-only loop mounts) and ``qemu-img convert`` to
   ``base.qcow2``, with the kernel and initrd next to it for a direct kernel boot.

The finished image goes to the image store (:mod:`.store`); one build at a time per image.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sciagent_gym.errors import ImageBuildError
from sciagent_gym.providers.qemu.recipe import Recipe, guest_root, load_recipe
from sciagent_gym.providers.qemu.stages import (
    STAGE_FUNCS,
    STAGE_VERSIONS,
    STAGES,
    Progress,
    require_tools,
)
from sciagent_gym.providers.qemu.store import BuiltImage, images_root

# -- stage keys -------------------------------------------------------------------------------


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def hash_tree(root: Path, h: Any = None) -> str:
    """Hash of every file's relative path, mode and content under ``root`` (skips caches)."""
    h = h or hashlib.sha256()
    if not root.exists():
        h.update(b"<absent>")
        return h.hexdigest()
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if _skip(rel.parts, path.name):
            continue
        h.update(str(rel).encode() + b"\0")
        if path.is_symlink():
            h.update(b"L" + os.readlink(path).encode())
        elif path.is_file():
            h.update(b"F%o" % (path.stat().st_mode & 0o777))
            h.update(hashlib.sha256(path.read_bytes()).digest())
        h.update(b"\0")
    return h.hexdigest()


def _skip(parts: Sequence[str], name: str) -> bool:
    return "__pycache__" in parts or name.endswith((".pyc", ".pyo"))


def guest_python_trees() -> dict[str, Path]:
    """The folders of this package (and ``mss``) to copy into the guest's dist-packages.

    With an editable install ``sciagent_gym.envs`` and ``sciagent_gym.task_specs`` live outside
    the package folder; they go to their package place in the guest.
    """
    import mss

    import sciagent_gym
    from sciagent_gym.tools import envs_root, task_specs_root

    pkg = Path(sciagent_gym.__file__).resolve().parent
    trees = {"sciagent_gym": pkg, "mss": Path(mss.__file__).resolve().parent}
    for sub, root in (("envs", envs_root()), ("task_specs", task_specs_root())):
        root = root.resolve()
        if not root.is_relative_to(pkg):
            trees[f"sciagent_gym/{sub}"] = root
    return trees


def snapshot_home(recipe: Recipe) -> Path | None:
    """The tool's home directory at the start of every episode, if the tool has one."""
    if not recipe.tool:
        return None
    from sciagent_gym.tools import tool_info

    try:
        home = tool_info(recipe.tool).folder / "snapshot" / "home"
    except KeyError as exc:
        raise ImageBuildError(f"recipe {recipe.name!r}: {exc.args[0]}") from exc
    return home if home.is_dir() else None


def stage_keys(recipe: Recipe, trees: dict[str, Path], home: Path | None,
               guest_files: Path) -> dict[str, str]:
    """Each stage's key chains the previous one, so an early change redoes everything after."""
    k1 = _digest("debootstrap", STAGE_VERSIONS["debootstrap"], recipe.suite,
                 sorted(recipe.all_packages), recipe.recipe_version)
    code = {dest: hash_tree(src) for dest, src in sorted(trees.items())}
    k2 = _digest("configure", STAGE_VERSIONS["configure"], k1, recipe.name, recipe.screen,
                 recipe.base.get("enable"), recipe.base.get("mask"), code,
                 hash_tree(home) if home else None, hash_tree(guest_files))
    k3 = _digest("disk", STAGE_VERSIONS["disk"], k2, recipe.disk_size)
    return {"debootstrap": k1, "configure": k2, "disk": k3}


def stages_to_run(keys: dict[str, str], done: dict[str, dict], force: bool = False,
                  outputs_exist: dict[str, bool] | None = None) -> list[str]:
    """Stages whose key changed or output is missing, and every stage after the first such."""
    todo: list[str] = []
    for stage in STAGES:
        stale = (force or bool(todo) or done.get(stage, {}).get("key") != keys[stage]
                 or not (outputs_exist or {}).get(stage, True))
        if stale:
            todo.append(stage)
    return todo



# -- the build --------------------------------------------------------------------------------


def build_image(name: str, cache_dir: Path | str | None = None, progress: bool = True,
                force: bool = False) -> BuiltImage:
    """Build (or bring up to date) guest image ``name``; stages with unchanged inputs are skipped.

    Returns the finished image. Raises ImageBuildError with what to install or do.
    """
    recipe = load_recipe(name)
    directory = images_root(cache_dir) / name
    directory.mkdir(parents=True, exist_ok=True)
    # One build at a time per image: envs or test workers started together wait for the
    # first build and then find it up to date.
    with open(directory / ".build.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return _build_locked(name, recipe, directory, progress, force)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _build_locked(name: str, recipe: Recipe, directory: Path, progress: bool,
                  force: bool) -> BuiltImage:
    guest_files = guest_root() / "guest" / "rootfs"
    trees = guest_python_trees()
    home = snapshot_home(recipe)
    keys = stage_keys(recipe, trees, home, guest_files)
    meta_path = directory / "built.json"
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, json.JSONDecodeError):
        meta = {}
    done = meta.get("stages", {})
    rootfs = directory / "rootfs"
    outputs = {"debootstrap": rootfs.is_dir(), "configure": rootfs.is_dir(),
               "disk": all((directory / f).is_file()
                           for f in ("base.qcow2", "vmlinuz", "initrd.img"))}
    todo = stages_to_run(keys, done, force, outputs)
    if todo:
        require_tools(todo)
    meta.update({"name": recipe.name, "tool": recipe.tool, "suite": recipe.suite,
                 "packages": list(recipe.all_packages), "screen": recipe.screen,
                 "disk_size": recipe.disk_size, "recipe_version": recipe.recipe_version})
    bar = Progress(name, progress)
    log = directory / "build.log"
    try:
        for stage in STAGES:
            if stage not in todo:
                bar.line(f"image {name}: {stage} up to date")
                bar.step()
                continue
            meta["complete"] = False
            done.pop(stage, None)
            meta["stages"] = done
            meta_path.write_text(json.dumps(meta, indent=2))
            bar.detail(stage)
            t0 = time.monotonic()
            info = STAGE_FUNCS[stage](recipe, directory, log, bar, trees=trees, home=home,
                                       guest_files=guest_files)
            seconds = round(time.monotonic() - t0, 1)
            done[stage] = {"key": keys[stage], "seconds": seconds, **info}
            meta_path.write_text(json.dumps(meta | {"stages": done}, indent=2))
            bar.line(f"image {name}: {stage} done in {seconds:.1f} s")
            bar.step()
    finally:
        bar.close()
    if todo:
        meta["built_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    meta.update({"complete": True, "stages": done, "kernel": str(directory / "vmlinuz"),
                 "initrd": str(directory / "initrd.img"), "disk": str(directory / "base.qcow2"),
                 "disk_bytes": (directory / "base.qcow2").stat().st_size})
    meta_path.write_text(json.dumps(meta, indent=2))
    return BuiltImage.load(directory)
