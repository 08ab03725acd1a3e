"""Snapshot restore: copying the tool's snapshot home vs remounting an overlayfs (medians).

    python benchmarks/snapshot_restore.py --n 50

Both restore the same state: the snapshot home plus what an episode wrote (here a 256 KB image
and a results table). The overlay needs mount privileges (root or a user namespace); the copy
needs none. Ratios are overlay / copy, measured in the same process.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from _stats import median_ms

from sciagent_gym.tools import load_adapter


def _dirty(home: Path) -> None:
    work = home / "work"
    work.mkdir(parents=True, exist_ok=True)
    (work / "nuclei.tif").write_bytes(os.urandom(256 * 1024))
    (work / "results.csv").write_text(" ,Area\n1,300\n" * 50)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--tool", default="imagej")
    args = parser.parse_args()
    snapshot = load_adapter(args.tool).snapshot_dir
    root = Path(tempfile.mkdtemp(prefix="sciagent-restore-"))
    try:
        home = root / "copy-home"

        def copy_restore() -> None:
            _dirty(home)
            shutil.rmtree(home)
            shutil.copytree(snapshot, home, symlinks=True)

        shutil.copytree(snapshot, home)
        copy_ms = median_ms(copy_restore, args.n, warmup=0)
        print(f"copy restore     median {copy_ms:7.2f} ms")

        upper, work, merged = root / "upper", root / "ovl-work", root / "merged"
        for d in (upper, work, merged):
            d.mkdir()
        opts = f"lowerdir={snapshot},upperdir={upper},workdir={work}"

        def mount() -> None:
            subprocess.run(["mount", "-t", "overlay", "overlay", "-o", opts, str(merged)],
                           check=True, capture_output=True)

        def overlay_restore() -> None:
            _dirty(merged)
            subprocess.run(["umount", str(merged)], check=True)
            shutil.rmtree(upper)
            shutil.rmtree(work)
            upper.mkdir()
            work.mkdir()
            mount()

        try:
            mount()
        except (subprocess.CalledProcessError, OSError) as exc:
            print(f"overlayfs not available here ({exc}); copy is the only option")
            return
        try:
            ovl_ms = median_ms(overlay_restore, args.n, warmup=0)
        finally:
            subprocess.run(["umount", str(merged)], capture_output=True)
        print(f"overlay restore  median {ovl_ms:7.2f} ms   ratio overlay/copy "
              f"{ovl_ms / copy_ms:5.2f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
