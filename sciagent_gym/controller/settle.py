"""Wait for a screen to stop changing instead of sleeping a fixed time.

Two ways to know: listen to the X server's DAMAGE events and grab once when the paints stop
(``mode="damage"``, the env's default, :meth:`SettleConfig.default`; see
:mod:`sciagent_gym.controller.damage`), or grab whole frames and compare them (``mode="frame"``,
``SettleConfig()``). The damage mode falls back to frames where no damage source is given (a
display without the extension).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from sciagent_gym.controller.damage import DamageSource

_POLL = 0.002  # seconds between looks at the processes' states (0.5 ms a look for 33 threads)
#: Looks in a row that must find every process asleep: one could fall between two hand-overs.
_IDLE_POLLS = 2


@dataclass(frozen=True)
class SettleConfig:
    """``quiet``: seconds without change that count as settled; ``cap``: give up after this;
    ``interval``: time between grabs; ``tolerance``: changed pixels ignored (blinking carets).

    ``mode="damage"``: ``react`` is how long a step may take to start painting (no paint by
    then, and the program's processes asleep: the step did not react, grab at once);
    ``busy_cap``: how long a busy program may hold a step that has not painted; ``quiet`` is
    then the gap without paints that ends a reaction's burst, and a paint rectangle of
    ``tolerance`` pixels or fewer does not start a reaction by itself (a caret blink) but does
    extend one."""

    quiet: float = 0.15
    cap: float = 3.0
    interval: float = 0.015
    tolerance: int = 64
    mode: str = "frame"
    react: float = 0.015
    busy_cap: float = 0.5

    @classmethod
    def fast(cls) -> SettleConfig:
        """20 ms quiet window, 5 ms between grabs: steps the program does not react to cost
        ~23 ms instead of ~160 ms, but reactions slower than that (ImageJ repaints after a
        menu closes at ~120-180 ms) can be observed half-drawn, one step late."""
        return cls(quiet=0.02, interval=0.005)

    @classmethod
    def damage(cls, quiet: float = 0.04, react: float = 0.01, cap: float = 3.0) -> SettleConfig:
        """Settle on the X server's paint events and the program's thread states (see the
        module docstring); frames are compared instead where the display has no DAMAGE
        extension. A tool's ``tool.json`` may lengthen the windows (:func:`for_tool`).
        Measured (benchmarks/settle_damage.py, 30-40 random steps per tool): step p50
        17-25 ms idle, 55-105 ms reacting, against 160-170 / 175-250 ms with frames."""
        return cls(quiet=quiet, react=react, cap=cap, mode="damage")

    @classmethod
    def default(cls) -> SettleConfig:
        """The env's settle when none is given: :meth:`damage` (frames are compared instead
        on a display without the DAMAGE extension). ``SettleConfig()`` is the frame settle,
        the default until 2026-12-06; README "Speed" has both measured."""
        return cls.damage()

    @classmethod
    def named(cls, name: str) -> SettleConfig:
        """``damage`` (the env's default), ``frame`` or ``fast``: the CLI's ``--settle``."""
        if name not in NAMES:
            raise ValueError(f"unknown settle {name!r} (known: {', '.join(NAMES)})")
        return {"frame": cls, "damage": cls.damage, "fast": cls.fast}[name]()


#: The names :meth:`SettleConfig.named` knows (the CLI's ``--settle``).
NAMES = ("frame", "damage", "fast")


#: The fields a tool may set in its ``tool.json`` ``"settle"`` object (damage mode only).
TOOL_FIELDS = ("react", "quiet", "busy_cap")


def for_tool(config: SettleConfig, fields: dict | None) -> SettleConfig:
    """``config`` with a tool's own damage-mode windows (``tool.json``: ``"settle": {"react":
    0.1, "quiet": 0.3}``), each a floor: a program that reacts on its own timers (PyMOL
    handles input in a 20 ms idle timer and defers viewport clicks past its double-click
    window) needs longer windows than the default, never shorter ones."""
    if config.mode != "damage" or not fields:
        return config
    bad = set(fields) - set(TOOL_FIELDS)
    if bad:
        raise ValueError(f"tool.json settle: unknown field(s) {sorted(bad)} "
                         f"(known: {', '.join(TOOL_FIELDS)})")
    return replace(config, **{k: max(float(v), getattr(config, k)) for k, v in fields.items()})


def changed_pixels(a: np.ndarray, b: np.ndarray) -> int:
    """How many pixels differ between two frames (any channel)."""
    if np.array_equal(a, b):  # the common case, a memcmp: ~0.3 ms instead of ~6 ms at 1280x800
        return 0
    return int(np.count_nonzero(np.any(a != b, axis=2)))


def wait_settled(grab: Callable[[], np.ndarray], config: SettleConfig = SettleConfig(),
                 first: np.ndarray | None = None,
                 damage: DamageSource | None = None) -> tuple[np.ndarray, bool]:
    """Grab until ``config.quiet`` seconds pass without a change beyond the tolerance
    (with ``mode="damage"`` and a ``damage`` source: :func:`wait_damage_settled`).

    Returns the last frame and whether the screen settled before the cap.
    """
    if config.mode == "damage" and damage is not None:
        return wait_damage_settled(grab, damage, config)
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


def wait_damage_settled(grab: Callable[[], np.ndarray], damage: DamageSource,
                        config: SettleConfig) -> tuple[np.ndarray, bool]:
    """Wait on paint events, then grab once; returns the frame and whether the paints stopped
    before the cap.

    The step did not react when no paint bigger than ``config.tolerance`` came within
    ``config.react`` of the call and, where the source can tell (``busy``), the processes
    behind the display have all gone to sleep (at most ``config.busy_cap`` after the call).
    A reaction is over when ``config.quiet`` passed after its last paint (any size) and the
    processes sleep; at most ``config.cap`` after the call. Paints since the source's last
    mark (the last grab) count from when the source says they happened: one less than
    ``quiet`` old is a burst still going (a late paint of the previous step is not lost);
    older ones are ignored. (:class:`XDamageSource` times a paint when it reads it, so one
    queued between two steps costs one quiet window.)
    """
    busy = getattr(damage, "busy", None)
    start = time.monotonic()
    cap_at, busy_at = start + config.cap, start + min(config.busy_cap, config.cap)
    last: float | None = None
    idle = 0  # consecutive polls that found every process asleep
    while True:  # the reaction window
        now = time.monotonic()
        react_at = start + config.react
        paint = damage.next_paint(react_at if now < react_at else now + _POLL)
        if paint is not None:
            if paint[1] > config.tolerance and paint[0] + config.quiet > start:
                last = paint[0]
                break
            continue
        now = time.monotonic()
        if now >= react_at:
            idle = idle + 1 if busy is None or not busy() else 0
            if idle >= _IDLE_POLLS or now >= busy_at:
                break
    settled = True
    idle = 0
    while last is not None:  # the burst
        now = time.monotonic()
        quiet_at = last + config.quiet
        paint = damage.next_paint(min(cap_at, quiet_at if now < quiet_at else now + _POLL))
        now = time.monotonic()
        if paint is not None:
            last, idle = max(last, paint[0]), 0
        elif now >= quiet_at:
            idle = idle + 1 if busy is None or not busy() else 0
            if idle >= _IDLE_POLLS:
                break
        if now >= cap_at:
            settled = False
            break
    damage.mark()
    return grab(), settled


def settle_canonical(grab: Callable[[], np.ndarray], expose: Callable[[], None],
                     config: SettleConfig = SettleConfig(), attempts: int = 4,
                     damage: DamageSource | None = None) -> np.ndarray:
    """Settle, then make every window repaint and settle again until a repaint changes nothing.

    The start screen of an episode is then what the program draws from scratch, not a frame
    with half-painted start-up leftovers (which would differ between identical resets).
    With damage, the quiet window is at least 0.1 s (0.25 s with frames) and every paint
    counts; the frames of two rounds must still be equal."""
    damaged = config.mode == "damage" and damage is not None
    strict = replace(config, quiet=max(config.quiet, 0.1 if damaged else 0.25),
                     cap=max(config.cap, 5.0), tolerance=0)
    frame, _ = wait_settled(grab, strict, damage=damage)
    for _ in range(attempts):
        expose()
        again, _ = wait_settled(grab, strict, damage=damage)
        if np.array_equal(again, frame):
            break
        frame = again
    return frame
