"""Two zones on a machine whose control server runs as root (a VM guest): the programs run as
one unprivileged user, the agent's CLI commands as another, in fresh network, PID, IPC and
UTS namespaces, with no capabilities, ``no_new_privs`` and resource limits.

The commands still start through :mod:`sciagent_gym.isolation.sandbox_agent` (``op_exec`` /
``op_spawn``); this module only builds the argv prefix that drops to the zone's user, using
util-linux's ``unshare``, ``prlimit`` and ``setpriv`` (essential in Debian, so in every guest).
The agent's uid differs from the server's (root, which reads the token) and from the
programs' (so it cannot signal, trace or read them); its network namespace has no interface
but loopback, so neither the control server nor a program's channel port is reachable. The two
users share one group that owns the work directory; both run with umask 002 so each can change
what the other wrote there.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

TOOLS = ("unshare", "prlimit", "setpriv", "env")
PATH = "/usr/local/bin:/usr/bin:/bin"
#: The agent zone's limits (per process; nproc counts every process of the agent's uid).
AGENT_LIMITS = {"nproc": 256, "nofile": 1024, "fsize": 1 << 30, "core": 0}


@dataclass(frozen=True)
class Account:
    name: str
    uid: int
    gid: int
    home: str


def account(name: str) -> Account:
    import pwd  # POSIX only; the Windows server never builds zones

    try:
        pw = pwd.getpwnam(name)
    except KeyError:
        raise ValueError(f"no user {name!r} on this machine") from None
    if pw.pw_uid == 0:
        raise ValueError(f"user {name!r} is root: a zone needs an unprivileged user")
    return Account(pw.pw_name, pw.pw_uid, pw.pw_gid, pw.pw_dir)


def shared_group(a: Account, b: Account) -> int:
    """A group both users are in (by membership list or as their primary group)."""
    import grp

    if a.gid == b.gid:
        return a.gid
    for g in grp.getgrall():
        members = set(g.gr_mem) | {n for n, acc in ((a.name, a), (b.name, b)) if acc.gid ==
                                   g.gr_gid}
        if a.name in members and b.name in members:
            return g.gr_gid
    raise ValueError(f"users {a.name!r} and {b.name!r} share no group to own the work "
                     "directory")


@dataclass(frozen=True)
class UserZones:
    """The program user and the agent user, and how to start a process as either."""

    program: Account
    agent: Account
    #: The group both users are in: it owns the work directory.
    shared_gid: int
    tools: dict[str, str]

    @classmethod
    def create(cls, program: str, agent: str) -> UserZones:
        """Both users by name; ValueError when the server is not root, the users are one, or
        a tool is missing."""
        if os.geteuid() != 0:
            raise ValueError("separate users for programs and commands need the server to run "
                             "as root")
        prog, agt = account(program), account(agent)
        if prog.uid == agt.uid:
            raise ValueError("the program user and the agent user must differ")
        tools = {t: shutil.which(t, path=PATH) for t in TOOLS}
        missing = [t for t, path in tools.items() if path is None]
        if missing:
            raise ValueError(f"missing {missing}: install util-linux and coreutils")
        return cls(prog, agt, shared_group(prog, agt), {t: p for t, p in tools.items() if p})

    def _drop(self, who: Account) -> list[str]:
        return [self.tools["setpriv"], f"--reuid={who.uid}", f"--regid={who.gid}",
                "--init-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs",
                "--"]

    def program_argv(self, argv: list[str], log: str | None = None,
                     keep_stdout: bool = False) -> list[str]:
        """``argv`` run as the program user; its output (only stderr with ``keep_stdout``:
        a channel client's reply) appended to ``log``, opened by that user (so a link planted
        at the log's name cannot make root write elsewhere)."""
        redirect = '2>>"$log"' if keep_stdout else '>>"$log" 2>&1'
        script = f'umask 002; log=$1; shift; exec "$@" {redirect}' if log else \
            'umask 002; shift; exec "$@"'
        return [*self._drop(self.program), "/bin/sh", "-c", script, "sh", log or "-", *argv]

    def agent_argv(self, command: str, work: str, display: str) -> list[str]:
        """A shell command as the agent: own namespaces (no network, no other processes,
        ended with its shell), limits, a clean environment."""
        home = self.agent.home if os.path.isdir(self.agent.home) else work
        limits = [f"--{k}={v}:{v}" for k, v in AGENT_LIMITS.items()]
        env = [f"HOME={home}", f"PATH={PATH}", f"USER={self.agent.name}",
               f"LOGNAME={self.agent.name}", "LANG=C.UTF-8", "LC_ALL=C.UTF-8",
               f"DISPLAY={display}", "SHELL=/bin/sh"]
        return [self.tools["unshare"], "--net", "--ipc", "--uts", "--pid", "--fork",
                "--kill-child", "--mount-proc", "--",
                self.tools["prlimit"], *limits, "--",
                *self._drop(self.agent),
                self.tools["env"], "-i", *env, "/bin/sh", "-c", "umask 002\n" + command]
