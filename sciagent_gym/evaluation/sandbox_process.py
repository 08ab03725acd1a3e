"""One program run in a throwaway sandbox: how it is started and how it is waited for.

The confinement every such run gets (see :mod:`.isolated`): an unleased unprivileged uid, its
own namespaces (no network), no capabilities, the seccomp filter, the given rlimits, empty
size-capped /tmp, /dev/shm and home, a clean environment, copies of host files read-only at
fixed paths; its stdin fed, its merged output read through a bounded tail, the whole sandbox
killed at the deadline. :mod:`.isolated` runs one to the end; :mod:`.warm` starts one ahead
of need.
"""

from __future__ import annotations

import os
import posixpath
import select
import stat
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from sciagent_gym import processes
from sciagent_gym.errors import SandboxError
from sciagent_gym.isolation import confinement as conf
from sciagent_gym.isolation.bwrap import bwrap_problem, system_binds

INSIDE_HOME = "/home/user"
#: Largest host file shown inside (bubblewrap copies it into the sandbox's memory).
MAX_FILE_BYTES = 256 << 20
HOME_BYTES = 16 << 20
#: Top-level directories a shown file must not cover (the system the sandbox runs on).
_RESERVED = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "proc", "dev"}
_CHUNK = 1 << 16


class SandboxRun(NamedTuple):
    """How a sandboxed run ended: exit status (negative: killed by that signal), the last
    ``max_output`` bytes of its merged stdout/stderr, and whether the deadline killed it."""

    returncode: int | None
    output: str
    timed_out: bool


def _open_file(inside: str, host: Path) -> int:
    """An fd on the regular host file ``host`` for ``inside`` (validated), never following a
    link: bubblewrap copies from the fd, so the sandbox user needs no access to the host path."""
    if not inside.startswith("/") or posixpath.normpath(inside) != inside or inside == "/" \
            or inside.split("/")[1] in _RESERVED:
        raise ValueError(f"inside path {inside!r} must be a normalised absolute path outside "
                         f"/{', /'.join(sorted(_RESERVED))}")
    try:
        fd = os.open(host, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise SandboxError(f"cannot show {host} in the sandbox: {exc.strerror}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
        os.close(fd)
        raise SandboxError(f"cannot show {host} in the sandbox: not a regular file of at most "
                           f"{MAX_FILE_BYTES} bytes")
    os.set_blocking(fd, True)
    return fd


def _data_fd(data: bytes) -> int:
    fd = os.memfd_create("sciagent-isolated", os.MFD_CLOEXEC)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _bwrap_argv(argv: Sequence[str], identity: conf.Identity, limits: conf.Limits,
                shown: list[tuple[int, str]], seccomp: int | None,
                env: Mapping[str, str]) -> list[str]:
    out = ["bwrap", *conf.bwrap_identity_args(identity), "--unshare-all", "--die-with-parent",
           "--new-session", "--clearenv", *system_binds(), *conf.etc_binds(),
           "--proc", "/proc", *conf.dev_args(limits),
           "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp",
           "--size", str(HOME_BYTES), "--perms", "0700", "--tmpfs", INSIDE_HOME]
    for fd, inside in shown:
        out += ["--perms", "0444", "--ro-bind-data", str(fd), inside]
    out += conf.READ_ONLY_ROOT  # after the last mount point
    if seccomp is not None:
        out += ["--seccomp", str(seccomp)]
    out += ["--chdir", INSIDE_HOME]
    for key, value in {"HOME": INSIDE_HOME, "TMPDIR": "/tmp", "LANG": "C.UTF-8",
                       "PATH": "/usr/bin:/bin", **env}.items():
        out += ["--setenv", key, value]
    return [*out, "--", *argv]


def spawn_sandboxed(argv: Sequence[str], files: Mapping[str, Path] | None,
                    env: Mapping[str, str] | None,
                    limits: conf.Limits) -> tuple[subprocess.Popen, conf.UidLease]:
    """``argv`` started in a fresh sandbox (see the module docstring), its stdin and merged
    stdout/stderr on pipes, and the uid lease it runs under (the caller releases it)."""
    problem = bwrap_problem()
    if problem is not None:
        raise SandboxError(f"refusing to run {argv[0]!r} unsandboxed: {problem}")
    fds: list[int] = []
    lease: conf.UidLease | None = None
    try:
        shown = []
        for inside, host in (files or {}).items():
            fds.append(_open_file(inside, Path(host)))
            shown.append((fds[-1], inside))
        lease = conf.UidLease()
        passwd, group = conf.passwd_text(lease.program, lease.agent)
        for text, inside in ((passwd, "/etc/passwd"), (group, "/etc/group")):
            fds.append(_data_fd(text.encode()))
            shown.append((fds[-1], inside))
        seccomp = conf.seccomp_fd()
        if seccomp is not None:
            fds.append(seccomp)
        cmd = _bwrap_argv(argv, lease.agent, limits, shown, seccomp, env or {})
        proc = processes.spawn(cmd, env=dict(conf.BWRAP_ENV), stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, pass_fds=fds,
                               cwd="/", preexec_fn=conf.preexec(lease.agent, limits))
    except BaseException:
        if lease is not None:
            lease.release()
        raise
    finally:
        for fd in fds:
            os.close(fd)
    return proc, lease


def finish_sandboxed(proc: subprocess.Popen, stdin: bytes, deadline: float,
            max_output: int) -> SandboxRun:
    output, timed_out = _communicate(proc, stdin, deadline, max_output)
    # reaps it and sweeps a lingering group (at once past the deadline)
    processes.terminate(proc, timeout=0 if timed_out else 1.0)
    return SandboxRun(proc.returncode, output.decode("utf-8", "replace"), timed_out)



def _communicate(proc: subprocess.Popen, data: bytes, deadline: float,
                 max_output: int) -> tuple[bytes, bool]:
    """Feed ``data`` and read output until the program exits or the deadline passes; keeps
    only the last ``max_output`` bytes. Returns (tail, timed out)."""
    tail = bytearray()
    out_fd = proc.stdout.fileno()
    os.set_blocking(out_fd, False)
    pending = memoryview(data)
    in_fd: int | None = proc.stdin.fileno()
    if pending:
        os.set_blocking(in_fd, False)
    else:
        proc.stdin.close()
        in_fd = None
    eof = False
    while not eof or proc.poll() is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return bytes(tail), True
        if eof:  # output closed but the program lives on: wait for it, up to the deadline
            try:
                proc.wait(min(remaining, 0.1))
            except subprocess.TimeoutExpired:
                pass
            continue
        readable, writable, _ = select.select([out_fd], [in_fd] if in_fd is not None else [],
                                              [], remaining)
        if writable:
            try:
                pending = pending[os.write(in_fd, pending[:_CHUNK]):]
            except BlockingIOError:
                pass
            except BrokenPipeError:
                pending = pending[:0]
            if not pending:
                proc.stdin.close()
                in_fd = None
        if readable:
            chunk = os.read(out_fd, _CHUNK)
            if not chunk:
                eof = True
            tail += chunk
            if len(tail) > max_output:
                del tail[:len(tail) - max_output]
    return bytes(tail), False
