"""Getters about plain files the agent saved in its working directory."""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import TYPE_CHECKING, Any

from .limits import MAX_JSON_BYTES, MAX_TEXT_BYTES, check_json
from .reading import decode_text, existing_file, looks_binary, pick_key, read_bytes
from .registry import GetterError, register

if TYPE_CHECKING:
    from ..state import FinalState


@register("file_exists")
def file_exists(state: FinalState, path: str) -> bool:
    """True if ``path`` is a regular file inside the work dir (a directory does not count)."""
    return state.path(path).is_file()


@register("file_text")
def file_text(state: FinalState, path: str) -> str:
    """The file decoded as text (UTF-8, falling back to Latin-1)."""
    return decode_text(read_bytes(state, path, MAX_TEXT_BYTES))


@register("file_json")
def file_json(state: FinalState, path: str, key: str | None = None) -> Any:
    """The parsed JSON document, or the value at dotted ``key`` ("rois.0.name")."""
    data = read_bytes(state, path, MAX_JSON_BYTES)
    check_json(data, path)
    text = decode_text(data)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GetterError(
            f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise GetterError(f"{path}: invalid JSON: {exc}") from None
    return pick_key(path, doc, key)


@register("file_sha256")
def file_sha256(state: FinalState, path: str) -> str:
    """Hex SHA-256 of the file, streamed (used to prove protected inputs were not modified)."""
    p = existing_file(state, path)
    digest = hashlib.sha256()
    try:
        with p.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise GetterError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return digest.hexdigest()


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


@register("number_in_file")
def number_in_file(state: FinalState, path: str, index: int = 0) -> float:
    """The ``index``-th number written in a small text file ("25", "RMSD = 0.25 A",
    "112.4 Hz"): how tasks take a single measured value as an answer."""
    data = read_bytes(state, path, 1024 * 1024)
    if looks_binary(data):
        raise GetterError(f"{path}: binary data, not a text file")
    numbers = _NUMBER.findall(decode_text(data))
    if len(numbers) <= index:
        raise GetterError(f"{path}: holds {len(numbers)} number(s), wanted number {index + 1}")
    value = float(numbers[index])
    if not math.isfinite(value):
        raise GetterError(f"{path}: number {index + 1} is {value}")
    return value
