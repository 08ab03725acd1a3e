"""Wait for a screen to stop changing instead of sleeping a fixed time."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SettleConfig:
    """``quiet``: seconds without change that count as settled; ``cap``: give up after this;
    ``interval``: time between grabs; ``tolerance``: changed pixels ignored (blinking carets)."""

    quiet: float = 0.15
    cap: float = 3.0
    interval: float = 0.015
    tolerance: int = 64


def changed_pixels(a: np.ndarray, b: np.ndarray) -> int:
    """How many pixels differ between two frames (any channel)."""
    return int(np.count_nonzero(np.any(a != b, axis=2)))


def wait_settled(grab: Callable[[], np.ndarray], config: SettleConfig = SettleConfig(),
                 first: np.ndarray | None = None) -> tuple[np.ndarray, bool]:
    """Grab until ``config.quiet`` seconds pass without a change beyond the tolerance.

    Returns the last frame and whether the screen settled before the cap.
    """
    start = time.monotonic()
    last = grab() if first is None else first
    stable_since = time.monotonic()
    while True:
        time.sleep(config.interval)
        frame = grab()
        now = time.monotonic()
        if changed_pixels(frame, last) > config.tolerance:
            stable_since = now
        last = frame
        if now - stable_since >= config.quiet:
            return last, True
        if now - start >= config.cap:
            return last, False
