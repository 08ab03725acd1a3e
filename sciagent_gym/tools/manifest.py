"""A tool's manifest: ``envs/<tool>/tool.json`` parsed into a typed, frozen :class:`ToolInfo`.

Discovery parses every manifest once, before any tool code is imported, and refuses a bad one
with a :class:`~sciagent_gym.errors.ManifestError` naming the file and the field: an unknown
key (a typo would otherwise be ignored), a wrong type, a value out of range. What a tool
knows about its program lives here, so the core never names a tool: the ``/etc`` entries its
program reads, the names its processes run under, the tools or ported benchmarks its code
imports. The keys, all but the first four optional:

``name``, ``env_id``, ``display_name``, ``domain``
    the tool's folder name, its Gymnasium id, the name people know, its field of science.
``requires``
    programs (or Python modules) it needs and what provides them (:class:`Requirement`).
``program``
    the program and version the env table shows ("Praat 6.3").
``debian``
    further Debian packages set-up installs (fonts, a terminal).
``display``
    ``{"glx": false}`` for a program proven to draw no OpenGL (Xvfb then offers no GLX).
``settle``
    damage-mode settle floors (``react``, ``quiet``, ``busy_cap``, seconds), see
    :func:`sciagent_gym.controller.settle.for_tool`.
``image``
    the recipe of a QEMU guest image (:mod:`sciagent_gym.providers.qemu.recipe`).
``etc``
    entries under ``/etc`` the program reads besides the shared ones (its own config folder).
``processes``
    process names (``ps -o comm=``, prefixes) of the program zone that an agent must not see:
    the attacks' spy looks for them.
``uses``
    tools (``"jmol"``) and ported benchmarks (``"benchmarks.stbench"``) this tool's code
    imports; the layout test allows exactly these beside the SDK.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from sciagent_gym.errors import ManifestError, MissingProgramError

#: The damage-mode settle fields a tool may raise (see ``controller.settle.TOOL_FIELDS``).
SETTLE_FIELDS = ("react", "quiet", "busy_cap")
#: ``/etc`` entries no tool may show its program: the sandbox writes its own users, and
#: credentials and privilege configuration stay the host's.
ETC_REFUSED = ("passwd", "group", "shadow", "gshadow", "sudoers", "sudoers.d", "ssh",
               "security", "pam.d", "machine-id")


@dataclass(frozen=True)
class Requirement:
    """A program the tool needs, and what provides it; or a Python module the tool's host
    side imports (``python``, installed with pip from ``pip``; e.g. pymatgen for generators).

    Programs outside the system's package manager (QuPath, say) are found through an
    environment variable naming the executable (``env``), then PATH, then ``search``: install
    locations, with ``~`` and ``$VARS`` expanded (a path whose variable is unset is skipped).
    """

    program: str = ""
    package: str = ""
    install: str = ""  # a command that installs it, when not a plain apt package
    env: str = ""
    search: tuple[str, ...] = ()
    python: str = ""  # a module to import, e.g. "pymatgen.core"
    pip: str = ""  # its pip requirement, e.g. "pymatgen>=2024.1"

    def __post_init__(self) -> None:
        if bool(self.program) == bool(self.python):
            raise ValueError("a requirement names a program or a python module, not "
                             f"{'both' if self.program else 'neither'}: {self}")
        if self.python and not self.pip:
            raise ValueError(f"python requirement {self.python!r} needs its 'pip' requirement")

    @property
    def name(self) -> str:
        return self.program or self.python

    def locate(self) -> Path | None:
        """Where the program (or the module) is, or None."""
        if self.python:
            import importlib.util

            try:
                spec = importlib.util.find_spec(self.python)
            except (ImportError, ValueError):
                return None
            return Path(spec.origin) if spec is not None and spec.origin else None
        if self.env and os.environ.get(self.env):
            path = Path(os.environ[self.env]).expanduser()
            return path if path.is_file() and os.access(path, os.X_OK) else None
        found = shutil.which(self.program)
        if found:
            return Path(found)
        if Path(self.program).is_absolute() and Path(self.program).exists():
            return Path(self.program)
        for pattern in self.search:
            expanded = os.path.expanduser(os.path.expandvars(pattern))
            if "$" in expanded:
                continue
            path = Path(expanded)
            if path.is_file() and os.access(path, os.X_OK):
                return path
        return None

    def missing(self) -> bool:
        return self.locate() is None

    def error(self) -> MissingProgramError:
        if self.python:
            return MissingProgramError(f"python module {self.python}", self.pip,
                                       f"pip install '{self.pip}'")
        program = self.program
        if self.env and os.environ.get(self.env):
            program += f" ({self.env}={os.environ[self.env]} is not an executable file)"
        return MissingProgramError(program, self.package, self.install or None)


@dataclass(frozen=True)
class ToolInfo:
    """One tool's manifest (see the module docstring for each field)."""

    name: str
    env_id: str
    display_name: str
    domain: str
    requires: tuple[Requirement, ...]
    folder: Path
    program: str = ""
    debian: tuple[str, ...] = ()
    glx: bool = True
    settle: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    image: Mapping[str, Any] | None = None
    etc: tuple[str, ...] = ()
    processes: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()


_REQUIRED = ("name", "env_id", "display_name", "domain")
_KNOWN = (*_REQUIRED, "requires", "program", "debian", "display", "settle", "image", "etc",
          "processes", "uses")


def _strings(meta: dict, key: str, where: str) -> tuple[str, ...]:
    value = meta.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ManifestError(where, key, f"a list of non-empty strings, got {value!r}")
    return tuple(value)


def _etc(meta: dict, where: str) -> tuple[str, ...]:
    entries = _strings(meta, "etc", where)
    for entry in entries:
        parts = Path(entry).parts
        if entry.startswith("/") or ".." in parts or not parts:
            raise ManifestError(where, "etc", f"{entry!r} is not a path under /etc")
        if parts[0] in ETC_REFUSED:
            raise ManifestError(where, "etc", f"/etc/{parts[0]} is never shown to a program")
    return entries


def _settle(meta: dict, where: str) -> Mapping[str, float]:
    value = meta.get("settle", {})
    if not isinstance(value, dict):
        raise ManifestError(where, "settle", f"an object, got {value!r}")
    unknown = sorted(set(value) - set(SETTLE_FIELDS))
    if unknown:
        raise ManifestError(where, "settle", f"unknown field(s) {unknown} "
                            f"(known: {', '.join(SETTLE_FIELDS)})")
    for key, seconds in value.items():
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) \
                or not 0 < seconds <= 10:
            raise ManifestError(where, f"settle.{key}", f"seconds in (0, 10], got {seconds!r}")
    return MappingProxyType({k: float(v) for k, v in value.items()})


def _glx(meta: dict, where: str) -> bool:
    display = meta.get("display", {})
    if not isinstance(display, dict) or set(display) - {"glx"} \
            or not isinstance(display.get("glx", True), bool):
        raise ManifestError(where, "display", f'known: {{"glx": true|false}}, got {display!r}')
    return display.get("glx", True)


def _requirements(meta: dict, where: str) -> tuple[Requirement, ...]:
    value = meta.get("requires", [])
    if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
        raise ManifestError(where, "requires", f"a list of objects, got {value!r}")
    out = []
    for i, req in enumerate(value):
        try:
            out.append(Requirement(**{**req, "search": tuple(req.get("search", ()))}))
        except (TypeError, ValueError) as exc:
            raise ManifestError(where, f"requires[{i}]", str(exc)) from None
    return tuple(out)


def parse_manifest(meta: Any, folder: Path) -> ToolInfo:
    """``meta`` (a ``tool.json`` as read) as a :class:`ToolInfo`; raises ManifestError."""
    where = str(folder / "tool.json")
    if not isinstance(meta, dict):
        raise ManifestError(where, "", f"a JSON object, got {type(meta).__name__}")
    unknown = sorted(set(meta) - set(_KNOWN))
    if unknown:
        raise ManifestError(where, unknown[0], f"unknown key (known: {', '.join(_KNOWN)})")
    for key in _REQUIRED + ("program",):
        if key in _REQUIRED and key not in meta:
            raise ManifestError(where, key, "missing")
        if key in meta and not isinstance(meta[key], str):
            raise ManifestError(where, key, f"a string, got {meta[key]!r}")
    if meta["name"] != folder.name:
        raise ManifestError(where, "name", f"{meta['name']!r} is not its folder's name "
                            f"{folder.name!r}")
    image = meta.get("image")
    if image is not None and not isinstance(image, dict):
        raise ManifestError(where, "image", f"an object, got {image!r}")
    return ToolInfo(
        name=meta["name"], env_id=meta["env_id"], display_name=meta["display_name"],
        domain=meta["domain"], requires=_requirements(meta, where), folder=folder,
        program=meta.get("program", ""), debian=_strings(meta, "debian", where),
        glx=_glx(meta, where), settle=_settle(meta, where),
        image=MappingProxyType(image) if image is not None else None,
        etc=_etc(meta, where), processes=_strings(meta, "processes", where),
        uses=_strings(meta, "uses", where))


def read_manifest(path: Path) -> ToolInfo:
    """Parse the ``tool.json`` at ``path``; a file that is not JSON is a ManifestError too."""
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ManifestError(str(path), "", f"not readable JSON: {exc}") from None
    return parse_manifest(meta, path.parent)
