"""The process that lives inside a sandbox and starts things there on the host's behalf.

It is started as the sandbox's first program (inside bubblewrap when isolation is on) and speaks
JSON lines on stdin/stdout, so the channel needs no socket the agent's own CLI commands could
reach. Everything the host wants run in the sandbox goes through it: the tool's program, the
tool's scripting channel (which must run in the same network and /tmp namespace as the program),
and the agent's CLI actions. Standard library only: it runs with whatever Python the sandbox sees.

Requests: {"id", "op", ...}; replies: {"id", "ok": true, ...} or {"id", "ok": false, "error"}.
Ops: ping, spawn(name, argv, env, cwd, log), poll(name), kill(name), exec(argv | shell, cwd, env,
timeout, max_output), read(path, max_bytes, remove), shutdown.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys

_children: dict[str, subprocess.Popen] = {}


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
    max_output = int(req.get("max_output", 8192))
    argv = req.get("argv") or ["/bin/sh", "-c", req["shell"]]
    timeout = float(req.get("timeout", 30))
    proc = subprocess.Popen(
        argv, cwd=req.get("cwd"), env=_env(req.get("env")), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
        preexec_fn=_pdeathsig if req.get("pdeathsig", True) else None,
    )
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _killgroup(proc)
        try:
            out, _ = proc.communicate(timeout=2.0)
        except subprocess.TimeoutExpired as exc:
            # A child that left the process group (setsid cmd &) still holds the output
            # pipe: answer with what came so far instead of waiting for it forever.
            out = exc.output or b""
            proc.stdout.close()
            proc.wait(timeout=2.0)
    reply = {
        "returncode": proc.returncode, "timed_out": timed_out,
        "output": out[-max_output:].decode("utf-8", "replace"),
        "truncated": len(out) > max_output,
    }
    return reply


def op_read(req: dict) -> dict:
    try:
        with open(req["path"], "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return {"data": None, "error": str(exc)}
    if req.get("remove"):
        os.unlink(req["path"])
    limit = int(req.get("max_bytes", 65536))
    return {"data": data[-limit:].decode("utf-8", "replace")}


def shutdown() -> None:
    # The sandbox is discarded after this, so nothing needs a clean exit (a clean exit would
    # even let programs write settings that the next snapshot restore throws away anyway).
    for proc in list(_children.values()):
        _killgroup(proc, graceful=False)
    _children.clear()


OPS = {"ping": op_ping, "spawn": op_spawn, "poll": op_poll, "kill": op_kill, "exec": op_exec,
       "read": op_read}


def main() -> int:
    signal.signal(signal.SIGTERM, lambda *_: (shutdown(), sys.exit(0)))
    out = sys.stdout
    out.write(json.dumps({"id": 0, "ok": True, "ready": True, "pid": os.getpid()}) + "\n")
    out.flush()
    for line in sys.stdin:
        try:
            req = json.loads(line)
        except ValueError as exc:
            out.write(json.dumps({"id": None, "ok": False, "error": f"bad json: {exc}"}) + "\n")
            out.flush()
            continue
        if req.get("op") == "shutdown":
            shutdown()
            out.write(json.dumps({"id": req.get("id"), "ok": True}) + "\n")
            out.flush()
            return 0
        try:
            reply = {"id": req.get("id"), "ok": True, **OPS[req["op"]](req)}
        except Exception as exc:  # reported to the host, never fatal to the sandbox
            reply = {"id": req.get("id"), "ok": False, "error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()
    shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
