"""PyMOL sessions read by a PyMOL the agent never touched.

Two readers share the restricted session loader below: the ``pymol_session`` getter (a
``.pse`` the agent saved) and the state dump (:func:`dump_from_session`). The running PyMOL
has a Python console, and anything computed inside it can be rebound from there: a dump that
called ``cmd.count_atoms`` in the live program would report whatever a console's
``cmd.count_atoms = lambda *a, **k: 42`` says. So the live program only pickles its session
(``cmd.get_session()``, the data ``File > Save Session`` writes), and a fresh headless PyMOL in
a throwaway sandbox loads that data through the restricted unpickler and runs the dump code
there. A console can still hand over a different session, but only as data: a session whose
objects, colours and representations are the goal state, which is the work.
"""

from __future__ import annotations

import base64
import binascii
import os
import tempfile
import zlib
from pathlib import Path
from typing import Any

#: Largest session file read (real ones are kilobytes to a few megabytes).
MAX_SESSION_BYTES = 64 * 1024 * 1024

#: Stdlib-only source, run inside the sandbox before PyMOL sees any of the file: a ``.pse``
#: is a pickle, and ``cmd.load`` would unpickle it with the stock unpickler (any callable).
#: This one resolves only the two globals PyMOL's own ``cmd.save`` writes (checked on
#: sessions saved by PyMOL 2.x/3.x, plain, ``pse_binary_dump`` and ``pse_export_version``
#: 1.7): ``pymol.Session_Storage`` (a plain attribute bag) and ``_codecs.encode`` (how
#: protocols 1-2 store bytes; accepted only as str -> latin-1 bytes). The result must be a
#: dict and is handed to ``cmd.set_session``; its ``wizard`` entry (a nested pickle that
#: PyMOL would load with the stock unpickler) is dropped.
SESSION_LOADER = r"""
import bz2
import io
import pickle
import zlib

MAX_SESSION = 256 << 20


def _latin1(text, encoding="latin1", errors="strict"):
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1") \
            or errors != "strict":
        raise pickle.UnpicklingError("unexpected _codecs.encode call")
    return text.encode("latin1")


def _session_storage():
    import pymol
    return pymol.Session_Storage


_ALLOWED = {("pymol", "Session_Storage"): _session_storage,
            ("_codecs", "encode"): lambda: _latin1}


class SessionUnpickler(pickle._Unpickler):
    def find_class(self, module, name):
        make = _ALLOWED.get((module, name))
        if make is None:
            raise pickle.UnpicklingError(
                "global %s.%s is not allowed in a session" % (module, name))
        return make()

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("persistent ids are not allowed in a session")

    def _decode_string(self, value):  # as chempy.pkl: printable ASCII -> str, else bytes
        if all(8 < b < 127 for b in value):
            return value.decode("ascii")
        return value


def _inflate(decompressor, data):
    out = decompressor.decompress(data, MAX_SESSION + 1)
    if len(out) > MAX_SESSION:
        raise ValueError("the session decompresses to more than %d bytes" % MAX_SESSION)
    return out


def session_data(data):
    if data[:2] == b"\x1f\x8b":  # PyMOL reads .pze and gzipped sessions too
        data = _inflate(zlib.decompressobj(31), data)
    elif data[:2] == b"BZ" and data[4:10] == b"1AY&SY":
        data = _inflate(bz2.BZ2Decompressor(), data)
    session = SessionUnpickler(io.BytesIO(data)).load()
    if not isinstance(session, dict):
        raise TypeError("not a PyMOL session (a %s)" % type(session).__name__)
    session.pop("wizard", None)
    return session


def load_session_data(data, cmd):
    if len(data) > MAX_SESSION:
        raise ValueError("session larger than %d bytes" % MAX_SESSION)
    cmd.set_session(session_data(data))


def load_session(path, cmd):
    with open(path, "rb") as fh:
        load_session_data(fh.read(MAX_SESSION + 1), cmd)
"""

#: Run inside the live PyMOL (the adapter's request namespace has ``cmd``): its session, as
#: ``cmd.save`` would pickle it, to ``PATH`` in the zone's /tmp. Not ``cmd.save`` itself: a
#: ``.pse`` save retitles the main window (``PyMOL (file.pse)``), which the agent would see.
SAVE_SESSION = """\
import pickle as _pickle
with open({path!r}, "wb") as _fh:
    _pickle.dump(cmd.get_session(), _fh, 1)
__out__ = "saved"
"""

#: The channel client that hands the pickled session over (sys.argv[1]: its path): a regular
#: file, never a link or a FIFO, read up to the limit, removed, printed compressed in base64
#: (the client's stdout is its reply through the sandbox helper; at most 2 MiB).
SESSION_CLIENT = """\
import base64, os, stat, sys, zlib
path, limit = sys.argv[1], int(sys.argv[2])
fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
try:
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        sys.exit("the session is not a regular file")
    chunks, size = [], 0
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        size += len(chunk)
        if size > limit:
            sys.exit("the session is larger than %d bytes" % limit)
        chunks.append(chunk)
finally:
    os.close(fd)
    os.unlink(path)
sys.stdout.write(base64.b64encode(zlib.compress(b"".join(chunks), 6)).decode("ascii"))
"""


def session_bytes(reply: str) -> bytes:
    """The pickled session from :data:`SESSION_CLIENT`'s reply (bounded inflation)."""
    try:
        packed = base64.b64decode(reply.strip(), validate=True)
        inflate = zlib.decompressobj()
        data = inflate.decompress(packed, MAX_SESSION_BYTES + 1)
    except (binascii.Error, zlib.error) as exc:
        raise ValueError(f"the session reply is not compressed base64: {exc}") from None
    if len(data) > MAX_SESSION_BYTES or inflate.unconsumed_tail:
        raise ValueError(f"the session is larger than {MAX_SESSION_BYTES} bytes")
    return data


def dump_from_session(data: bytes, state_code: str, timeout: float = 60.0,
                      warm: object | None = None) -> Any:
    """What ``state_code`` (which leaves its result in ``__out__``) reports on the pickled
    session ``data``, run in a fresh headless PyMOL in a throwaway sandbox.

    With ``warm`` (an owner: the env's provider), that PyMOL is one started ahead of need for
    the owner, the session handed over on its stdin (:func:`.headless.run_headless_stdin`);
    otherwise, or for a session over :data:`MAX_SESSION_BYTES`, it is started now and shown
    the session as a file."""
    from sciagent_gym.envs.pymol.data import run_headless_file
    from sciagent_gym.envs.pymol.headless import run_headless_stdin

    if warm is not None and len(data) <= MAX_SESSION_BYTES:
        code = f"{SESSION_LOADER}\nload_session_data(_data, cmd)\n{state_code}\nout = __out__\n"
        return run_headless_stdin(code, data, timeout=timeout, warm=warm)
    code = f"{SESSION_LOADER}\nload_session(sys.argv[1], cmd)\n{state_code}\nout = __out__\n"
    fd, name = tempfile.mkstemp(prefix="sciagent-pymol-session-", suffix=".pse")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        return run_headless_file(code, str(Path(name)), timeout=timeout)
    finally:
        os.unlink(name)
