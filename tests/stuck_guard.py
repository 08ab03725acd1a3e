"""A test that outlives pytest-timeout's limit ends its worker, loudly, instead of the CI run.

pytest-timeout's ``signal`` method raises in the main thread on SIGALRM, which a thread blocked
in C code that retries on EINTR (an X client waiting on a socket, a blocked signal) never sees:
such a test hangs until CI's own limit kills the whole run with no name and no stack (a run on
2026-12-07 stopped at 97% after 90 minutes). This guard arms a second timer per test, set
``SCIAGENT_STUCK_MARGIN`` seconds (default 120) past the test's timeout: when it fires, it
names the test, dumps every thread's stack to the run's stderr and ends the worker process.
pytest-xdist then reports the test as failed ("worker crashed") and starts a new worker, so the
run goes on and the log says where it stuck. Without pytest-timeout's limit the guard is off.
"""

from __future__ import annotations

import faulthandler
import os
import threading

import pytest

#: Exit status of a worker the guard ended (EX_SOFTWARE).
STUCK_EXIT = 70
_stderr = None


def _margin() -> float:
    return float(os.environ.get("SCIAGENT_STUCK_MARGIN", "120"))


def _timeout(item: pytest.Item) -> float | None:
    """The pytest-timeout limit for ``item``: its marker, else ``--timeout``, else the ini."""
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        value = marker.args[0]
    else:
        value = item.config.getoption("timeout", None) or item.config.getini("timeout")
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if value > 0 else None


def pytest_configure(config: pytest.Config) -> None:
    """Keep a copy of stderr from before output capture, which swaps fd 2 during each test."""
    global _stderr
    if _stderr is None:
        _stderr = os.fdopen(os.dup(2), "w", buffering=1)


def _stuck(nodeid: str, limit: float) -> None:
    out = _stderr
    out.write(f"\n!! stuck: {nodeid} ran {limit:.0f} s, past its timeout; its stacks:\n")
    out.flush()
    faulthandler.dump_traceback(file=out, all_threads=True)
    out.flush()
    os._exit(STUCK_EXIT)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    timeout = _timeout(item)
    if timeout is None or _stderr is None:
        yield
        return
    limit = timeout + _margin()
    timer = threading.Timer(limit, _stuck, args=(item.nodeid, limit))
    timer.daemon = True
    timer.start()
    # the same in C, a little later, for a main thread that holds the GIL while it hangs
    faulthandler.dump_traceback_later(limit + 30, exit=True, file=_stderr)
    try:
        yield
    finally:
        timer.cancel()
        faulthandler.cancel_dump_traceback_later()
