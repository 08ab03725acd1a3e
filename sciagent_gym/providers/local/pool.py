"""A warm pool: spare sandboxes prepared in the background for the resets that will come.

While an episode runs, worker threads restore spare slots' snapshots, stage the predicted next
task variants and start the program until it is ready, so that ``reset()`` only has to swap
slots. A prediction that misses costs nothing but the background work; the reset is then cold.

Resources are bounded: at most ``size`` spare slots exist, each one display and one program,
and at most ``workers`` of them are prepared at the same time. Programs whose start is mostly
waiting (DS9, Praat) gain from several workers when episodes are shorter than a start; on a
loaded machine one worker competes less with the episode that runs.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sciagent_gym.errors import SciAgentError

#: A wish: (key, tool adapter, task factory taking the slot's paths).
Wish = tuple[str, Any, Callable[[dict[str, str]], Any]]


@dataclass
class Prepared:
    key: str
    slot: Any
    task: Any
    seconds: float


class WarmPool:
    """``size`` spare slots, prepared by ``workers`` threads in order of likelihood."""

    def __init__(self, size: int, new_slot: Callable[[], Any], workers: int = 1) -> None:
        if size < 1:
            raise ValueError("a warm pool needs at least one slot (size 0 means: no pool)")
        if not 1 <= workers <= size:
            raise ValueError(f"pool workers must be between 1 and the pool size ({size}), "
                             f"not {workers}")
        self.size, self.workers = size, workers
        self._new_slot = new_slot
        self._idle: list[Any] = []
        self._ready: OrderedDict[str, Prepared] = OrderedDict()
        self._wanted: list[Wish] = []
        self._busy: set[str] = set()
        self._n_slots = 0
        self._cond = threading.Condition()
        self._closed = False
        self.errors: list[str] = []
        self._threads = [threading.Thread(target=self._work, name=f"sciagent-warm-pool-{i}",
                                          daemon=True) for i in range(workers)]
        for thread in self._threads:
            thread.start()

    # -- requests from the env's thread --------------------------------------------------------
    def want(self, wishes: Sequence[Wish]) -> None:
        """Prepare these variants, most likely first; earlier wishes not repeated are dropped.

        Only the first ``size`` wishes count. A variant already ready or being prepared is kept;
        a ready one that is no longer wished for is the first to give up its slot.
        """
        seen: set[str] = set()
        unique = [w for w in wishes if not (w[0] in seen or seen.add(w[0]))]
        with self._cond:
            if self._closed:
                return
            self._wanted = unique[:self.size]
            self._cond.notify_all()

    def take(self, key: str, wait: float = 60.0) -> Prepared | None:
        """The prepared slot for ``key``; waits if it is being prepared right now.

        Either way the wish for ``key`` is fulfilled: it is not prepared again (the env
        states its next wishes after the reset).
        """
        deadline = time.monotonic() + wait
        with self._cond:
            self._wanted = [w for w in self._wanted if w[0] != key]
            while True:
                if key in self._ready:
                    return self._ready.pop(key)
                if key not in self._busy or time.monotonic() > deadline:
                    return None
                self._cond.wait(timeout=0.05)

    def give_back(self, slot: Any) -> None:
        """A slot the env no longer uses becomes a spare (prepared again on demand)."""
        with self._cond:
            if self._closed:
                slot.close()
                return
            self._idle.append(slot)
            self._cond.notify_all()

    def pending_keys(self) -> list[str]:
        """Variants ready or being prepared."""
        with self._cond:
            return list(self._ready) + sorted(self._busy)

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Block until every wished variant that fits is prepared (or failed); for tests and
        benchmarks that want a warm reset on purpose. Returns False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._busy or self._next_wish() is not None and self._has_slot():
                if time.monotonic() > deadline:
                    return False
                self._cond.wait(timeout=0.05)
            return True

    # -- the workers ---------------------------------------------------------------------------
    def _next_wish(self) -> Wish | None:
        failed = {e.split(":", 1)[0] for e in self.errors}
        for wish in self._wanted:
            key = wish[0]
            if key not in self._ready and key not in self._busy and key not in failed:
                return wish
        return None

    def _has_slot(self) -> bool:
        wanted = {w[0] for w in self._wanted}
        return bool(self._idle) or self._n_slots < self.size or \
            any(k not in wanted for k in self._ready)

    def _free_slot(self) -> Any | None:
        """An idle slot, a new one while under the bound, or one whose variant is unwanted."""
        if self._idle:
            return self._idle.pop()
        if self._n_slots < self.size:
            self._n_slots += 1
            return "new"
        wanted = {w[0] for w in self._wanted}
        for key in list(self._ready):  # oldest first
            if key not in wanted:
                old = self._ready.pop(key)
                old.task.cleanup()
                return old.slot
        return None

    def _next_job(self) -> tuple[Wish, Any] | None:
        with self._cond:
            while not self._closed:
                wish = self._next_wish()
                if wish is not None:
                    slot = self._free_slot()
                    if slot is not None:
                        self._busy.add(wish[0])
                        return wish, slot
                self._cond.wait(timeout=0.5)
            return None

    def _work(self) -> None:
        while True:
            picked = self._next_job()
            if picked is None:
                return
            (key, tool, make_task), slot = picked
            t0 = time.monotonic()
            task = None
            try:
                if slot == "new":
                    slot = self._new_slot()
                task = make_task(slot.paths)
                slot.reset(tool, task)
                prepared = Prepared(key, slot, task, time.monotonic() - t0)
            except Exception as exc:  # reported, and the slot goes back to the spares
                prepared = None
                self.errors.append(f"{key}: {type(exc).__name__}: {exc}")
                if task is not None:
                    task.cleanup()
            with self._cond:
                self._busy.discard(key)
                if prepared is not None and not self._closed:
                    self._ready[key] = prepared
                elif slot != "new":
                    self._idle.append(slot)
                else:
                    self._n_slots -= 1
                closed = self._closed
                self._cond.notify_all()
            if closed and prepared is not None:
                prepared.task.cleanup()
                slot.close()

    def close(self) -> None:
        """Stop the workers and close every spare slot."""
        with self._cond:
            self._closed = True
            self._wanted = []
            self._cond.notify_all()
        for thread in self._threads:
            thread.join(timeout=120)
        if any(thread.is_alive() for thread in self._threads):
            raise SciAgentError("a warm-pool worker did not stop")
        with self._cond:
            for prepared in self._ready.values():
                prepared.task.cleanup()
                prepared.slot.close()
            for slot in self._idle:
                slot.close()
            self._ready.clear()
            self._idle.clear()
