"""Per-step and per-reset wall-clock timings as they appear in ``info["timings"]``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping


class Timings(Mapping[str, float]):
    """Seconds spent in each phase (parse, execute, observe, total, ...), read like a dict.

    Durations are measurements, not part of the env's dynamics: two ``Timings`` compare equal
    when they measure the same phases, so that identical episodes have equal ``info`` dicts
    (Gymnasium's determinism checks compare infos) while the numbers stay available.
    Use ``dict(t)`` for the plain values.
    """

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, float] | None = None, **more: float) -> None:
        self._values = {**(values or {}), **more}

    def __getitem__(self, key: str) -> float:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Timings):
            return self._values.keys() == other._values.keys()
        return NotImplemented

    __hash__ = None  # mutable-looking mapping; not hashable

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v * 1000:.1f}ms" for k, v in self._values.items())
        return f"Timings({inner})"
