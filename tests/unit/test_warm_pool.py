"""The warm pool's bookkeeping with stand-in slots (no display): bounds, order, eviction."""

from __future__ import annotations

import threading
import time

import pytest

from sciagent_gym.providers.local.pool import WarmPool


class FakeSlot:
    """A slot whose reset takes ``delay`` seconds; records how many reset at once."""

    live = 0
    peak = 0
    lock = threading.Lock()

    def __init__(self, delay: float = 0.1) -> None:
        self.paths = {"work": "/nowhere"}
        self.delay, self.closed, self.prepared = delay, False, []

    def reset(self, tool, task) -> None:
        with FakeSlot.lock:
            FakeSlot.live += 1
            FakeSlot.peak = max(FakeSlot.peak, FakeSlot.live)
        time.sleep(self.delay)
        with FakeSlot.lock:
            FakeSlot.live -= 1
        self.prepared.append(task.key)

    def close(self) -> None:
        self.closed = True


class FakeTask:
    def __init__(self, key: str) -> None:
        self.key, self.cleaned = key, False

    def cleanup(self) -> None:
        self.cleaned = True


def wishes(*keys: str):
    return [(k, None, lambda paths, k=k: FakeTask(k)) for k in keys]


@pytest.fixture(autouse=True)
def _reset_counters():
    FakeSlot.live = FakeSlot.peak = 0


def test_workers_prepare_in_parallel_within_the_bound():
    slots: list[FakeSlot] = []
    pool = WarmPool(3, lambda: slots.append(FakeSlot(0.2)) or slots[-1], workers=3)
    try:
        t0 = time.monotonic()
        pool.want(wishes("a", "b", "c", "d"))  # only the first 3 fit
        assert pool.wait_idle(5)
        assert time.monotonic() - t0 < 0.55  # three 0.2 s preparations at once, not in turn
        assert FakeSlot.peak == 3 and len(slots) == 3
        assert sorted(pool.pending_keys()) == ["a", "b", "c"]
        assert pool.take("d") is None
        got = pool.take("b")
        assert got is not None and got.task.key == "b" and got.seconds >= 0.2
    finally:
        pool.close()
    assert [s.closed for s in slots if s is not got.slot] == [True, True]  # taken: the env's


def test_one_worker_prepares_the_most_likely_first():
    order: list[str] = []
    slot = FakeSlot(0.05)
    slot.reset = lambda tool, task: order.append(task.key)  # type: ignore[method-assign]
    pool = WarmPool(2, lambda: slot, workers=1)
    try:
        pool.want(wishes("likely", "less"))
        assert pool.wait_idle(5)
        assert order == ["likely", "less"]
    finally:
        pool.close()


def test_unwanted_ready_variants_give_up_their_slots():
    pool = WarmPool(1, lambda: FakeSlot(0.01), workers=1)
    try:
        pool.want(wishes("old"))
        assert pool.wait_idle(5) and pool.pending_keys() == ["old"]
        pool.want(wishes("new"))
        assert pool.wait_idle(5) and pool.pending_keys() == ["new"]
    finally:
        pool.close()


def test_take_waits_for_a_variant_being_prepared():
    pool = WarmPool(1, lambda: FakeSlot(0.3), workers=1)
    try:
        pool.want(wishes("k"))
        time.sleep(0.05)
        t0 = time.monotonic()
        got = pool.take("k", wait=5)
        assert got is not None and time.monotonic() - t0 > 0.1
    finally:
        pool.close()


def test_failed_preparation_is_reported_and_not_retried():
    calls = []

    class Broken(FakeSlot):
        def reset(self, tool, task):
            calls.append(task.key)
            raise RuntimeError("no display")

    pool = WarmPool(1, lambda: Broken(), workers=1)
    try:
        pool.want(wishes("x"))
        assert pool.wait_idle(5)
        assert pool.take("x") is None and calls == ["x"]
        assert pool.errors == ["x: RuntimeError: no display"]
    finally:
        pool.close()


@pytest.mark.parametrize(("size", "workers"), [(0, 1), (2, 0), (2, 3)])
def test_bad_sizes_are_refused(size, workers):
    with pytest.raises(ValueError):
        WarmPool(size, FakeSlot, workers=workers)
