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
timeout, max_output), read(path, max_bytes, remove), shutdown.
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
_PR_SET_DUMPABLE = 4
MAX_OUTPUT = 1 << 20
MAX_READ = 1 << 20


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
    return {}


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


OPS = {"ping": op_ping, "spawn": op_spawn, "poll": op_poll, "kill": op_kill, "exec": op_exec,
       "read": op_read}


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
