"""tools.adapter.hold_focus: the start-up window gets the focus back until it keeps it."""

from __future__ import annotations

from sciagent_gym.controller.windows import WindowInfo
from sciagent_gym.tools.adapter import hold_focus


class StolenFocusHost:
    """A program whose splash window steals the focus twice after start-up."""

    ready_scale = 0.2

    def __init__(self, steals: int) -> None:
        self.steals, self.active, self.activated = steals, False, 0

    def windows(self) -> list[WindowInfo]:
        if self.active and self.steals:
            self.steals -= 1
            self.active = False
        return [WindowInfo(1, "Main", "main", 0, 0, 800, 600, self.active, False)]

    def activate_window(self, wid: int) -> None:
        self.activated += 1
        self.active = True


def _main(windows):
    return next((w for w in windows if w.title == "Main"), None)


def test_focus_is_given_back_until_the_window_keeps_it():
    host = StolenFocusHost(steals=2)
    hold_focus(host, _main)
    assert host.active and host.steals == 0 and host.activated == 3


def test_a_window_that_is_gone_ends_the_wait():
    host = StolenFocusHost(steals=0)
    hold_focus(host, lambda windows: None)
    assert host.activated == 0
