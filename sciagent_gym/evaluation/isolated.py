"""Run a program over agent-written files in a throwaway sandbox.

The evaluator trusts nothing the agent wrote (docs/design.md, section 2): a parse that needs a
program (PyMOL reading a session) runs here, never on the host. Each call gets an unleased
unprivileged uid, its own namespaces (no network), no capabilities, the seccomp filter, the
parser rlimits, empty size-capped /tmp, /dev/shm and home (/dev and the rest of the root
read-only), a clean environment, and copies of the given host files read-only at fixed
paths. Output is read through a bounded tail and the whole sandbox is killed at the
deadline. Without a working bubblewrap it refuses to run: there is no unsandboxed fallback.

A program slow to start (Veusz, PyMOL) can be started ahead of need in the same sandbox, no
file shown, to read its input from stdin, answer once and exit (:func:`start_sandboxed`,
:class:`WarmReader`, ``run_sandboxed(warm=owner)``); one lost before use means a cold run.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from sciagent_gym import processes
from sciagent_gym.evaluation.sandbox_process import (
    HOME_BYTES,
    INSIDE_HOME,
    MAX_FILE_BYTES,
    SandboxRun,
    finish_sandboxed,
    spawn_sandboxed,
)
from sciagent_gym.evaluation.warm import (
    WarmReader,
    WarmSandbox,
    close_warm,
    defer_warm,
    prepare_warm,
    start_sandboxed,
    warm_reader,
    warm_readers,
)
from sciagent_gym.isolation import confinement as conf

__all__ = ["HOME_BYTES", "INSIDE_HOME", "MAX_FILE_BYTES", "SandboxRun", "WarmReader",
           "WarmSandbox", "close_warm", "defer_warm", "prepare_warm", "run_sandboxed",
           "start_sandboxed", "warm_readers"]


def run_sandboxed(argv: Sequence[str], *, files: Mapping[str, Path] | None = None,
                  timeout: float = 60.0, max_output: int = 1 << 20, stdin: bytes = b"",
                  env: Mapping[str, str] | None = None,
                  limits: conf.Limits = conf.PARSER_LIMITS,
                  warm: object | None = None) -> SandboxRun:
    """Run ``argv`` in a fresh sandbox (see the module docstring) and wait for it.

    ``files`` maps inside paths to host files, shown read-only. ``stdin`` is written to the
    program's stdin, the channel for anything the sandboxed files must not see in argv or the
    environment (e.g. a per-call answer marker). Raises SandboxError when bubblewrap cannot
    isolate here.

    ``warm``, an owner (an env's provider; weakly held), with no ``files``: the run is served
    by a sandbox of the same ``argv``, ``env`` and ``limits`` started ahead of need for that
    owner (:class:`WarmReader`), and the next one is started as it ends; a run no warm one
    could serve (the first, or one lost before use) runs cold as without ``warm``. Each
    sandbox serves one run. What waits is ended when the owner is garbage collected
    (:func:`close_warm` ends it sooner) and at interpreter exit.
    """
    if warm is not None and not files:
        reader = warm_reader(warm, argv, env, limits)
        if reader is not None:
            res = reader.run(stdin, timeout=timeout, max_output=max_output)
            if res is not None:
                return res
    proc, lease = spawn_sandboxed(argv, files, env, limits)
    try:
        return finish_sandboxed(proc, stdin, time.monotonic() + timeout, max_output)
    finally:
        if proc.poll() is None:
            processes.terminate(proc, timeout=0)
        lease.release()
