"""Build and list QEMU guest images, one per tool.

A recipe is the ``image`` section of ``envs/<tool>/tool.json`` (Debian suite, screen size, disk
size; the packages are the tool's own, from its ``requires``); ``vm_images/guest/`` holds what
every guest shares (base packages, the systemd units of the display and the control server,
masked units). A build has three stages, each
skipped when the key of its inputs is unchanged:

1. ``debootstrap`` (the slow one, ~90 s): a minbase Debian root filesystem with the packages.
2. ``configure``: users ``user`` (programs) and ``agent`` (CLI commands) sharing group
   ``sciwork`` (the work directory's), the tool's snapshot home, this package, the units.
   Keyed on a hash of everything copied, so a code change redoes only stages 2 and 3.
3. ``disk``: ``mkfs.ext4 -d`` (no root-only loop mounts) and ``qemu-img convert`` to
   ``base.qcow2``, with the kernel and initrd next to it for a direct kernel boot.

Images live in ``$SCIAGENT_CACHE/images/<name>/`` (default ``~/.cache/sciagent-gym``).
"""

from __future__ import annotations

import fcntl
import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciagent_gym.errors import (
    ImageBuildError,  # noqa: F401 (re-exported)
    )

#: Bump when the code of a stage changes in a way its key does not capture.
STAGE_VERSIONS = {"debootstrap": 1, "configure": 2, "disk": 1}
STAGES = ("debootstrap", "configure", "disk")
GUEST_UID = 1000
GUEST_USER = "user"
#: The agent's CLI commands run as this user (another uid than the programs and the server).
AGENT_UID = 1001
AGENT_USER = "agent"
#: The group of the work directory, shared by both.
WORK_GID = 1002
WORK_GROUP = "sciwork"
_PACKAGE_NAME = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")
_SCREEN = re.compile(r"^[1-9][0-9]{2,4}x[1-9][0-9]{2,4}$")
_DISK_SIZE = re.compile(r"^[1-9][0-9]*[MG]$")


# -- recipes ----------------------------------------------------------------------------------


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


# -- where images live ------------------------------------------------------------------------


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


# -- Debian mirror from the host's apt sources ------------------------------------------------


@dataclass(frozen=True)
class AptSource:
    uri: str
    suites: tuple[str, ...]
    components: tuple[str, ...]


def parse_one_line_sources(text: str) -> list[AptSource]:
    """``deb [options] URI SUITE COMPONENT...`` lines (sources.list format)."""
    found = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line.startswith("deb "):
            continue
        line = re.sub(r"\[[^\]]*\]", " ", line[4:])  # drop [arch=... signed-by=...]
        parts = line.split()
        if len(parts) >= 2:
            found.append(AptSource(parts[0], (parts[1],), tuple(parts[2:])))
    return found


def parse_deb822_sources(text: str) -> list[AptSource]:
    """Paragraphs of ``Types/URIs/Suites/Components`` fields (``*.sources`` format)."""
    found = []
    for para in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        key = None
        for line in para.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            if line[0] in " \t" and key:  # continuation line
                fields[key] += " " + line.strip()
                continue
            key, _, value = line.partition(":")
            key = key.strip().lower()
            fields[key] = value.strip()
        if "deb" not in fields.get("types", "").split():
            continue
        if fields.get("enabled", "yes").lower() == "no":
            continue
        for uri in fields.get("uris", "").split():
            found.append(AptSource(uri, tuple(fields.get("suites", "").split()),
                                   tuple(fields.get("components", "").split())))
    return found


def host_apt_sources(etc_apt: Path = Path("/etc/apt")) -> list[AptSource]:
    sources = []
    files = [etc_apt / "sources.list", *sorted((etc_apt / "sources.list.d").glob("*"))]
    for path in files:
        if not path.is_file():
            continue
        try:
            text = path.read_text()
        except OSError:
            continue
        if path.name.endswith(".list"):
            sources += parse_one_line_sources(text)
        elif path.name.endswith(".sources"):
            sources += parse_deb822_sources(text)
    return sources


def pick_mirror(sources: Iterable[AptSource], suite: str) -> str | None:
    """The URI of a source carrying ``suite`` itself (not -updates/-security) with ``main``."""
    usable = [s for s in sources if s.uri.startswith(("http://", "https://", "file:/"))]
    for want_main in (True, False):
        for s in usable:
            if suite in s.suites and ("main" in s.components or not want_main):
                return s.uri
    return None


def debian_mirror(suite: str, etc_apt: Path = Path("/etc/apt")) -> str:
    """``$SCIAGENT_DEBIAN_MIRROR`` or the host's configured mirror for ``suite``."""
    env = os.environ.get("SCIAGENT_DEBIAN_MIRROR")
    if env:
        return env
    mirror = pick_mirror(host_apt_sources(etc_apt), suite)
    if mirror is None:
        raise ImageBuildError(
            f"no Debian mirror for suite {suite!r} in {etc_apt}/sources.list or "
            f"{etc_apt}/sources.list.d/*.sources|*.list; add one there or set "
            "SCIAGENT_DEBIAN_MIRROR=URL")
    return mirror


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


def _require_tools(stages: Sequence[str]) -> None:
    needs = {"debootstrap": [("debootstrap", "debootstrap"), ("chroot", "coreutils")],
             "configure": [("chroot", "coreutils")],
             "disk": [("mkfs.ext4", "e2fsprogs"), ("qemu-img", "qemu-utils"),
                      ("truncate", "coreutils")]}
    missing = {pkg: prog for st in stages for prog, pkg in needs[st]
               if _find_program(prog) is None}
    if missing:
        raise ImageBuildError(f"missing programs {sorted(missing.values())}: install them with "
                              f"'apt-get install -y {' '.join(sorted(missing))}'")
    if os.geteuid() != 0:
        raise ImageBuildError("building a guest image needs root (debootstrap, chroot and "
                              "root-owned files in the disk): run it as root or with sudo")


def _find_program(prog: str) -> str | None:
    """``shutil.which`` that also looks in the sbin folders a non-login PATH may lack."""
    for cand in (shutil.which(prog), f"/usr/sbin/{prog}", f"/sbin/{prog}"):
        if cand and Path(cand).exists():
            return cand
    return None


def _which(prog: str) -> str:
    return _find_program(prog) or prog


class _Progress:
    """Stage progress: a tqdm bar on a terminal, plain lines otherwise, nothing when quiet."""

    def __init__(self, name: str, enabled: bool) -> None:
        self.enabled = enabled
        self.bar = None
        if enabled and sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=len(STAGES), desc=f"image {name}", unit="stage",
                            bar_format="{desc}: {n}/{total} stages |{bar}| {elapsed} {postfix}")

    def detail(self, text: str) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(text[:70])

    def line(self, text: str) -> None:
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.write(text)
        else:
            print(text, file=sys.stderr, flush=True)

    def step(self) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _run(argv: Sequence[str], log: Path, what: str,
         on_line: Callable[[str], None] | None = None) -> None:
    """Run a build command, its output appended to ``log``; raise with the log's tail."""
    with log.open("a") as out:
        out.write(f"$ {' '.join(argv)}\n")
        out.flush()
        proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, text=True, errors="replace")
        assert proc.stdout is not None
        for line in proc.stdout:
            out.write(line)
            if on_line:
                on_line(line.strip())
        code = proc.wait()
    if code != 0:
        tail = "".join(log.read_text(errors="replace").splitlines(True)[-15:])
        raise ImageBuildError(f"{what} failed (exit {code}); last lines of {log}:\n{tail}")


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
        _require_tools(todo)
    meta.update({"name": recipe.name, "tool": recipe.tool, "suite": recipe.suite,
                 "packages": list(recipe.all_packages), "screen": recipe.screen,
                 "disk_size": recipe.disk_size, "recipe_version": recipe.recipe_version})
    bar = _Progress(name, progress)
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
            info = _STAGE_FUNCS[stage](recipe, directory, log, bar, trees=trees, home=home,
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


def _stage_debootstrap(recipe: Recipe, directory: Path, log: Path, bar: _Progress,
                       **_: Any) -> dict[str, Any]:
    """Debian minbase with the packages into ``rootfs/`` (built aside, renamed when done)."""
    mirror = debian_mirror(recipe.suite)
    tmp = directory / "rootfs.partial"
    for old in (tmp, directory / "rootfs"):
        if old.exists():
            shutil.rmtree(old)
    debs = directory.parent / ".debs"  # downloaded packages, shared by all images
    debs.mkdir(exist_ok=True)
    log.write_text("")
    _run([_which("debootstrap"), "--variant=minbase", "--components=main",
          f"--include={','.join(recipe.all_packages)}", f"--cache-dir={debs}",
          recipe.suite, str(tmp), mirror], log, "debootstrap", on_line=bar.detail)
    # apt-get clean, and the package lists: the guest has no network to use them.
    for pattern in ("var/cache/apt/archives/*.deb", "var/cache/apt/*.bin",
                    "var/lib/apt/lists/*_Packages", "var/lib/apt/lists/*_Release*"):
        for path in tmp.glob(pattern):
            path.unlink()
    tmp.rename(directory / "rootfs")
    return {"mirror": mirror, "rootfs_bytes": _du(directory / "rootfs")}


def _stage_configure(recipe: Recipe, directory: Path, log: Path, bar: _Progress, *,
                     trees: dict[str, Path], home: Path | None, guest_files: Path
                     ) -> dict[str, Any]:
    """Idempotent: files written last time are removed first (``configure-manifest.json``)."""
    rootfs = directory / "rootfs"
    manifest_path = directory / "configure-manifest.json"
    try:
        previous = json.loads(manifest_path.read_text())
    except (OSError, json.JSONDecodeError):
        previous = []
    for rel in previous:
        _remove(rootfs / rel)
    written: list[str] = []

    def record(rel: str) -> None:
        written.append(rel)

    _add_users(rootfs)
    # The home as every episode starts: the tool's snapshot, plus the working directory.
    user_home = rootfs / "home" / GUEST_USER
    _remove(user_home)
    if home is not None:
        shutil.copytree(home, user_home, symlinks=True)
    (user_home / "work").mkdir(parents=True, exist_ok=True)
    _chown_tree(user_home, GUEST_UID, GUEST_UID)
    _zone_permissions(rootfs)
    # This package and mss, into the guest's system Python (byte-compiled below).
    site = rootfs / "usr" / "lib" / "python3" / "dist-packages"
    for dest in sorted(trees):
        target = site / dest
        _remove(target)
        shutil.copytree(trees[dest], target, symlinks=False,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo"))
    for top in {d.split("/")[0] for d in trees}:
        record(f"usr/lib/python3/dist-packages/{top}")
    # Shared guest files: units, scripts, network, journald, fstab.
    for src in sorted(guest_files.rglob("*")):
        if src.is_dir():
            continue
        rel = src.relative_to(guest_files)
        dst = rootfs / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        _remove(dst)
        shutil.copy2(src, dst)
        os.chown(dst, 0, 0)
        record(str(rel))
    _write(rootfs / "etc" / "hostname", f"sciagent-{recipe.name}\n")
    _write(rootfs / "etc" / "hosts",
           f"127.0.0.1\tlocalhost\n127.0.1.1\tsciagent-{recipe.name}\n"
           "::1\tlocalhost ip6-localhost ip6-loopback\n")
    record("etc/systemd/system/default.target")
    _link(rootfs / "etc/systemd/system/default.target", "/lib/systemd/system/multi-user.target")
    for target, units in recipe.base.get("enable", {}).items():
        for unit in units:
            rel = f"etc/systemd/system/{target}.wants/{unit}"
            src = (f"/etc/systemd/system/{unit}" if (rootfs / "etc/systemd/system" / unit)
                   .exists() else f"/lib/systemd/system/{unit}")
            _link(rootfs / rel, src)
            record(rel)
    for unit in recipe.base.get("mask", []):
        rel = f"etc/systemd/system/{unit}"
        _link(rootfs / rel, "/dev/null")
        record(rel)
    manifest_path.write_text(json.dumps(sorted(set(written)), indent=1))
    bar.detail("byte-compiling the package in the guest")
    compile_dirs = [f"/usr/lib/python3/dist-packages/{top}"
                    for top in sorted({d.split('/')[0] for d in trees})]
    _run(["chroot", str(rootfs), "python3", "-m", "compileall", "-q", *compile_dirs], log,
         "byte-compiling the package inside the guest")
    return {"package_trees": {k: str(v) for k, v in trees.items()},
            "snapshot_home": str(home) if home else None}


def _stage_disk(recipe: Recipe, directory: Path, log: Path, bar: _Progress, **_: Any
                ) -> dict[str, Any]:
    """ext4 filled from the rootfs without mounting, converted to qcow2; kernel and initrd."""
    rootfs = directory / "rootfs"
    kernels = sorted(rootfs.glob("boot/vmlinuz-*"), key=lambda p: _version_key(p.name))
    if not kernels:
        raise ImageBuildError(f"no kernel in {rootfs}/boot: the recipe needs a linux-image "
                              "package (e.g. linux-image-cloud-amd64)")
    kernel = kernels[-1]
    release = kernel.name.removeprefix("vmlinuz-")
    initrd = rootfs / "boot" / f"initrd.img-{release}"
    if not initrd.is_file():
        raise ImageBuildError(f"no initrd for kernel {release} in {rootfs}/boot")
    missing = missing_boot_drivers(_read(rootfs / "boot" / f"config-{release}"),
                                   _initrd_listing(initrd))
    if missing:
        raise ImageBuildError(f"kernel {release} cannot mount the virtio root disk: {missing} "
                              "neither built in nor in the initrd; use linux-image-cloud-amd64 "
                              "or add the modules to /etc/initramfs-tools/modules")
    raw, qcow = directory / "disk.raw", directory / "base.qcow2.partial"
    for path in (raw, qcow):
        path.unlink(missing_ok=True)
    _run(["truncate", "-s", recipe.disk_size, str(raw)], log, "truncate")
    bar.detail("mkfs.ext4 -d")
    _run([_which("mkfs.ext4"), "-q", "-F", "-L", "sciagent-root", "-d", str(rootfs), str(raw)],
         log, "mkfs.ext4 -d (needs e2fsprogs >= 1.43)")
    bar.detail("qemu-img convert")
    _run(["qemu-img", "convert", "-f", "raw", "-O", "qcow2", str(raw), str(qcow)], log,
         "qemu-img convert")
    raw.unlink()
    for src, name in ((kernel, "vmlinuz"), (initrd, "initrd.img")):
        shutil.copyfile(src, directory / f"{name}.partial")
        (directory / f"{name}.partial").rename(directory / name)
    qcow.rename(directory / "base.qcow2")
    return {"build_id": uuid.uuid4().hex, "kernel_release": release,
            "disk_bytes": (directory / "base.qcow2").stat().st_size,
            "kernel_bytes": kernel.stat().st_size, "initrd_bytes": initrd.stat().st_size}


#: What the kernel needs before the root disk is mounted: config option -> module file name.
BOOT_DRIVERS = {"VIRTIO_PCI": "virtio_pci.ko", "VIRTIO_BLK": "virtio_blk.ko",
                "EXT4_FS": "ext4.ko"}


def missing_boot_drivers(config: str, initrd_listing: bytes | None) -> list[str]:
    """Root-disk drivers neither built into the kernel nor found in the initrd.

    ``initrd_listing`` is the decompressed initrd (None: compression not readable here, so
    modules are assumed present).
    """
    missing = []
    for option, module in BOOT_DRIVERS.items():
        found = re.search(rf"^CONFIG_{option}=([ym])$", config, re.M)
        if found is None:
            missing.append(f"CONFIG_{option}")
        elif (found.group(1) == "m" and initrd_listing is not None
              and f"/{module}".encode() not in initrd_listing):
            missing.append(module)
    return missing


def _initrd_listing(initrd: Path) -> bytes | None:
    data = initrd.read_bytes()
    if data[:2] == b"\x1f\x8b":  # Debian's default; other layouts (zstd, early cpio) unchecked
        try:
            return gzip.decompress(data)
        except (OSError, EOFError):
            return None
    return None


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.is_file() else ""


_STAGE_FUNCS: dict[str, Callable[..., dict[str, Any]]] = {
    "debootstrap": _stage_debootstrap, "configure": _stage_configure, "disk": _stage_disk}


# -- small file helpers -----------------------------------------------------------------------


def _add_users(rootfs: Path) -> None:
    """``user`` (programs), ``agent`` (CLI commands) and their shared group ``sciwork``, with
    locked passwords, in passwd/group/shadow/gshadow, idempotently."""
    entries = {
        "passwd": {
            GUEST_USER: f"{GUEST_USER}:x:{GUEST_UID}:{GUEST_UID}:sciagent:/home/{GUEST_USER}:"
                        "/bin/bash",
            AGENT_USER: f"{AGENT_USER}:x:{AGENT_UID}:{AGENT_UID}:sciagent agent:"
                        f"/home/{AGENT_USER}:/bin/sh"},
        "group": {GUEST_USER: f"{GUEST_USER}:x:{GUEST_UID}:",
                  AGENT_USER: f"{AGENT_USER}:x:{AGENT_UID}:",
                  WORK_GROUP: f"{WORK_GROUP}:x:{WORK_GID}:{GUEST_USER},{AGENT_USER}"},
        "shadow": {name: f"{name}:!:19000:0:99999:7:::" for name in (GUEST_USER, AGENT_USER)},
        "gshadow": {GUEST_USER: f"{GUEST_USER}:!::", AGENT_USER: f"{AGENT_USER}:!::",
                    WORK_GROUP: f"{WORK_GROUP}:!::{GUEST_USER},{AGENT_USER}"},
    }
    for fname, mine in entries.items():
        path = rootfs / "etc" / fname
        lines = path.read_text().splitlines() if path.exists() else []
        kept = [ln for ln in lines if ln.split(":", 1)[0] not in mine]
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
        _write(path, "\n".join([*kept, *mine.values()]) + "\n", mode)


def _zone_permissions(rootfs: Path) -> None:
    """What each zone may touch: ``/home/user`` only traversable by others (to reach work),
    everything in it but work private to ``user``; work shared with ``agent`` through the
    group (setgid, so what either writes stays shared); ``/home/agent`` the agent's own."""
    user_home = rootfs / "home" / GUEST_USER
    user_home.chmod(0o711)
    for entry in user_home.iterdir():
        if entry.name != "work" and not entry.is_symlink():
            entry.chmod(entry.stat().st_mode & 0o700)
    work = user_home / "work"
    os.chown(work, GUEST_UID, WORK_GID)
    work.chmod(0o2770)
    agent_home = rootfs / "home" / AGENT_USER
    agent_home.mkdir(exist_ok=True)
    os.chown(agent_home, AGENT_UID, AGENT_UID)
    agent_home.chmod(0o700)


def _write(path: Path, text: str, mode: int = 0o644) -> None:
    tmp = path.with_name(path.name + ".sciagent-tmp")
    tmp.write_text(text)
    tmp.chmod(mode)
    tmp.replace(path)


def _link(path: Path, target: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove(path)
    path.symlink_to(target)


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    os.chown(root, uid, gid, follow_symlinks=False)
    for path in root.rglob("*"):
        os.chown(path, uid, gid, follow_symlinks=False)


def _du(root: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_blocks * 512
            except OSError:
                pass
    return total


def _version_key(name: str) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]

