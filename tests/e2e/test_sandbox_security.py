"""Unit tests of the sandbox's defences that need no tool: seccomp filter, fail-closed
isolation, forged helper replies, bounded helper reads, a read-only /dev and root with sized
tmpfs mounts, the memory watchdog, safe copies in and out, stale sweeps."""

from __future__ import annotations

import os
import struct
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pytest

from sciagent_gym.errors import SandboxError
from sciagent_gym.evaluation.isolated import run_sandboxed
from sciagent_gym.isolation import confinement as conf
from sciagent_gym.processes import wait_for
from sciagent_gym.providers.local import cgroups
from sciagent_gym.providers.local import sandbox as sb
from sciagent_gym.safe_fs import FreezeLimits, copy_into, empty_dir, freeze_copy

needs_bwrap = pytest.mark.skipif(sb.bwrap_problem() is not None,
                                 reason=f"bubblewrap cannot isolate: {sb.bwrap_problem()}")


def _zone(tmp_path: Path) -> sb.Sandbox:
    """A program zone with no display (none is needed to run commands)."""
    box = sb.Sandbox(":0", "/nonexistent", "bwrap")
    box.show_display = False
    return box


def test_seccomp_program_denies_the_listed_calls_and_allows_the_rest():
    prog = conf.seccomp_program()
    assert prog is not None and len(prog) % 8 == 0
    insns = [struct.unpack("<HBBI", prog[i:i + 8]) for i in range(0, len(prog), 8)]
    eperm = len(insns) - 1
    assert insns[-1] == (0x06, 0, 0, 0x00050000 | 1) and insns[-2][3] == 0x7FFF0000
    denied = {k for code, jt, jf, k in insns if code == 0x15 and jt and
              jt + insns.index((code, jt, jf, k)) + 1 == eperm}
    assert set(conf.DENIED_SYSCALLS_X86_64.values()) <= denied
    assert 0 not in denied and 1 not in denied  # read, write stay allowed


@needs_bwrap
def test_sandboxed_processes_have_no_privilege(tmp_path):
    box = _zone(tmp_path)
    try:
        box.start()
        out = box.exec(shell="id -u; grep CapEff /proc/self/status; unshare -U true; echo $?; "
                             "python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True);"
                             " print(l.syscall(165, 0, 0, 0, 0, 0), ctypes.get_errno())'").output
        uid, _, caps, *rest = out.split()
        assert int(uid) != 0 and int(caps, 16) == 0
        assert "1" in rest[-3:-2] or rest[-3] != "0"  # unshare failed
        assert rest[-2:] == ["-1", "1"]  # mount: EPERM from the filter
    finally:
        box.close()


_FORK_PROBE = """
import os, subprocess, threading
t = threading.Thread(target=print, args=("thread ran",), kwargs={"flush": True})
t.start(); t.join()
try:
    pid = os.fork()
except OSError as exc:
    print("fork refused", exc.errno, flush=True)
else:
    if pid == 0:
        os._exit(0)
    print("forked", flush=True)
try:
    subprocess.run(["/bin/true"])
    print("spawned", flush=True)
except OSError as exc:
    print("spawn refused", exc.errno, flush=True)
print("end", flush=True)
"""


@needs_bwrap
def test_a_no_children_program_starts_threads_but_no_process(tmp_path):
    """A program launched through ``no_children_argv`` (Praat: its console's runSystem could
    start a loop beside it that replaces its answer files) runs threads, but neither fork nor
    a spawned program; the zone's helper, outside the filter, still starts processes."""
    box = _zone(tmp_path)
    try:
        box.start()
        logs = {}
        for name, argv in (("plain", ["/usr/bin/python3", "-I", "-c", _FORK_PROBE]),
                           ("filtered", conf.no_children_argv(
                               ["/usr/bin/python3", "-I", "-c", _FORK_PROBE]))):
            box.spawn(name, argv, log=f"{box.tmp}/{name}.log")
            assert wait_for(lambda n=name: "end" in (box.read(f"{box.tmp}/{n}.log") or ""),
                            timeout=20)
            logs[name] = box.read(f"{box.tmp}/{name}.log").split("\n")
        assert {"thread ran", "forked", "spawned"} <= set(logs["plain"])
        assert "thread ran" in logs["filtered"]
        assert "fork refused 1" in logs["filtered"] and "spawn refused 1" in logs["filtered"]
        assert box.exec(shell="echo ok").output == "ok\n"
    finally:
        box.close()


def test_isolation_fails_closed(monkeypatch):
    monkeypatch.setattr(sb, "bwrap_problem", lambda: "user namespaces are disabled")
    with pytest.raises(SandboxError, match="user namespaces are disabled"):
        sb.resolve_isolation("auto")
    with pytest.raises(SandboxError):
        sb.resolve_isolation("bwrap")
    with pytest.warns(RuntimeWarning, match="unsandboxed"):
        assert sb.resolve_isolation("none") == "none"


@needs_bwrap
def test_a_forged_or_out_of_order_reply_stops_the_zone(tmp_path):
    box = _zone(tmp_path)
    try:
        box.start()
        assert box.exec(shell="echo ok").output == "ok\n"
        read_fd, write_fd = os.pipe()
        real = box._from
        box._from = os.fdopen(read_fd, "rb")
        os.write(write_fd, b'{"id": 2, "ok": true, "returncode": 0, "output": "forged", '
                           b'"timed_out": false, "truncated": false}\n')
        with pytest.raises(SandboxError, match="forged"):
            box._read_reply(1.0, 2)
        assert not box.alive
        real.close()
        os.close(write_fd)
    finally:
        box.close()


@needs_bwrap
def test_helper_pipes_are_out_of_the_zones_reach(tmp_path):
    """The agent zone sees no fd of the helper's channel: pid 1 (bubblewrap) holds only
    /dev/null and its stderr pipe, the helper's /proc files are closed (non-dumpable)."""
    owner = _zone(tmp_path)
    box = owner.agent_zone()
    box.show_display = False
    try:
        box.start()
        out = box.exec(shell="for p in /proc/[0-9]*; do ls -l $p/fd 2>&1; done").output
        assert "Permission denied" in out  # the helper's fd directory
        box_pipes = [ln for ln in out.splitlines() if "pipe:" in ln and " 0 -> " in ln]
        assert not box_pipes, out
        assert box.exec(shell="echo still").output == "still\n"
    finally:
        box.close()
        owner.close()


@needs_bwrap
def test_helper_reads_are_bounded_and_never_block(tmp_path):
    box = _zone(tmp_path)
    try:
        box.start()
        box.exec(shell="mkfifo /tmp/fifo; head -c 5000000 /dev/zero | tr '\\0' a > /tmp/big")
        t0 = time.monotonic()
        assert box.read("/tmp/fifo") is None
        assert time.monotonic() - t0 < 2
        assert len(box.read("/tmp/big", max_bytes=1000)) == 1000
        res = box.exec(shell="yes | head -c 50000000", max_output=100)
        assert res.truncated and len(res.output) == 100
    finally:
        box.close()


#: Writes past /dev/shm's cap, into /dev, the root and /tmp, then prints what each took
#: (-1: nothing was written); ``$1`` is the shm cap in MiB.
_FILL_MOUNTS = """
took() { stat -c %s "$1" 2>/dev/null || echo -1; rm -f "$1"; }
head -c $(($1 + 8))M /dev/zero > /dev/shm/fill 2>/dev/null; echo shm $(took /dev/shm/fill)
head -c 8M /dev/zero > /dev/fill 2>/dev/null; echo dev $(took /dev/fill)
head -c 8M /dev/zero > /fill 2>/dev/null; echo root $(took /fill)
head -c 1M /dev/zero > /tmp/fill && echo tmp $(took /tmp/fill)
echo null > /dev/null && head -c 4 /dev/urandom | wc -c
"""


def _fill_report(out: str) -> dict[str, int]:
    return {w[0]: int(w[1]) for w in (ln.split() for ln in out.splitlines()) if len(w) == 2}


@needs_bwrap
def test_dev_and_root_are_read_only_and_shm_is_capped_in_every_sandbox(tmp_path):
    """bubblewrap's /dev and root are tmpfs sized at half the host's RAM: only the sized
    mounts (/dev/shm, /tmp, homes) may take writes, in both zones and the parser sandbox."""
    owner = _zone(tmp_path)
    agent = owner.agent_zone()
    agent.show_display = False
    try:
        for zone, limits in ((owner, conf.PROGRAM_LIMITS), (agent, conf.AGENT_LIMITS)):
            zone.start()
            cap = limits.shm_bytes
            out = zone.exec(shell=f"set -- {cap >> 20}; {_FILL_MOUNTS}", timeout=20).output
            assert _fill_report(out) == {"shm": cap, "dev": -1, "root": -1,
                                         "tmp": 1 << 20}, out
            assert out.rstrip().endswith("4"), out  # device nodes still work
    finally:
        agent.close()
        owner.close()
    cap = conf.PARSER_LIMITS.shm_bytes
    res = run_sandboxed(["/bin/sh", "-c", _FILL_MOUNTS, "sh", str(cap >> 20)], timeout=20)
    assert _fill_report(res.output) == {"shm": cap, "dev": -1, "root": -1, "tmp": 1 << 20}


def _small_budget(zone: sb.Sandbox, mib: int = 200) -> None:
    zone.zone_limits = replace(zone.whole_zone_limits, memory_max=mib << 20)


@needs_bwrap
@pytest.mark.skipif(cgroups.delegated_parent() is not None,
                    reason="zones get a cgroup here: its memory.max bounds them, no watchdog")
def test_the_watchdog_stops_a_zone_over_its_budget_and_the_zone_starts_again(tmp_path):
    owner = _zone(tmp_path)
    agent = owner.agent_zone()
    agent.show_display = False
    try:
        _small_budget(agent)
        agent.start()
        watchdog = agent.watchdog
        assert watchdog is not None and agent.exec(shell="echo ok").output == "ok\n"
        # processes' anonymous memory plus /dev/shm and /tmp: each alone under 200 MiB
        t0 = time.monotonic()
        with pytest.raises(SandboxError, match="agent zone was stopped: agent zone used"):
            agent.exec(shell="head -c 60M /dev/zero > /dev/shm/a; head -c 60M /dev/zero > "
                             "/tmp/b; python3 -c 'b = b\"x\" * (120 << 20); "
                             "import time; time.sleep(20)'", timeout=30)
        assert time.monotonic() - t0 < 5
        assert not agent.alive and "of 200 MiB (processes" in agent.limit_reason
        wait_for(lambda: watchdog.sample() is None, 5, what="the zone's processes to end")
        # stopped while the process was still filling its memory
        assert watchdog.peak > 200 << 20 and watchdog.last.processes > 64 << 20
        assert watchdog.last.tmpfs >= 120 << 20
        agent.start()  # a fresh zone: nothing of the last one, no reason left
        assert agent.limit_reason is None and agent.watchdog is not watchdog
        assert agent.exec(shell="find /tmp /dev/shm -mindepth 1 | wc -l").output == "0\n"
        assert agent.watchdog.sample().total < 50 << 20
    finally:
        agent.close()
        owner.close()
    assert not watchdog._thread.is_alive()


@needs_bwrap
@pytest.mark.skipif(cgroups.delegated_parent() is not None,
                    reason="zones get a cgroup here: its memory.max bounds them, no watchdog")
def test_the_watchdog_counts_every_process_and_the_home_volume(tmp_path):
    box = _zone(tmp_path)
    try:
        _small_budget(box)
        box.start()
        for i in range(3):  # helpers of the zone, not children of one command
            box.spawn(f"hold{i}", ["python3", "-c", "b = b'x' * (40 << 20); "
                                   "import time; time.sleep(60)"])
        usage = wait_for(lambda: (u := box.watchdog.sample()).processes > 120 << 20 and u,
                         10, what="three processes holding 40 MiB each")
        assert usage.count >= 5 and usage.total < 200 << 20 and box.alive
        if box._volume is None or not box._volume.mounted:
            return  # the home is a plain directory here (not root): on disk, not in RAM
        with pytest.raises(SandboxError, match="program zone used .* home volume"):
            box.exec(shell="head -c 100M /dev/zero > ~/big; sleep 20", timeout=30)
        assert not box.alive
    finally:
        box.close()


def test_freeze_copies_regular_files_only_within_limits(tmp_path):
    src, dst = tmp_path / "work", tmp_path / "frozen"
    (src / "sub").mkdir(parents=True)
    (src / "a.txt").write_text("a")
    (src / "sub" / "b.txt").write_text("b")
    (src / "big.bin").write_bytes(b"x" * 2000)
    secret = tmp_path / "secret"
    secret.write_text("host only")
    (src / "link").symlink_to(secret)
    os.mkfifo(src / "fifo")
    with open(src / "sparse", "wb") as fh:
        fh.truncate(10**12)  # a terabyte of holes
    t0 = time.monotonic()
    report = freeze_copy(src, dst, FreezeLimits(max_file_bytes=1000))
    assert time.monotonic() - t0 < 2
    assert sorted(str(p.relative_to(dst)) for p in dst.rglob("*")) == ["a.txt", "sub",
                                                                       "sub/b.txt"]
    assert set(report.skipped) == {"big.bin", "link", "fifo", "sparse"}


def test_copy_into_never_writes_through_a_planted_link(tmp_path):
    src, dst = tmp_path / "inputs", tmp_path / "home"
    (src / "d").mkdir(parents=True)
    (src / "input.tif").write_bytes(b"data")
    (src / "d" / "x.txt").write_text("x")
    dst.mkdir()
    host = tmp_path / "host-file"
    host.write_text("original")
    (dst / "input.tif").symlink_to(host)
    (dst / "d").symlink_to(tmp_path)  # a directory link: would put x.txt in tmp_path
    copy_into(src, dst)
    assert host.read_text() == "original" and not (tmp_path / "x.txt").exists()
    assert (dst / "input.tif").read_bytes() == b"data" and not (dst / "d").is_symlink()
    empty_dir(dst)
    assert list(dst.iterdir()) == [] and host.exists()


def test_stale_sandbox_directories_are_swept(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f"{sb.ROOT_PREFIX}{dead.pid}-abc"
    live = tmp_path / f"{sb.ROOT_PREFIX}{os.getpid()}-def"
    for d in (stale, live):
        (d / "home").mkdir(parents=True)
    removed = sb.sweep_stale(str(tmp_path))
    assert removed == [str(stale)] and live.exists() and not stale.exists()


#: Holds ``$1`` MiB in a memory file it never maps, then sleeps.
_MEMFD_HOLD = ("import os, sys, time\nfd = os.memfd_create('hold')\nchunk = b'x' * (1 << 20)\n"
               "for _ in range(int(sys.argv[1])):\n    os.write(fd, chunk)\ntime.sleep(30)\n")


@needs_bwrap
@pytest.mark.skipif(cgroups.delegated_parent() is not None,
                    reason="zones get a cgroup here: its memory.max bounds them, no watchdog")
def test_the_watchdog_sees_unmapped_memory_files_and_sysv_memory_is_refused(tmp_path):
    """Memory a zone holds in a memfd it never maps shows in no RSS and no mount: the
    watchdog counts it from the zone's open files; SysV segments, which a zone can hold with
    no process at all, are refused to the agent zone."""
    owner = _zone(tmp_path)
    agent = owner.agent_zone()
    agent.show_display = False
    try:
        _small_budget(agent)
        agent.start()
        with pytest.raises(SandboxError, match="agent zone was stopped: agent zone used"):
            agent.exec(argv=["python3", "-I", "-c", _MEMFD_HOLD, "300"], timeout=30)
        agent.start()
        out = agent.exec(shell="python3 -I -c 'import ctypes; l = ctypes.CDLL(None, "
                               "use_errno=True); print(l.shmget(0, 1 << 20, 0o1600), "
                               "ctypes.get_errno())'").output
        assert out.split() == ["-1", "1"], out  # EPERM from the filter
    finally:
        agent.close()
        owner.close()
