"""The process that lives inside a sandbox and starts things there on the host's behalf.

It is started as a zone's first program (inside bubblewrap when isolation is on) and speaks JSON
lines over a pipe pair whose fds it gets in argv, so the channel needs no socket that another
process could reach. Everything the host wants run in a zone goes through it: in the program
zone the tool's program and its scripting channel (which must share the program's network and
/tmp namespaces), in the agent zone the agent's CLI actions. Standard library only: it runs
with whatever Python the sandbox sees.

The host's first line is ``{"secret": S}``; every reply carries that secret and the request's id,
so a line another process of the zone manages to write into the pipe is recognisably not ours.
The helper makes itself non-dumpable at once: its /proc files (fds, memory) then belong to root,
not to the zone's uid, so processes of the zone can neither write into its pipes nor read S.

Requests: {"id", "op", ...}; replies: {"id", "secret", "ok": true, ...} or
{"id", "secret", "ok": false, "error"}. Outputs and reads are bounded: a command's output is read
as it comes and only its tail kept, a read takes the last bytes of a regular file only.
Ops: ping, spawn(name, argv, env, cwd, log), poll(name), kill(name), exec(argv | shell, cwd, env,
timeout, max_output), read(path, max_bytes, remove), call(name, code + args | argv + stdin, cwd,
env, log), collect(name), shutdown.

``call`` runs a state-channel client whose reply comes back through this helper's pipe, never
through a file another process of the zone could write. A Python client (``code``) runs in a
forked child of this helper, without an exec: it inherits the helper's non-dumpable flag from
its first instruction, its arguments (nonces, requests) live only in its memory (its command
line is the helper's), and its stdout is a pipe only it and the helper hold. A client that must
be another program (``argv``) gets its secrets on stdin rather than in argv; once it execs it is
dumpable again, which the threat model names.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import signal
import stat
import subprocess
import sys
import time

_children: dict[str, subprocess.Popen] = {}
_calls: dict[str, _Call] = {}
_PR_SET_DUMPABLE = 4
MAX_OUTPUT = 1 << 20
MAX_READ = 1 << 20
#: Largest reply a channel client may return (a state dump); more is an error, not a tail.
MAX_CALL_OUTPUT = 2 << 20


def _pdeathsig() -> None:
    try:
        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)
    except OSError:
        pass


def _killgroup(proc: subprocess.Popen, timeout: float = 1.0, graceful: bool = True) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL) if graceful else (signal.SIGKILL,):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout)
            if sig == signal.SIGTERM:
                continue
        except subprocess.TimeoutExpired:
            continue


def _env(extra: dict | None) -> dict:
    env = dict(os.environ)
    env.update(extra or {})
    return env


def op_ping(req: dict) -> dict:
    return {"pid": os.getpid()}


def op_spawn(req: dict) -> dict:
    name = req["name"]
    old = _children.pop(name, None)
    if old is not None:
        _killgroup(old)
    log = open(req["log"], "ab") if req.get("log") else subprocess.DEVNULL
    # PR_SET_PDEATHSIG fires when the *thread* that forked the child ends: right for this
    # single-threaded agent, wrong for the threaded control server (pdeathsig=False there).
    proc = subprocess.Popen(
        req["argv"], cwd=req.get("cwd"), env=_env(req.get("env")), stdin=subprocess.DEVNULL,
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        preexec_fn=_pdeathsig if req.get("pdeathsig", True) else None,
    )
    if log is not subprocess.DEVNULL:
        log.close()
    _children[name] = proc
    return {"pid": proc.pid}


def op_poll(req: dict) -> dict:
    proc = _children.get(req["name"])
    if proc is None:
        return {"running": False, "returncode": None}
    code = proc.poll()
    return {"running": code is None, "returncode": code}


def op_kill(req: dict) -> dict:
    proc = _children.pop(req["name"], None)
    if proc is not None:
        _killgroup(proc)
    call = _calls.pop(req["name"], None)
    if call is not None:
        call.end()
    return {}


class _Call:
    """A running channel client: its process group and the read end of its stdout."""

    def __init__(self, pid: int, out_fd: int, popen: subprocess.Popen | None = None) -> None:
        self.pid, self.out_fd, self.popen = pid, out_fd, popen
        self.output = bytearray()
        self.overflow = False
        self.returncode: int | None = None

    def drain(self) -> bool:
        """Read what the client has written so far; True at end of file."""
        while True:
            try:
                chunk = os.read(self.out_fd, 65536)
            except BlockingIOError:
                return False
            if not chunk:
                return True
            if len(self.output) + len(chunk) > MAX_CALL_OUTPUT:
                self.overflow = True
                continue
            self.output += chunk

    def exited(self) -> bool:
        if self.returncode is not None:
            return True
        if self.popen is not None:
            self.returncode = self.popen.poll()
            return self.returncode is not None
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        if pid == 0:
            return False
        self.returncode = os.waitstatus_to_exitcode(status)
        return True

    def end(self) -> None:
        """Kill the client's whole group (what it left behind too), reap it, close the pipe."""
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.returncode is None:
            try:
                if self.popen is not None:
                    self.popen.wait(2.0)
                else:
                    os.waitpid(self.pid, 0)
            except (ChildProcessError, subprocess.TimeoutExpired):
                pass
        try:
            os.close(self.out_fd)
        except OSError:
            pass


def _run_client_code(code: str, args: list, cwd: str, env: dict, log_fd: int, out_w: int
                     ) -> None:
    """The forked child of :func:`op_call` (never returns): no exec, so it stays as
    non-dumpable as the helper; the helper's channel fds are closed before any client code
    runs."""
    status = 1
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the helper's handler ends its children
        _children.clear()
        _calls.clear()
        os.setsid()
        _pdeathsig()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out_w, 1)
        os.dup2(log_fd, 2)
        os.closerange(3, 1 << 16)
        os.chdir(cwd)
        os.environ.update(env)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)
        sys.argv = ["client", *[str(a) for a in args]]
        try:
            exec(compile(code, "<client>", "exec"), {"__name__": "__main__"})
            status = 0
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                status = exc.code or 0
            else:
                print(exc.code, file=sys.stderr)
                status = 1
        except BaseException:  # noqa: BLE001 (reported in the client's log)
            import traceback

            traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(status)


def op_call(req: dict) -> dict:
    """Start a channel client (see the module docstring): Python ``code`` with ``args`` in a
    forked child, or ``argv`` with ``stdin`` as its standard input. Its stdout is collected by
    :func:`op_collect`; its stderr goes to ``log``."""
    name = req["name"]
    op_kill({"name": name})
    cwd = req.get("cwd") or "/"
    env = {str(k): str(v) for k, v in (req.get("env") or {}).items()}
    log_fd = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o600) if req.get("log") else \
        os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
    out_r, out_w = os.pipe()
    try:
        if req.get("code") is not None:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _run_client_code(str(req["code"]), list(req.get("args") or []), cwd, env,
                                 log_fd, out_w)
            call = _Call(pid, out_r)
        else:
            stdin = os.memfd_create("sciagent-call", os.MFD_CLOEXEC)
            try:
                os.write(stdin, str(req.get("stdin") or "").encode())
                os.lseek(stdin, 0, os.SEEK_SET)
                proc = subprocess.Popen(
                    req["argv"], cwd=cwd, env=_env(env), stdin=stdin, stdout=out_w,
                    stderr=log_fd, start_new_session=True,
                    preexec_fn=_pdeathsig if req.get("pdeathsig", True) else None)
            finally:
                os.close(stdin)
            call = _Call(proc.pid, out_r, proc)
    except BaseException:
        os.close(out_r)
        raise
    finally:
        os.close(out_w)
        os.close(log_fd)
    os.set_blocking(out_r, False)
    _calls[name] = call
    return {"pid": call.pid}


#: Runs Python client code that arrives on stdin (a JSON line of arguments, then the code), for
#: callers that cannot fork this helper (the threaded control server): the code and arguments
#: stay off the command line.
STDIN_CLIENT = ("import json, sys\n"
                "sys.argv = ['client', *json.loads(sys.stdin.readline())]\n"
                "exec(compile(sys.stdin.read(), '<client>', 'exec'), {'__name__': '__main__'})\n")


def op_collect(req: dict) -> dict:
    """A client's reply once it has exited (``done``), with its exit status; its output is
    drained on every call so a large reply never blocks the client on a full pipe."""
    call = _calls.get(req["name"])
    if call is None:
        return {"done": True, "returncode": None, "output": None}
    eof = call.drain()
    if not call.exited():
        return {"done": False}
    if not eof:
        call.drain()
    _calls.pop(req["name"], None)
    call.end()
    if call.overflow:
        return {"done": True, "returncode": call.returncode, "output": None,
                "error": f"the client's reply passed {MAX_CALL_OUTPUT} bytes"}
    return {"done": True, "returncode": call.returncode,
            "output": bytes(call.output).decode("utf-8", "replace")}


def op_exec(req: dict) -> dict:
    max_output = min(max(int(req.get("max_output", 8192)), 0), MAX_OUTPUT)
    argv = req.get("argv") or ["/bin/sh", "-c", req["shell"]]
    timeout = float(req.get("timeout", 30))
    proc = subprocess.Popen(
        argv, cwd=req.get("cwd"), env=_env(req.get("env")), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
        preexec_fn=_pdeathsig if req.get("pdeathsig", True) else None,
    )
    tail, total, timed_out = _read_tail(proc, timeout, max_output)
    return {"returncode": proc.returncode, "timed_out": timed_out,
            "output": bytes(tail).decode("utf-8", "replace"), "truncated": total > max_output}


def _read_tail(proc: subprocess.Popen, timeout: float, keep: int) -> tuple[bytearray, int, bool]:
    """Read the command's output as it comes, keeping only the last ``keep`` bytes, until it
    ends or ``timeout``; then kill its group. A child that left the group (``setsid cmd &``)
    and still holds the pipe gets 2 s more, then is answered without."""
    fd = proc.stdout.fileno()
    tail, total = bytearray(), 0
    deadline = time.monotonic() + timeout
    timed_out, eof = False, False
    while not eof:
        left = deadline - time.monotonic()
        if left <= 0:
            if timed_out:
                break
            timed_out = True
            _killgroup(proc)
            deadline = time.monotonic() + 2.0
            continue
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            eof = True
        total += len(chunk)
        tail += chunk
        if len(tail) > keep:
            del tail[:len(tail) - keep]
    proc.stdout.close()
    try:
        proc.wait(max(deadline - time.monotonic(), 0.0) if not timed_out else 2.0)
    except subprocess.TimeoutExpired:
        timed_out = True
        _killgroup(proc, graceful=False)
        try:
            proc.wait(2.0)
        except subprocess.TimeoutExpired:
            pass
    return tail, total, timed_out


def op_read(req: dict) -> dict:
    """The last ``max_bytes`` of a regular file, opened without following a link and without
    blocking (a FIFO in its place must not hang the helper)."""
    path = req["path"]
    limit = min(max(int(req.get("max_bytes", 65536)), 0), MAX_READ)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return {"data": None, "error": str(exc)}
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return {"data": None, "error": "not a regular file"}
        os.lseek(fd, max(st.st_size - limit, 0), os.SEEK_SET)
        data = b""
        while len(data) < limit:
            chunk = os.read(fd, limit - len(data))
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    if req.get("remove"):
        os.unlink(path)
    return {"data": data.decode("utf-8", "replace")}


def shutdown() -> None:
    # The sandbox is discarded after this, so nothing needs a clean exit (a clean exit would
    # even let programs write settings that the next snapshot restore throws away anyway).
    for proc in list(_children.values()):
        _killgroup(proc, graceful=False)
    _children.clear()
    for call in list(_calls.values()):
        call.end()
    _calls.clear()


OPS = {"ping": op_ping, "spawn": op_spawn, "poll": op_poll, "kill": op_kill, "exec": op_exec,
       "read": op_read, "call": op_call, "collect": op_collect}


def _reply(out, secret: str, reply: dict) -> None:
    out.write(json.dumps({**reply, "secret": secret}) + "\n")
    out.flush()


def main() -> int:
    try:  # first thing: close our /proc files to the zone's uid
        ctypes.CDLL(None).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except OSError:
        pass
    signal.signal(signal.SIGTERM, lambda *_: (shutdown(), sys.exit(0)))
    # The channel: request and reply pipes on the fds named in argv (stdin/stdout without).
    if len(sys.argv) >= 3:
        inp = os.fdopen(int(sys.argv[1]), "r", encoding="utf-8")
        out = os.fdopen(int(sys.argv[2]), "w", encoding="utf-8")
    else:
        inp, out = sys.stdin, sys.stdout
    try:
        secret = str(json.loads(inp.readline())["secret"])
    except (ValueError, KeyError, TypeError):
        return 2
    _reply(out, secret, {"id": 0, "ok": True, "ready": True, "pid": os.getpid()})
    for line in inp:
        try:
            req = json.loads(line)
        except ValueError as exc:
            _reply(out, secret, {"id": None, "ok": False, "error": f"bad json: {exc}"})
            continue
        if req.get("op") == "shutdown":
            shutdown()
            _reply(out, secret, {"id": req.get("id"), "ok": True})
            return 0
        try:
            reply = {"id": req.get("id"), "ok": True, **OPS[req["op"]](req)}
        except Exception as exc:  # reported to the host, never fatal to the sandbox
            reply = {"id": req.get("id"), "ok": False, "error": f"{type(exc).__name__}: {exc}"}
        _reply(out, secret, reply)
    shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
