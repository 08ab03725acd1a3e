"""Sandboxes started ahead of need: a program slow to start (Veusz, PyMOL) waits, imported and
ready, in the same sandbox as a cold run (:mod:`.sandbox_process`, no file shown) for its
input on stdin, answers once and exits.

:func:`start_sandboxed` starts one; a :class:`WarmReader` keeps one waiting for an owner (an
env's provider) and starts the next as one is used; ``run_sandboxed(warm=owner)``
(:mod:`.isolated`) finds the owner's readers here. One lost before use means a cold run.
Nothing passes from one request to the next: each sandbox serves one. The env ends an
owner's sandboxes on close (:func:`close_warm`); at the end of an episode it holds the next
start back until its next reset is done (:func:`defer_warm`, :func:`prepare_warm`), so the
reader's start-up does not compete with the program's restart.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Mapping, Sequence

from sciagent_gym import processes
from sciagent_gym.errors import SandboxError
from sciagent_gym.evaluation.sandbox_process import (
    SandboxRun,
    finish_sandboxed,
    spawn_sandboxed,
)
from sciagent_gym.isolation import confinement as conf

#: A warm sandbox killed from outside (bubblewrap reports its child's signal as 128 + it).
_KILLED = {128 + signal.SIGKILL, 128 + signal.SIGTERM}


def _end_warm(proc: subprocess.Popen, lease: conf.UidLease, done: list[bool]) -> None:
    if not done:
        done.append(True)
        processes.terminate(proc, timeout=0)
    lease.release()


class WarmSandbox:
    """A sandbox started ahead of need (:func:`start_sandboxed`): ``argv`` runs in it under
    the same confinement as :func:`run_sandboxed` (no files shown) and waits on its stdin for
    the one request it serves (:meth:`run`). Killed with its whole process group and its uid
    lease released on :meth:`close`, after :meth:`run`, on error, when it is garbage
    collected and at interpreter exit."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str] | None,
                 limits: conf.Limits) -> None:
        self._proc, lease = spawn_sandboxed(argv, None, env, limits)
        self._done: list[bool] = []
        self._used = False
        self._close = weakref.finalize(self, _end_warm, self._proc, lease, self._done)

    pid = property(lambda self: self._proc.pid)  # its bubblewrap's, its group's leader

    def alive(self) -> bool:
        """Whether it still waits for its request (not used, not exited)."""
        return not self._used and self._proc.poll() is None

    def run(self, stdin: bytes, *, timeout: float = 60.0,
            max_output: int = 1 << 20) -> SandboxRun | None:
        """Hand it ``stdin`` (then end of file) and wait for it as :func:`run_sandboxed` does
        (bounded output tail, killed at the deadline); closed afterwards. None when it was lost
        before it could answer (it had exited, or it was killed from outside): the caller then
        runs the request cold. A second call raises RuntimeError."""
        if self._used:
            raise RuntimeError("a warm sandbox serves one request")
        self._used = True
        try:
            if self._proc.poll() is not None:
                return None
            res = finish_sandboxed(self._proc, stdin, time.monotonic() + timeout, max_output)
            self._done.append(True)  # ended and its group swept
            if not res.timed_out and res.returncode is not None \
                    and (res.returncode < 0 or res.returncode in _KILLED):
                return None
            return res
        finally:
            self.close()

    def close(self) -> None:
        """End it (its whole process group), release its uid; safe to call twice."""
        self._used = True
        self._close()


def start_sandboxed(argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                    limits: conf.Limits = conf.PARSER_LIMITS) -> WarmSandbox:
    """``argv`` started now in a fresh sandbox like :func:`run_sandboxed`'s (no host file
    shown), handed its input on stdin later (:meth:`WarmSandbox.run`). Raises SandboxError
    when bubblewrap cannot isolate here."""
    return WarmSandbox(argv, env, limits)


class WarmReader:
    """One :class:`WarmSandbox` of ``argv`` kept started ahead of need, for the requests of one
    owner (an env's adapter): :meth:`run` hands the waiting one its request and starts the
    next, so every request after the first finds one warm. Each sandbox serves exactly one
    request, so nothing passes from one request to the next. :meth:`run` returns None when it
    could not serve (input over ``max_stdin``, no sandbox could be started, the waiting one
    was lost): the caller then takes its cold path. Closed on :meth:`close`, when
    ``owner`` (if given) is garbage collected, and at interpreter exit. The next sandbox is
    started on the calling thread (a few milliseconds), never on a helper thread: the
    parent-death signal a sandbox gets fires when the *thread* that started it ends."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                 limits: conf.Limits = conf.PARSER_LIMITS, max_stdin: int = 16 << 20,
                 owner: object | None = None) -> None:
        self.argv, self.env, self.limits, self.max_stdin = list(argv), env, limits, max_stdin
        self._lock = threading.Lock()
        self._next: WarmSandbox | None = None
        self._closed = False
        #: What :meth:`run` did last: "warm", "started" (none waited: one was started for
        #: it), "lost" (not served by one: the caller runs cold), "skipped" (not tried).
        self.last: str | None = None
        processes.close_at_exit(self)
        self._owner = weakref.ref(owner) if owner is not None else None
        if owner is not None:
            weakref.finalize(owner, self.close)

    def _start(self) -> WarmSandbox | None:
        try:
            return start_sandboxed(self.argv, env=self.env, limits=self.limits)
        except (SandboxError, OSError):
            return None

    def prepare(self) -> None:
        """Start one if none is waiting (a no-op once closed or if it cannot start)."""
        with self._lock:
            if self._closed or (self._next is not None and self._next.alive()):
                return
            old, self._next = self._next, self._start()
        if old is not None:
            old.close()

    def run(self, stdin: bytes, *, timeout: float = 60.0,
            max_output: int = 1 << 20) -> SandboxRun | None:
        """The request ``stdin`` served by the waiting sandbox (one is started if none waits),
        then the next one started; None when not served (see the class docstring)."""
        if self._closed or len(stdin) > self.max_stdin:
            self.last = "skipped"
            return None
        with self._lock:
            warm, self._next = self._next, None
        how = "warm" if warm is not None else "started"
        warm = warm or self._start()
        try:
            res = warm.run(stdin, timeout=timeout, max_output=max_output) if warm else None
            self.last = how if res is not None else "lost"
            return res
        finally:
            if warm is not None:
                warm.close()
            owner = self._owner() if self._owner is not None else None
            if owner is None or owner not in _deferred:
                self.prepare()

    def close(self) -> None:
        """End the waiting sandbox, if any, and start no more; safe to call twice."""
        with self._lock:
            self._closed = True
            warm, self._next = self._next, None
        if warm is not None:
            warm.close()


#: Warm readers by owner, then by what they run (at most _WARM_PER_OWNER an owner).
_warm: weakref.WeakKeyDictionary[object, dict[tuple, WarmReader]] = weakref.WeakKeyDictionary()
_warm_lock = threading.Lock()
_WARM_PER_OWNER = 4


def warm_reader(owner: object, argv: Sequence[str], env: Mapping[str, str] | None,
                limits: conf.Limits) -> WarmReader | None:
    """The owner's reader of ``argv`` (made on first use; at most four an owner, the oldest
    closed first); None for an owner that cannot be weakly referenced."""
    key = (tuple(argv), tuple(sorted((env or {}).items())), limits)
    evicted = []
    with _warm_lock:
        try:
            readers = _warm.setdefault(owner, {})
        except TypeError:  # not weakly referenceable: no warm reader
            return None
        reader = readers.get(key)
        if reader is None:
            while len(readers) >= _WARM_PER_OWNER:
                evicted.append(readers.pop(next(iter(readers))))
            reader = readers[key] = WarmReader(argv, env=env, limits=limits, owner=owner)
    for old in evicted:
        old.close()
    return reader


#: Owners whose next start waits for :func:`prepare_warm` (an episode's end: a reset follows).
_deferred: weakref.WeakSet[object] = weakref.WeakSet()


def defer_warm(owner: object) -> None:
    """From now on a reader of ``owner`` that serves a request starts no successor until
    :func:`prepare_warm` (the env calls this as an episode ends: the reset that follows
    restarts the program, and a reader starting beside it slowed that reset by 10-25%)."""
    try:
        _deferred.add(owner)
    except TypeError:
        pass


def prepare_warm(owner: object) -> None:
    """Start a waiting sandbox for each of ``owner``'s readers that has none (the env calls
    this when a reset is done), and end a :func:`defer_warm`."""
    try:
        _deferred.discard(owner)
    except TypeError:
        return
    for reader in warm_readers(owner):
        reader.prepare()


def close_warm(owner: object) -> None:
    """End the sandboxes started ahead of need for ``owner`` (:func:`run_sandboxed`)."""
    with _warm_lock:
        readers = _warm.pop(owner, {})
    for reader in readers.values():
        reader.close()


def warm_readers(owner: object) -> list[WarmReader]:
    """The warm readers kept for ``owner`` (for tests and measurements)."""
    with _warm_lock:
        return list(_warm.get(owner, {}).values())
