"""Which Debian packages (and pip requirements) the set-up installs, from the tool folders.

A tool declares what it needs in ``envs/<tool>/tool.json`` (``requires``: programs and the
Debian packages providing them, or ``python`` modules with their ``pip`` requirement; optional
``debian``: packages needed without a program to point at). What every tool shares (display,
window manager, sandbox, OCR, Python, QEMU) is listed once in
``vm_images/local/apt-packages.txt``. This module uses the standard library only, so the
Makefile runs it with the system Python before any virtualenv exists:

    python3 sciagent_gym/deps.py --apt        # = sciagent-gym deps --apt
    python3 sciagent_gym/deps.py --pip        # = sciagent-gym deps --pip
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

#: A Debian package name (policy 5.6.1); anything else in ``requires[].package`` (QuPath's
#: "official release") is not installed by apt.
DEBIAN_NAME = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")

_HERE = Path(__file__).resolve().parent


def _default_roots() -> tuple[Path, Path]:
    """envs/ and vm_images/ of a source checkout, else of the installed package."""
    for base in (_HERE.parent, _HERE):
        envs, vm = base / "envs", base / "vm_images"
        if envs.is_dir() and vm.is_dir():
            return envs, vm
    raise FileNotFoundError(f"no envs/ and vm_images/ next to {_HERE}")


def tool_packages(meta: dict) -> list[str]:
    """The Debian packages one ``tool.json`` names, in order, without duplicates."""
    names = [r.get("package", "") for r in meta.get("requires", [])] + list(meta.get("debian", []))
    return list(dict.fromkeys(n for n in names if DEBIAN_NAME.match(n)))


def tool_pip(meta: dict) -> list[str]:
    """The pip requirements one ``tool.json`` names (``requires`` entries with ``pip``)."""
    return list(dict.fromkeys(r["pip"] for r in meta.get("requires", []) if r.get("pip")))


def pip_packages(envs: Path | None = None, tools: list[str] | None = None) -> list[str]:
    """Every tool's (or the named tools') pip requirements, without duplicates."""
    envs = envs or _default_roots()[0]
    names: list[str] = []
    for meta_path in sorted(envs.glob("*/tool.json")):
        meta = json.loads(meta_path.read_text())
        if tools is None or meta.get("name") in tools:
            names += tool_pip(meta)
    return list(dict.fromkeys(names))


def shared_packages(vm_images: Path) -> list[str]:
    lines = (vm_images / "local" / "apt-packages.txt").read_text().splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def apt_packages(envs: Path | None = None, vm_images: Path | None = None,
                 tools: list[str] | None = None) -> list[str]:
    """Shared packages, then every tool's (or the named tools'), without duplicates."""
    default_envs, default_vm = _default_roots() if envs is None or vm_images is None else (envs,
                                                                                          vm_images)
    envs, vm_images = envs or default_envs, vm_images or default_vm
    names = shared_packages(vm_images)
    for meta_path in sorted(envs.glob("*/tool.json")):
        meta = json.loads(meta_path.read_text())
        if tools is None or meta.get("name") in tools:
            names += tool_packages(meta)
    return list(dict.fromkeys(names))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sciagent-gym deps",
                                     description="print what the set-up installs")
    kind = parser.add_mutually_exclusive_group(required=True)
    kind.add_argument("--apt", action="store_true", help="Debian packages, one per line")
    kind.add_argument("--pip", action="store_true",
                      help="Python requirements of the tools' host side, one per line")
    parser.add_argument("--tool", action="append", help="only this tool's (repeatable), "
                        "plus the shared packages")
    args = parser.parse_args(argv)
    found = pip_packages(tools=args.tool) if args.pip else apt_packages(tools=args.tool)
    print("\n".join(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
