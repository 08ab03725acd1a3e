"""The damage-driven settle's waiting logic, on a fake paint source (no X server)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from sciagent_gym.controller.damage import XDamageSource
from sciagent_gym.controller.settle import (
    SettleConfig,
    settle_canonical,
    wait_damage_settled,
    wait_settled,
)


class FakeDamage:
    """A fake paint source: paints scheduled at offsets (seconds) from its creation, each
    delivered once its time has come, as ``XDamageSource`` delivers X events."""

    def __init__(self, paints: list[tuple[float, int]]) -> None:
        self.t0 = time.monotonic()
        self.paints = sorted((self.t0 + dt, area) for dt, area in paints)
        self.marks = 0

    def mark(self) -> None:
        now = time.monotonic()
        self.paints = [p for p in self.paints if p[0] > now]
        self.marks += 1

    def next_paint(self, deadline: float) -> tuple[float, int] | None:
        if self.paints and self.paints[0][0] <= deadline:
            when, area = self.paints.pop(0)
            time.sleep(max(0.0, when - time.monotonic()))
            return when, area
        time.sleep(max(0.0, deadline - time.monotonic()))
        return None


class Screen:
    """Frames as a program paints them: ``painted`` (a frame) after ``at`` seconds."""

    def __init__(self, at: float) -> None:
        self.t0, self.at, self.grabs = time.monotonic(), at, 0

    def grab(self) -> np.ndarray:
        self.grabs += 1
        done = time.monotonic() - self.t0 >= self.at
        return np.full((4, 4, 3), 255 if done else 0, np.uint8)


CONFIG = SettleConfig.damage(quiet=0.05, react=0.015, cap=1.0)


def test_no_paint_returns_after_the_reaction_window_with_one_grab():
    screen, src = Screen(at=0.0), FakeDamage([])
    t0 = time.monotonic()
    _, settled = wait_damage_settled(screen.grab, src, CONFIG)
    took = time.monotonic() - t0
    assert settled and screen.grabs == 1 and src.marks == 1
    assert 0.014 <= took < 0.045


def test_burst_is_waited_out_and_grabbed_after_its_last_paint():
    # paints at 5..80 ms with gaps up to 30 ms (< quiet): one burst; the frame is final at 80 ms
    src = FakeDamage([(0.005, 5000), (0.02, 300), (0.05, 300), (0.08, 9000)])
    screen = Screen(at=0.08)
    t0 = time.monotonic()
    frame, settled = wait_damage_settled(screen.grab, src, CONFIG)
    took = time.monotonic() - t0
    assert settled and screen.grabs == 1
    assert frame[0, 0, 0] == 255  # not the half-painted frame
    assert 0.125 <= took < 0.2  # last paint + quiet, not more


def test_paint_after_a_gap_longer_than_quiet_is_a_new_step():
    src = FakeDamage([(0.005, 5000), (0.2, 5000)])
    _, settled = wait_damage_settled(Screen(0.0).grab, src, CONFIG)
    assert settled and src.paints == [(src.t0 + 0.2, 5000)]  # still there: not waited for


def test_small_paints_do_not_start_a_reaction_but_extend_one():
    caret = FakeDamage([(0.003, 16), (0.01, 16)])
    t0 = time.monotonic()
    wait_damage_settled(Screen(0.0).grab, caret, CONFIG)
    assert time.monotonic() - t0 < 0.045
    burst = FakeDamage([(0.003, 5000), (0.04, 16), (0.08, 16)])
    t0 = time.monotonic()
    wait_damage_settled(Screen(0.0).grab, burst, CONFIG)
    assert time.monotonic() - t0 >= 0.125


def test_paints_that_never_stop_hit_the_cap():
    src = FakeDamage([(i * 0.01, 5000) for i in range(200)])
    t0 = time.monotonic()
    _, settled = wait_damage_settled(Screen(0.0).grab,
                                     src, SettleConfig.damage(quiet=0.05, cap=0.3))
    assert not settled and 0.29 <= time.monotonic() - t0 < 0.45


def test_a_paint_queued_before_the_call_counts_from_when_it_happened():
    src = FakeDamage([(0.0, 5000)])
    time.sleep(0.03)  # painted 30 ms ago: 20 ms of the 50 ms quiet window are left
    t0 = time.monotonic()
    wait_damage_settled(Screen(0.0).grab, src, CONFIG)
    took = time.monotonic() - t0
    assert 0.015 <= took < 0.05
    old = FakeDamage([(0.0, 5000)])
    time.sleep(0.08)  # over before the call: the step still gets its reaction window
    t0 = time.monotonic()
    wait_damage_settled(Screen(0.0).grab, old, CONFIG)
    assert 0.014 <= time.monotonic() - t0 < 0.045


def test_wait_settled_uses_damage_only_in_damage_mode_and_falls_back_to_frames():
    screen, src = Screen(at=0.0), FakeDamage([])
    wait_settled(screen.grab, CONFIG, damage=src)
    assert screen.grabs == 1 and src.marks == 1
    fallback = Screen(at=0.0)
    _, settled = wait_settled(fallback.grab, CONFIG, damage=None)  # no DAMAGE: frames
    assert settled and fallback.grabs > 2
    default = Screen(at=0.0)
    other = FakeDamage([])
    wait_settled(default.grab, SettleConfig(quiet=0.03), damage=other)  # default mode: frames
    assert default.grabs > 2 and other.marks == 0


def test_canonical_settle_with_damage_repeats_until_two_rounds_agree():
    frames = iter([np.zeros((2, 2, 3), np.uint8)] + [np.ones((2, 2, 3), np.uint8)] * 5)
    exposes = []
    src = FakeDamage([])
    out = settle_canonical(lambda: next(frames), lambda: exposes.append(1), CONFIG,
                           damage=src)
    assert out[0, 0, 0] == 1 and len(exposes) == 2 and src.marks == 3


def test_damage_config_is_opt_in():
    assert SettleConfig().mode == "frame"
    cfg = SettleConfig.damage(quiet=0.05)
    assert cfg.mode == "damage" and cfg.quiet == 0.05 and cfg.react == 0.01


def test_opening_a_source_on_a_missing_display_gives_none():
    assert XDamageSource.open(":987654") is None


class BusyFake(FakeDamage):
    """A fake source whose processes are busy until ``until`` seconds after creation."""

    def __init__(self, paints: list[tuple[float, int]], until: float) -> None:
        super().__init__(paints)
        self.until = until

    def busy(self) -> bool:
        return time.monotonic() - self.t0 < self.until


def test_a_busy_program_holds_the_reaction_window_until_it_sleeps():
    src = BusyFake([], until=0.08)
    t0 = time.monotonic()
    _, settled = wait_damage_settled(Screen(0.0).grab, src, CONFIG)
    assert settled and 0.079 <= time.monotonic() - t0 < 0.13
    late = BusyFake([(0.06, 5000)], until=0.06)  # paints only after 60 ms of work
    frame, _ = wait_damage_settled(Screen(0.06).grab, late, CONFIG)
    assert frame[0, 0, 0] == 255 and late.paints == []


def test_a_program_busy_for_ever_costs_at_most_busy_cap():
    src = BusyFake([], until=1e9)
    t0 = time.monotonic()
    wait_damage_settled(Screen(0.0).grab, src, SettleConfig(mode="damage", busy_cap=0.1))
    assert 0.099 <= time.monotonic() - t0 < 0.16


def test_the_burst_lasts_while_the_program_works_past_the_quiet_window():
    src = BusyFake([(0.005, 5000)], until=0.15)
    t0 = time.monotonic()
    _, settled = wait_damage_settled(Screen(0.0).grab, src, CONFIG)
    assert settled and 0.149 <= time.monotonic() - t0 < 0.21


def test_process_activity_sees_a_spinning_child_and_not_a_sleeping_one():
    import subprocess
    import sys

    from sciagent_gym.controller.activity import ProcessActivity, busy_threads, process_tree

    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    sleep = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        import os

        assert {spin.pid, sleep.pid} <= set(process_tree([os.getpid()]))
        deadline = time.monotonic() + 5
        while not busy_threads([spin.pid]) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert busy_threads([spin.pid])
        while busy_threads([sleep.pid]) and time.monotonic() < deadline:
            time.sleep(0.01)  # the sleeper's interpreter is still starting
        assert not any(busy_threads([sleep.pid]) for _ in range(20))
        assert ProcessActivity(lambda: [spin.pid]).busy() or busy_threads([spin.pid])
    finally:
        for p in (spin, sleep):
            p.kill()
            p.wait()


def test_a_tools_windows_are_floors_in_damage_mode_only():
    from sciagent_gym.controller.settle import for_tool

    cfg = for_tool(CONFIG, {"react": 0.1, "quiet": 0.01})
    assert (cfg.react, cfg.quiet, cfg.mode) == (0.1, CONFIG.quiet, "damage")
    assert for_tool(SettleConfig(), {"react": 0.1}) == SettleConfig()  # frames: untouched
    assert for_tool(CONFIG, None) == CONFIG
    with pytest.raises(ValueError, match="tolerance"):
        for_tool(CONFIG, {"tolerance": 5})


def test_every_tools_settle_field_is_valid():
    from sciagent_gym.controller.settle import for_tool
    from sciagent_gym.tools.discovery import discover

    given = {name: dict(info.settle) for name, info in discover().items() if info.settle}
    assert "pymol" in given  # its deferred clicks need longer windows (benchmarks/settle_damage)
    for fields in given.values():
        cfg = for_tool(SettleConfig.damage(), fields)
        assert 0 < cfg.react <= cfg.busy_cap <= cfg.cap and 0 < cfg.quiet <= 1.0
