"""Dotted-path lookup ("images.-1.title", "rois[0].name") shared by getters and templating.

One implementation so that app state, JSON files and template variables address nested data
the same way, and so that a miss always says which keys did exist at that level.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from sciagent_gym.errors import LookupFailure

_BRACKET = re.compile(r"\[\s*(-?\d+)\s*\]")
_INDEX = re.compile(r"-?\d+")
_MAX_KEYS_SHOWN = 20


def split_key(key: str) -> list[str]:
    """Split "a.b[0].c" / "a.b.0.c" into segments; reject empty segments like "a..b"."""
    if not isinstance(key, str):
        raise LookupFailure(f"key must be a string, got {type(key).__name__}")
    normal = _BRACKET.sub(r".\1", key.strip())
    if normal.startswith("."):
        normal = normal[1:]
    parts = normal.split(".")
    if any(p == "" for p in parts):
        raise LookupFailure(f"malformed key {key!r}")
    return parts


def describe_keys(obj: Mapping[Any, Any]) -> str:
    """Comma-separated keys of a mapping, shortened for error messages."""
    keys = [str(k) for k in obj]
    if not keys:
        return "none: it is empty"
    shown = ", ".join(keys[:_MAX_KEYS_SHOWN])
    if len(keys) > _MAX_KEYS_SHOWN:
        shown += f", ... ({len(keys)} keys)"
    return shown


def dotted_get(obj: Any, key: str) -> Any:
    """Walk ``obj`` along ``key``; list segments are integers, negative ones count from the end."""
    cur = obj
    walked: list[str] = []
    for seg in split_key(key):
        where = repr(".".join(walked)) if walked else "the top level"
        if isinstance(cur, Mapping):
            if seg not in cur:
                raise LookupFailure(
                    f"key {seg!r} not found at {where} (keys: {describe_keys(cur)})"
                )
            cur = cur[seg]
        elif isinstance(cur, (list, tuple)):
            if not _INDEX.fullmatch(seg):
                raise LookupFailure(
                    f"{seg!r} is not a list index at {where} (a list of {len(cur)} items)"
                )
            idx = int(seg)
            if not -len(cur) <= idx < len(cur):
                raise LookupFailure(
                    f"index {idx} out of range at {where} (list has {len(cur)} items)"
                )
            cur = cur[idx]
        else:
            raise LookupFailure(
                f"cannot look up {seg!r} at {where}: it is a {type(cur).__name__}, "
                "not an object or a list"
            )
        walked.append(seg)
    return cur
