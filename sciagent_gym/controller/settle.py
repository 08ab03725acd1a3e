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

    @classmethod
    def fast(cls) -> SettleConfig:
        """20 ms quiet window, 5 ms between grabs: steps the program does not react to cost
        ~23 ms instead of ~160 ms, but reactions slower than that (ImageJ repaints after a
        menu closes at ~120-180 ms) can be observed half-drawn, one step late."""
        return cls(quiet=0.02, interval=0.005)


def changed_pixels(a: np.ndarray, b: np.ndarray) -> int:
    """How many pixels differ between two frames (any channel)."""
    if np.array_equal(a, b):  # the common case, a memcmp: ~0.3 ms instead of ~6 ms at 1280x800
        return 0
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


def settle_canonical(grab: Callable[[], np.ndarray], expose: Callable[[], None],
                     config: SettleConfig = SettleConfig(), attempts: int = 4) -> np.ndarray:
    """Settle, then make every window repaint and settle again until a repaint changes nothing.

    The start screen of an episode is then what the program draws from scratch, not a frame
    with half-painted start-up leftovers (which would differ between identical resets)."""
    strict = SettleConfig(quiet=max(config.quiet, 0.25), cap=max(config.cap, 5.0),
                          interval=config.interval, tolerance=0)
    frame, _ = wait_settled(grab, strict)
    for _ in range(attempts):
        expose()
        again, _ = wait_settled(grab, strict)
        if np.array_equal(again, frame):
            break
        frame = again
    return frame
