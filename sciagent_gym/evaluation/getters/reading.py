"""Reading agent-written files safely, for the core getters and every tool's own: each failure
becomes a GetterError naming the file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..dotted import LookupFailure, dotted_get
from .registry import GetterError

if TYPE_CHECKING:
    from ..state import FinalState

MAX_BYTES = 256 * 1024 * 1024


def existing_file(state: FinalState, path: str) -> Path:
    """Resolve ``path`` inside the work dir and insist that it is a regular file."""
    p = state.path(path)
    if not p.exists():
        raise GetterError(f"{path}: not found")
    if p.is_dir():
        raise GetterError(f"{path}: is a directory, not a file")
    return p


def read_bytes(state: FinalState, path: str, max_bytes: int = MAX_BYTES) -> bytes:
    """The file's bytes; refuses huge files so a runaway agent cannot exhaust host memory."""
    p = existing_file(state, path)
    try:
        size = p.stat().st_size
        if size > max_bytes:
            raise GetterError(f"{path}: too large ({size} bytes, limit {max_bytes})")
        return p.read_bytes()
    except OSError as exc:
        raise GetterError(f"{path}: cannot read: {exc.strerror or exc}") from None


def decode_text(data: bytes) -> str:
    """UTF-8 (BOM tolerated), else Latin-1: Java apps on some locales write "µm" as 0xB5."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def looks_binary(data: bytes) -> bool:
    """NUL bytes or many control characters in the first block: not a text file."""
    head = data[:8192]
    if b"\x00" in head:
        return True
    controls = sum(1 for b in head if b < 32 and b not in (9, 10, 12, 13))
    return bool(head) and controls / len(head) > 0.01


def pick_key(path: str, value: Any, key: str | None) -> Any:
    """``value`` itself, or the part at dotted ``key`` (a GetterError naming file and key)."""
    if key is None:
        return value
    try:
        return dotted_get(value, key)
    except LookupFailure as exc:
        raise GetterError(f"{path}: {key!r}: {exc}") from None
