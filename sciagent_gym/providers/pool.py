"""A warm pool: spare sandboxes prepared in the background for the resets that will come.

While an episode runs, a worker thread restores a spare slot's snapshot, stages the predicted
next task variant and starts the program until it is ready, so that ``reset()`` only has to swap
slots. A prediction that misses costs nothing but the background work; the reset is then cold.
Resources are bounded: at most ``size`` spare slots exist, each one display and one program.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sciagent_gym.errors import SciAgentError


@dataclass
class Prepared:
    key: str
    slot: Any
    task: Any
    seconds: float


@dataclass
class _Job:
    key: str
    tool: Any
    make_task: Callable[[dict[str, str]], Any]


class WarmPool:
    """``size`` spare slots and one worker thread that prepares them in order of request."""

    def __init__(self, size: int, new_slot: Callable[[], Any]) -> None:
        if size < 1:
            raise ValueError("a warm pool needs at least one slot (size 0 means: no pool)")
        self.size = size
        self._new_slot = new_slot
        self._idle: list[Any] = []
        self._ready: OrderedDict[str, Prepared] = OrderedDict()
        self._queue: list[_Job] = []
        self._busy: _Job | None = None
        self._n_slots = 0
        self._cond = threading.Condition()
        self._closed = False
        self.errors: list[str] = []
        self._thread = threading.Thread(target=self._work, name="sciagent-warm-pool",
                                        daemon=True)
        self._thread.start()

    # -- requests from the env's thread --------------------------------------------------------
    def want(self, key: str, tool: Any, make_task: Callable[[dict[str, str]], Any]) -> None:
        """Ask for ``key`` to be prepared (ignored if it is ready, queued or being prepared)."""
        with self._cond:
            if self._closed or key in self._ready or any(j.key == key for j in self._queue) \
                    or (self._busy is not None and self._busy.key == key):
                return
            self._queue.append(_Job(key, tool, make_task))
            del self._queue[:-self.size]  # only the newest wishes fit into the pool
            self._cond.notify_all()

    def take(self, key: str, wait: float = 60.0) -> Prepared | None:
        """The prepared slot for ``key``; waits if it is being prepared right now."""
        deadline = time.monotonic() + wait
        with self._cond:
            while True:
                if key in self._ready:
                    return self._ready.pop(key)
                pending = (self._busy is not None and self._busy.key == key) or \
                    any(j.key == key for j in self._queue[:1])
                if not pending or time.monotonic() > deadline:
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
        with self._cond:
            keys = list(self._ready) + [j.key for j in self._queue]
            if self._busy is not None:
                keys.append(self._busy.key)
            return keys

    # -- the worker ----------------------------------------------------------------------------
    def _next_job(self) -> tuple[_Job, Any] | None:
        with self._cond:
            while not self._closed:
                if self._queue:
                    slot = self._free_slot()
                    if slot is not None:
                        job = self._queue.pop(0)
                        self._busy = job
                        return job, slot
                self._cond.wait(timeout=0.5)
            return None

    def _free_slot(self) -> Any | None:
        """An idle slot, a new one while under the bound, or the oldest prepared one."""
        if self._idle:
            return self._idle.pop()
        if self._n_slots < self.size:
            self._n_slots += 1
            return "new"
        if self._ready:
            _, old = self._ready.popitem(last=False)
            old.task.cleanup()
            return old.slot
        return None

    def _work(self) -> None:
        while True:
            picked = self._next_job()
            if picked is None:
                return
            job, slot = picked
            t0 = time.monotonic()
            task = None
            try:
                if slot == "new":
                    slot = self._new_slot()
                task = job.make_task(slot.paths)
                slot.reset(job.tool, task)
                prepared = Prepared(job.key, slot, task, time.monotonic() - t0)
            except Exception as exc:  # reported, and the slot goes back to the spares
                prepared = None
                self.errors.append(f"{job.key}: {type(exc).__name__}: {exc}")
                if task is not None:
                    task.cleanup()
            with self._cond:
                self._busy = None
                if prepared is not None and not self._closed:
                    self._ready[job.key] = prepared
                elif slot != "new":
                    self._idle.append(slot)
                else:
                    self._n_slots -= 1
                self._cond.notify_all()
            if self._closed and prepared is not None:
                prepared.task.cleanup()
                slot.close()

    def close(self) -> None:
        """Stop the worker and close every spare slot."""
        with self._cond:
            self._closed = True
            self._queue.clear()
            self._cond.notify_all()
        self._thread.join(timeout=120)
        if self._thread.is_alive():
            raise SciAgentError("the warm-pool worker did not stop")
        with self._cond:
            for prepared in self._ready.values():
                prepared.task.cleanup()
                prepared.slot.close()
            for slot in self._idle:
                slot.close()
            self._ready.clear()
            self._idle.clear()
