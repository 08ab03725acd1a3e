"""What a sandboxed process is allowed to be: an unprivileged uid, no capabilities, a seccomp
filter, resource limits and a minimal /etc.

bubblewrap started by real root keeps every capability inside its namespaces (a sandboxed shell
could remount /etc read-write). So a sandbox never starts bubblewrap as root: the process drops
to an unprivileged uid/gid first (:func:`preexec`), and bubblewrap then builds an unprivileged
user namespace in which that uid is the only one mapped, with ``--cap-drop ALL`` and
``--disable-userns`` (no nested namespaces to regain capabilities in).

Each sandbox zone gets its own uid from a leased pair (:class:`UidLease`): the program zone
``uid`` and the agent zone ``uid + 1``, sharing one group so both may write the work directory.
Distinct uids matter because ``RLIMIT_NPROC`` counts every process of a uid: a fork bomb in the
agent zone must not stop the program from starting threads. A host user who is not root cannot
switch uids; both zones then run as that user (never uid 0, since the user is not root).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import platform
import resource
import signal
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sciagent_gym.errors import SandboxError

#: First uid of the leased range (high, so it clashes with no account); pairs go up from it.
UID_BASE = 1_700_000_000
UID_PAIRS = 4096
LEASE_DIR = Path("/run/sciagent-gym/uids")

MiB = 1 << 20
GiB = 1 << 30


@dataclass(frozen=True)
class Limits:
    """Per-zone resource limits (rlimits, applied before bubblewrap starts).

    ``nproc`` counts threads too (Java and Qt programs run dozens). ``address_space`` is per
    process and left unset for the program zone: the JVM reserves far more virtual memory than
    it uses. ``tmp_bytes`` and ``shm_bytes`` size the zone's private /tmp and /dev/shm
    (tmpfs, i.e. host RAM); the program zone's is larger, as Qt, Java and GL programs may
    keep POSIX shared memory there.
    """

    nproc: int
    nofile: int
    fsize: int
    tmp_bytes: int
    shm_bytes: int
    address_space: int | None = None
    core: int = 0


PROGRAM_LIMITS = Limits(nproc=2048, nofile=4096, fsize=2 * GiB, tmp_bytes=512 * MiB,
                        shm_bytes=256 * MiB)
AGENT_LIMITS = Limits(nproc=256, nofile=1024, fsize=1 * GiB, tmp_bytes=256 * MiB,
                      shm_bytes=64 * MiB, address_space=8 * GiB)
#: A parse of an agent-written file in a child of its own (e.g. loading a PyMOL session).
PARSER_LIMITS = Limits(nproc=64, nofile=256, fsize=64 * MiB, tmp_bytes=64 * MiB,
                       shm_bytes=32 * MiB, address_space=4 * GiB)
#: bubblewrap options, last among the mounts: the sandbox's root (a tmpfs bubblewrap makes,
#: owned by the sandbox's uid and unsized) read-only, so that only sized mounts take writes.
READ_ONLY_ROOT = ["--remount-ro", "/"]


@dataclass(frozen=True)
class Identity:
    """The uid/gid one zone runs as (on the host and, identically mapped, inside)."""

    uid: int
    gid: int


class UidLease:
    """A pair of unprivileged uids held for the life of one sandbox slot.

    As root: the first free pair of ``UID_BASE + 2k, UID_BASE + 2k + 1``, held with an flock on
    ``LEASE_DIR/<k>.lock`` so that envs in other processes take other pairs; the lock goes with
    the process, so a killed interpreter frees its pair. As any other user: that user, twice.
    """

    def __init__(self) -> None:
        self._fd: int | None = None
        if os.geteuid() != 0:
            uid, gid = os.getuid(), os.getgid()
            self.program, self.agent = Identity(uid, gid), Identity(uid, gid)
            return
        LEASE_DIR.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(LEASE_DIR, 0o700)
        for k in range(UID_PAIRS):
            fd = os.open(LEASE_DIR / f"{k}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self._fd = fd
            base = UID_BASE + 2 * k
            self.program, self.agent = Identity(base, base), Identity(base + 1, base)
            return
        raise SandboxError(f"no free sandbox uid pair among {UID_PAIRS} in {LEASE_DIR}")

    @property
    def switches_user(self) -> bool:
        """Whether the zones run as uids of their own (only possible as root)."""
        return self._fd is not None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def preexec(identity: Identity, limits: Limits, cgroup_procs: str | None = None):
    """The function a sandbox's bubblewrap runs before exec (in a new session, see
    ``processes.spawn``): join the zone's cgroup (``cgroup_procs``, when it has one), limits,
    then the uid switch,
    then the parent-death signal (a credential change clears it, so it comes last)."""

    libc = ctypes.CDLL(None, use_errno=True)
    wanted = []
    for name, value in (("RLIMIT_NPROC", limits.nproc), ("RLIMIT_NOFILE", limits.nofile),
                        ("RLIMIT_FSIZE", limits.fsize), ("RLIMIT_CORE", limits.core),
                        ("RLIMIT_AS", limits.address_space)):
        if value is not None:
            which = getattr(resource, name)
            hard = resource.getrlimit(which)[1]
            if hard != resource.RLIM_INFINITY and os.geteuid() != 0:
                value = min(value, hard)  # a user cannot raise a hard limit
            wanted.append((which, value))

    def run() -> None:
        if cgroup_procs is not None:  # join the zone's cgroup before anything else starts
            fd = os.open(cgroup_procs, os.O_WRONLY | os.O_CREAT, 0o644)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)
        for which, value in wanted:
            resource.setrlimit(which, (value, value))
        os.umask(0o002)  # both zones write the shared work directory through their group
        if os.geteuid() == 0:
            os.setgroups([])
            os.setresgid(identity.gid, identity.gid, identity.gid)
            os.setresuid(identity.uid, identity.uid, identity.uid)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

    return run


def dev_args(limits: Limits) -> list[str]:
    """bubblewrap options for a minimal /dev (null, zero, full, random, urandom, tty, pts),
    read-only, with a /dev/shm of ``limits.shm_bytes``: bubblewrap's own /dev is a writable
    tmpfs sized at half the host's RAM."""
    return ["--dev", "/dev", "--size", str(limits.shm_bytes), "--tmpfs", "/dev/shm",
            "--remount-ro", "/dev"]


#: The environment bubblewrap itself starts with. Its pid 1 inside a zone keeps the environment
#: it was started with, and the zone's uid can read it in /proc/1/environ: never the host's
#: (API keys of an agent's model, tokens), only what bubblewrap needs to find nothing.
BWRAP_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


def bwrap_identity_args(identity: Identity) -> list[str]:
    """bubblewrap options for an unprivileged namespace mapping only ``identity``."""
    return ["--unshare-user", "--uid", str(identity.uid), "--gid", str(identity.gid),
            "--disable-userns", "--cap-drop", "ALL"]


# -- /etc ------------------------------------------------------------------------------------
#: What of the host's /etc programs need: dynamic linking, fonts, alternatives (every Java
#: and many tools are reached through /etc/alternatives), locale and time, MIME, toolkit and
#: program configuration. Not shown: shadow, sudoers, ssh, ssl keys, cron, machine-id, ...
#: A program's own configuration folder comes from its tool's manifest (``etc``).
ETC_ALLOW = (
    "alternatives", "fonts", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime",
    "timezone", "locale.alias", "locale.conf", "default/locale", "nsswitch.conf", "host.conf",
    "mime.types", "magic", "magic.mime", "xdg", "X11", "gtk-2.0", "gtk-3.0", "pango",
    "java-17-openjdk", "java-11-openjdk", "python3", "python3.11", "matplotlibrc",
    "ImageMagick-6", "sensors3.conf", "drirc", "vulkan",
    "glvnd", "OpenCL", "openal", "pulse", "alsa", "asound.conf", "gnutls", "ssl/openssl.cnf",
    "profile", "bash.bashrc", "inputrc", "environment", "shells", "debian_version",
    "os-release", "lsb-release", "terminfo", "libpaper.d", "papersize", "ucf.conf", "tcl",
    "tk", "emacs", "vim", "mailcap", "gai.conf", "protocols", "services",
    "rpc", "ethertypes", "libreoffice", "dconf", "gconf", "ca-certificates.conf",
    "hosts", "hostname", "xml", "sgml", "menu-methods", "ghostscript",
)


def etc_binds(extra: Sequence[str] = ()) -> list[str]:
    """``--ro-bind`` options for the allowed parts of /etc that exist here (symlinks such as
    /etc/localtime are recreated as symlinks): the shared :data:`ETC_ALLOW` and ``extra``,
    the program's own entries (its manifest's ``etc``, checked at discovery)."""
    args: list[str] = []
    for name in dict.fromkeys((*ETC_ALLOW, *extra)):
        path = Path("/etc") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.exists():
            args += ["--ro-bind", str(path), str(path)]
    return args


def passwd_text(program: Identity, agent: Identity) -> tuple[str, str]:
    """/etc/passwd and /etc/group for a sandbox: its own users, nothing of the host's."""
    passwd = (f"root:x:0:0:root:/root:/usr/sbin/nologin\n"
              f"user:x:{program.uid}:{program.gid}:user:/home/user:/bin/sh\n")
    if agent.uid != program.uid:
        passwd += f"agent:x:{agent.uid}:{agent.gid}:agent:/home/user:/bin/sh\n"
    passwd += "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    group = f"root:x:0:\nuser:x:{program.gid}:\nnogroup:x:65534:\n"
    return passwd, group


# -- seccomp ---------------------------------------------------------------------------------
#: Syscalls no sandboxed program needs and a hostile one would use (x86_64 numbers): mounts and
#: namespaces, tracing and other processes' memory, kernel keys, BPF, perf, modules, kexec,
#: clocks, swap, reboot, handles that bypass path checks, io_uring.
DENIED_SYSCALLS_X86_64 = {
    "ptrace": 101, "syslog": 103, "uselib": 134, "vhangup": 153, "pivot_root": 155,
    "_sysctl": 156, "adjtimex": 159, "chroot": 161, "acct": 163, "settimeofday": 164,
    "mount": 165, "umount2": 166, "swapon": 167, "swapoff": 168, "reboot": 169,
    "sethostname": 170, "setdomainname": 171, "iopl": 172, "ioperm": 173,
    "init_module": 175, "delete_module": 176, "quotactl": 179, "lookup_dcookie": 212,
    "clock_settime": 227, "kexec_load": 246, "add_key": 248, "request_key": 249,
    "keyctl": 250, "perf_event_open": 298, "name_to_handle_at": 303,
    "open_by_handle_at": 304, "clock_adjtime": 305, "setns": 308, "process_vm_readv": 310,
    "process_vm_writev": 311, "finit_module": 313, "kexec_file_load": 320, "bpf": 321,
    "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430,
    "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442, "quotactl_fd": 443,
}
_IOCTL, _TIOCSTI = 16, 0x5412
_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000
_RET_ALLOW = 0x7FFF0000
_RET_EPERM = 0x00050000 | errno.EPERM
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


#: Denied in the agent zone only: SysV shared memory, which a zone can hold with no process
#: attached and so out of the memory watchdog's sight (programs in the program zone may use
#: it; the agent's shell commands have no need of it).
AGENT_DENIED_SYSCALLS_X86_64 = {"shmget": 29}


def seccomp_program(extra: tuple[int, ...] = ()) -> bytes | None:
    """A classic-BPF seccomp filter (``struct sock_filter[]``) for bubblewrap's ``--seccomp``:
    EPERM for :data:`DENIED_SYSCALLS_X86_64` and the ``extra`` syscall numbers, for x32 and
    foreign-architecture calls and for the TIOCSTI ioctl (typing into another program's
    terminal); everything else allowed. None on machines that are not x86_64 (no table for
    them yet)."""
    if platform.machine() != "x86_64":
        return None
    denied = sorted({*DENIED_SYSCALLS_X86_64.values(), *extra})
    # [load arch][arch check][load nr][x32 check][one JEQ per denied nr]
    # [ioctl? load arg1, TIOCSTI?][ALLOW][EPERM]; jump offsets count from the next insn.
    total = 4 + len(denied) + 3 + 2
    allow_at, eperm_at = total - 2, total - 1
    prog: list[bytes] = []

    def to(target: int) -> int:
        return target - (len(prog) + 1)

    prog.append(_insn(_LD_W_ABS, 4))  # seccomp_data.arch
    prog.append(_insn(_JEQ_K, _AUDIT_ARCH_X86_64, 0, to(eperm_at)))
    prog.append(_insn(_LD_W_ABS, 0))  # seccomp_data.nr
    prog.append(_insn(_JGE_K, _X32_BIT, to(eperm_at), 0))
    for nr in denied:
        prog.append(_insn(_JEQ_K, nr, to(eperm_at), 0))
    prog.append(_insn(_JEQ_K, _IOCTL, 0, to(allow_at)))
    prog.append(_insn(_LD_W_ABS, 24))  # seccomp_data.args[1], low 32 bits
    prog.append(_insn(_JEQ_K, _TIOCSTI, to(eperm_at), 0))
    prog.append(_insn(_RET_K, _RET_ALLOW))
    prog.append(_insn(_RET_K, _RET_EPERM))
    return b"".join(prog)


#: x86_64 numbers of the calls that make a new process (clone only without CLONE_THREAD).
_FORK, _VFORK, _CLONE, _CLONE3 = 57, 58, 56, 435
_CLONE_THREAD = 0x00010000
_JSET_K = 0x45
_RET_ENOSYS = 0x00050000 | errno.ENOSYS


def seccomp_no_children() -> bytes | None:
    """A classic-BPF filter that lets a program start threads but no process: fork and vfork
    fail with EPERM, clone without CLONE_THREAD too, and clone3 with ENOSYS (its flags sit
    behind a pointer no filter can read; the C library then creates threads with clone).

    For a program whose console can run shell commands but whose work needs no child process
    (Praat's ``runSystem``): with it, nothing its console types runs beside it in the zone,
    e.g. a loop replacing the answer files the program writes for the state channel. It adds
    to the zone's filter (seccomp filters stack), for the program and its children only.
    None on machines that are not x86_64."""
    if platform.machine() != "x86_64":
        return None
    prog = [
        _insn(_LD_W_ABS, 4),                          # 0 seccomp_data.arch
        _insn(_JEQ_K, _AUDIT_ARCH_X86_64, 0, 8),      # 1 -> 10 EPERM
        _insn(_LD_W_ABS, 0),                          # 2 seccomp_data.nr
        _insn(_JEQ_K, _FORK, 6, 0),                   # 3 -> 10
        _insn(_JEQ_K, _VFORK, 5, 0),                  # 4 -> 10
        _insn(_JEQ_K, _CLONE3, 5, 0),                 # 5 -> 11 ENOSYS
        _insn(_JEQ_K, _CLONE, 0, 2),                  # 6 -> 7, else -> 9 ALLOW
        _insn(_LD_W_ABS, 16),                         # 7 seccomp_data.args[0], low 32 bits
        _insn(_JSET_K, _CLONE_THREAD, 0, 1),          # 8 thread -> 9, else -> 10
        _insn(_RET_K, _RET_ALLOW),                    # 9
        _insn(_RET_K, _RET_EPERM),                    # 10
        _insn(_RET_K, _RET_ENOSYS),                   # 11
    ]
    return b"".join(prog)


#: Installs the filter given in hex as argv[1] (no_new_privs first, as the kernel requires of
#: an unprivileged caller), then execs argv[2:]; stdlib only, for any Python a zone has.
_NO_CHILDREN_LAUNCHER = (
    "import ctypes,os,sys\n"
    "prog=bytes.fromhex(sys.argv[1])\n"
    "libc=ctypes.CDLL(None,use_errno=True)\n"
    "class F(ctypes.Structure):\n"
    " _fields_=[('len',ctypes.c_ushort),('filter',ctypes.c_void_p)]\n"
    "buf=ctypes.create_string_buffer(prog,len(prog))\n"
    "f=F(len(prog)//8,ctypes.addressof(buf))\n"
    "if libc.prctl(38,1,0,0,0) or libc.prctl(22,2,ctypes.byref(f),0,0):\n"
    " sys.exit('sciagent-gym: cannot install the no-children filter: '"
    "+os.strerror(ctypes.get_errno()))\n"
    "os.execvp(sys.argv[2],sys.argv[2:])\n")


def no_children_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` started under :func:`seccomp_no_children`: the program and whatever it runs
    can start threads but no process. A launch that cannot install the filter fails rather
    than start the program unfiltered; off x86_64 (no filter) ``argv`` is returned as it is."""
    program = seccomp_no_children()
    if program is None:
        return list(argv)
    return ["/usr/bin/python3", "-I", "-S", "-c", _NO_CHILDREN_LAUNCHER, program.hex(), *argv]


def seccomp_fd(extra: tuple[int, ...] = ()) -> int | None:
    """A readable fd holding :func:`seccomp_program` (for ``--seccomp FD``); the caller passes
    it to bubblewrap and closes it after the spawn."""
    program = seccomp_program(extra)
    if program is None:
        return None
    fd = os.memfd_create("sciagent-seccomp", os.MFD_CLOEXEC)
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
