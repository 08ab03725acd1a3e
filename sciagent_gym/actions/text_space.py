""":class:`UnicodeText`, a Gymnasium text space that holds any Unicode string.

Agents type any Unicode and programs print it, so the action space's ``text`` field and the
env's ``instruction`` and ``terminal`` observations need a text space that contains every
string, which Gymnasium's ``Text`` (strings over its charset) does not. The flatten, unflatten
and shared-memory handlers registered here make it work in wrappers and ``AsyncVectorEnv``.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.spaces.utils import flatten, flatten_space, unflatten
from gymnasium.vector.utils import read_from_shared_memory
from numpy.typing import NDArray

#: What random samples of :class:`UnicodeText` are drawn from: characters a keyboard can type.
PRINTABLE_ASCII: str = string.ascii_letters + string.digits + string.punctuation + " "


class UnicodeText(spaces.Text):
    """A Text space holding any ``str`` of allowed length, because agents type any Unicode.

    :class:`gymnasium.spaces.Text` only contains strings over its charset; here the charset only
    steers :meth:`sample` (printable ASCII by default, so random policies type typeable text).
    Unlike ``Text``, ``min_length`` defaults to 0: the empty string is a valid text (an empty
    terminal, say). Flattening encodes code points, padded with ``0x110000``.
    """

    def __init__(
        self,
        max_length: int,
        *,
        min_length: int = 0,
        charset: frozenset[str] | str = PRINTABLE_ASCII,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        super().__init__(max_length, min_length=min_length, charset=charset, seed=seed)

    def contains(self, x: Any) -> bool:
        """Any ``str`` whose length is within the bounds, whatever its characters."""
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        if self.character_set == frozenset(PRINTABLE_ASCII):
            return f"UnicodeText({self.min_length}, {self.max_length})"
        return (
            f"UnicodeText({self.min_length}, {self.max_length}, "
            f"sample_charset={self.characters!r})"
        )

    def __eq__(self, other: object, /) -> bool:
        return (
            isinstance(other, UnicodeText)
            and self.min_length == other.min_length
            and self.max_length == other.max_length
            and self.character_set == other.character_set
        )


_NO_CHAR = 0x110000  # one past the last Unicode code point


@flatten.register(UnicodeText)
def _flatten_unicode_text(space: UnicodeText, x: str) -> NDArray[np.int32]:
    arr = np.full((space.max_length,), _NO_CHAR, dtype=np.int32)
    arr[: len(x)] = [ord(c) for c in x]
    return arr


@unflatten.register(UnicodeText)
def _unflatten_unicode_text(space: UnicodeText, x: NDArray[np.int32]) -> str:
    return "".join(chr(int(v)) for v in x if 0 <= v < _NO_CHAR)


class SharedTextBatch(Sequence):
    """The texts of a vector env's sub-envs, decoded on access from shared memory.

    ``AsyncVectorEnv`` calls ``read_from_shared_memory`` once, at construction, and expects a
    live view of the buffer that its workers keep writing (arrays are views). Gymnasium's Text
    reader returns a tuple snapshot instead, so text observations never change; this view
    decodes the current code points whenever it is read, and a deepcopy (what the vector env
    returns by default) is a plain tuple of strings.
    """

    def __init__(self, space: UnicodeText, data: NDArray[np.int32]) -> None:
        self._space, self._data = space, data

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        return _unflatten_unicode_text(self._space, self._data[index])

    def __deepcopy__(self, memo) -> tuple[str, ...]:
        return tuple(self)

    def __eq__(self, other: object) -> bool:
        return tuple(self) == (tuple(other) if isinstance(other, Sequence) else other)

    __hash__ = None

    def __repr__(self) -> str:
        return repr(tuple(self))


@read_from_shared_memory.register(UnicodeText)
def _read_unicode_text_from_shared_memory(space: UnicodeText, shared_memory: Any,
                                          n: int = 1) -> SharedTextBatch:
    data = np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape((n, space.max_length))
    return SharedTextBatch(space, data)


@flatten_space.register(UnicodeText)
def _flatten_space_unicode_text(space: UnicodeText) -> spaces.Box:
    return spaces.Box(low=0, high=_NO_CHAR, shape=(space.max_length,), dtype=np.int32)
