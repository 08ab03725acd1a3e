"""A zone's memory ceiling where no cgroup bounds it (cgroup v1, or v2 without delegation).

A cgroup's ``memory.max`` bounds a whole zone: its processes' memory and the tmpfs pages
they wrote. Without one, rlimits bound each process only, so a zone could hold many times
its budget: several processes each under RLIMIT_AS, plus its tmpfs mounts. A
:class:`MemoryWatchdog` thread per zone samples what the zone holds, measured on the host
(:func:`measure`), and stops the zone once the total passes its budget (the zone's
``CgroupLimits.memory_max``, so both mechanisms enforce the same figure).

What counts (:class:`ZoneMemory`): for every process of the zone's pid namespace (listed
through the zone's own /proc, which the host reaches as ``/proc/<init>/root/proc``),
``RssAnon + RssShmem + VmSwap`` from its ``status`` (counters: 11 us to read for a process
with 2 GiB resident, where PSS from ``smaps_rollup`` walks its page tables in 11 ms); the used
blocks of the zone's tmpfs mounts (statvfs through ``/proc/<init>/root``); and the home
volume where it is a tmpfs. File-backed pages (libraries, page cache) do not count: the
kernel can drop them. A shared-memory file that processes also map counts twice (tmpfs and
RssShmem), which errs toward stopping early.

Memory files (``memfd_create``) that a process holds open count too, mapped or not, by their
allocated blocks (each file once; a mapped one also counts in RssShmem, which errs toward
stopping early). What sampling cannot see, unlike a cgroup: a SysV shared-memory segment no
process attaches (the agent zone's seccomp filter refuses ``shmget``, so only the program zone
could make one) and what is allocated between two samples. Samples come faster as the zone
nears its budget (:func:`next_interval`) so that, at :data:`FILL_RATE`, the zone cannot cross
the remaining headroom between two samples.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

MiB, GiB = 1 << 20, 1 << 30
#: Slowest and fastest sampling (seconds): far from the budget, and right at it.
MAX_INTERVAL = 0.25
MIN_INTERVAL = 0.01
#: How fast a zone is assumed to be able to take memory (bytes/s): about twice the fastest
#: measured here (2-8 processes touching fresh pages on two cores: 4.3 GiB/s; tmpfs writes:
#: 2.9 GiB/s). The headroom divided by it is the time to the next sample.
FILL_RATE = 8 * GiB
#: A sample may take at most this share of the watchdog's time (a zone with thousands of
#: processes is sampled less often rather than costing a core).
MAX_DUTY = 0.05
#: The tmpfs mounts of a zone, as the zone sees them (the root and /dev are read-only ones,
#: counted in case they ever are not); the agent zone's home is one more.
ZONE_MOUNTS = ("/", "/dev", "/dev/shm", "/tmp")
_STATUS_FIELDS = (b"RssAnon:", b"RssShmem:", b"VmSwap:")


def _size(n: int) -> str:
    return f"{n / GiB:.2f} GiB" if n >= GiB else f"{n / MiB:.0f} MiB"


@dataclass(frozen=True)
class ZoneMemory:
    """What a zone holds, in bytes: its processes' anonymous, shared and swapped memory,
    its tmpfs mounts' used blocks and its home volume's (0 where that is not a tmpfs)."""

    processes: int
    tmpfs: int
    volume: int = 0
    count: int = 0

    @property
    def total(self) -> int:
        return self.processes + self.tmpfs + self.volume

    def describe(self, zone: str, budget: int) -> str:
        """E.g. "agent zone used 4.30 GiB of 4.00 GiB (processes 4.00 GiB, tmpfs 300 MiB)"."""
        parts = [f"processes {_size(self.processes)}", f"tmpfs {_size(self.tmpfs)}"]
        if self.volume:
            parts.append(f"home volume {_size(self.volume)}")
        return f"{zone} zone used {_size(self.total)} of {_size(budget)} ({', '.join(parts)})"


def _status_bytes(proc_fd: int, pid: str) -> int:
    """RssAnon + RssShmem + VmSwap of one process (0 for a zombie or one that just ended)."""
    try:
        fd = os.open(f"{pid}/status", os.O_RDONLY, dir_fd=proc_fd)
    except OSError:
        return 0
    try:
        data = os.read(fd, 16384)
    except OSError:
        return 0
    finally:
        os.close(fd)
    kib = 0
    for line in data.split(b"\n"):
        if line.startswith(_STATUS_FIELDS):
            kib += int(line.split()[1])
    return kib * 1024


def _memfd_bytes(proc_fd: int, pid: str, seen: set[tuple[int, int]]) -> int:
    """Allocated bytes of the memory files (``memfd:``) process ``pid`` holds open, each file
    once across the zone (``seen``): memory no mapping and no mount shows."""
    try:
        dir_fd = os.open(f"{pid}/fd", os.O_RDONLY | os.O_DIRECTORY, dir_fd=proc_fd)
    except OSError:
        return 0
    try:
        fds = os.listdir(dir_fd)
    except OSError:
        return 0
    finally:
        os.close(dir_fd)
    total = 0
    for fd in fds:
        try:
            if not os.readlink(f"{pid}/fd/{fd}", dir_fd=proc_fd).startswith("/memfd:"):
                continue
            st = os.stat(f"{pid}/fd/{fd}", dir_fd=proc_fd)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            total += st.st_blocks * 512
    return total


def _used(path: str, seen: set[int]) -> int:
    """Used bytes of the filesystem at ``path`` unless one already counted (same device)."""
    try:
        dev = os.stat(path).st_dev
        if dev in seen:
            return 0
        seen.add(dev)
        vfs = os.statvfs(path)
    except OSError:
        return 0
    return (vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize


def measure(init_pid: int, pid_ns: int, mounts: Sequence[str] = ZONE_MOUNTS,
            volume: Path | None = None) -> ZoneMemory | None:
    """What the zone whose first process (bubblewrap's pid 1 inside) is host pid ``init_pid``
    holds; None once that zone is gone (the pid ended, or was reused: its pid namespace is
    no longer ``pid_ns``). Reads the zone's /proc and mounts, so it needs root or the zone's
    own uid."""
    root = f"/proc/{init_pid}/root"
    try:
        if os.stat(f"/proc/{init_pid}/ns/pid").st_ino != pid_ns:
            return None
        proc_fd = os.open(f"{root}/proc", os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        pids = [name for name in os.listdir(proc_fd) if name.isdigit()]
        memfds: set[tuple[int, int]] = set()
        processes = sum(_status_bytes(proc_fd, pid) + _memfd_bytes(proc_fd, pid, memfds)
                        for pid in pids)
    finally:
        os.close(proc_fd)
    seen: set[int] = set()
    tmpfs = sum(_used(f"{root}{path}", seen) for path in mounts)
    held = _used(str(volume), seen) if volume is not None else 0
    return ZoneMemory(processes, tmpfs, held, len(pids))


def next_interval(headroom: int, cost: float) -> float:
    """Seconds to the next sample: the time the zone needs to fill ``headroom`` at
    :data:`FILL_RATE`, within [MIN_INTERVAL, MAX_INTERVAL], and never so soon that sampling
    (``cost`` seconds each) takes more than :data:`MAX_DUTY` of the time."""
    interval = min(max(headroom / FILL_RATE, MIN_INTERVAL), MAX_INTERVAL)
    return max(interval, cost / MAX_DUTY)


class MemoryWatchdog:
    """Samples one zone in a daemon thread. When the zone holds more than ``budget`` bytes
    it calls ``on_exceeded(reason)`` once (which stops the zone) and ends; it ends quietly
    when the zone is gone or on :meth:`stop`."""

    def __init__(self, zone: str, init_pid: int, pid_ns: int, budget: int,
                 on_exceeded: Callable[[str], None], mounts: Sequence[str] = ZONE_MOUNTS,
                 volume: Path | None = None) -> None:
        self.zone, self.budget = zone, budget
        self._args = (init_pid, pid_ns, tuple(mounts), volume)
        self._on_exceeded = on_exceeded
        self._stopped = threading.Event()
        #: The last sample, the largest total seen and how many samples were taken.
        self.last: ZoneMemory | None = None
        self.peak = 0
        self.samples = 0
        self._thread = threading.Thread(target=self._run, name=f"sciagent-memwatch-{zone}",
                                        daemon=True)

    def start(self) -> MemoryWatchdog:
        self._thread.start()
        return self

    def sample(self) -> ZoneMemory | None:
        """Measure the zone now (see :func:`measure`)."""
        return measure(*self._args)

    def _run(self) -> None:
        interval = 0.0
        while not self._stopped.wait(interval):
            t0 = time.perf_counter()
            usage = self.sample()
            cost = time.perf_counter() - t0
            if usage is None:
                return
            self.last, self.peak, self.samples = usage, max(self.peak, usage.total), \
                self.samples + 1
            if usage.total > self.budget:
                if not self._stopped.is_set():
                    self._on_exceeded(usage.describe(self.zone, self.budget))
                return
            interval = next_interval(self.budget - usage.total, cost)

    def stop(self) -> None:
        """End the thread (waits for a sample in progress)."""
        self._stopped.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(5.0)
