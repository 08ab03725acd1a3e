"""The three stages of a guest image build, and the host programs they run.

``debootstrap``, ``configure`` and ``disk`` (what each does and what its key covers: see
:mod:`.build`, which decides which ones run). Each is a function ``(recipe, directory, log, bar,
*, trees, home, guest_files)`` returning what the build record keeps about it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sciagent_gym.errors import ImageBuildError
from sciagent_gym.providers.qemu.mirror import debian_mirror
from sciagent_gym.providers.qemu.recipe import Recipe
from sciagent_gym.providers.qemu.rootfs import (
    GUEST_UID,
    GUEST_USER,
    add_users,
    chown_tree,
    disk_usage,
    initrd_contents,
    missing_boot_drivers,
    read_if_file,
    remove_path,
    set_zone_permissions,
    symlink,
    version_key,
    write_file,
)

#: Bump when the code of a stage changes in a way its key does not capture.
STAGE_VERSIONS = {"debootstrap": 1, "configure": 2, "disk": 1}
STAGES = ("debootstrap", "configure", "disk")


# -- host programs ----------------------------------------------------------------------------


def require_tools(stages: Sequence[str]) -> None:
    """Raise ImageBuildError saying what to install when a program ``stages`` run is missing,
    or when this process is not root."""
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


# -- progress ---------------------------------------------------------------------------------


class Progress:
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


# -- the stages -------------------------------------------------------------------------------


def _stage_debootstrap(recipe: Recipe, directory: Path, log: Path, bar: Progress,
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
    return {"mirror": mirror, "rootfs_bytes": disk_usage(directory / "rootfs")}


def _stage_configure(recipe: Recipe, directory: Path, log: Path, bar: Progress, *,
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
        remove_path(rootfs / rel)
    written: list[str] = []

    def record(rel: str) -> None:
        written.append(rel)

    add_users(rootfs)
    # The home as every episode starts: the tool's snapshot, plus the working directory.
    user_home = rootfs / "home" / GUEST_USER
    remove_path(user_home)
    if home is not None:
        shutil.copytree(home, user_home, symlinks=True)
    (user_home / "work").mkdir(parents=True, exist_ok=True)
    chown_tree(user_home, GUEST_UID, GUEST_UID)
    set_zone_permissions(rootfs)
    # This package and mss, into the guest's system Python (byte-compiled below).
    site = rootfs / "usr" / "lib" / "python3" / "dist-packages"
    for dest in sorted(trees):
        target = site / dest
        remove_path(target)
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
        remove_path(dst)
        shutil.copy2(src, dst)
        os.chown(dst, 0, 0)
        record(str(rel))
    write_file(rootfs / "etc" / "hostname", f"sciagent-{recipe.name}\n")
    write_file(rootfs / "etc" / "hosts",
               f"127.0.0.1\tlocalhost\n127.0.1.1\tsciagent-{recipe.name}\n"
               "::1\tlocalhost ip6-localhost ip6-loopback\n")
    record("etc/systemd/system/default.target")
    symlink(rootfs / "etc/systemd/system/default.target",
            "/lib/systemd/system/multi-user.target")
    for target, units in recipe.base.get("enable", {}).items():
        for unit in units:
            rel = f"etc/systemd/system/{target}.wants/{unit}"
            src = (f"/etc/systemd/system/{unit}" if (rootfs / "etc/systemd/system" / unit)
                   .exists() else f"/lib/systemd/system/{unit}")
            symlink(rootfs / rel, src)
            record(rel)
    for unit in recipe.base.get("mask", []):
        rel = f"etc/systemd/system/{unit}"
        symlink(rootfs / rel, "/dev/null")
        record(rel)
    manifest_path.write_text(json.dumps(sorted(set(written)), indent=1))
    bar.detail("byte-compiling the package in the guest")
    compile_dirs = [f"/usr/lib/python3/dist-packages/{top}"
                    for top in sorted({d.split('/')[0] for d in trees})]
    _run(["chroot", str(rootfs), "python3", "-m", "compileall", "-q", *compile_dirs], log,
         "byte-compiling the package inside the guest")
    return {"package_trees": {k: str(v) for k, v in trees.items()},
            "snapshot_home": str(home) if home else None}


def _stage_disk(recipe: Recipe, directory: Path, log: Path, bar: Progress, **_: Any
                ) -> dict[str, Any]:
    """ext4 filled from the rootfs without mounting, converted to qcow2; kernel and initrd."""
    rootfs = directory / "rootfs"
    kernels = sorted(rootfs.glob("boot/vmlinuz-*"), key=lambda p: version_key(p.name))
    if not kernels:
        raise ImageBuildError(f"no kernel in {rootfs}/boot: the recipe needs a linux-image "
                              "package (e.g. linux-image-cloud-amd64)")
    kernel = kernels[-1]
    release = kernel.name.removeprefix("vmlinuz-")
    initrd = rootfs / "boot" / f"initrd.img-{release}"
    if not initrd.is_file():
        raise ImageBuildError(f"no initrd for kernel {release} in {rootfs}/boot")
    missing = missing_boot_drivers(read_if_file(rootfs / "boot" / f"config-{release}"),
                                   initrd_contents(initrd))
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


#: Each stage's function, by name (in the order of :data:`STAGES`).
STAGE_FUNCS: dict[str, Callable[..., dict[str, Any]]] = {
    "debootstrap": _stage_debootstrap, "configure": _stage_configure, "disk": _stage_disk}
