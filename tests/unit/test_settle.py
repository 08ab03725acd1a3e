"""Settle detection on scripted frame sequences (no display): the quiet window, the cap, the
tolerance for small changes (a blinking caret) and the canonical start frame."""

from __future__ import annotations

import time

import numpy as np

from sciagent_gym.controller.settle import (
    SettleConfig,
    changed_pixels,
    settle_canonical,
    wait_settled,
)


def frame(value: int = 0, size=(40, 60)) -> np.ndarray:
    return np.full((*size, 3), value, np.uint8)


class Screen:
    """A screen whose content is a function of the time since it was made."""

    def __init__(self, content) -> None:
        self.t0, self.content, self.grabs = time.monotonic(), content, 0

    def grab(self) -> np.ndarray:
        self.grabs += 1
        return self.content(time.monotonic() - self.t0)


def test_changed_pixels_counts_pixels_not_channels():
    a, b = frame(), frame()
    b[0, 0] = (255, 0, 0)
    b[1, 1] = (0, 0, 9)
    assert changed_pixels(a, a) == 0 and changed_pixels(a, b) == 2


def test_returns_after_the_quiet_window_once_the_screen_stops_changing():
    # repaints every 10 ms for 0.2 s, then still
    screen = Screen(lambda t: frame(int(t * 100) % 250 if t < 0.2 else 250))
    t0 = time.monotonic()
    last, settled = wait_settled(screen.grab, SettleConfig(quiet=0.1, cap=2.0, interval=0.005))
    elapsed = time.monotonic() - t0
    assert settled and last[0, 0, 0] == 250
    assert 0.3 <= elapsed < 0.6  # 0.2 s of changes + 0.1 s quiet, not the 2 s cap


def test_a_still_screen_costs_only_the_quiet_window():
    screen = Screen(lambda t: frame(7))
    t0 = time.monotonic()
    _, settled = wait_settled(screen.grab, SettleConfig(quiet=0.05, cap=2.0, interval=0.005))
    assert settled and time.monotonic() - t0 < 0.2


def test_gives_up_at_the_cap_on_an_endless_animation():
    screen = Screen(lambda t: frame(int(t * 1000) % 256))
    t0 = time.monotonic()
    _, settled = wait_settled(screen.grab, SettleConfig(quiet=0.1, cap=0.3, interval=0.005))
    assert not settled and 0.3 <= time.monotonic() - t0 < 0.5


def test_small_changes_within_the_tolerance_count_as_still():
    def caret(t: float) -> np.ndarray:
        img = frame()
        if int(t * 50) % 2:  # a 2x10 caret blinking every 20 ms
            img[5:15, 5:7] = 255
        return img

    config = SettleConfig(quiet=0.08, cap=1.0, interval=0.005, tolerance=20)
    _, settled = wait_settled(Screen(caret).grab, config)
    assert settled
    strict = SettleConfig(quiet=0.08, cap=0.3, interval=0.005, tolerance=0)
    _, settled = wait_settled(Screen(caret).grab, strict)
    assert not settled


def test_canonical_frame_repaints_until_a_repaint_changes_nothing():
    state = {"exposes": 0}

    def grab() -> np.ndarray:  # half-painted until the first full repaint
        return frame(100 if state["exposes"] else 40)

    def expose() -> None:
        state["exposes"] += 1

    out = settle_canonical(grab, expose, SettleConfig(quiet=0.02, interval=0.005))
    assert out[0, 0, 0] == 100 and state["exposes"] == 2  # changed once, then confirmed
