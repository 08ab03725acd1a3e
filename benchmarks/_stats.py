"""Shared timing helper of the benchmark scripts."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np


def median_ms(fn: Callable[[], object], n: int, warmup: int = 1) -> float:
    """Median wall time of ``fn`` in milliseconds over ``n`` calls, after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times) * 1000)
