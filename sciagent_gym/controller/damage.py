"""Learn when programs paint from the X DAMAGE extension instead of comparing whole frames.

A DAMAGE object on the root window reports every paint of every window on the screen: without
a compositor (Xvfb + openbox here) windows draw straight into the screen, and the root's damage
includes its inferiors (measured: an xterm's text and borders arrive as root rectangles; pointer
motion reports nothing). The object lives on a connection of its own, so its events never mix
with the controller's replies, and is read with ``select`` between grabs.

A paint's time is when its event was read, not the event's server timestamp: Xvfb stamps
events with the time it last updated its clock (an input event's), measured 160-210 ms before
paints that followed a grab loop. Read while the settle waits in ``select``, the receipt is
within a millisecond of the paint; events queued since the last look (between two steps) read
as "just now", which costs at most one quiet window more than needed.
"""

from __future__ import annotations

import select
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

from Xlib.ext import damage as xdamage

from sciagent_gym.controller.xconnect import open_display


class DamageSource(Protocol):
    """Paint events in time order, as :func:`~sciagent_gym.controller.settle.wait_damage_settled`
    reads them. A source may also have ``busy() -> bool``: whether the processes behind the
    display are still working (see :mod:`sciagent_gym.controller.activity`)."""

    def mark(self) -> None:
        """Forget every paint seen so far (called right before a grab)."""

    def next_paint(self, deadline: float) -> tuple[float, int] | None:
        """The next paint as (``time.monotonic()`` it happened, area in pixels), waiting until
        ``deadline`` (monotonic seconds) at most; None when nothing painted by then."""


class XDamageSource:
    """Paints of one X display, from a RawRectangles DAMAGE object on its root window;
    ``busy`` (e.g. :meth:`ProcessActivity.busy
    <sciagent_gym.controller.activity.ProcessActivity.busy>`) if given."""

    def __init__(self, display_name: str, busy: Callable[[], bool] | None = None) -> None:
        self.busy = busy
        self._dpy = open_display(display_name)
        try:
            if not self._dpy.has_extension("DAMAGE"):
                raise RuntimeError(f"display {display_name} has no DAMAGE extension")
            self._dpy.damage_query_version()  # the protocol requires it before any request
            self._code = self._dpy.query_extension("DAMAGE").first_event
            root = self._dpy.screen().root
            self._damage = root.damage_create(xdamage.DamageReportRawRectangles)
            self._dpy.sync()
        except BaseException:
            self._dpy.close()
            raise
        self._queue: deque[tuple[float, int]] = deque()
        #: How many paint rectangles were read (for benchmarks and tests).
        self.events = 0

    @classmethod
    def open(cls, display_name: str,
             busy: Callable[[], bool] | None = None) -> XDamageSource | None:
        """A source for ``display_name``, or None when it has no usable DAMAGE extension (the
        settle then falls back to comparing frames)."""
        try:
            return cls(display_name, busy)
        except Exception:
            return None

    def _read(self) -> None:
        """Move every event the connection has buffered or waiting into the queue."""
        dpy = self._dpy
        while dpy.pending_events():
            event = dpy.next_event()
            if event.type & 0x7F != self._code:
                continue
            self.events += 1
            self._queue.append((time.monotonic(),
                                int(event.area.width) * int(event.area.height)))

    def mark(self) -> None:
        self._read()
        self._queue.clear()

    def next_paint(self, deadline: float) -> tuple[float, int] | None:
        while True:
            self._read()
            if self._queue:
                return self._queue.popleft()
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            select.select([self._dpy], [], [], left)

    def close(self) -> None:
        """Destroy the DAMAGE object and close the connection (idempotent)."""
        dpy, self._dpy = self._dpy, None
        if dpy is None:
            return
        try:
            dpy.damage_destroy(self._damage)
            dpy.sync()
        except Exception:
            pass
        dpy.close()
