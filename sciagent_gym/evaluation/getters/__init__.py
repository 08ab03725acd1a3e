"""Getters: named functions ``fn(state, **params)`` that read one value out of a final state.

Importing this package registers every built-in getter in :data:`GETTERS`.
"""

from __future__ import annotations

from . import (  # noqa: F401 - imported to register getters
    answer,
    app,
    commands,
    files,
    images,
    ocr,
    pixels,
    status,
    tables,
    windows,
)
from .registry import GETTERS, GetterError, register

__all__ = ["GETTERS", "GetterError", "register"]
