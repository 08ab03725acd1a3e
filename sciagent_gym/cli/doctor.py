"""What is installed and what is missing, with the package that provides it."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
from dataclasses import dataclass

from sciagent_gym.providers.local.sandbox import bwrap_problem
from sciagent_gym.tools import discover


@dataclass(frozen=True)
class Check:
    group: str
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True


def _program(name: str, package: str, group: str, required: bool = True,
             version_args: tuple[str, ...] = ()) -> Check:
    path = shutil.which(name)
    if path is None:
        return Check(group, name, False, "not found", f"apt-get install -y {package}", required)
    detail = path
    if version_args:
        try:
            out = subprocess.run([path, *version_args], capture_output=True, text=True,
                                 timeout=10)
            first = (out.stdout or out.stderr).strip().splitlines()
            detail = first[0] if first else path
        except (OSError, subprocess.TimeoutExpired):
            pass
    return Check(group, name, True, detail, "", required)


def _python_module(module: str, dist: str) -> Check:
    try:
        mod = importlib.import_module(module)
    except Exception as exc:  # an import can fail with any error
        return Check("python", dist, False, f"import failed: {exc}", f"pip install {dist}")
    return Check("python", dist, True, getattr(mod, "__version__", "installed"))


def run_checks() -> list[Check]:
    checks = [
        _program("Xvfb", "xvfb", "display"),
        _program("openbox", "openbox", "display"),
        _program("tesseract", "tesseract-ocr", "evaluation", required=False,
                 version_args=("--version",)),
    ]
    problem = bwrap_problem()
    checks.append(Check("sandbox", "bwrap", problem is None, problem or "isolates apps and CLI",
                        "" if problem is None else "apt-get install -y bubblewrap "
                        "(and allow user namespaces)", required=False))
    for module, dist in (("gymnasium", "gymnasium"), ("numpy", "numpy"), ("PIL", "pillow"),
                         ("Xlib", "python-xlib"), ("mss", "mss"), ("skimage", "scikit-image"),
                         ("pytesseract", "pytesseract"), ("tifffile", "tifffile")):
        checks.append(_python_module(module, dist))
    try:
        importlib.import_module("stable_baselines3")
        checks.append(Check("python", "stable-baselines3", True, "installed", required=False))
    except ImportError:
        checks.append(Check("python", "stable-baselines3", False, "not installed (optional)",
                            "pip install 'sciagent-gym[rl]'", required=False))
    checks.append(_program("xclip", "xclip", "display", required=False))
    checks += _qemu_checks()
    for info in discover().values():
        for req in info.requires:
            where = req.locate()
            fix = (f"pip install '{req.pip}'" if req.python else
                   req.install or f"apt-get install -y {req.package}")
            detail = (f"needed by {info.env_id}" if str(where) == req.program else
                      f"{where} (needed by {info.env_id})" if where else
                      f"not found ({req.package})" if req.install else "not found")
            if where is None and req.env:
                detail += f"; set {req.env} to the executable if it is installed elsewhere"
            checks.append(Check(f"tool:{info.name}", req.name, where is not None, detail,
                                "" if where else fix, required=False))
    return checks


def _qemu_checks() -> list[Check]:
    """The QEMU provider's needs (optional: the local provider does not use them)."""
    found = shutil.which("debootstrap") is not None or any(
        os.path.exists(f"{d}/debootstrap") for d in ("/usr/sbin", "/sbin"))
    checks = [
        _program("qemu-system-x86_64", "qemu-system-x86", "qemu", required=False,
                 version_args=("--version",)),
        _program("qemu-img", "qemu-utils", "qemu", required=False),
        Check("qemu", "debootstrap", found, "builds guest images" if found else "not found",
              "" if found else "apt-get install -y debootstrap", required=False),
    ]
    try:
        from sciagent_gym.providers.qemu.recipe import available_recipes
        from sciagent_gym.providers.qemu.store import list_images

        built = {i.name for i in list_images()}
        for name in available_recipes():
            checks.append(Check("qemu", f"image {name}", name in built,
                                "built" if name in built else "not built",
                                "" if name in built else f"sciagent-gym image build {name}",
                                required=False))
    except Exception as exc:  # a broken cache must not break the doctor
        checks.append(Check("qemu", "images", False, f"cannot list: {exc}", required=False))
    return checks


def format_checks(checks: list[Check]) -> str:
    width = max(len(c.name) for c in checks)
    lines = []
    for c in checks:
        mark = "ok  " if c.ok else ("MISS" if c.required else "miss")
        line = f"[{mark}] {c.group:<14} {c.name:<{width}}  {c.detail}"
        if c.fix:
            line += f"\n       -> {c.fix}"
        lines.append(line)
    missing = [c for c in checks if not c.ok and c.required]
    lines.append("")
    lines.append("all required components present" if not missing else
                 f"{len(missing)} required component(s) missing")
    return "\n".join(lines)
