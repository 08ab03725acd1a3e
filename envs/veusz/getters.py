"""Veusz getters: the live document (the state dump) and saved ``.vsz`` documents.

A ``.vsz`` document is a Python script of Veusz commands, so the host never runs it. Veusz
itself reads it, headless (Qt's offscreen platform) in a throwaway sandbox
(:func:`sciagent_gym.evaluation.isolated.run_sandboxed`: no network, an unprivileged uid, the
document and the data files it imports shown read-only at their work-folder paths), in its safe
mode (a document with commands outside Veusz's safe set is refused, as Veusz refuses it
without asking), and the same summary as the live state dump (``inside/state_dump.py``) comes
back behind a random per-call marker.

The getters find things by what they hold, not by their names: the xy plot or fit whose data
are the task's columns (``x`` / ``y``: the gold summaries ``{n, mean, min, max}`` of the
columns, matched within ``rel_tol``), the dataset that holds a given column.
Every failure is a GetterError (a failed criterion).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciagent_gym.sdk import GetterError, existing_file, pick_key, register

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState

INSIDE = Path(__file__).parent / "inside"
SYSTEM_PYTHON = "/usr/bin/python3"
INSIDE_WORK = "/home/user/work"
MAX_DOC_BYTES = 16 << 20
MAX_DATA_FILES = 8
_CACHE: dict[str, dict[str, Any]] = {}
_CACHE_SIZE = 16

_START = r"""
import json, os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
"""
_APP = r"""
from veusz import qtall as qt
app = qt.QApplication(["veusz"])
from veusz import setting, widgets, dataimport, document
from veusz.document import loader
"""
#: The warm reader's input: the marker line, then the document (at most MAX_DOC bytes),
#: written where the cold reader is shown it (argv[1]) before Veusz loads it.
_READ = r"""
marker = sys.stdin.buffer.readline().decode("ascii", "replace").strip()
text = sys.stdin.buffer.read(MAX_DOC + 1)
sys.stdin.close()
if len(text) > MAX_DOC:
    print(marker + json.dumps({"error": "the document is larger than %d bytes" % MAX_DOC}),
          flush=True)
    sys.exit(0)
os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True)
with open(sys.argv[1], "wb") as fh:
    fh.write(text)
"""
_DOC = r"""
doc = document.Document()
"""
_LOAD = r"""
try:
    loader.loadDocument(doc, sys.argv[1], mode="vsz", callbackunsafe=None)
except Exception as exc:
    print(marker + json.dumps({"error": "%s: %s" % (type(exc).__name__, str(exc)[:300])}),
          flush=True)
    sys.exit(0)
ns = {"doc": doc}
exec(STATE_CODE, ns)
print(marker + json.dumps(ns["__out__"]), flush=True)
"""
#: Runs in the sandbox: argv[1] the document; reads the answer marker from stdin.
LOADER = _START + "marker = sys.stdin.readline().strip()\n" + _APP + _DOC + _LOAD
#: The same, started ahead of need (a warm reader): Veusz imported, its application and the
#: (empty) document made before the marker and the document come on stdin (argv[1]: where
#: to write it); it leaves without the interpreter's teardown once it has answered. Only
#: the live document goes this way: a saved one may import work-folder files.
WARM_LOADER = _START + _APP + _DOC + _READ + _LOAD + "os._exit(0)\n"
#: Largest live document handed to a warm reader (it is written into the sandbox's 16 MiB
#: home); a larger one is read cold.
MAX_WARM_DOC = 12 << 20
LIVE_DOC = f"{INSIDE_WORK}/document.vsz"


def _code(loader: str) -> str:
    return (f"STATE_CODE = {(INSIDE / 'state_dump.py').read_text()!r}\n"
            f"MAX_DOC = {MAX_WARM_DOC}\n{loader}")


def _cached(key: str, out: dict[str, Any]) -> dict[str, Any]:
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = out
    return out


def _answer(name: str, res: Any, marker: str, timeout: float) -> dict[str, Any]:
    """The summary behind ``marker`` in a sandboxed run's output; GetterError otherwise."""
    if res.timed_out:
        raise GetterError(f"{name}: Veusz did not read it within {timeout:g} s")
    for line in reversed(res.output.splitlines()):
        if line.startswith(marker):
            try:
                out = json.loads(line[len(marker):])
            except ValueError:
                break
            if not isinstance(out, dict):
                break
            if "error" in out:
                raise GetterError(f"{name}: Veusz cannot load it: {out['error']}")
            return out
    raise GetterError(f"{name}: Veusz gave no summary (exit {res.returncode}): "
                      f"{res.output[-400:]}")


def load_document(doc: Path, data: list[Path], timeout: float = 90.0) -> dict[str, Any]:
    """The state-dump summary of the saved document ``doc`` as Veusz reads it (see the module
    docstring); ``data`` are the work-folder files it may import."""
    from sciagent_gym.sdk import SandboxError, run_sandboxed

    digest = hashlib.sha256(doc.read_bytes())
    for p in data:
        digest.update(p.name.encode() + b"\0" + p.read_bytes())
    key = digest.hexdigest()
    if key in _CACHE:
        return _CACHE[key]
    marker = secrets.token_hex(16)
    files = {f"{INSIDE_WORK}/{p.name}": p for p in data}
    inside_doc = f"{INSIDE_WORK}/{doc.name}"
    files[inside_doc] = doc
    try:
        res = run_sandboxed([SYSTEM_PYTHON, "-I", "-c", _code(LOADER), inside_doc], files=files,
                            stdin=f"{marker}\n".encode(), timeout=timeout,
                            env={"XDG_RUNTIME_DIR": "/tmp"}, max_output=8 << 20)
    except (SandboxError, OSError) as exc:
        raise GetterError(f"{doc.name}: Veusz could not be run to read it: {exc}") from None
    return _cached(key, _answer(doc.name, res, marker, timeout))


def load_live_document(vsz: str, owner: object, timeout: float = 90.0) -> dict[str, Any]:
    """The summary of the live document written out as ``vsz`` (no data files: every dataset
    is inline), as :func:`load_document` gives it for that text saved as ``document.vsz``,
    read by a Veusz started ahead of need for ``owner`` (the env's provider), the document on
    its stdin; cold (:func:`load_document`) when none waits or the document is large."""
    from sciagent_gym.sdk import SandboxError, run_sandboxed

    text = vsz.encode()
    key = hashlib.sha256(text).hexdigest()  # load_document's key for this document alone
    if key in _CACHE:
        return _CACHE[key]
    if len(text) <= MAX_WARM_DOC:
        marker = secrets.token_hex(16)
        try:
            res = run_sandboxed([SYSTEM_PYTHON, "-I", "-c", _code(WARM_LOADER), LIVE_DOC],
                                stdin=f"{marker}\n".encode() + text, timeout=timeout,
                                env={"XDG_RUNTIME_DIR": "/tmp"}, max_output=8 << 20,
                                warm=owner)
        except (SandboxError, OSError) as exc:
            raise GetterError(f"document.vsz: Veusz could not be run to read it: {exc}") \
                from None
        return _cached(key, _answer("document.vsz", res, marker, timeout))
    with tempfile.TemporaryDirectory(prefix="sciagent-veusz-dump-") as tmp:
        doc = Path(tmp) / "document.vsz"
        doc.write_bytes(text)
        return load_document(doc, [], timeout)


def _document(state: FinalState, source: str | None, data: list[str] | None) -> dict[str, Any]:
    """The live document (``source`` None) or the saved document at ``source``."""
    if source is None:
        if state.app_state is None:
            raise GetterError(f"Veusz's state is unavailable: {state.app_state_error}")
        return state.app_state
    p = existing_file(state, source)
    if not p.name.endswith(".vsz"):
        raise GetterError(f"{source}: not a Veusz document (.vsz)")
    size = p.stat().st_size
    if size == 0:
        raise GetterError(f"{source}: empty file")
    if size > MAX_DOC_BYTES:
        raise GetterError(f"{source}: too large ({size} bytes)")
    paths = []
    for name in (data or [])[:MAX_DATA_FILES]:
        q = state.path(name)
        if q.is_file() and not q.is_symlink() and q.stat().st_size <= MAX_DOC_BYTES:
            paths.append(q)
    return load_document(p, paths)


def _close(got: Any, want: float, rel_tol: float) -> bool:
    if not isinstance(got, (int, float)) or isinstance(got, bool):
        return False
    return abs(got - want) <= rel_tol * max(1.0, abs(want))


def matches(summary: Any, like: dict[str, Any] | None, rel_tol: float = 1e-6) -> bool:
    """Whether a data summary from the dump is the column ``like`` describes: same length,
    and mean, min and max within ``rel_tol`` (relative, at least absolute for small values)."""
    if like is None:
        return True
    if not isinstance(summary, dict) or summary.get("n") != like.get("n"):
        return False
    return all(_close(summary.get(k), like[k], rel_tol) for k in ("mean", "min", "max")
               if k in like)


def _widgets(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    widgets = doc.get("widgets")
    if not isinstance(widgets, dict):
        raise GetterError("the document summary has no widgets")
    return widgets


def _axis(widgets: dict[str, Any], plot_path: str, name: str) -> dict[str, Any] | None:
    """The axis widget an xy or fit widget names (``xAxis``/``yAxis``): Veusz looks it up
    among the plot's ancestors, nearest first."""
    parent = plot_path.rsplit("/", 1)[0]
    while parent:
        found = widgets.get(f"{parent}/{name}")
        if found is not None and found.get("type") == "axis":
            return found.get("settings", {})
        parent = parent.rsplit("/", 1)[0]
    return None


def _plots(doc: dict[str, Any], kind: str, x: dict | None, y: dict | None,
           rel_tol: float) -> list[dict[str, Any]]:
    widgets = _widgets(doc)
    found = []
    for path, w in widgets.items():
        if w.get("type") != kind:
            continue
        data = w.get("data", {})
        if not (matches(data.get("xData"), x, rel_tol) and matches(data.get("yData"), y, rel_tol)):
            continue
        sets = w.get("settings", {})
        found.append({"path": path, "name": w.get("name"), "settings": sets,
                      "x": data.get("xData"), "y": data.get("yData"),
                      "xaxis": _axis(widgets, path, str(sets.get("xAxis", "x"))),
                      "yaxis": _axis(widgets, path, str(sets.get("yAxis", "y"))),
                      "graph": path.rsplit("/", 1)[0], "curve": w.get("curve"),
                      "values": sets.get("values")})
    return found


@register("veusz_document")
def veusz_document(state: FinalState, source: str | None = None, data: list[str] | None = None,
                   key: str | None = None) -> Any:
    """The document summary (inside/state_dump.py): live, or of the saved ``source``."""
    return pick_key(source or "document", _document(state, source, data), key)


@register("veusz_plot")
def veusz_plot(state: FinalState, x: dict | None = None, y: dict | None = None,
               kind: str = "xy", source: str | None = None, data: list[str] | None = None,
               rel_tol: float = 1e-6, key: str | None = None) -> Any:
    """The first ``kind`` widget (xy, fit) whose x and y data are the columns ``x`` and ``y``:
    {path, name, graph, settings, x, y (data summaries), xaxis, yaxis (its axes' settings),
    curve and values (fits)}; ``key`` "count" gives how many match."""
    found = _plots(_document(state, source, data), kind, x, y, rel_tol)
    if key == "count":
        return len(found)
    if not found:
        raise GetterError(f"no {kind} widget plots those data")
    return pick_key(kind, found[0], key)


@register("veusz_plots")
def veusz_plots(state: FinalState, x: dict | None = None, y: dict | None = None,
                kind: str = "xy", source: str | None = None, data: list[str] | None = None,
                rel_tol: float = 1e-6, key: str = "count") -> Any:
    """Every ``kind`` widget whose data match, as a list of ``key`` of each (e.g.
    ``yaxis.label``), or their number with ``key`` "count"."""
    found = _plots(_document(state, source, data), kind, x, y, rel_tol)
    if key == "count":
        return len(found)
    return [pick_key(kind, f, key) for f in found]


@register("veusz_dataset")
def veusz_dataset(state: FinalState, like: dict | None = None, name: str | None = None,
                  source: str | None = None, data: list[str] | None = None,
                  rel_tol: float = 1e-6, key: str | None = None) -> Any:
    """The dataset named ``name`` or else the first whose values are the column ``like``:
    its summary (n, mean, min, max, serr/perr/nerr summaries, kind, linked, expr) and name."""
    sets = _document(state, source, data).get("datasets")
    if not isinstance(sets, dict):
        raise GetterError("the document summary has no datasets")
    for ds_name, info in sets.items():
        if name is not None and ds_name != name:
            continue
        if matches(info, like, rel_tol):
            return pick_key(ds_name, {**info, "name": ds_name}, key)
    what = f"named {name!r}" if name else "with those values"
    raise GetterError(f"no dataset {what} (datasets: {', '.join(sorted(sets)[:20])})")


@register("veusz_widgets")
def veusz_widgets(state: FinalState, type: str, source: str | None = None,  # noqa: A002
                  data: list[str] | None = None, key: str = "count") -> Any:
    """Widgets of one ``type`` (axis, xy, fit, key, label, graph...): how many ("count"), or
    the list of one settings value of each (``key`` a setting name, e.g. "direction")."""
    found = [(p, w) for p, w in _widgets(_document(state, source, data)).items()
             if w.get("type") == type]
    if key == "count":
        return len(found)
    if key == "paths":
        return [p for p, _ in found]
    return [w.get("settings", {}).get(key) for _, w in found]
