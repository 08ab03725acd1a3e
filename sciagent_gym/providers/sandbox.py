"""One sandbox: a private home and work directory, and an agent process that runs things there.

With ``isolation="bwrap"`` (the default when bubblewrap works) the agent and all it starts see a
read-only system (/usr, /etc), the sandbox's own home at ``/home/user``, a private /tmp, the env's
X socket, and no network, no other processes, no host files: neither gold data nor this package.
``isolation="none"`` runs the agent directly on the host (development only; CLI actions are then
refused unless explicitly allowed).
"""

from __future__ import annotations

import functools
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from sciagent_gym import processes
from sciagent_gym.errors import MissingProgramError, SandboxError

AGENT_SOURCE = Path(__file__).with_name("sandbox_agent.py")
INSIDE_HOME = "/home/user"


@dataclass(frozen=True)
class CommandResult:
    returncode: int | None
    output: str
    timed_out: bool = False
    truncated: bool = False

    def terminal_text(self, command: str) -> str:
        """How the result appears in ``obs["terminal"]``."""
        status = "timed out" if self.timed_out else f"exit {self.returncode}"
        cut = "[... output truncated ...]\n" if self.truncated else ""
        body = self.output if not self.output or self.output.endswith("\n") else self.output + "\n"
        return f"$ {command}\n{cut}{body}[{status}]"


@functools.lru_cache(maxsize=1)
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot isolate here, or None if it works (checked once per process)."""
    if shutil.which("bwrap") is None:
        return "bwrap is not installed (apt-get install bubblewrap)"
    try:
        res = subprocess.run(["bwrap", "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent",
                              "--", "/bin/true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap failed to start: {exc}"
    if res.returncode != 0:
        return f"bwrap cannot create namespaces: {res.stderr.decode(errors='replace').strip()}"
    return None


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), f"/{name}"]
        elif path.is_dir():
            args += ["--ro-bind", str(path), f"/{name}"]
    return args


def _python_for_sandbox() -> tuple[str, list[str]]:
    """A Python the sandbox can run, and the binds it needs (a venv's base interpreter)."""
    exe = os.path.realpath(sys.executable)
    prefix = os.path.realpath(sys.base_prefix)
    binds = [] if prefix.startswith("/usr") else ["--ro-bind", prefix, prefix]
    return exe, binds


class Sandbox:
    """A sandbox directory tree on the host and the agent process serving it."""

    def __init__(self, display: str, x_socket: str, isolation: str = "auto",
                 root: str | Path | None = None) -> None:
        if isolation == "auto":
            isolation = "bwrap" if bwrap_problem() is None else "none"
        if isolation == "bwrap" and (problem := bwrap_problem()) is not None:
            raise MissingProgramError("bwrap", "bubblewrap", hint=None) if "installed" in problem \
                else SandboxError(problem)
        if isolation not in ("bwrap", "none"):
            raise ValueError(f"isolation must be 'auto', 'bwrap' or 'none', not {isolation!r}")
        self.isolation = isolation
        self.display, self._x_socket = display, x_socket
        self.root = Path(root) if root else Path(tempfile.mkdtemp(prefix="sciagent-sbx-"))
        self.host_home = self.root / "home"
        self.host_home.mkdir(parents=True, exist_ok=True)
        self._proc: subprocess.Popen | None = None
        #: Host directories the sandbox sees read-only at the same path (a tool installed
        #: outside /usr, e.g. QuPath under ~/.local/share); set before ``start``.
        self.extra_ro_binds: list[str] = []
        self._next_id = 1
        self._lock = threading.Lock()

    # -- paths as the sandbox sees them ----------------------------------------------------
    @property
    def home(self) -> str:
        return INSIDE_HOME if self.isolation == "bwrap" else str(self.host_home)

    @property
    def work(self) -> str:
        return f"{self.home}/work"

    @property
    def tmp(self) -> str:
        return "/tmp" if self.isolation == "bwrap" else str(self.root / "tmp")

    @property
    def host_work(self) -> Path:
        return self.host_home / "work"

    def to_host(self, inside: str) -> Path:
        """Map a path inside the sandbox's home to the host path."""
        rel = os.path.relpath(inside, self.home)
        if rel.startswith(".."):
            raise ValueError(f"{inside} is not inside the sandbox home {self.home}")
        return self.host_home / rel

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self, timeout: float = 10.0) -> None:
        """Start (or restart) the agent on the current contents of the home directory."""
        self.stop()
        env = {"HOME": self.home, "DISPLAY": self.display, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
               "USER": "user", "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
               "TMPDIR": self.tmp}
        if self.isolation == "bwrap":
            python, py_binds = _python_for_sandbox()
            argv = ["bwrap", "--die-with-parent", "--unshare-all", "--new-session", "--clearenv",
                    *_system_binds(), *py_binds,
                    "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
                    "--bind", self._x_socket, self._x_socket,
                    "--bind", str(self.host_home), INSIDE_HOME,
                    "--ro-bind", str(AGENT_SOURCE), "/opt/sciagent/agent.py"]
            for path in self.extra_ro_binds:
                if not os.path.isabs(path) or not os.path.isdir(path):
                    raise SandboxError(f"cannot show {path!r} in the sandbox: not an absolute "
                                       "path to a directory")
                argv += ["--ro-bind", path, path]
            argv += ["--chdir", self.work]
            for key, value in env.items():
                argv += ["--setenv", key, value]
            argv += ["--", python, "-u", "-S", "/opt/sciagent/agent.py"]
            proc_env = None
        else:
            Path(self.tmp).mkdir(parents=True, exist_ok=True)
            argv = [sys.executable, "-u", "-S", str(AGENT_SOURCE)]
            proc_env = env
        self.host_work.mkdir(parents=True, exist_ok=True)
        self._proc = processes.spawn(argv, env=proc_env, cwd=str(self.host_work),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        hello = self._read_reply(timeout)
        if not hello.get("ready"):
            raise SandboxError(f"sandbox agent did not start: {hello}")

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            try:
                self._proc.stdin.write(b'{"id": -1, "op": "shutdown"}\n')
                self._proc.stdin.flush()
                self._proc.wait(2.0)
            except (OSError, subprocess.TimeoutExpired):
                pass
        processes.terminate(self._proc, timeout=1.0)
        self._proc = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    # -- requests ----------------------------------------------------------------------------
    def request(self, op: str, fields: dict | None = None, timeout: float = 30.0) -> dict:
        """Send one request to the agent and return its reply (raises SandboxError)."""
        with self._lock:
            if not self.alive:
                raise SandboxError("the sandbox is not running")
            req_id = self._next_id
            self._next_id += 1
            line = json.dumps({"id": req_id, "op": op, **(fields or {})}) + "\n"
            try:
                self._proc.stdin.write(line.encode())
                self._proc.stdin.flush()
            except OSError as exc:
                raise SandboxError(f"sandbox agent is gone: {exc}") from exc
            reply = self._read_reply(timeout)
        if not reply.get("ok"):
            raise SandboxError(f"sandbox {op} failed: {reply.get('error')}")
        return reply

    def _read_reply(self, timeout: float) -> dict:
        out = self._proc.stdout
        ready, _, _ = select.select([out], [], [], timeout)
        if not ready:
            raise SandboxError(f"sandbox agent did not answer within {timeout:.0f}s")
        line = out.readline()
        if not line:
            err = self._proc.stderr.read1(4096).decode(errors="replace") if self._proc.stderr \
                else ""
            raise SandboxError(f"sandbox agent exited (code {self._proc.poll()}): {err.strip()}")
        return json.loads(line)

    def spawn(self, name: str, argv: list[str], env: dict | None = None,
              log: str | None = None) -> int:
        return self.request("spawn", {"name": name, "argv": argv, "env": env or {},
                                      "cwd": self.work, "log": log})["pid"]

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
        }, timeout=timeout + 5)
        return CommandResult(reply["returncode"], reply["output"], reply["timed_out"],
                             reply["truncated"])

    def read(self, path: str, max_bytes: int = 65536, remove: bool = False) -> str | None:
        """A file inside the sandbox (its last ``max_bytes``), or None if it does not exist."""
        fields = {"path": path, "max_bytes": max_bytes, "remove": remove}
        return self.request("read", fields, timeout=5).get("data")
