"""The guest's root filesystem, edited as files on the host (no chroot, no mounts).

Its users and groups, the permissions of each zone (the programs' home, the shared work
directory, the agent's home), small file operations that replace rather than follow, and the
check that its kernel can mount the virtio root disk before any module is loaded.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
from pathlib import Path
from typing import Any

GUEST_UID = 1000
GUEST_USER = "user"
#: The agent's CLI commands run as this user (another uid than the programs and the server).
AGENT_UID = 1001
AGENT_USER = "agent"
#: The group of the work directory, shared by both.
WORK_GID = 1002
WORK_GROUP = "sciwork"


# -- users and zones --------------------------------------------------------------------------


def add_users(rootfs: Path) -> None:
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
        write_file(path, "\n".join([*kept, *mine.values()]) + "\n", mode)


def set_zone_permissions(rootfs: Path) -> None:
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


# -- small file helpers -----------------------------------------------------------------------


def write_file(path: Path, text: str, mode: int = 0o644) -> None:
    """Replace ``path`` by a file of ``mode`` holding ``text`` (written aside, then renamed)."""
    tmp = path.with_name(path.name + ".sciagent-tmp")
    tmp.write_text(text)
    tmp.chmod(mode)
    tmp.replace(path)


def symlink(path: Path, target: str) -> None:
    """Make ``path`` a symbolic link to ``target``, replacing whatever was there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_path(path)
    path.symlink_to(target)


def remove_path(path: Path) -> None:
    """Remove a file, link (not what it points to) or folder tree; nothing if absent."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def read_if_file(path: Path) -> str:
    """The text of ``path``, or "" when it is not a file."""
    return path.read_text(errors="replace") if path.is_file() else ""


def chown_tree(root: Path, uid: int, gid: int) -> None:
    """Give ``root`` and everything under it to ``uid:gid`` (links themselves, not targets)."""
    os.chown(root, uid, gid, follow_symlinks=False)
    for path in root.rglob("*"):
        os.chown(path, uid, gid, follow_symlinks=False)


def disk_usage(root: Path) -> int:
    """Bytes the files under ``root`` take on disk (``du``)."""
    total = 0
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_blocks * 512
            except OSError:
                pass
    return total


# -- the kernel and its boot drivers ----------------------------------------------------------


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


def initrd_contents(initrd: Path) -> bytes | None:
    """The decompressed initrd, to look for module names in; None when not gzip or damaged."""
    data = initrd.read_bytes()
    if data[:2] == b"\x1f\x8b":  # Debian's default; other layouts (zstd, early cpio) unchecked
        try:
            return gzip.decompress(data)
        except (OSError, EOFError):
            return None
    return None


def version_key(name: str) -> list[Any]:
    """Sort key of kernel file names by version (``vmlinuz-6.1.0-10`` after ``-9``)."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]
