"""Per-zone cgroup v2 limits (memory, processes, CPU share), where the host offers them.

rlimits bound each process; a cgroup bounds a whole zone: the sum of its memory (tmpfs pages
included), its process count, its share of the CPU, and it can kill every process of the zone
at once. A zone gets a cgroup when the interpreter's own cgroup is on a unified (v2) hierarchy
and already delegates the ``memory`` and ``pids`` controllers to its children
(``cgroup.subtree_control``), as a systemd unit with ``Delegate=yes`` or a container runtime
set up. Enabling them ourselves would mean moving this process out of its cgroup (v2 allows
controllers only below cgroups without processes), which is not a library's call; without
delegation (``sandbox.Sandbox.cgroup`` is then None) the zones keep their rlimits, and a
watchdog thread (``memwatch``) holds each zone to the same ``memory_max``.

Machines of this project's CI expose cgroup v1 (with an empty v2 mount), so there the rlimits
and the watchdog apply; tests/e2e/test_cgroups.py checks this module's logic against a
directory shaped like a v2 hierarchy.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
NEEDED = ("memory", "pids")
PREFIX = "sciagent-"


@dataclass(frozen=True)
class CgroupLimits:
    """A zone's whole-zone limits: ``memory_max`` bytes (RAM and tmpfs pages; swap is not
    offered), ``pids_max`` tasks (threads included) and ``cpu_weight`` (1-10000, 100 is
    the default share)."""

    memory_max: int
    pids_max: int
    cpu_weight: int = 100


PROGRAM_CGROUP = CgroupLimits(memory_max=6 << 30, pids_max=2048, cpu_weight=100)
AGENT_CGROUP = CgroupLimits(memory_max=4 << 30, pids_max=256, cpu_weight=50)


def own_cgroup(root: Path = ROOT, proc_cgroup: str | None = None) -> Path | None:
    """This process's cgroup directory on the unified hierarchy, or None (v1 only)."""
    if not (root / "cgroup.controllers").is_file():
        return None
    if proc_cgroup is None:
        try:
            proc_cgroup = Path("/proc/self/cgroup").read_text()
        except OSError:
            return None
    found = re.search(r"^0::(/.*)$", proc_cgroup, re.M)
    if found is None:
        return None
    path = root / found.group(1).lstrip("/")
    return path if path.is_dir() else None


def delegated_parent(root: Path = ROOT, proc_cgroup: str | None = None) -> Path | None:
    """Where zone cgroups can be made: our cgroup, when it delegates memory and pids and we
    may create children in it; else None."""
    base = own_cgroup(root, proc_cgroup)
    if base is None:
        return None
    try:
        enabled = (base / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    if not all(c in enabled for c in NEEDED) or not os.access(base, os.W_OK):
        return None
    return base


class ZoneCgroup:
    """One zone's cgroup: made before the zone starts, joined by its first process (see
    :meth:`join_path`), emptied with ``cgroup.kill`` and removed when the zone stops."""

    def __init__(self, parent: Path, zone: str, limits: CgroupLimits) -> None:
        self.path = parent / f"{PREFIX}{os.getpid()}-{zone}-{secrets.token_hex(4)}"
        self.path.mkdir()
        enabled = (parent / "cgroup.subtree_control").read_text().split()
        self._write("memory.max", str(limits.memory_max))
        self._write("memory.swap.max", "0", optional=True)
        self._write("pids.max", str(limits.pids_max))
        if "cpu" in enabled:
            self._write("cpu.weight", str(limits.cpu_weight))

    def _write(self, name: str, value: str, optional: bool = False) -> None:
        try:
            (self.path / name).write_text(value)
        except OSError:
            if not optional:
                raise

    @property
    def join_path(self) -> str:
        """The file a process writes "0" to, to join (done between fork and exec)."""
        return str(self.path / "cgroup.procs")

    def peak_memory(self) -> int | None:
        """The zone's memory high-water mark (kernel 5.19+), if known."""
        try:
            return int((self.path / "memory.peak").read_text())
        except (OSError, ValueError):
            return None

    def kill_all(self) -> None:
        """End every process of the zone at once (kernel 5.14+; older ones: the zone's own
        pid namespace ends with its first process anyway)."""
        try:
            (self.path / "cgroup.kill").write_text("1")
        except OSError:
            pass

    def remove(self) -> None:
        self.kill_all()
        _remove(self.path)


def _remove(path: Path) -> bool:
    """rmdir, which is how a cgroup goes once it has no process; a plain directory shaped
    like one (tests) is removed with its files."""
    try:
        path.rmdir()
        return True
    except OSError:
        if path.is_relative_to(ROOT):
            return False  # still has processes: the kernel keeps it
        shutil.rmtree(path, ignore_errors=True)
        return True


def sweep_stale(parent: Path | None, alive, dry_run: bool = False) -> list[str]:
    """Remove zone cgroups left by processes that are gone (``alive(pid)`` says); with
    ``dry_run`` only list them."""
    if parent is None:
        return []
    removed = []
    for path in parent.glob(f"{PREFIX}*"):
        found = re.match(rf"{PREFIX}(\d+)-", path.name)
        if found and not alive(int(found.group(1))):
            if dry_run:
                removed.append(str(path))
                continue
            try:
                (path / "cgroup.kill").write_text("1")
            except OSError:
                pass
            if _remove(path):
                removed.append(str(path))
    return removed
