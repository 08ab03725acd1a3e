"""Substituting seeded task parameters and data-derived gold values into specs.

"$name" / "$a.b" as a whole string is replaced by the value itself (any type, so numbers stay
numbers in criteria); "{name}" inside longer text is formatted with str(value). Only context
names are reachable: no attribute access, no positional fields.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from typing import Any

from sciagent_gym.errors import SpecError
from sciagent_gym.evaluation.dotted import LookupFailure, describe_keys, dotted_get

_WHOLE = re.compile(r"\$([A-Za-z_]\w*(?:\.[\w-]+)*)")
_FIELD = re.compile(r"[A-Za-z_]\w*(?:\.[\w-]+)*")
_FORMATTER = string.Formatter()


def _lookup(context: Mapping[str, Any], name: str, where: str) -> Any:
    try:
        return dotted_get(context, name)
    except LookupFailure as exc:
        if "." not in name:
            raise SpecError(
                where, f"unknown template variable {name!r} (known: {describe_keys(context)})"
            ) from None
        raise SpecError(where, f"template variable {name!r}: {exc}") from None


def _format(text: str, context: Mapping[str, Any], where: str) -> str:
    """str.format restricted to dotted context names; "{{" and "}}" are literal braces."""
    try:
        parts = list(_FORMATTER.parse(text))
    except ValueError as exc:
        raise SpecError(where, f"bad placeholder in {text!r}: {exc}") from None
    out: list[str] = []
    for literal, name, spec, conversion in parts:
        out.append(literal)
        if name is None:
            continue
        if not _FIELD.fullmatch(name):
            raise SpecError(where, f"placeholder {{{name}}} is not a context name")
        if spec and ("{" in spec or "}" in spec):
            raise SpecError(where, f"nested placeholder in {{{name}:{spec}}}")
        value = _lookup(context, name, where)
        if conversion == "r":
            value = repr(value)
        try:
            out.append(format(value, spec) if spec else str(value))
        except (ValueError, TypeError) as exc:
            raise SpecError(where, f"cannot format {{{name}:{spec}}}: {exc}") from None
    return "".join(out)


def resolve(obj: Any, context: Mapping[str, Any], where: str = "") -> Any:
    """Deep-substitute templates in dicts/lists/strings; returns new containers.

    ``where`` is the field path used in SpecError messages. "$$x" yields the literal "$x".
    """
    if isinstance(obj, Mapping):
        return {k: resolve(v, context, f"{where}.{k}" if where else str(k)) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [resolve(v, context, f"{where}[{i}]") for i, v in enumerate(obj)]
    if not isinstance(obj, str):
        return obj
    here = where or "<template>"
    if obj.startswith("$$"):
        return obj[1:]
    whole = _WHOLE.fullmatch(obj)
    if whole:
        return _lookup(context, whole.group(1), here)
    if "{" in obj or "}" in obj:
        return _format(obj, context, here)
    return obj
