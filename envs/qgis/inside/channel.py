"""Started inside QGIS with ``qgis --code``: the env's private request channel (no socket).

A QTimer on QGIS's GUI thread polls ``$SCIAGENT_QGIS_CHANNEL/req`` (a directory in the
sandbox's private /tmp) for ``N.py`` request files, which the adapter's client writes under
another name and renames, so a request is never read half-written. Each request runs with
``QgsProject``, ``project``, ``iface``, ``canvas`` and the ``qgis.core`` names at hand; what it
leaves in ``__out__`` becomes the answer ``{"ok": true, "out": ...}`` (an exception becomes
``{"ok": false, "error": traceback}``), written to ``N.part`` and renamed to ``N.json``.

QTimers also fire inside the nested event loops of modal dialogs and menus, so the channel keeps
answering while the agent has a dialog open; a request that itself opens a modal dialog would be
re-entered, which the ``busy`` flag prevents. On start it opens the files named (JSON list) in
``$SCIAGENT_QGIS_OPEN``, so every episode starts from the same project.

Every file here lives in the zone's /tmp, where any process QGIS starts (a shell from its
Python console, a Processing tool) could replace it between its writing and its reading. So
both directions carry an HMAC under a key only this process and the adapter hold: it comes in
``$SCIAGENT_QGIS_KEY`` at launch (when the zone is new and holds no other process), is removed
from the environment children inherit, and the process makes itself non-dumpable, which closes
its memory, environment and descriptors in /proc to every other process of its uid. A request
runs only if its first line is the tag of its name and code; the answer's first line is the tag
of its name and text. (Code typed into QGIS's own Python console runs in this process and can
read the key: that is the console-rebind case of the threat model, not this one.)
"""
# ruff: noqa: E402 (this file runs inside QGIS, where qgis.* imports work)

import ctypes
import hashlib
import hmac
import json
import os
import sys
import traceback

from qgis.core import (
    QgsProject,
    QgsRasterLayer,
    QgsVectorLayer,
)
from qgis.PyQt.QtCore import QTimer
from qgis.PyQt.QtGui import QColor
from qgis.utils import iface

CHANNEL = os.environ.get("SCIAGENT_QGIS_CHANNEL", "/tmp/sciagent-qgis")
REQ = os.path.join(CHANNEL, "req")
STATUS = {"loaded": False, "open_error": None}
_KEY = bytes.fromhex(os.environ.pop("SCIAGENT_QGIS_KEY", ""))
try:  # PR_SET_DUMPABLE 0: /proc/<this pid>/{mem,environ,fd} closed to the zone's other processes
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
except (OSError, AttributeError):
    pass


def _tag(kind, name, text):
    """The HMAC of one request or answer: bound to its direction and its request's name."""
    msg = b"\0".join((kind.encode(), name.encode(), text.encode("utf-8", "surrogatepass")))
    return hmac.new(_KEY, msg, hashlib.sha256).hexdigest()


def _csv_uri(path):
    """A delimited-text URI for a CSV with lon/lat, x/y or easting/northing columns."""
    with open(path) as fh:
        header = [h.strip().lower() for h in fh.readline().split(",")]
    for xf, yf, crs in (("lon", "lat", "EPSG:4326"), ("longitude", "latitude", "EPSG:4326"),
                        ("easting", "northing", "EPSG:32633"), ("x", "y", "EPSG:32633")):
        if xf in header and yf in header:
            return (f"file://{path}?type=csv&delimiter=,&xField={xf}&yField={yf}&crs={crs}"
                    "&spatialIndex=no&subsetIndex=no&watchFile=no")
    return f"file://{path}?type=csv&delimiter=,&geomType=none"


PALETTE = ("#e3a21a", "#3b7dd8", "#4aa05a", "#c0504d", "#8064a2")


def _fixed_colour(layer, index):
    """QGIS gives new layers a random colour: use a fixed one so resets look the same."""
    renderer = getattr(layer, "renderer", lambda: None)()
    symbol = getattr(renderer, "symbol", lambda: None)() if renderer is not None else None
    if symbol is not None:
        symbol.setColor(QColor(PALETTE[index % len(PALETTE)]))
        if layer.geometryType() == 2:  # polygons: a light fill
            symbol.setOpacity(0.6)


def open_inputs(paths):
    """Open data files (and at most one project) in order, then zoom to everything."""
    project = QgsProject.instance()
    for path in paths:
        stem, ext = os.path.splitext(os.path.basename(path))
        ext = ext.lower()
        if ext in (".qgz", ".qgs"):
            if not project.read(path):
                raise RuntimeError(f"cannot read project {path}")
            continue
        if ext in (".tif", ".tiff", ".asc"):
            layer = QgsRasterLayer(path, stem, "gdal")
        elif ext == ".csv":
            layer = QgsVectorLayer(_csv_uri(path), stem, "delimitedtext")
        else:
            layer = QgsVectorLayer(path, stem, "ogr")
        if not layer.isValid():
            raise RuntimeError(f"cannot open {path}")
        _fixed_colour(layer, len(project.mapLayers()))
        project.addMapLayer(layer)
    project.setDirty(False)
    if paths:
        iface.mapCanvas().zoomToFullExtent()
        iface.mapCanvas().refreshAllLayers()


def _request_number(name):
    """Requests are answered in the order sent: names are "<number>-<random>.py"."""
    head = name[:-3].split("-", 1)[0]
    return int(head) if head.isdigit() else 0


class Channel:
    def __init__(self):
        os.makedirs(REQ, exist_ok=True)
        self.busy = False
        self.timer = QTimer(iface.mainWindow())
        self.timer.setInterval(25)
        self.timer.timeout.connect(self.poll)
        self.timer.start()

    def poll(self):
        if self.busy:
            return
        self.busy = True
        try:
            names = sorted((n for n in os.listdir(REQ) if n.endswith(".py")),
                           key=_request_number)
            for name in names:
                self.answer(name)
        except Exception:
            traceback.print_exc()
        finally:
            self.busy = False

    def answer(self, name):
        path = os.path.join(REQ, name)
        base = os.path.join(CHANNEL, name[:-3])
        stem = name[:-3]
        try:
            with open(path) as fh:
                tag, _, code = fh.read().partition("\n")
        finally:
            os.remove(path)
        if not _KEY or not hmac.compare_digest(tag, _tag("request", stem, code)):
            self.reply(base, stem, {"ok": False, "error": "request refused: its tag is not "
                                                          "the adapter's"})
            return
        import qgis.core as _core

        ns = {k: getattr(_core, k) for k in dir(_core) if k.startswith("Qgs")}
        ns.update({"__name__": "sciagent_request", "__out__": None, "iface": iface,
                   "project": QgsProject.instance(), "canvas": iface.mapCanvas(),
                   "open_inputs": open_inputs, "channel_status": STATUS})
        try:
            exec(compile(code, f"<request {name}>", "exec"), ns)
            reply = {"ok": True, "out": ns.get("__out__")}
        except BaseException:
            reply = {"ok": False, "error": traceback.format_exc()[-3000:]}
        self.reply(base, stem, reply)

    @staticmethod
    def reply(base, stem, reply):
        try:
            text = json.dumps(reply, default=str)
        except Exception:
            error = traceback.format_exc()[-1500:]
            text = json.dumps({"ok": False, "error": f"answer is not JSON-able: {error}"})
        with open(base + ".part", "w") as fh:
            fh.write(_tag("answer", stem, text) + "\n" + text)
        os.rename(base + ".part", base + ".json")


def _start():
    try:
        open_inputs(json.loads(os.environ.get("SCIAGENT_QGIS_OPEN", "[]")))
    except Exception:
        STATUS["open_error"] = traceback.format_exc()[-2000:]
    STATUS["loaded"] = True


# Kept on the sys module: the --code script's globals and a Python attribute on the main
# window's wrapper do not live on, and PyQt drops a connection whose receiver is collected.
sys._sciagent_qgis_channel = Channel()
QTimer.singleShot(0, _start)
