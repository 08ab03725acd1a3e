"""The evaluator against hostile files: size limits on every parse, and the PyMOL session
reader unpickling nothing but data in a throwaway sandbox (docs/design.md, section 2).

Bomb files are parsed in a child interpreter (under an address-space limit, so that a
regression cannot take the machine down), whose peak RSS growth is measured.
"""

from __future__ import annotations

import gzip
import json
import os
import pickle
import socket
import struct
import subprocess
import sys
import time
import uuid
import wave
import zlib
from pathlib import Path

import numpy as np
import pytest
from helpers import requires
from PIL import Image

from sciagent_gym.errors import SandboxError
from sciagent_gym.evaluation import (
    GETTERS,
    Criterion,
    FinalState,
    GetterError,
    evaluate,
    isolated,
    sandbox_process,
)
from sciagent_gym.providers.local import sandbox
from sciagent_gym.tools import load_tool_getters

for _tool in ("ds9", "praat", "pymol", "qgis", "qupath"):
    load_tool_getters(_tool)

HAS_BWRAP = sandbox.bwrap_problem() is None
needs_bwrap = pytest.mark.skipif(not HAS_BWRAP, reason=f"no sandbox: {sandbox.bwrap_problem()}")


def needs_pymol(test):
    """PyMOL (whose own Python parses the files) in a working sandbox."""
    return needs_bwrap(requires("/usr/bin/python3", tool="pymol")(test))


#: Peak RSS a refused or bounded parse may add (loose: the bombs asked for gigabytes).
RSS_BOUND_MB = 200
CHILD = """
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
from pathlib import Path
import numpy, PIL.Image, tifffile, wave
from sciagent_gym.evaluation import GETTERS, FinalState, GetterError
from sciagent_gym.tools import load_tool_getters
for tool in ("ds9", "praat", "pymol", "qgis", "qupath"):
    load_tool_getters(tool)
getter, work, params = json.loads(sys.argv[1])
state = FinalState(work_dir=Path(work))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.monotonic()
try:
    GETTERS[getter](state, **params)
    outcome = "ok"
except GetterError as exc:
    outcome = "GetterError: %s" % exc
except BaseException as exc:
    outcome = "%s: %s" % (type(exc).__name__, exc)
grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
print(json.dumps([outcome, grew, time.monotonic() - start]))
"""


def parse_in_child(work: Path, getter: str, **params) -> tuple[str, float, float]:
    """(outcome, peak RSS growth in MB, seconds) of one getter call in a fresh interpreter."""
    res = subprocess.run([sys.executable, "-c", CHILD, json.dumps([getter, str(work), params])],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    outcome, grew, seconds = json.loads(res.stdout.strip().splitlines()[-1])
    return outcome, grew, seconds


def assert_refused(result: tuple[str, float, float], *needles: str) -> None:
    outcome, grew, seconds = result
    assert outcome.startswith("GetterError"), outcome
    for needle in needles:
        assert needle in outcome, outcome
    assert grew < RSS_BOUND_MB, f"peak RSS grew {grew:.0f} MB: {outcome}"
    assert seconds < 10, f"took {seconds:.1f} s: {outcome}"


# -- crafted files ------------------------------------------------------------------------
def tiff_bytes(width: int, height: int, strip: bytes, compression: int = 1, pages: int = 1,
               loop: bool = False) -> bytes:
    """A little-endian classic TIFF: the strip, then ``pages`` chained 8-bit grey pages that
    all use it (the last one pointing back at the first with ``loop``)."""
    tags = [(256, 4, width), (257, 4, height), (258, 3, 8), (259, 3, compression),
            (262, 3, 1), (273, 4, 8), (277, 3, 1), (278, 4, height), (279, 4, len(strip))]
    first = 8 + len(strip) + len(strip) % 2
    size = 2 + 12 * len(tags) + 4
    out = bytearray(b"II*\0" + struct.pack("<I", first) + strip + bytes(len(strip) % 2))
    for i in range(pages):
        out += struct.pack("<H", len(tags))
        for tag, typ, value in tags:
            out += struct.pack("<HHIHH" if typ == 3 else "<HHII", tag, typ, 1, value,
                               *([0] if typ == 3 else []))
        last = i == pages - 1
        out += struct.pack("<I", (first if loop else 0) if last else first + (i + 1) * size)
    return bytes(out)


def png_bytes(width: int, height: int) -> bytes:
    """A valid PNG header declaring ``width`` x ``height`` grey pixels, with a tiny IDAT."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + \
            struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) +
            chunk(b"IDAT", zlib.compress(b"\0" * 1000)) + chunk(b"IEND", b""))


def wav_header(frames: int, channels: int = 1, rate: int = 44100) -> bytes:
    """A 16-bit PCM WAV header whose data chunk declares ``frames`` frames."""
    data = frames * channels * 2
    return (b"RIFF" + struct.pack("<I", min(36 + data, 0xFFFFFFFF)) + b"WAVE" +
            b"fmt " + struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * channels * 2,
                                  channels * 2, 16) +
            b"data" + struct.pack("<I", min(data, 0xFFFFFFFF)))


# -- images -------------------------------------------------------------------------------
def test_tiff_with_huge_declared_size_is_refused_before_allocating(tmp_path):
    (tmp_path / "bomb.tif").write_bytes(tiff_bytes(100_000, 100_000, b"\0" * 1000))
    assert_refused(parse_in_child(tmp_path, "image_info", path="bomb.tif"),
                   "bomb.tif", "limit of")


def test_tiff_whose_deflate_strip_inflates_to_a_gigabyte_stays_small(tmp_path):
    """A 100x100 page whose compressed strip inflates to 256 MiB (a 260 KB file):
    tifffile's fallback codec would inflate all of it; the bounded reader does not."""
    comp = zlib.compressobj(9)
    strip = b"".join(comp.compress(bytes(1 << 24)) for _ in range(16)) + comp.flush()
    assert len(strip) < 300_000
    (tmp_path / "zip.tif").write_bytes(tiff_bytes(100, 100, strip, compression=8))
    outcome, grew, seconds = parse_in_child(tmp_path, "image_stat", path="zip.tif",
                                            stat="width")
    assert outcome in ("ok",) or outcome.startswith("GetterError"), outcome
    assert grew < RSS_BOUND_MB and seconds < 10, (outcome, grew, seconds)


def test_tiff_page_loops_and_page_floods_are_refused(tmp_path):
    (tmp_path / "loop.tif").write_bytes(tiff_bytes(4, 4, bytes(16), pages=3, loop=True))
    with pytest.raises(GetterError, match="loop"):
        GETTERS["image_info"](FinalState(work_dir=tmp_path), "loop.tif")
    (tmp_path / "flood.tif").write_bytes(tiff_bytes(1, 1, b"\0", pages=20_000))
    with pytest.raises(GetterError, match="page count"):
        GETTERS["image_info"](FinalState(work_dir=tmp_path), "flood.tif")
    (tmp_path / "few.tif").write_bytes(tiff_bytes(3, 2, bytes(range(6)), pages=5))
    info = GETTERS["image_info"](FinalState(work_dir=tmp_path), "few.tif")
    assert (info["width"], info["height"], info["n_frames"], info["max"]) == (3, 2, 5, 5.0)


@pytest.mark.parametrize(("getter", "params"), [
    ("image_info", {}),
    ("ds9_png_content", {"reference_path": "/nonexistent/gold.npy"}),
    ("pymol_figure", {"reference_path": "/nonexistent/gold.tif"}),
])
def test_png_with_huge_declared_size_is_refused_by_every_image_getter(tmp_path, getter, params):
    (tmp_path / "bomb.png").write_bytes(png_bytes(100_000, 100_000))
    assert_refused(parse_in_child(tmp_path, getter, path="bomb.png", **params), "bomb.png")


def test_png_just_over_the_pixel_limit_is_refused_and_under_it_read(tmp_path):
    (tmp_path / "big.png").write_bytes(png_bytes(8000, 7000))  # 56 megapixels
    assert_refused(parse_in_child(tmp_path, "image_info", path="big.png"),
                   "pixel count 56000000", "limit of 50000000")
    Image.fromarray(np.full((60, 80), 7, np.uint8)).save(tmp_path / "ok.png")
    info = GETTERS["image_info"](FinalState(work_dir=tmp_path), "ok.png")
    assert (info["width"], info["height"], info["mean"]) == (80, 60, 7.0)


def test_pil_never_opens_formats_outside_the_whitelist(tmp_path):
    """EPS would make PIL run Ghostscript on the agent's PostScript."""
    (tmp_path / "x.eps").write_bytes(b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\n"
                                     b"showpage\n")
    with pytest.raises(GetterError, match="cannot read image"):
        GETTERS["image_info"](FinalState(work_dir=tmp_path), "x.eps")


# -- sound --------------------------------------------------------------------------------
def test_wav_declaring_hours_of_audio_is_refused(tmp_path):
    (tmp_path / "long.wav").write_bytes(wav_header(2_000_000_000) + bytes(4096))
    assert_refused(parse_in_child(tmp_path, "praat_wav", path="long.wav"),
                   "long.wav", "declared decoded sound size")


def test_sparse_wav_is_refused_by_its_declared_size(tmp_path):
    path = tmp_path / "sparse.wav"
    frames = 100 << 20  # 200 MiB of 16-bit samples on disk (a hole), 800 MiB as float64
    path.write_bytes(wav_header(frames))
    os.truncate(path, path.stat().st_size + frames * 2)
    assert_refused(parse_in_child(tmp_path, "praat_wav", path="sparse.wav"), "sparse.wav")


def test_small_wav_still_reads(tmp_path):
    with wave.open(str(tmp_path / "ok.wav"), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes((np.sin(np.arange(8000) / 5) * 8000).astype("<i2").tobytes())
    assert GETTERS["praat_wav"](FinalState(work_dir=tmp_path), "ok.wav",
                                key="duration") == pytest.approx(1.0)


# -- text formats -------------------------------------------------------------------------
def test_json_made_of_millions_of_values_is_refused(tmp_path):
    (tmp_path / "bomb.json").write_bytes(b"[" + b"[]," * 4_200_000 + b"[]]")
    assert_refused(parse_in_child(tmp_path, "file_json", path="bomb.json"),
                   "number of JSON values")
    (tmp_path / "bomb.geojson").write_bytes(
        b'{"type": "FeatureCollection", "features": [' + b"{}," * 4_200_000 + b"{}]}")
    assert_refused(parse_in_child(tmp_path, "qgis_geojson", path="bomb.geojson"),
                   "number of JSON values")
    assert_refused(parse_in_child(tmp_path, "qupath_geojson", path="bomb.geojson"),
                   "number of JSON values")


def test_tables_with_millions_of_rows_or_lines_are_refused(tmp_path):
    (tmp_path / "rows.csv").write_bytes(b"a,b\n" + b"1,2\n" * 600_000)
    assert_refused(parse_in_child(tmp_path, "table_rows", path="rows.csv"),
                   "number of table")
    (tmp_path / "lines.tsv").write_bytes(b"Image\tName\n" + b"\r" * 3_000_000)
    assert_refused(parse_in_child(tmp_path, "qupath_table", path="lines.tsv"),
                   "number of lines")


def test_fits_declaring_a_huge_image_is_refused(tmp_path):
    cards = ["SIMPLE  =                    T", "BITPIX  =                    8",
             "NAXIS   =                    2", "NAXIS1  =              1000000",
             "NAXIS2  =              1000000", "END"]
    header = "".join(c.ljust(80) for c in cards).encode()
    (tmp_path / "field.fits").write_bytes(header.ljust(2880, b" ") + bytes(2880))
    (tmp_path / "r.reg").write_text("# Region file format: DS9\nimage\ncircle(10,10,5)\n")
    assert_refused(parse_in_child(tmp_path, "ds9_regions", path="r.reg", fits="field.fits"),
                   "field.fits", "pixel count")


def test_qgz_with_a_flood_of_members_is_refused(tmp_path):
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for i in range(1500):
            zf.writestr(f"{i}.txt", "")
    (tmp_path / "p.qgz").write_bytes(buf.getvalue())
    with pytest.raises(GetterError, match="number of zip members"):
        GETTERS["qgis_project"](FinalState(work_dir=tmp_path), "p.qgz")


# -- PyMOL sessions -----------------------------------------------------------------------
class _Run:
    """Pickles as a call to ``os.system(command)``: what a crafted .pse does."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def _session_criterion(path: str, key: str = "objects") -> Criterion:
    return Criterion.from_dict({"name": "c", "weight": 1,
                                "check": {"op": "equals", "expected": ["pept"]},
                                "getter": {"fn": "pymol_session", "path": path, "key": key}})


@needs_pymol
@pytest.mark.parametrize("wrap", ["plain", "gzip", "wizard", "compressed-session"])
def test_crafted_pse_runs_no_code_on_the_host(tmp_path, wrap):
    """A .pse is a pickle: on the original getter this created the marker on the host."""
    marker = Path("/tmp") / f"sciagent-pse-{uuid.uuid4().hex}"
    evil = _Run(f"touch {marker}")
    if wrap == "wizard":  # PyMOL unpickles session["wizard"] itself, unrestricted
        data = pickle.dumps({"settings": [], "wizard": pickle.dumps([evil])}, protocol=1)
    elif wrap == "compressed-session":  # cmd.set_session unpickles bytes itself
        data = pickle.dumps(zlib.compress(pickle.dumps({"x": evil})), protocol=1)
    else:
        data = pickle.dumps({"names": [evil]}, protocol=1)
    (tmp_path / "s.pse").write_bytes(gzip.compress(data) if wrap == "gzip" else data)
    try:
        result = evaluate([_session_criterion("s.pse")], FinalState(work_dir=tmp_path))
        created = marker.exists()
    finally:
        marker.unlink(missing_ok=True)
    assert not created, "the crafted session ran a command on the host"
    assert not result.criteria[0].passed
    if wrap != "wizard":
        assert "not a PyMOL session" in result.criteria[0].detail


def _loader_namespace() -> dict:
    from sciagent_gym.envs.pymol.session import SESSION_LOADER

    namespace: dict = {}
    exec(compile(SESSION_LOADER, "SESSION_LOADER", "exec"), namespace)  # our own source
    return namespace


def test_session_unpickler_builds_only_data(tmp_path):
    """The restricted unpickler alone (no sandbox): globals other than the two PyMOL's
    sessions use are refused before anything is called."""
    session_data = _loader_namespace()["session_data"]
    marker = tmp_path / "ran"
    for payload in ({"x": _Run(f"touch {marker}")}, [eval], {"x": pickle.loads}):
        with pytest.raises(pickle.UnpicklingError, match="not allowed"):
            session_data(pickle.dumps(payload, protocol=1))
    assert not marker.exists()
    nested = pickle.dumps({"wizard": pickle.dumps([_Run(f"touch {marker}")]), "n": [1, "a"]},
                          protocol=1)
    assert session_data(nested) == {"n": [1, "a"]}  # the nested pickle is dropped, not loaded
    assert session_data(pickle.dumps({"b": b"\xff\x00"}, protocol=1)) == {"b": b"\xff\x00"}
    with pytest.raises(TypeError, match="not a PyMOL session"):
        session_data(pickle.dumps(zlib.compress(b"x"), protocol=1))
    assert not marker.exists()


@needs_pymol
@pytest.mark.parametrize("name", ["s.pse", "s.pze"])
def test_genuine_session_still_reads(tmp_path, name):
    from sciagent_gym.envs.pymol import data

    code = ("cmd.load('/usr/share/pymol/data/demo/pept.pdb', 'pept')\n"
            "cmd.hide('everything')\ncmd.show('sticks', 'resi 1-5')\n"
            "cmd.select('core', 'resi 2-4')\ncmd.set('bg_rgb', [1, 1, 1])\n"
            f"cmd.save({str(tmp_path / name)!r})\nout = cmd.count_atoms('resi 1-5')")
    sticks = data.run_headless(code)
    got = GETTERS["pymol_session"](FinalState(work_dir=tmp_path), name)
    assert got["objects"] == ["pept"]
    assert got["sticks"] == {"pept": sticks}
    assert got["lines"] == {"pept": 0}
    assert set(got["selections"]) >= {"core"} and got["selections"]["core"] > 0
    assert got["background"] == [1.0, 1.0, 1.0]


@needs_pymol
def test_session_reader_runs_sandboxed_and_only_the_marked_line_counts(tmp_path):
    from sciagent_gym.envs.pymol import data

    (tmp_path / "f").write_bytes(b"anything")
    code = ("import os\n"
            "print('@@SCIAGENT-JSON@@' + json.dumps('forged'))\n"
            "status = open('/proc/self/status').read()\n"
            "out = {'uid': os.getuid(), 'cap': [l for l in status.splitlines() "
            "if l.startswith('CapEff')][0].split()[1], "
            "'argv_env_hold_marker': _mark in open('/proc/self/cmdline').read() + "
            "open('/proc/self/environ').read(), 'file': open(sys.argv[1]).read()}\n")
    got = data.run_headless_file(code, str(tmp_path / "f"))
    assert got["uid"] != 0 and int(got["cap"], 16) == 0
    assert got["argv_env_hold_marker"] is False
    assert got["file"] == "anything"


# -- run_sandboxed ------------------------------------------------------------------------
@needs_bwrap
def test_sandbox_is_unprivileged_without_network_or_host_files(tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    shown = tmp_path / "in.txt"
    shown.write_text("shown\n")
    script = (
        "import os, socket\n"
        "print('uid', os.getuid())\n"
        "print([l for l in open('/proc/self/status') if l.startswith('CapEff')][0].strip())\n"
        f"s = socket.socket()\ns.settimeout(2)\n"
        f"try:\n    s.connect(('127.0.0.1', {port})); print('net reached')\n"
        "except OSError as e:\n    print('net refused', e.errno)\n"
        "for p in ('/root', '/etc/shadow', " + repr(str(tmp_path)) + "):\n"
        "    print('host', p, os.path.exists(p))\n"
        "print('file', open('/input/in.txt').read().strip())\n"
        "try:\n    open('/input/in.txt', 'w')\nexcept OSError:\n    print('read-only')\n"
        "print('stdin', input())\n")
    try:
        run = isolated.run_sandboxed(["/usr/bin/python3", "-I", "-c", script],
                                     files={"/input/in.txt": shown}, stdin=b"secret\n",
                                     timeout=30)
    finally:
        listener.close()
    out = run.output
    assert run.returncode == 0 and not run.timed_out, out
    uid = int(out.split("uid ", 1)[1].split()[0])
    assert uid != 0
    assert "CapEff:\t0000000000000000" in out
    assert "net refused" in out and "net reached" not in out
    assert "host /root False" in out and "host /etc/shadow False" in out
    assert f"host {tmp_path} False" in out
    assert "file shown" in out and "read-only" in out and "stdin secret" in out


@needs_bwrap
def test_sandbox_output_is_capped_to_its_tail():
    run = isolated.run_sandboxed(["/bin/sh", "-c", "head -c 5000000 /dev/zero | tr '\\0' x; "
                                                   "echo; echo END"],
                                 timeout=30, max_output=1000)
    assert run.returncode == 0
    assert len(run.output) == 1000 and run.output.endswith("END\n")


@needs_bwrap
def test_sandbox_timeout_kills_everything_inside():
    token = f"{time.time_ns() % 10**6}.{os.getpid()}"
    start = time.monotonic()
    run = isolated.run_sandboxed(["/bin/sh", "-c", f"sleep {token} & sleep {token}; echo no"],
                                 timeout=1.0)
    assert run.timed_out and "no" not in run.output
    assert time.monotonic() - start < 6
    time.sleep(0.5)
    left = subprocess.run(["pgrep", "-f", f"sleep {token}"], capture_output=True, text=True)
    assert left.stdout.strip() == "", "processes of the sandbox outlived the timeout"


def test_sandbox_refuses_to_run_without_isolation(monkeypatch, tmp_path):
    marker = tmp_path / "ran"
    monkeypatch.setattr(sandbox_process, "bwrap_problem", lambda: "bwrap is not installed")
    with pytest.raises(SandboxError, match="unsandboxed"):
        isolated.run_sandboxed(["/bin/sh", "-c", f"touch {marker}"], timeout=5)
    assert not marker.exists()


def test_sandbox_rejects_inside_paths_over_the_system(tmp_path):
    (tmp_path / "f").write_text("x")
    for inside in ("/usr/bin/python3", "relative", "/input/../etc/passwd", "/"):
        with pytest.raises((ValueError, SandboxError)):
            isolated.run_sandboxed(["/bin/true"], files={inside: tmp_path / "f"}, timeout=5)
