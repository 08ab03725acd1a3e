"""The embedded default: the real program on a private Xvfb display on this machine, no VM.

:class:`LocalProvider` runs episodes in a :class:`~sciagent_gym.providers.local.slot.LocalSlot`
and keeps spare slots warm in a :class:`~sciagent_gym.providers.local.pool.WarmPool`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from sciagent_gym.controller.settle import SettleConfig
from sciagent_gym.providers.base import Provider
from sciagent_gym.providers.local.pool import WarmPool
from sciagent_gym.providers.local.slot import LocalSlot

if TYPE_CHECKING:
    from sciagent_gym.tasks.task import Task
    from sciagent_gym.tools import ToolAdapter


class _OfActiveSlot:
    """A member of the provider's active slot: ``provider.x`` is ``provider._slot.x``, looked
    up at each access (a warm reset swaps the slot). For methods: like a method, an instance
    may still be given its own."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, provider: LocalProvider | None, owner: type | None = None) -> Any:
        if provider is None:
            return self
        return getattr(provider._slot, self.name)


class _ReadOnlyOfActiveSlot(_OfActiveSlot):
    """The same for data attributes, read-only as a property without a setter."""

    def __set__(self, provider: LocalProvider, value: Any) -> None:
        raise AttributeError(f"{self.name!r} of {type(provider).__name__} is its active "
                             "slot's and cannot be set")


class LocalProvider(Provider):
    """The embedded default: an active slot, plus a warm pool of spare slots.

    With ``pool_size > 0`` the env names the variants it expects next (:meth:`prefetch`) and a
    background worker prepares them in spare slots; a reset that finds its variant ready swaps
    slots (a warm reset), otherwise it resets the active slot in place (a cold reset). Every
    slot has its own display, so envs and slots never share a display, port or sandbox.
    """

    supports_soft_reset = True
    supports_pool = True

    def __init__(self, width: int = 1280, height: int = 800, isolation: str = "auto",
                 settle: SettleConfig | None = None, pool_size: int = 1,
                 pool_workers: int = 1, glx: bool = True) -> None:
        if pool_size < 0:
            raise ValueError(f"pool_size must be >= 0, not {pool_size}")
        self.width, self.height = width, height
        self._args = (width, height, isolation, settle, glx)  # glx: the display's GLX
        self._slot: LocalSlot = LocalSlot(*self._args)
        self._pool: WarmPool | None = None
        self.stats = {"warm": 0, "cold": 0, "soft": 0}
        self.last_reset_timings: dict[str, float] = {}
        if pool_size:
            self._pool = WarmPool(pool_size, lambda: LocalSlot(*self._args), pool_workers)

    # -- resets ------------------------------------------------------------------------------
    def reset(self, tool: ToolAdapter, task: Task) -> Task:
        """Swap in a prepared slot for ``task``'s variant, or reset the active one in place.

        Returns the staged task: with a warm reset, the pool's own instance of the variant
        (its gold values were computed when it was staged).
        """
        t0 = time.monotonic()
        prepared = self._pool.take(task.variant_id) if self._pool else None
        if prepared is not None:
            old, self._slot = self._slot, prepared.slot
            self._pool.give_back(old)
            self.stats["warm"] += 1
            self.last_reset_timings = {"swap": time.monotonic() - t0,
                                       "total": time.monotonic() - t0, "warm": 1.0,
                                       "prepared_in_background": prepared.seconds}
            return prepared.task
        task = self._slot.reset(tool, task)
        self.stats["cold"] += 1
        self.last_reset_timings = {**self._slot.last_reset_timings, "warm": 0.0}
        return task

    def soft_reset(self, tool: ToolAdapter, task: Task) -> Task | None:
        """Reset by restoring the running program in place (see :meth:`LocalSlot.soft_reset`);
        None when that is not possible and a normal :meth:`reset` is needed."""
        if not self._slot.soft_reset(tool, task):
            return None
        self.stats["soft"] += 1
        self.last_reset_timings = {**self._slot.last_reset_timings, "warm": 0.0, "soft": 1.0}
        return task

    def prefetch(self, tool: ToolAdapter,
                 wanted: list[tuple[str, Callable[[dict[str, str]], Task]]]) -> None:
        """Prepare these variants (key, task factory), most likely first, in spare slots
        while the current episode runs; earlier wishes not repeated are dropped."""
        if self._pool is not None:
            self._pool.want([(key, tool, make_task) for key, make_task in wanted])

    @property
    def pool(self) -> WarmPool | None:
        return self._pool

    # -- everything else is the active slot's ------------------------------------------------
    display_name = _ReadOnlyOfActiveSlot()
    sandbox = _ReadOnlyOfActiveSlot()
    agent_sandbox = _ReadOnlyOfActiveSlot()
    isolation = _ReadOnlyOfActiveSlot()
    settle_config = _ReadOnlyOfActiveSlot()
    _display = _ReadOnlyOfActiveSlot()
    _controller = _ReadOnlyOfActiveSlot()
    last_grab_seconds = _ReadOnlyOfActiveSlot()
    cli_isolated = _ReadOnlyOfActiveSlot()
    host_work_dir = _ReadOnlyOfActiveSlot()
    paths = _ReadOnlyOfActiveSlot()
    launch_id = _ReadOnlyOfActiveSlot()
    execute = _OfActiveSlot()
    screenshot = _OfActiveSlot()
    windows = _OfActiveSlot()
    run_command = _OfActiveSlot()
    launch_command = _OfActiveSlot()
    stop_agent_processes = _OfActiveSlot()
    freeze_work_dir = _OfActiveSlot()
    spawn_in_sandbox = _OfActiveSlot()
    kill_in_sandbox = _OfActiveSlot()
    call_in_sandbox = _OfActiveSlot()
    collect_in_sandbox = _OfActiveSlot()
    read_file = _OfActiveSlot()
    close_window = _OfActiveSlot()
    nudge_window = _OfActiveSlot()
    activate_window = _OfActiveSlot()
    set_clipboard = _OfActiveSlot()
    get_clipboard = _OfActiveSlot()
    app_running = _OfActiveSlot()
    app_log_tail = _OfActiveSlot()
    limit_exceeded = _OfActiveSlot()

    def wait_settled(self) -> np.ndarray:
        """The active slot's wait; its ``last_settled`` is copied, so the provider's stays
        that of its own last wait across slot swaps."""
        frame = self._slot.wait_settled()
        self.last_settled = self._slot.last_settled
        return frame

    def close(self) -> None:
        try:
            if self._pool is not None:
                self._pool.close()
        finally:
            self._slot.close()
            self._pool = None
