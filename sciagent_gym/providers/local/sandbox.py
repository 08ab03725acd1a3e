"""Sandbox zones: where the program runs, and where the agent's commands run.

An env has two zones (:data:`PROGRAM` and :data:`AGENT`), each a bubblewrap sandbox with its own
pid, ipc, network, user and mount namespaces and its own private /tmp, and each with a helper
process (``sandbox_agent.py``) that starts things inside on the host's behalf:

- the **program zone** sees the sandbox home at ``/home/user`` (the program's settings and the
  work directory) and the env's X socket; the tool's program and its state channel run here;
- the **agent zone** sees only the work directory (at the same path, ``/home/user/work``), an
  empty home of its own and the X socket; the agent's ``run()`` and ``launch()`` run here. No
  program process, channel endpoint, helper pipe or answer file is visible from it.

Both zones run as unprivileged uids with no capabilities, no new user namespaces, a seccomp
filter, resource limits and only the needed parts of /etc (``confinement``). Their root and
/dev are read-only; what they may write in RAM is sized (/tmp, /dev/shm, the agent's home, the
home volume), and a zone's whole memory has a budget: its cgroup's ``memory.max``, or where
the host delegates no cgroup, a watchdog that stops the zone past it (``memwatch``).

The host talks to each helper over a pipe pair on fds of its own; every reply must carry the
request's id and a per-start secret the helper got as the first line, so a process that got
into the helper's pipe could not forge one (and none can: the helper is non-dumpable, so its
/proc files are closed to the zone, and bubblewrap's init in the zone does not hold the
pipes).

``isolation="none"`` runs the helpers directly on the host (development only; the env then
refuses CLI actions unless explicitly allowed).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

from sciagent_gym import processes
from sciagent_gym.errors import MissingProgramError, SandboxError
from sciagent_gym.isolation import confinement as conf
from sciagent_gym.isolation import sandbox_agent
from sciagent_gym.isolation.bwrap import bwrap_problem, system_binds
from sciagent_gym.providers.local import cgroups, memwatch
from sciagent_gym.transfer.command import CommandResult

AGENT_SOURCE = Path(sandbox_agent.__file__)
INSIDE_HOME = "/home/user"
PROGRAM, AGENT = "program", "agent"
#: Longest reply line the host reads from a helper (an exec's output is capped far below it).
MAX_REPLY = 4 << 20
#: Directory names the sandboxes leave under the temp dir: ``sciagent-sbx-<pid>-<random>``.
ROOT_PREFIX = "sciagent-sbx-"
#: The agent zone's own home (a tmpfs; its work directory is the program zone's, bound in).
AGENT_HOME_BYTES = 64 << 20


def resolve_isolation(isolation: str) -> str:
    """``"bwrap"`` or ``"none"`` for a requested mode. Fails closed: ``"auto"`` and
    ``"bwrap"`` raise SandboxError (naming the reason) when bubblewrap cannot isolate; only an
    explicit ``"none"`` runs without a sandbox, with a warning."""
    if isolation not in ("auto", "bwrap", "none"):
        raise ValueError(f"isolation must be 'auto', 'bwrap' or 'none', not {isolation!r}")
    if isolation == "none":
        warnings.warn("isolation='none': the program and CLI commands run on the host "
                      "unsandboxed; CLI actions are refused unless allow_unsafe_cli=True",
                      RuntimeWarning, stacklevel=3)
        return "none"
    problem = bwrap_problem()
    if problem is not None:
        if "installed" in problem:
            raise MissingProgramError("bwrap", "bubblewrap", hint=None)
        raise SandboxError(f"{problem}; pass isolation='none' to run unsandboxed "
                           "(development only)")
    return "bwrap"


def _python_for_sandbox() -> tuple[str, list[str]]:
    """A Python the sandbox can run, and the binds it needs. The helper needs only the
    standard library: the system's python3 serves, and the sandbox's user may not be able to
    reach this interpreter's prefix (e.g. under /root); else this interpreter's base."""
    for system in ("/usr/bin/python3", "/bin/python3"):
        if os.access(system, os.X_OK):
            return system, []
    exe = os.path.realpath(sys.executable)
    prefix = os.path.realpath(sys.base_prefix)
    binds = [] if prefix.startswith("/usr") else ["--ro-bind", prefix, prefix]
    return exe, binds


def sweep_stale(tmp: str | None = None, dry_run: bool = False) -> list[str]:
    """Remove our temporary directories (sandboxes, displays, staging, frozen states, gold)
    whose owning process is gone, unmounting a sandbox's home volume first; returns what was
    removed (with ``dry_run``: what would be, touching nothing)."""
    base = Path(tmp or tempfile.gettempdir())
    kinds = "|".join(processes.TEMPDIR_KINDS)
    removed = [] if tmp else cgroups.sweep_stale(cgroups.delegated_parent(), _pid_alive,
                                                 dry_run)
    for path in base.glob("sciagent-*"):
        found = re.fullmatch(rf"sciagent-({kinds})-(\d+)-.*", path.name)
        if found is None or _pid_alive(int(found.group(2))):
            continue
        if dry_run:
            removed.append(str(path))
            continue
        if found.group(1) == "sbx":
            HomeVolume.unmount(path / "home")
        shutil.rmtree(path, ignore_errors=True)
        removed.append(str(path))
    return removed


def _others_can_enter(path: str) -> bool:
    """Whether a user who is neither owner nor in the group can reach ``path``."""
    current = Path(path)
    for part in [current, *current.parents]:
        if not part.stat().st_mode & 0o001:
            return False
    return True


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class HomeVolume:
    """The sandbox home as a size-capped tmpfs (a disk quota), where the host may mount one
    (root); elsewhere a plain directory, bounded only per file by RLIMIT_FSIZE."""

    def __init__(self, path: Path, size: int, uid: int, gid: int) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.mounted = False
        if os.geteuid() == 0:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            opts = f"size={size},nr_inodes=200000,mode=0750,uid={uid},gid={gid}".encode()
            # nosuid, nodev; not noexec: the agent may run scripts it wrote in work/
            self.mounted = libc.mount(b"tmpfs", str(path).encode(), b"tmpfs", 2 | 4,
                                      opts) == 0
        if not self.mounted:
            os.chmod(path, 0o750)
            if os.geteuid() == 0:
                os.chown(path, uid, gid)

    @staticmethod
    def unmount(path: Path) -> None:
        if os.geteuid() != 0 or not os.path.ismount(path):
            return
        import ctypes

        ctypes.CDLL(None, use_errno=True).umount2(str(path).encode(), 2)  # MNT_DETACH

    def close(self) -> None:
        if self.mounted:
            self.unmount(self.path)
            self.mounted = False


class Sandbox:
    """One zone: a bubblewrap sandbox and the helper serving it (see the module docstring).

    The program zone owns the sandbox directory tree (``root``: the home volume and the
    generated /etc/passwd); an agent zone is made with :meth:`agent_zone` and shares it.
    """

    def __init__(self, display: str, x_socket: str, isolation: str = "auto",
                 root: str | Path | None = None, *, zone: str = PROGRAM,
                 home_quota: int = 2 << 30, _parent: Sandbox | None = None) -> None:
        if zone not in (PROGRAM, AGENT):
            raise ValueError(f"zone must be {PROGRAM!r} or {AGENT!r}, not {zone!r}")
        self.zone = zone
        self.display, self._x_socket = display, x_socket
        self._proc: subprocess.Popen | None = None
        self._to = self._from = None  # the helper's request and reply pipes
        self._secret = ""
        self._next_id = 1
        self._lock = threading.Lock()
        #: Host directories the sandbox sees read-only at the same path (a tool installed
        #: outside /usr, e.g. QuPath under ~/.local/share); set before ``start``.
        self.extra_ro_binds: list[str] = []
        self.extra_etc: tuple[str, ...] = ()  # the program's own /etc entries (its manifest)
        #: Whether the zone sees the env's X display (the agent zone: where the task allows).
        self.show_display = True
        #: The running zone's cgroup v2 (whole-zone memory, process and CPU limits), or None
        #: where the host delegates none (then rlimits only; see providers.cgroups).
        self.cgroup: cgroups.ZoneCgroup | None = None
        #: The zone's whole-zone limits; None: ``cgroups.PROGRAM_CGROUP`` or ``AGENT_CGROUP``
        #: as they are at start. Its cgroup enforces them where it has one, else (bubblewrap
        #: zones) a ``memwatch.MemoryWatchdog`` enforces ``memory_max``. Set before ``start``.
        self.zone_limits: cgroups.CgroupLimits | None = None
        #: Why the watchdog stopped the zone ("agent zone used 4.01 GiB of 4.00 GiB ..."),
        #: until the next ``start``.
        self.limit_reason: str | None = None
        #: The running zone's memory watchdog (bubblewrap zones without a cgroup), or None.
        self.watchdog: memwatch.MemoryWatchdog | None = None
        if _parent is not None:
            self.isolation, self.root, self.lease = _parent.isolation, _parent.root, _parent.lease
            self.host_home, self._volume, self._owner = _parent.host_home, None, False
            self._cgroup_parent = _parent._cgroup_parent
            return
        self._cgroup_parent = cgroups.delegated_parent()
        self.isolation = resolve_isolation(isolation)
        sweep_stale()
        self._owner = True
        self.lease = conf.UidLease() if self.isolation == "bwrap" else None
        self.root = Path(root) if root else processes.owned_tempdir("sbx")
        processes.close_at_exit(self)
        self.root.chmod(0o711)  # the sandbox users traverse it to their home, nothing more
        self.host_home = self.root / "home"
        self._volume: HomeVolume | None = None
        try:
            if self.lease is not None:
                self._volume = HomeVolume(self.host_home, home_quota, self.program_id.uid,
                                          self.program_id.gid)
                passwd, group = conf.passwd_text(self.lease.program, self.lease.agent)
                (self.root / "passwd").write_text(passwd)
                (self.root / "group").write_text(group)
            else:
                self.host_home.mkdir(parents=True, exist_ok=True)
        except BaseException:
            self.close()
            raise

    def agent_zone(self) -> Sandbox:
        """The agent zone over this program zone's work directory (not started yet)."""
        return Sandbox(self.display, self._x_socket, zone=AGENT, _parent=self)

    # -- identities and paths ------------------------------------------------------------
    @property
    def program_id(self) -> conf.Identity:
        if self.lease is None:
            return conf.Identity(os.getuid(), os.getgid())
        return self.lease.program

    @property
    def identity(self) -> conf.Identity:
        """The uid/gid this zone runs as."""
        if self.lease is None:
            return conf.Identity(os.getuid(), os.getgid())
        return self.lease.program if self.zone == PROGRAM else self.lease.agent

    @property
    def home(self) -> str:
        return INSIDE_HOME if self.isolation == "bwrap" else str(self.host_home)

    @property
    def work(self) -> str:
        return f"{self.home}/work"

    @property
    def tmp(self) -> str:
        if self.isolation == "bwrap":
            return "/tmp"
        return str(self.root / ("tmp" if self.zone == PROGRAM else "agent-tmp"))

    @property
    def host_work(self) -> Path:
        return self.host_home / "work"

    # -- lifecycle ---------------------------------------------------------------------------
    def _bwrap_argv(self, python: str, py_binds: list[str], seccomp: int | None) -> list[str]:
        ident = self.identity
        limits = conf.PROGRAM_LIMITS if self.zone == PROGRAM else conf.AGENT_LIMITS
        argv = ["bwrap", *conf.bwrap_identity_args(ident), "--unshare-all",
                "--die-with-parent", "--new-session", "--clearenv",
                *system_binds(), *conf.etc_binds(self.extra_etc), *py_binds,
                "--ro-bind", str(self.root / "passwd"), "/etc/passwd",
                "--ro-bind", str(self.root / "group"), "/etc/group",
                "--proc", "/proc", *conf.dev_args(limits),
                "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
        if self.show_display:
            argv += ["--bind", self._x_socket, self._x_socket]
        if self.zone == PROGRAM:
            argv += ["--bind", str(self.host_home), INSIDE_HOME]
        else:
            argv += ["--size", str(AGENT_HOME_BYTES), "--perms", "0700", "--tmpfs",
                     INSIDE_HOME, "--bind", str(self.host_work), f"{INSIDE_HOME}/work"]
        argv += ["--ro-bind", str(AGENT_SOURCE), "/opt/sciagent/agent.py"]
        for path in self.extra_ro_binds:
            if not os.path.isabs(path) or not os.path.isdir(path):
                raise SandboxError(f"cannot show {path!r} in the sandbox: not an absolute "
                                   "path to a directory")
            if self.lease is not None and self.lease.switches_user \
                    and not _others_can_enter(path):
                raise SandboxError(
                    f"{path} is not reachable by the sandbox's unprivileged user (a parent "
                    "directory is closed to others, e.g. /root): install the program under "
                    "/usr/local/lib or /opt instead")
            argv += ["--ro-bind", path, path]
        argv += conf.READ_ONLY_ROOT  # last: every mount point above is made by now
        if seccomp is not None:
            argv += ["--seccomp", str(seccomp)]
        argv += ["--chdir", self.work]
        return argv

    def start(self, timeout: float = 10.0) -> None:
        """Start (or restart) the helper on the current contents of the home directory."""
        self.stop()
        self.limit_reason = None
        env = {"HOME": self.home, "DISPLAY": self.display, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
               "USER": "user" if self.zone == PROGRAM else "agent",
               "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "TMPDIR": self.tmp}
        seccomp = info_r = info_w = None
        if self.isolation == "bwrap":
            python, py_binds = _python_for_sandbox()
            seccomp = conf.seccomp_fd(() if self.zone == PROGRAM else
                                      tuple(conf.AGENT_DENIED_SYSCALLS_X86_64.values()))
            argv = self._bwrap_argv(python, py_binds, seccomp)
            if self._cgroup_parent is None:  # a watchdog bounds the memory: it needs pid 1
                info_r, info_w = os.pipe()
                argv += ["--info-fd", str(info_w)]
            for key, value in env.items():
                argv += ["--setenv", key, value]
            argv += ["--", python, "-I", "-S", "/opt/sciagent/agent.py"]
            proc_env = dict(conf.BWRAP_ENV)
            limits = conf.PROGRAM_LIMITS if self.zone == PROGRAM else conf.AGENT_LIMITS
            if self._cgroup_parent is not None:
                self.cgroup = cgroups.ZoneCgroup(self._cgroup_parent, self.zone,
                                                 self.whole_zone_limits)
            preexec = conf.preexec(self.identity, limits,
                                   self.cgroup.join_path if self.cgroup else None)
        else:
            Path(self.tmp).mkdir(parents=True, exist_ok=True)
            argv = [sys.executable, "-I", "-S", str(AGENT_SOURCE)]
            proc_env, preexec = env, None
        self.host_work.mkdir(parents=True, exist_ok=True)
        # The channel is a pipe pair on fds of their own, not stdin/stdout: bubblewrap's init
        # (pid 1 of the zone, which the zone's uid may inspect) keeps fds 0-2 but closes
        # others, and the helper itself is non-dumpable.
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        fds = [fd for fd in (req_r, rep_w, seccomp, info_w) if fd is not None]
        try:
            self._proc = processes.spawn(argv + [str(req_r), str(rep_w)], env=proc_env,
                                         cwd=str(self.root), stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                         preexec_fn=preexec, pass_fds=fds)
        except BaseException:
            for fd in (req_w, rep_r, info_r):
                if fd is not None:
                    os.close(fd)
            raise
        finally:
            for fd in fds:
                os.close(fd)
        self._to, self._from = os.fdopen(req_w, "wb"), os.fdopen(rep_r, "rb")
        self._secret = secrets.token_hex(16)
        self._next_id = 1
        try:
            try:
                self._to.write(json.dumps({"secret": self._secret}).encode() + b"\n")
                self._to.flush()
            except OSError as exc:
                raise SandboxError(f"sandbox helper did not start: {exc}") from None
            hello = self._read_reply(timeout, 0)
            if not hello.get("ready"):
                raise SandboxError(f"sandbox helper did not start: {hello}")
            if info_r is not None:
                self._watch(info_r, timeout)
        finally:
            if info_r is not None:
                os.close(info_r)

    @property
    def whole_zone_limits(self) -> cgroups.CgroupLimits:
        """The limits on the whole zone (see ``zone_limits``)."""
        if self.zone_limits is not None:
            return self.zone_limits
        return cgroups.PROGRAM_CGROUP if self.zone == PROGRAM else cgroups.AGENT_CGROUP

    def _watch(self, info_fd: int, timeout: float) -> None:
        """Start the memory watchdog of a zone without a cgroup, on the zone's pid 1 and pid
        namespace as bubblewrap reported them on ``info_fd`` (before the helper started)."""
        data, deadline = b"", time.monotonic() + timeout
        while len(data) < 65536:
            ready, _, _ = select.select([info_fd], [], [], max(deadline - time.monotonic(), 0))
            chunk = os.read(info_fd, 4096) if ready else b""
            if not chunk:
                break
            data += chunk
        try:
            info = json.loads(data)
            init_pid, pid_ns = int(info["child-pid"]), int(info["pid-namespace"])
        except (ValueError, KeyError, TypeError):
            self.stop()
            raise SandboxError(f"bubblewrap did not say the {self.zone} zone's pid (for its "
                               f"memory watchdog): {data[:200]!r}") from None
        proc = self._proc

        def exceeded(reason: str) -> None:  # in the watchdog's thread: a signal, nothing else
            self.limit_reason = reason
            try:
                proc.send_signal(signal.SIGKILL)  # bubblewrap; its pid 1 and the zone follow
            except OSError:
                pass

        mounts = memwatch.ZONE_MOUNTS + ((INSIDE_HOME,) if self.zone == AGENT else ())
        volume = self.host_home if self._volume is not None and self._volume.mounted else None
        self.watchdog = memwatch.MemoryWatchdog(self.zone, init_pid, pid_ns,
                                                self.whole_zone_limits.memory_max, exceeded,
                                                mounts, volume).start()

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def stop(self) -> None:
        """End the helper and, with its namespace, every process of the zone."""
        if self.watchdog is not None:
            self.watchdog.stop()
            self.watchdog = None
        if self._proc is not None and self._proc.poll() is None:
            try:
                self._to.write(b'{"id": -1, "op": "shutdown"}\n')
                self._to.flush()
                self._proc.wait(2.0)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        processes.terminate(self._proc, timeout=1.0)
        self._proc = None
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        for stream in (self._to, self._from):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        self._to = self._from = None

    def close(self) -> None:
        self.stop()
        if not self._owner:
            return
        if self._volume is not None:
            self._volume.close()
        if getattr(self, "root", None) is not None:
            shutil.rmtree(self.root, ignore_errors=True)
        if self.lease is not None:
            self.lease.release()

    # -- requests ----------------------------------------------------------------------------
    def request(self, op: str, fields: dict | None = None, timeout: float = 30.0) -> dict:
        """Send one request to the helper and return its reply (raises SandboxError)."""
        with self._lock:
            if not self.alive:
                raise SandboxError(f"the {self.zone} sandbox is not running")
            req_id = self._next_id
            self._next_id += 1
            line = json.dumps({"id": req_id, "op": op, **(fields or {})}) + "\n"
            try:
                self._to.write(line.encode())
                self._to.flush()
            except OSError as exc:
                raise SandboxError(f"sandbox helper is gone: {exc}") from exc
            reply = self._read_reply(timeout, req_id)
        if not reply.get("ok"):
            raise SandboxError(f"sandbox {op} failed: {reply.get('error')}")
        return reply

    def _read_reply(self, timeout: float, req_id: int) -> dict:
        """The helper's reply to ``req_id``. A line without this start's secret or with
        another id is not the helper's: the zone is compromised, so the helper is stopped
        and the request fails (never a forged answer)."""
        out = self._from
        ready, _, _ = select.select([out], [], [], timeout)
        if not ready:
            raise SandboxError(f"sandbox helper did not answer within {timeout:.0f}s")
        line = out.readline(MAX_REPLY)
        if not line:
            if self.limit_reason is not None:
                raise SandboxError(f"the {self.zone} zone was stopped: {self.limit_reason}")
            err = self._proc.stderr.read1(4096).decode(errors="replace") if self._proc.stderr \
                else ""
            raise SandboxError(f"sandbox helper exited (code {self._proc.poll()}): "
                               f"{err.strip()}")
        try:
            reply = json.loads(line)
        except ValueError:
            reply = None
        if not isinstance(reply, dict) or reply.get("id") != req_id \
                or not secrets.compare_digest(str(reply.get("secret", "")), self._secret):
            self.stop()
            raise SandboxError(f"the {self.zone} sandbox helper's reply was forged or out of "
                               "order; the zone was stopped")
        return reply

    def spawn(self, name: str, argv: list[str], env: dict | None = None,
              log: str | None = None, cwd: str | None = None) -> int:
        """Start ``argv`` in the zone (in the work directory unless ``cwd`` says otherwise)."""
        return self.request("spawn", {"name": name, "argv": argv, "env": env or {},
                                      "cwd": cwd or self.work, "log": log})["pid"]

    def call(self, name: str, *, code: str | None = None, args: list[str] | None = None,
             argv: list[str] | None = None, stdin: str = "", log: str | None = None) -> int:
        """Start a channel client whose stdout the helper keeps for :meth:`collect`: Python
        ``code`` run with ``args`` in a forked, non-dumpable child of the helper, or a program
        ``argv`` fed ``stdin``. It runs in the zone's /tmp, never in the work directory, so no
        module or startup file the agent wrote there is picked up."""
        if (code is None) == (argv is None):
            raise ValueError("a call needs exactly one of code and argv")
        return self.request("call", {"name": name, "code": code, "args": args or [],
                                     "argv": argv, "stdin": stdin, "cwd": self.tmp,
                                     "log": log})["pid"]

    def collect(self, name: str) -> dict:
        """A call's state: ``{"done": False}`` while it runs, else its ``output`` (None if
        there is no such call or its reply was too long) and ``returncode``."""
        reply = self.request("collect", {"name": name}, timeout=10)
        return {k: reply[k] for k in ("done", "output", "returncode", "error") if k in reply}

    def poll(self, name: str) -> dict:
        return self.request("poll", {"name": name}, timeout=5)

    def kill(self, name: str) -> None:
        self.request("kill", {"name": name}, timeout=10)

    def exec(self, *, shell: str | None = None, argv: list[str] | None = None,
             timeout: float = 30.0, max_output: int = 8192,
             env: dict | None = None) -> CommandResult:
        """Run a command to completion inside the sandbox, in the work directory."""
        reply = self.request("exec", {
            "shell": shell, "argv": argv, "cwd": self.work, "timeout": timeout,
            "max_output": max_output, "env": env or {},
        }, timeout=timeout + 10)
        return CommandResult(reply["returncode"], reply["output"], reply["timed_out"],
                             reply["truncated"])

    def read(self, path: str, max_bytes: int = 65536, remove: bool = False) -> str | None:
        """A regular file inside the sandbox (its last ``max_bytes``), or None if it does not
        exist or is not a regular file."""
        fields = {"path": path, "max_bytes": max_bytes, "remove": remove}
        return self.request("read", fields, timeout=5).get("data")
