"""Child processes that can never outlive us.

Every long-running program the package starts (Xvfb, the window manager, sandboxes) goes through
:func:`spawn`: it runs in its own process group, gets SIGKILL from the kernel if this interpreter
dies (``PR_SET_PDEATHSIG``), and is registered so that :func:`terminate` on close, on error and
the ``atexit`` hook end the whole group. Owners of temp dirs, mounts and cgroups register with
:func:`close_at_exit`, so what their ``close()`` frees is freed at exit too. SIGTERM and SIGHUP,
which would end the interpreter without running ``atexit``, are turned into ``SystemExit``
unless the program handles them itself (see :func:`exit_cleanly_on_signals`).
"""

from __future__ import annotations

import atexit
import ctypes
import os
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

_PR_SET_PDEATHSIG = 1
_live: weakref.WeakSet[subprocess.Popen] = weakref.WeakSet()
_lock = threading.Lock()


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass


_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
_installed = False


_exiting = False


def _exit_on_signal(signum: int, frame) -> None:
    global _exiting
    if _exiting:  # the relayed copy of a signal already being handled: cleanup is under way
        return
    _exiting = True
    raise SystemExit(128 + signum)


def _relay_to_main_thread(read_fd: int) -> None:
    """Send each SIGTERM/SIGHUP the wake-up pipe reports to the main thread again.

    The kernel may deliver a process signal to any thread that does not block it (a C
    library's worker thread, say). Python's C-level handler then only sets a flag the main
    thread checks between bytecodes, so a main thread blocked in ``time.sleep`` or a long
    ``wait`` never runs the handler (measured: 1 SIGTERM in 4-10 here). ``pthread_kill``
    aimed at the main thread interrupts its system call, and the handler runs.
    """
    main = threading.main_thread().ident
    while True:
        try:
            data = os.read(read_fd, 64)
        except InterruptedError:
            continue
        except OSError:
            return
        if not data:
            return
        for signum in set(data) & {int(s) for s in _SIGNALS}:
            if signal.getsignal(signum) is _exit_on_signal and main is not None:
                try:
                    signal.pthread_kill(main, signum)
                except (OSError, ValueError):
                    return


def _install_relay() -> None:
    """A wake-up pipe and a daemon thread relaying our signals to the main thread, unless
    something else (an asyncio loop) already owns the wake-up fd."""
    read_fd, write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    os.set_blocking(read_fd, True)
    try:
        old = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    except ValueError:
        old = None
    if old != -1:  # not ours to replace
        if old is not None:
            signal.set_wakeup_fd(old)
        os.close(read_fd)
        os.close(write_fd)
        return
    threading.Thread(target=_relay_to_main_thread, args=(read_fd,), daemon=True,
                     name="sciagent-signal-relay").start()


def exit_cleanly_on_signals() -> bool:
    """Make SIGTERM and SIGHUP raise ``SystemExit(128 + signum)`` in the main thread, so that
    ``finally`` blocks, ``close()`` and ``atexit`` run: by default either signal ends Python at
    once and leaves sandboxes' temp dirs and tmpfs mounts behind until the next start sweeps
    them. A signal the program already handles (or ignores) is left alone. A signal that lands
    on another thread is relayed to the main thread (:func:`_relay_to_main_thread`). Called
    when the package first starts a process or makes a temp dir; returns whether anything was
    set."""
    global _installed
    if _installed or threading.current_thread() is not threading.main_thread():
        return False
    changed = False
    for sig in _SIGNALS:
        if signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, _exit_on_signal)
            changed = True
    if changed:
        _install_relay()
    _installed = True
    return changed


def spawn(argv: Sequence[str], *, env: dict[str, str] | None = None, cwd: str | None = None,
          stdin: int | None = subprocess.DEVNULL, stdout: int | None = subprocess.DEVNULL,
          stderr: int | None = subprocess.DEVNULL, pass_fds: Sequence[int] = (),
          preexec_fn: Callable[[], None] | None = None) -> subprocess.Popen:
    """Start ``argv`` in a new session, tied to this process's lifetime. A ``preexec_fn``
    replaces the default one and must set the parent-death signal itself (last, since a
    credential change clears it)."""
    exit_cleanly_on_signals()
    proc = subprocess.Popen(
        list(argv), env=env, cwd=cwd, stdin=stdin, stdout=stdout, stderr=stderr,
        start_new_session=True, preexec_fn=preexec_fn or _die_with_parent,
        pass_fds=tuple(pass_fds),
        close_fds=True,
    )
    with _lock:
        _live.add(proc)
    return proc


def terminate(proc: subprocess.Popen | None, timeout: float = 2.0) -> None:
    """End ``proc`` and its process group: SIGTERM, then SIGKILL after ``timeout``."""
    if proc is None:
        return
    with _lock:
        _live.discard(proc)
    if proc.poll() is None:
        _signal_group(proc, signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
    # The leader may be gone while members of its group live on: always sweep the group.
    _signal_group(proc, signal.SIGKILL)
    try:
        proc.wait(1.0)
    except subprocess.TimeoutExpired:
        pass
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            try:
                stream.close()
            except OSError:
                pass


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def live_processes() -> list[subprocess.Popen]:
    """Processes started through :func:`spawn` that have not been terminated."""
    with _lock:
        return [p for p in _live if p.poll() is None]


@atexit.register
def _terminate_all() -> None:
    with _lock:
        procs = list(_live)
    for proc in procs:
        terminate(proc, timeout=1.0)


_to_close: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def close_at_exit(obj: Any, method: str = "close") -> Any:
    """Call ``obj.<method>()`` at interpreter exit if ``obj`` is still alive then (the method
    must be safe to call twice: a closed object is not unregistered). Returns ``obj``."""
    with _lock:
        _to_close[obj] = method
    return obj


@atexit.register  # registered after _terminate_all, so it runs first (atexit is LIFO)
def _close_all() -> None:
    with _lock:
        owners = list(_to_close.items())
    for obj, method in owners:
        try:
            getattr(obj, method)()
        except Exception:  # noqa: BLE001 - one owner's failure must not keep the rest open
            pass


#: Kinds of temporary directories named after their owner's pid (``sciagent-<kind>-<pid>-``),
#: which :func:`owned_tempdir` makes and ``providers.sandbox.sweep_stale`` removes once the
#: owner is gone (a SIGKILLed interpreter cannot clean up after itself).
TEMPDIR_KINDS = ("sbx", "display", "stage", "final", "gold")


def owned_tempdir(kind: str) -> Path:
    """A new private (0700) temporary directory whose name carries this process's pid."""
    if kind not in TEMPDIR_KINDS:
        raise ValueError(f"unknown temp dir kind {kind!r}")
    exit_cleanly_on_signals()
    return Path(tempfile.mkdtemp(prefix=f"sciagent-{kind}-{os.getpid()}-"))


def wait_for(predicate, timeout: float, interval: float = 0.01, what: str = "condition"):
    """Poll ``predicate`` until it returns a truthy value; raise TimeoutError naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.1f}s waiting for {what}")
        time.sleep(interval)
