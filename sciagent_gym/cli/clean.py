"""``sciagent-gym clean``: remove what killed processes left behind.

An interpreter ended by SIGKILL (an OOM kill, a Ray worker restarted, ``kill -9``) cannot run
its ``close()``: its programs end with it (PDEATHSIG, the zone's pid namespace), but its
sandbox directories, the sandbox's tmpfs home mount, its zone cgroups and a QEMU overlay stay.
The next sandbox started on the machine sweeps them; this command does it now, e.g. after a
collection run on a cluster node. Only what is named after a process that is gone is touched.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path


def add_clean_parser(sub) -> None:
    p = sub.add_parser("clean", help="remove sandboxes, mounts, cgroups and VM folders left "
                                     "by killed processes")
    p.add_argument("-n", "--dry-run", action="store_true", help="only list what would go")
    p.add_argument("--tmp", help="the temp dir to sweep (default: the system's)")
    p.set_defaults(func=cmd_clean)


def cmd_clean(args: argparse.Namespace) -> int:
    from sciagent_gym.providers.local.sandbox import sweep_stale
    from sciagent_gym.providers.qemu.vm import sweep_stale_dirs

    found = sweep_stale(args.tmp, dry_run=args.dry_run)
    found += [str(d) for d in sweep_stale_dirs(Path(args.tmp or tempfile.gettempdir()),
                                               dry_run=args.dry_run)]
    verb = "would remove" if args.dry_run else "removed"
    for path in found:
        print(f"{verb} {path}")
    print(f"{verb} {len(found)} left by processes that are gone")
    return 0
