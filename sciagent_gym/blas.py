"""Host-side numerical work on one BLAS thread.

A task's generators (a reference pipeline's least squares, say) run on the host, often in a
warm pool's background thread while the env's main thread also computes. OpenBLAS's own
worker threads then serve two callers at once on a loaded 2-core machine: measured here, a
baseline run's staging of an EarthData query spun in OpenBLAS's ``exec_blas`` for over ten
minutes, deaf to SIGTERM and SIGINT, where the same staging alone takes under 4 s. On one
thread each call is plain serial code, and nothing is oversubscribed.
"""

from __future__ import annotations

import contextlib
from typing import Any


def one_blas_thread() -> contextlib.AbstractContextManager[Any]:
    """A context in which BLAS and OpenMP libraries already loaded use one thread
    (threadpoolctl; a no-op where it is not installed)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a dependency of the package
        return contextlib.nullcontext()
    return threadpool_limits(limits=1)
