"""``sciagent-gym image build|list``: guest images for the QEMU provider."""

from __future__ import annotations

import argparse
import json
import sys
import time


def _cmd_image_build(args: argparse.Namespace) -> int:
    from sciagent_gym.providers.qemu.build import build_image

    t0 = time.monotonic()
    image = build_image(args.name, cache_dir=args.cache, progress=not args.quiet,
                        force=args.force)
    if not args.quiet:
        stages = ", ".join(f"{name} {info['seconds']:.1f} s"
                           for name, info in image.meta["stages"].items())
        print(f"image {image.name}: {image.disk} ({_size(image.disk_bytes)}) in "
              f"{time.monotonic() - t0:.1f} s (last builds: {stages})")
    return 0


def _cmd_image_list(args: argparse.Namespace) -> int:
    from sciagent_gym.providers.qemu.recipe import available_recipes
    from sciagent_gym.providers.qemu.store import list_images

    images = list_images(args.cache)
    if args.json:
        print(json.dumps([{"name": i.name, "built_at": i.built_at, "disk": str(i.disk),
                           "disk_bytes": i.disk_bytes, "directory": str(i.directory),
                           "kernel": str(i.kernel), "initrd": str(i.initrd),
                           "packages": i.meta.get("packages", []),
                           "stages": i.meta.get("stages", {})} for i in images], indent=2))
        return 0
    if not images:
        recipes = ", ".join(available_recipes()) or "none"
        print(f"no guest images built (recipes: {recipes}); build one with "
              "'sciagent-gym image build NAME'", file=sys.stderr)
        return 0
    print(f"{'name':<12} {'built at':<25} {'base.qcow2':>10}  path")
    for i in images:
        print(f"{i.name:<12} {i.built_at:<25} {_size(i.disk_bytes):>10}  {i.directory}")
    return 0


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def add_image_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``image build`` and ``image list`` to the top-level ``sciagent-gym`` parser."""
    p = subparsers.add_parser("image", help="build and list QEMU guest images")
    sub = p.add_subparsers(dest="image_command", required=True)

    b = sub.add_parser("build", help="build (or bring up to date) the guest image NAME")
    b.add_argument("name", help="tool with a guest image recipe (e.g. imagej)")
    b.add_argument("--force", action="store_true", help="redo every stage")
    b.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    b.add_argument("--cache", help="images folder (default: $SCIAGENT_CACHE/images or "
                                   "~/.cache/sciagent-gym/images)")
    b.set_defaults(func=_cmd_image_build)

    ls = sub.add_parser("list", help="built guest images")
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    ls.add_argument("--cache", help="images folder")
    ls.set_defaults(func=_cmd_image_list)
    return p
