"""The Debian mirror a build downloads from: ``$SCIAGENT_DEBIAN_MIRROR`` or the host's own.

The host's apt sources are read in both formats: one-line ``sources.list`` / ``*.list`` files and
deb822 ``*.sources`` paragraphs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sciagent_gym.errors import ImageBuildError


@dataclass(frozen=True)
class AptSource:
    uri: str
    suites: tuple[str, ...]
    components: tuple[str, ...]


def parse_one_line_sources(text: str) -> list[AptSource]:
    """``deb [options] URI SUITE COMPONENT...`` lines (sources.list format)."""
    found = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line.startswith("deb "):
            continue
        line = re.sub(r"\[[^\]]*\]", " ", line[4:])  # drop [arch=... signed-by=...]
        parts = line.split()
        if len(parts) >= 2:
            found.append(AptSource(parts[0], (parts[1],), tuple(parts[2:])))
    return found


def parse_deb822_sources(text: str) -> list[AptSource]:
    """Paragraphs of ``Types/URIs/Suites/Components`` fields (``*.sources`` format)."""
    found = []
    for para in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        key = None
        for line in para.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            if line[0] in " \t" and key:  # continuation line
                fields[key] += " " + line.strip()
                continue
            key, _, value = line.partition(":")
            key = key.strip().lower()
            fields[key] = value.strip()
        if "deb" not in fields.get("types", "").split():
            continue
        if fields.get("enabled", "yes").lower() == "no":
            continue
        for uri in fields.get("uris", "").split():
            found.append(AptSource(uri, tuple(fields.get("suites", "").split()),
                                   tuple(fields.get("components", "").split())))
    return found


def host_apt_sources(etc_apt: Path = Path("/etc/apt")) -> list[AptSource]:
    sources = []
    files = [etc_apt / "sources.list", *sorted((etc_apt / "sources.list.d").glob("*"))]
    for path in files:
        if not path.is_file():
            continue
        try:
            text = path.read_text()
        except OSError:
            continue
        if path.name.endswith(".list"):
            sources += parse_one_line_sources(text)
        elif path.name.endswith(".sources"):
            sources += parse_deb822_sources(text)
    return sources


def pick_mirror(sources: Iterable[AptSource], suite: str) -> str | None:
    """The URI of a source carrying ``suite`` itself (not -updates/-security) with ``main``."""
    usable = [s for s in sources if s.uri.startswith(("http://", "https://", "file:/"))]
    for want_main in (True, False):
        for s in usable:
            if suite in s.suites and ("main" in s.components or not want_main):
                return s.uri
    return None


def debian_mirror(suite: str, etc_apt: Path = Path("/etc/apt")) -> str:
    """``$SCIAGENT_DEBIAN_MIRROR`` or the host's configured mirror for ``suite``."""
    env = os.environ.get("SCIAGENT_DEBIAN_MIRROR")
    if env:
        return env
    mirror = pick_mirror(host_apt_sources(etc_apt), suite)
    if mirror is None:
        raise ImageBuildError(
            f"no Debian mirror for suite {suite!r} in {etc_apt}/sources.list or "
            f"{etc_apt}/sources.list.d/*.sources|*.list; add one there or set "
            "SCIAGENT_DEBIAN_MIRROR=URL")
    return mirror
