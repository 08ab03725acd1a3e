"""Host-side file operations on directories a sandbox can write, safe against its tricks.

The host (often root) copies task inputs into a sandbox's home and copies the agent's work out
for scoring. A hostile agent can plant symlinks (the host would write through them onto host
files), FIFOs (a plain read blocks forever), devices, sparse terabyte files, millions of tiny
files. Every walk here opens each component relative to its parent with ``O_NOFOLLOW``, copies
regular files only, and stops at size and count limits.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK = 1 << 20


@dataclass(frozen=True)
class FreezeLimits:
    """How much of a work directory the evaluator will look at."""

    max_file_bytes: int = 256 << 20
    max_total_bytes: int = 1 << 30
    max_files: int = 10_000
    max_depth: int = 32


@dataclass
class FreezeReport:
    """What a freeze copied and what it left out (and why), for the saved state."""

    files: int = 0
    bytes: int = 0
    skipped: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"files": self.files, "bytes": self.bytes, "skipped": dict(self.skipped)}


def freeze_copy(src: Path, dst: Path, limits: FreezeLimits | None = None) -> FreezeReport:
    """Copy the tree under ``src`` into the new directory ``dst``: directories and regular
    files only (no symlinks, FIFOs, sockets or devices), never following a link, each file
    at most ``max_file_bytes`` (larger ones are left out, not cut: a cut file would parse as
    something else), at most ``max_files`` files and ``max_total_bytes`` in all. Holes in
    sparse files are read as zeros, so a sparse file counts at its full size."""
    limits = limits or FreezeLimits()
    report = FreezeReport()
    dst.mkdir(mode=0o700)
    try:
        root_fd = os.open(src, _DIR_FLAGS)
    except OSError as exc:
        report.skipped["."] = f"unreadable work directory: {exc.strerror}"
        return report
    try:
        _freeze_dir(root_fd, dst, "", limits, report, 0)
    finally:
        os.close(root_fd)
    return report


def _freeze_dir(dir_fd: int, dst: Path, rel: str, limits: FreezeLimits, report: FreezeReport,
                depth: int) -> None:
    try:
        names = sorted(os.listdir(dir_fd))
    except OSError as exc:
        report.skipped[rel or "."] = f"unreadable directory: {exc.strerror}"
        return
    for name in names:
        path = f"{rel}/{name}" if rel else name
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            continue  # removed meanwhile
        if stat.S_ISDIR(st.st_mode):
            if depth + 1 > limits.max_depth:
                report.skipped[path] = "directory nested too deep"
                continue
            try:
                sub_fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
            except OSError as exc:
                report.skipped[path] = f"unreadable directory: {exc.strerror}"
                continue
            try:
                (dst / name).mkdir(mode=0o700)
                _freeze_dir(sub_fd, dst / name, path, limits, report, depth + 1)
            finally:
                os.close(sub_fd)
        elif not stat.S_ISREG(st.st_mode):
            report.skipped[path] = "not a regular file (symlink, FIFO, socket or device)"
        elif report.files >= limits.max_files:
            report.skipped[path] = f"more than {limits.max_files} files"
        elif st.st_size > limits.max_file_bytes:
            report.skipped[path] = f"larger than {limits.max_file_bytes} bytes ({st.st_size})"
        elif report.bytes + st.st_size > limits.max_total_bytes:
            report.skipped[path] = f"the work directory exceeds {limits.max_total_bytes} bytes"
        else:
            copied = _copy_regular(dir_fd, name, dst / name, limits.max_file_bytes)
            if copied is None:
                report.skipped[path] = "changed while being copied"
            else:
                report.files += 1
                report.bytes += copied


def _copy_regular(dir_fd: int, name: str, dest: Path, cap: int) -> int | None:
    """Copy one regular file opened without following links; None when it is no longer a
    regular file or grew past ``cap`` while copied."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        os.set_blocking(fd, True)
        total = 0
        with open(dest, "xb") as out:
            os.fchmod(out.fileno(), 0o600)
            while True:
                chunk = os.read(fd, min(_CHUNK, cap + 1 - total))
                if not chunk:
                    return total
                total += len(chunk)
                if total > cap:
                    out.close()
                    dest.unlink()
                    return None
                out.write(chunk)
    finally:
        os.close(fd)


def copy_into(src: Path, dst: Path, uid: int | None = None, gid: int | None = None) -> None:
    """Copy the trusted tree ``src`` into ``dst`` (a directory a sandbox may have written),
    creating every file and directory anew relative to its opened parent: a symlink or a
    file planted in ``dst`` under the same name is replaced, never written through. Copies
    are owned by ``uid``/``gid`` when given (root hands the inputs to the sandbox's user)."""
    root_fd = os.open(dst, _DIR_FLAGS)
    try:
        _copy_into_dir(src, root_fd, uid, gid)
    finally:
        os.close(root_fd)


def _copy_into_dir(src: Path, dir_fd: int, uid: int | None, gid: int | None) -> None:
    for entry in os.scandir(src):
        name = entry.name
        _remove_entry(dir_fd, name, keep_dir=entry.is_dir(follow_symlinks=False))
        if entry.is_symlink():
            os.symlink(os.readlink(entry.path), name, dir_fd=dir_fd)
            if uid is not None:
                os.chown(name, uid, gid, dir_fd=dir_fd, follow_symlinks=False)
        elif entry.is_dir():
            try:
                os.mkdir(name, 0o775, dir_fd=dir_fd)
            except FileExistsError:
                pass
            sub_fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
            try:
                if uid is not None:
                    os.fchown(sub_fd, uid, gid)
                os.fchmod(sub_fd, 0o775)
                _copy_into_dir(Path(entry.path), sub_fd, uid, gid)
            finally:
                os.close(sub_fd)
        elif entry.is_file():
            mode = 0o775 if os.stat(entry.path).st_mode & 0o111 else 0o664
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, mode, dir_fd=dir_fd)
            with open(fd, "wb") as out, open(entry.path, "rb") as inp:
                shutil.copyfileobj(inp, out, _CHUNK)
                if uid is not None:
                    os.fchown(out.fileno(), uid, gid)
                os.fchmod(out.fileno(), mode)


def _remove_entry(dir_fd: int, name: str, keep_dir: bool) -> None:
    """Remove ``name`` under ``dir_fd`` unless it is a real directory and ``keep_dir``."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        if keep_dir:
            return
        sub_fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        try:
            empty_dir_fd(sub_fd)
        finally:
            os.close(sub_fd)
        os.rmdir(name, dir_fd=dir_fd)
    else:
        os.unlink(name, dir_fd=dir_fd)


def empty_dir_fd(dir_fd: int) -> None:
    """Remove everything inside the opened directory, following no link."""
    for name in os.listdir(dir_fd):
        _remove_entry(dir_fd, name, keep_dir=False)


def empty_dir(path: Path) -> None:
    """Remove everything inside ``path`` (which stays), following no link."""
    fd = os.open(path, _DIR_FLAGS)
    try:
        empty_dir_fd(fd)
    finally:
        os.close(fd)
