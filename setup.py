"""Packaging by walking the tree, so a tool needs no line here.

``envs/`` and ``task_specs/`` live at the top of the repository and ship inside the package as
``sciagent_gym.envs`` and ``sciagent_gym.task_specs`` (``vm_images/`` as
``sciagent_gym.vm_images``).
Every importable folder is a package; every file that is not one of its modules (tool.json,
task specs, code run inside a program, snapshot homes with their dot-files) is its package data.
``tests/integration/test_packaging.py`` builds a wheel and checks what it holds.
"""

from __future__ import annotations

import os

from setuptools import setup

ROOTS = {"sciagent_gym": "sciagent_gym", "sciagent_gym.envs": "envs",
         "sciagent_gym.task_specs": "task_specs", "sciagent_gym.vm_images": "vm_images"}
#: a tool's own tests (envs/<tool>/tests/) stay in the repository, out of the wheel
SKIP_DIRS = {"__pycache__", "tests"}
SKIP_SUFFIXES = (".pyc", ".pyo")


def walk(package: str, folder: str, packages: list[str], data: dict[str, list[str]]) -> None:
    """Collect the packages under ``folder`` and the data files of each (nested roots skipped).

    Every folder whose path is importable (identifiers all the way down) is a package, with or
    without ``__init__.py``, as setuptools wants for folders of data; a folder that is not
    (``snapshot/home/.imagej``) belongs, with its files, to the nearest package above it.
    """
    for current, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS
                         and os.path.join(current, d) not in ROOTS.values())
        parts = [] if current == folder else os.path.relpath(current, folder).split(os.sep)
        depth = len(parts)
        while depth and not all(p.isidentifier() for p in parts[:depth]):
            depth -= 1
        owner = ".".join([package, *parts[:depth]])
        owner_dir = os.path.join(folder, *parts[:depth])
        is_package = depth == len(parts)
        if is_package:
            packages.append(owner)
        for name in sorted(files):
            if name.endswith(SKIP_SUFFIXES) or (is_package and name.endswith(".py")):
                continue
            data.setdefault(owner, []).append(
                os.path.relpath(os.path.join(current, name), owner_dir))


def collect() -> tuple[list[str], dict[str, list[str]]]:
    packages: list[str] = []
    data: dict[str, list[str]] = {}
    for package, folder in ROOTS.items():
        walk(package, folder, packages, data)
    return packages, data


PACKAGES, PACKAGE_DATA = collect()
setup(packages=PACKAGES, package_dir=ROOTS, package_data=PACKAGE_DATA)
