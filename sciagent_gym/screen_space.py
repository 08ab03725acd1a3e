"""The screenshot's observation space without its per-pixel bound arrays.

``gymnasium.spaces.Box(0, 255, (800, 1280, 3), uint8)`` stores ``low``, ``high``,
``bounded_below`` and ``bounded_above`` as four full arrays, 12.3 MB for a 1280x800 screen, in
every env of a driver process (measured by the density bench: 40 envs held 490 MB of them).
The bounds of a screen are the same scalar at every pixel, so :class:`ScreenBox` keeps each as
a read-only broadcast view of one element: the same values to every reader (``contains``,
``sample``, ``__eq__``, flattening), 4 bytes instead of 12.3 MB.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

_BOUND_ARRAYS = ("low", "high", "bounded_below", "bounded_above")


class ScreenBox(spaces.Box):
    """``Box(low, high, shape, dtype)`` with scalar bounds held as broadcast views."""

    def __init__(self, low: int | float, high: int | float, shape: tuple[int, ...],
                 dtype: Any = np.uint8, seed: int | np.random.Generator | None = None) -> None:
        if not (np.isscalar(low) and np.isscalar(high)):
            raise TypeError("ScreenBox takes scalar bounds; use gymnasium.spaces.Box for "
                            "per-element bounds")
        # Build the bounds on one element, then widen them to the shape as views.
        super().__init__(low, high, (1,), dtype, seed)
        self._shape = tuple(int(n) for n in shape)
        self._compact()

    def _compact(self) -> None:
        for name in _BOUND_ARRAYS:
            one = np.asarray(getattr(self, name)).reshape(-1)[:1].copy()
            setattr(self, name, np.broadcast_to(one.reshape(()), self._shape))

    def __getstate__(self) -> dict[str, Any]:
        # Pickle one element of each bound, not the broadcast (which pickles as full arrays).
        state = dict(self.__dict__)
        for name in _BOUND_ARRAYS:
            state[name] = np.asarray(state[name]).reshape(-1)[:1].copy()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._compact()
