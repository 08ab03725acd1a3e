"""The memory watchdog's arithmetic: how often it samples and how it reports (its measuring and
stopping of a real zone are in tests/e2e/test_sandbox_security.py)."""

from __future__ import annotations

import pytest

from sciagent_gym.providers.local import memwatch as mw


def test_samples_come_faster_near_the_budget_but_never_cost_more_than_their_share():
    far, near, over = mw.next_interval(4 << 30, 1e-4), mw.next_interval(100 << 20, 1e-4), \
        mw.next_interval(-1, 1e-4)
    assert far == mw.MAX_INTERVAL and near < far and over == mw.MIN_INTERVAL
    # at the assumed fill rate the zone cannot cross the headroom before the next sample
    assert near * mw.FILL_RATE <= 100 << 20
    assert mw.next_interval(0, 0.01) == pytest.approx(0.01 / mw.MAX_DUTY)


def test_a_report_names_the_zone_its_budget_and_where_the_memory_is():
    usage = mw.ZoneMemory(processes=200 << 20, tmpfs=(4 << 30) + (100 << 20), volume=0)
    assert usage.total == (4 << 30) + (300 << 20)
    assert usage.describe("agent", 4 << 30) == \
        "agent zone used 4.29 GiB of 4.00 GiB (processes 200 MiB, tmpfs 4.10 GiB)"
    assert "home volume 1.00 GiB" in mw.ZoneMemory(0, 0, 1 << 30).describe("program", 6 << 30)


def test_a_zone_that_is_gone_measures_as_none():
    assert mw.measure(2**22 + 12345, 1) is None  # no such pid (above the kernel's PID_MAX_LIMIT)
