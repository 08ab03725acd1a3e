"""Confined file access for the control server's file routes and for the host unpacking what a
server sent.

Paths come off the wire and directories hold files a hostile agent wrote. So every path must
lie under one of a few roots, spelled without ``..``; each component below the root is opened
relative to its parent with ``O_NOFOLLOW`` (a planted symlink fails the open instead of
redirecting it); only regular files are read, opened non-blocking (a FIFO must not hang the
server); archives hold only files and directories; sizes and counts are capped. Standard
library only (it runs in a bare guest). On Windows, which has no directory descriptors, the
same checks are made on paths (see :class:`_Dir`).
"""

from __future__ import annotations

import errno
import os
import stat
import tarfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import PureWindowsPath
from typing import BinaryIO

from sciagent_gym.errors import PathRefused, TreeTooLarge

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)
#: Directory descriptors and O_NOFOLLOW (POSIX); else path checks (Windows).
FD_WALK = bool(_NOFOLLOW) and os.open in os.supports_dir_fd
CHUNK = 1 << 20


@dataclass(frozen=True)
class TreeLimits:
    """How much one tree transfer may hold."""

    max_file_bytes: int = 256 << 20
    max_total_bytes: int = 1 << 30
    max_entries: int = 20_000
    max_depth: int = 32


def windows_unsafe(name: str) -> bool:
    """True for a name Windows resolves outside its directory (``C:x``, ``\\x``, ``a\\..``)."""
    p = PureWindowsPath(name)
    return bool(p.drive or p.root) or ".." in p.parts


def split_relative(name: str, windows: bool = False) -> list[str]:
    """The components of a relative name (a tar member, a path below a root); PathRefused
    for an absolute name, ``..``, NUL, or (``windows``) a drive or backslash escape."""
    if not name or name.startswith("/") or "\0" in name:
        raise PathRefused(f"{name!r} points outside the target directory")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts or (windows and windows_unsafe(name)):
        raise PathRefused(f"{name!r} points outside the target directory")
    return parts


class _Dir:
    """One opened directory; children are reached relative to it and never through a link.

    POSIX: a descriptor, every call ``dir_fd=`` relative with ``O_NOFOLLOW``. Windows: the
    path, each child checked by ``lstat`` not to be a link or junction before use (racy, but
    that platform has no directory descriptors)."""

    def __init__(self, path: str, fd: int | None) -> None:
        self.path, self.fd = path, fd

    @classmethod
    def open_root(cls, path: str) -> _Dir:
        if FD_WALK:
            return cls(path, os.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC))
        if not os.path.isdir(path):
            raise NotADirectoryError(path)
        return cls(path, None)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def _join(self, name: str) -> str:
        return os.path.join(self.path, name)

    def lstat(self, name: str) -> os.stat_result:
        if self.fd is not None:
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        return os.lstat(self._join(name))

    def _check_not_link(self, name: str) -> None:
        if self.fd is None:
            st = self.lstat(name)
            reparse = getattr(st, "st_file_attributes", 0) & 0x400  # REPARSE_POINT
            if stat.S_ISLNK(st.st_mode) or reparse:
                raise PathRefused(f"{self._join(name)} is a link")

    def child(self, name: str, create: bool = False, mode: int = 0o755,
              owner: tuple[int, int] | None = None) -> _Dir:
        """The subdirectory ``name`` (made if ``create``); PathRefused if it is a link."""
        try:
            return self._open_child(name)
        except FileNotFoundError:
            if not create:
                raise
        try:
            if self.fd is not None:
                os.mkdir(name, mode, dir_fd=self.fd)
            else:
                os.mkdir(self._join(name), mode)
        except FileExistsError:
            pass
        sub = self._open_child(name)
        if owner is not None and sub.fd is not None:
            os.fchown(sub.fd, *owner)
        return sub

    def _open_child(self, name: str) -> _Dir:
        if self.fd is None:
            self._check_not_link(name)
            if not os.path.isdir(self._join(name)):
                raise PathRefused(f"{self._join(name)} is not a directory")
            return _Dir(self._join(name), None)
        try:
            fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=self.fd)
        except FileNotFoundError:
            raise
        except OSError:
            raise PathRefused(f"{self._join(name)} is not a directory (or is a link)") from None
        return _Dir(self._join(name), fd)

    def open(self, name: str, flags: int, mode: int = 0o644) -> int:
        """A file descriptor for ``name``; a link in its place fails (ELOOP -> PathRefused)."""
        flags |= _NOFOLLOW | _CLOEXEC | _BINARY
        try:
            if self.fd is not None:
                return os.open(name, flags, mode, dir_fd=self.fd)
            if os.path.lexists(self._join(name)):
                self._check_not_link(name)
            return os.open(self._join(name), flags, mode)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK):  # EMLINK: BSD's O_NOFOLLOW
                raise PathRefused(f"{self._join(name)} is a symlink") from None
            raise

    def open_regular(self, name: str) -> int:
        """``name`` opened for reading, never blocking, if it is a regular file."""
        fd = self.open(name, os.O_RDONLY | _NONBLOCK)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise PathRefused(f"{self._join(name)} is not a regular file")
            if _NONBLOCK:
                os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def unlink(self, name: str) -> None:
        if self.fd is not None:
            os.unlink(name, dir_fd=self.fd)
        else:
            os.unlink(self._join(name))

    def rmdir(self, name: str) -> None:
        if self.fd is not None:
            os.rmdir(name, dir_fd=self.fd)
        else:
            os.rmdir(self._join(name))

    def rename(self, src: str, dst: str) -> None:
        if self.fd is not None:
            os.rename(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        else:
            os.replace(self._join(src), self._join(dst))

    def names(self) -> list[str]:
        return sorted(os.listdir(self.fd if self.fd is not None else self.path))

    def remove(self, name: str) -> None:
        """Remove ``name`` whatever it is, a directory with all it holds, following no link."""
        try:
            st = self.lstat(name)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(st.st_mode):
            sub = self._open_child(name)
            try:
                sub.empty()
            finally:
                sub.close()
            self.rmdir(name)
        else:
            self.unlink(name)

    def empty(self) -> None:
        for name in self.names():
            self.remove(name)


@contextmanager
def _opened(d: _Dir) -> Iterator[_Dir]:
    try:
        yield d
    finally:
        d.close()


class Confined:
    """File operations on absolute paths that must lie under one of ``roots``.

    ``owner`` (uid, gid; -1 keeps one) is given to every file and directory created, so that a
    server running as root leaves the programs' user owning what it wrote.
    """

    def __init__(self, roots: Sequence[str], owner: tuple[int, int] | None = None,
                 windows: bool = False) -> None:
        self.roots = sorted({r.rstrip("/") or "/" for r in roots}, key=len, reverse=True)
        self.owner, self.windows = owner, windows

    def locate(self, path: str) -> tuple[str, list[str]]:
        """The root ``path`` lies under and its components below it; PathRefused otherwise."""
        if not isinstance(path, str) or not path.startswith("/"):
            raise PathRefused(f"path must be absolute, got {path!r}")
        if self.windows and ("\\" in path or ":" in path):
            raise PathRefused(f"{path!r}: use '/' paths without a drive")
        parts = split_relative(path.lstrip("/") or ".", self.windows) if path.strip("/") else []
        for root in self.roots:
            root_parts = [p for p in root.split("/") if p]
            if parts[:len(root_parts)] == root_parts:
                return root, parts[len(root_parts):]
        raise PathRefused(f"{path} is outside the directories this server serves "
                          f"({', '.join(sorted(self.roots))})")

    def check(self, path: str) -> str:
        """``path`` if it lies under a root (lexically; for paths handed to programs)."""
        self.locate(path)
        return path

    @contextmanager
    def directory(self, path: str, create: bool = False) -> Iterator[_Dir]:
        """The directory ``path``, each component below its root opened without following a
        link (made with ``create``)."""
        root, parts = self.locate(path)
        d = _Dir.open_root(root)
        try:
            for name in parts:
                sub = d.child(name, create, owner=self.owner)
                d.close()
                d = sub
            yield d
        finally:
            d.close()

    @contextmanager
    def _parent(self, path: str, create: bool = False) -> Iterator[tuple[_Dir, str]]:
        root, parts = self.locate(path)
        if not parts:
            raise PathRefused(f"{path} is a directory this server serves, not a file")
        parent = "/".join([root.rstrip("/"), *parts[:-1]]) or "/"
        with self.directory(parent, create) as d:
            yield d, parts[-1]

    # -- single files --------------------------------------------------------------------
    def read_tail(self, path: str, max_bytes: int, remove: bool = False) -> bytes | None:
        """The last ``max_bytes`` of a regular file (None if it does not exist), then
        optionally remove it."""
        try:
            with self._parent(path) as (d, name):
                try:
                    fd = d.open_regular(name)
                except FileNotFoundError:
                    return None
                try:
                    size = os.fstat(fd).st_size
                    os.lseek(fd, max(size - max_bytes, 0), os.SEEK_SET)
                    data = _read_exactly(fd, min(size, max_bytes))
                finally:
                    os.close(fd)
                if remove:
                    d.unlink(name)
                return data
        except FileNotFoundError:
            return None

    def open_read(self, path: str) -> BinaryIO:
        """A regular file opened for reading (FileNotFoundError if absent)."""
        with self._parent(path) as (d, name):
            return os.fdopen(d.open_regular(name), "rb")

    def write(self, path: str, read: Callable[[int], bytes], length: int) -> None:
        """Write ``length`` bytes from ``read(n)`` to ``path``: into a new ``.part`` file beside
        it, then renamed over it (a link or FIFO at either name is replaced, not followed)."""
        with self._parent(path, create=True) as (d, name):
            part = f"{name}.part"
            d.remove(part)
            fd = d.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                with os.fdopen(fd, "wb") as out:
                    if self.owner is not None and d.fd is not None:
                        os.fchown(out.fileno(), *self.owner)
                    left = length
                    while left:
                        chunk = read(min(CHUNK, left))
                        if not chunk:
                            raise EOFError(f"body ended {left} bytes short")
                        out.write(chunk)
                        left -= len(chunk)
                d.rename(part, name)
            except BaseException:
                d.remove(part)
                raise

    # -- trees ---------------------------------------------------------------------------
    def write_tar(self, path: str, out: BinaryIO, limits: TreeLimits) -> None:
        """The directory ``path`` as an uncompressed tar on ``out`` (names relative to it):
        directories and regular files only; links, FIFOs, sockets and devices are left out.
        TreeTooLarge beyond ``limits``. A missing directory gives an empty archive."""
        with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
            try:
                with self.directory(path) as d:
                    _tar_dir(d, "", tar, limits, _Count(), 0)
            except FileNotFoundError:
                pass

    def read_tar(self, path: str, src: BinaryIO, limits: TreeLimits,
                 clear: bool = False) -> None:
        """Unpack an uncompressed tar into the directory ``path`` (made if missing; emptied
        first with ``clear``). See :func:`extract_tar`."""
        with self.directory(path, create=True) as d:
            if clear:
                d.empty()
            extract_tar(d, src, limits, self.owner, self.windows)


def unpack_into(directory: str, src: BinaryIO, limits: TreeLimits) -> None:
    """Empty the local ``directory`` (made if missing) and unpack the tar ``src`` into it with
    the checks of :func:`extract_tar` (the host side of a tree download)."""
    os.makedirs(directory, mode=0o700, exist_ok=True)
    with _opened(_Dir.open_root(directory)) as d:
        d.empty()
        extract_tar(d, src, limits)


def extract_tar(d: _Dir, src: BinaryIO, limits: TreeLimits,
                owner: tuple[int, int] | None = None, windows: bool = False) -> None:
    """Unpack the uncompressed tar ``src`` into ``d``: regular files and directories only,
    names relative without ``..``, no setuid bits, each file and the whole within
    ``limits``. Existing non-directories at a member's name are replaced, never written
    through. PathRefused or TreeTooLarge on the first bad member."""
    count = _Count()
    try:
        tar = tarfile.open(fileobj=src, mode="r:")  # no decompression: no bombs
    except tarfile.TarError as exc:
        raise ValueError(f"not a tar archive: {exc}") from None
    with tar:
        while True:
            try:
                member = tar.next()
            except tarfile.TarError as exc:
                raise ValueError(f"not a tar archive: {exc}") from None
            if member is None:
                break
            tar.members.clear()  # keep no index: memory stays flat whatever the count
            parts = split_relative(member.name, windows)
            if not parts:
                continue
            if not (member.isdir() or (member.isreg() and not member.issparse())):
                raise PathRefused(f"tar member {member.name!r} is not a regular file or "
                                  "directory")
            if len(parts) > limits.max_depth:
                raise TreeTooLarge(f"tar member {member.name!r} is nested too deep")
            count.add(member.size if member.isreg() else 0, member.name, limits)
            _extract_member(d, parts, member, tar, owner)


def _extract_member(d: _Dir, parts: list[str], member: tarfile.TarInfo,
                    tar: tarfile.TarFile, owner: tuple[int, int] | None) -> None:
    mode = member.mode & 0o777
    opened: list[_Dir] = []
    try:
        cur = d
        for name in parts[:-1]:
            cur = cur.child(name, create=True, owner=owner)
            opened.append(cur)
        name = parts[-1]
        if member.isdir():
            if not _is_dir(cur, name):
                cur.remove(name)
            sub = cur.child(name, create=True, mode=mode | 0o700, owner=owner)
            sub.close()
            return
        cur.remove(name)
        fd = cur.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with os.fdopen(fd, "wb") as out:
            data = tar.extractfile(member)
            assert data is not None
            left = member.size
            while left:
                chunk = data.read(min(CHUNK, left))
                if not chunk:
                    raise ValueError(f"tar member {member.name!r} is truncated")
                out.write(chunk)
                left -= len(chunk)
            if cur.fd is not None:
                if owner is not None:
                    os.fchown(out.fileno(), *owner)
                os.fchmod(out.fileno(), mode)
    finally:
        for sub in reversed(opened):
            sub.close()


def _is_dir(d: _Dir, name: str) -> bool:
    try:
        return stat.S_ISDIR(d.lstat(name).st_mode)
    except FileNotFoundError:
        return False


class _Count:
    """Entries and bytes seen so far in one transfer."""

    def __init__(self) -> None:
        self.entries = self.bytes = 0

    def add(self, size: int, name: str, limits: TreeLimits) -> None:
        self.entries += 1
        self.bytes += size
        if size > limits.max_file_bytes:
            raise TreeTooLarge(f"{name} holds {size} bytes, over the limit of "
                               f"{limits.max_file_bytes} a file")
        if self.bytes > limits.max_total_bytes:
            raise TreeTooLarge(f"the tree holds over {limits.max_total_bytes} bytes")
        if self.entries > limits.max_entries:
            raise TreeTooLarge(f"the tree holds over {limits.max_entries} entries")


def _tar_dir(d: _Dir, rel: str, tar: tarfile.TarFile, limits: TreeLimits, count: _Count,
             depth: int) -> None:
    for name in d.names():
        arc = f"{rel}/{name}" if rel else name
        try:
            st = d.lstat(name)
        except FileNotFoundError:
            continue  # removed meanwhile
        if stat.S_ISDIR(st.st_mode):
            if depth + 1 > limits.max_depth:
                raise TreeTooLarge(f"{arc} is nested too deep")
            count.add(0, arc, limits)
            try:
                sub = d.child(name)
            except (FileNotFoundError, PathRefused):
                continue  # replaced by something else meanwhile
            with _opened(sub):
                info = tarfile.TarInfo(arc)
                info.type, info.mode, info.mtime = tarfile.DIRTYPE, st.st_mode & 0o777, \
                    int(st.st_mtime)
                tar.addfile(info)
                _tar_dir(sub, arc, tar, limits, count, depth + 1)
        elif stat.S_ISREG(st.st_mode):
            try:
                fd = d.open_regular(name)
            except (FileNotFoundError, PathRefused):
                continue
            with os.fdopen(fd, "rb") as f:
                size = os.fstat(fd).st_size
                count.add(size, arc, limits)
                info = tarfile.TarInfo(arc)
                info.size, info.mode, info.mtime = size, st.st_mode & 0o777, int(st.st_mtime)
                tar.addfile(info, _Exactly(f, size))
        # links, FIFOs, sockets, devices: not part of a work directory's contents


class _Exactly:
    """``size`` bytes of ``f``: cut if it grew since its size was taken, zero-padded if it
    shrank (the archive's header already promised ``size``)."""

    def __init__(self, f: BinaryIO, size: int) -> None:
        self.f, self.left = f, size

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        data = self.f.read(n)
        data += b"\0" * (n - len(data))
        self.left -= n
        return data


def _read_exactly(fd: int, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        chunk = os.read(fd, n - len(out))
        if not chunk:
            break
        out += chunk
    return bytes(out)
