"""Reading a study AMIDE saved as XIF into plain data (data sets, ROIs, view), on the host.

A study is either a flat ``.xif`` file ("Save Study As": a 64-byte header, the location and
size of the study's XML at 0x40, XML parts that point at each other by "location size", raw
data between them) or a ``.xif`` directory ("Save As XIF Directory": one XML file per
object). Only the XML is read (never the raw voxels, except an isocontour ROI's byte map),
with size limits, and refused when it declares a DTD or entities; anything malformed raises
GetterError.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sciagent_gym.sdk import GetterError, read_bytes

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState

MAX_XML = 1024 * 1024
MAX_FLAT = 64 * 1024 * 1024
MAX_PARTS = 200
FLAT_MAGIC = b"AMIDE XML Image Format Flat File"


def _parse_xml(blob: bytes, where: str) -> ET.Element:
    if len(blob) > MAX_XML:
        raise GetterError(f"{where}: an XML part of {len(blob)} bytes is too large")
    if b"<!DOCTYPE" in blob or b"<!ENTITY" in blob:
        raise GetterError(f"{where}: XML with a DTD or entities is refused")
    try:
        return ET.fromstring(blob)
    except ET.ParseError as exc:
        raise GetterError(f"{where}: malformed XML ({exc})") from None


def _numbers(node: ET.Element | None, n: int, where: str) -> list[float]:
    if node is None or node.text is None:
        raise GetterError(f"{where}: a coordinate is missing")
    try:
        values = [float(v) for v in node.text.split()]
    except ValueError:
        raise GetterError(f"{where}: {node.text!r} is not a list of numbers") from None
    if len(values) != n or not all(math.isfinite(v) for v in values):
        raise GetterError(f"{where}: {node.text!r} is not {n} finite numbers")
    return values


def _text(node: ET.Element, tag: str) -> str | None:
    child = node.find(tag)
    return None if child is None or child.text is None else child.text.strip()


def _number(node: ET.Element, tag: str) -> float | None:
    text = _text(node, tag)
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


class _Source:
    """Where the XML parts of one study live: a flat file or a directory."""

    def __init__(self, state: FinalState, path: str) -> None:
        self.path = path
        p = state.path(path)
        if not p.exists():
            raise GetterError(f"{path}: not found")
        self.dir: Path | None = p if p.is_dir() else None
        self.flat = b"" if self.dir is not None else read_bytes(state, path, MAX_FLAT)
        if self.dir is None and not self.flat.startswith(FLAT_MAGIC):
            raise GetterError(f"{path}: not an AMIDE XIF file")
        self.parts = 0

    def _count(self) -> None:
        self.parts += 1
        if self.parts > MAX_PARTS:
            raise GetterError(f"{self.path}: more than {MAX_PARTS} objects")

    def study(self) -> ET.Element:
        if self.dir is not None:
            names = sorted(f for f in self.dir.iterdir() if f.name.startswith("study_")
                           and f.suffix == ".xml")
            if len(names) != 1:
                raise GetterError(f"{self.path}: {len(names)} study files in the directory")
            return self._file(names[0].name)
        if len(self.flat) < 0x50:
            raise GetterError(f"{self.path}: truncated header")
        loc, size = np.frombuffer(self.flat[0x40:0x50], "<u8").tolist()
        return self._slice(int(loc), int(size))

    def _file(self, name: str) -> ET.Element:
        assert self.dir is not None
        if "/" in name or name.startswith("."):
            raise GetterError(f"{self.path}: bad object file name {name!r}")
        f = self.dir / name
        if not f.is_file() or f.is_symlink():
            raise GetterError(f"{self.path}: {name} is missing")
        if f.stat().st_size > MAX_XML:
            raise GetterError(f"{self.path}: {name} is too large")
        self._count()
        return _parse_xml(f.read_bytes(), f"{self.path}/{name}")

    def _slice(self, loc: int, size: int) -> ET.Element:
        if loc < 0x50 or size <= 0 or loc + size > len(self.flat):
            raise GetterError(f"{self.path}: an object points outside the file")
        self._count()
        return _parse_xml(self.flat[loc:loc + size], self.path)

    def _blob(self, loc: int, size: int) -> bytes:
        if loc < 0x50 or size < 0 or loc + size > len(self.flat):
            raise GetterError(f"{self.path}: raw data points outside the file")
        return self.flat[loc:loc + size]

    def map_voxels(self, roi: ET.Element) -> int:
        """The voxels an isocontour or freehand ROI's map marks (non-zero bytes)."""
        ref = roi.find("map_file")
        if ref is not None and self.dir is not None:
            raw = self._file((ref.text or "").strip())
        else:
            ref = roi.find("map_location_and_size")
            if ref is None:
                raise GetterError(f"{self.path}: the ROI has no map")
            raw = self._slice(*self._ref(ref.text))
        fmt = _text(raw, "raw_format")
        if fmt not in ("ubyte-8-ne", "ubyte-8-le", "ubyte-8-be"):
            raise GetterError(f"{self.path}: ROI map in format {fmt!r}")
        try:
            dims = [int(v) for v in (_text(raw, "dim") or "").split()]
        except ValueError:
            raise GetterError(f"{self.path}: bad ROI map dimensions") from None
        n = int(np.prod(dims)) if dims else 0
        if not 0 < n <= MAX_FLAT:
            raise GetterError(f"{self.path}: ROI map of {n} voxels")
        if self.dir is not None:
            name = _text(raw, "raw_data_file") or ""
            f = self.dir / name
            if "/" in name or not f.is_file() or f.is_symlink() or f.stat().st_size != n:
                raise GetterError(f"{self.path}: ROI map file {name!r} is missing or the "
                                  "wrong size")
            blob = f.read_bytes()
        else:
            loc, size = self._ref(_text(raw, "raw_data_location_and_size"))
            if size != n:
                raise GetterError(f"{self.path}: ROI map of the wrong size")
            blob = self._blob(loc, size)
        return int(np.count_nonzero(np.frombuffer(blob, np.uint8)))

    def _ref(self, text: str | None) -> tuple[int, int]:
        try:
            loc, size = (int(v, 16) for v in (text or "").split())
        except ValueError:
            raise GetterError(f"{self.path}: bad reference {text!r}") from None
        return loc, size

    def children(self, node: ET.Element) -> list[ET.Element]:
        kids = node.find("children")
        if kids is None:
            return []
        out = []
        for ref in kids:
            text = (ref.text or "").strip()
            if ref.tag == "object_file":
                out.append(self._file(text))
            elif ref.tag == "object_location_and_size":
                try:
                    loc, size = (int(v, 16) for v in text.split())
                except ValueError:
                    raise GetterError(f"{self.path}: bad object reference {text!r}") from None
                out.append(self._slice(loc, size))
        return out


def _space(obj: ET.Element, where: str) -> tuple[np.ndarray, np.ndarray]:
    offset = np.array(_numbers(obj.find("coordinate_space_offset"), 3, where))
    axes = np.array([_numbers(obj.find(f"coordinate_space_{a}"), 3, where) for a in "xyz"])
    return offset, axes


def _roi(obj: ET.Element, name: str, src: _Source | None = None) -> dict[str, Any]:
    where = f"ROI {name!r}"
    offset, axes = _space(obj, where)
    corner = np.array(_numbers(obj.find("corner"), 3, where))
    kind = _text(obj, "type") or "?"
    centre = offset + axes.T @ (corner / 2)
    half = np.abs(corner) / 2
    if kind == "ellipsoid":
        volume = 4 / 3 * math.pi * float(np.prod(half))
    elif kind == "cylinder":
        volume = math.pi * float(half[0] * half[1]) * float(abs(corner[2]))
    elif kind == "box":
        volume = float(np.prod(np.abs(corner)))
    elif kind.startswith("isocontour") and src is not None:
        voxel = np.array(_numbers(obj.find("voxel_size"), 3, where))
        volume = src.map_voxels(obj) * float(np.prod(np.abs(voxel)))
    else:
        volume = float("nan")
    return {"name": name, "type": kind, "centre": [float(v) for v in centre],
            "radii": [float(v) for v in half], "volume": volume,
            "offset": [float(v) for v in offset], "rotation": axes.tolist(),
            "corner": [float(v) for v in corner]}


def _data_set(obj: ET.Element, name: str) -> dict[str, Any]:
    where = f"data set {name!r}"
    voxel = _numbers(obj.find("voxel_size"), 3, where)
    corner = _numbers(obj.find("corner"), 3, where)
    return {"name": name, "voxel_size": voxel,
            "dims": [int(round(c / v)) if v else 0 for c, v in zip(corner, voxel, strict=True)],
            "threshold_min": _number(obj, "threshold_min_0"),
            "threshold_max": _number(obj, "threshold_max_0"),
            "color_table": _text(obj, "color_table"), "modality": _text(obj, "modality"),
            "subject_name": _text(obj, "subject_name"), "subject_id": _text(obj, "subject_id"),
            "interpolation": _text(obj, "interpolation"),
            "offset": _numbers(obj.find("coordinate_space_offset"), 3, where),
            "rotation": [_numbers(obj.find(f"coordinate_space_{a}"), 3, where) for a in "xyz"]}


def read_study(state: FinalState, path: str) -> dict[str, Any]:
    """The study at ``path`` (flat file or directory) as plain data."""
    src = _Source(state, path)
    root = src.study()
    study = root.find("study")
    if study is None:
        raise GetterError(f"{path}: no study in the file")
    data_sets: list[dict[str, Any]] = []
    rois: list[dict[str, Any]] = []
    todo = [study]
    while todo:
        node = todo.pop()
        for child in src.children(node):
            for obj in child:
                name = (obj.text or "").strip()
                if obj.tag == "data-set":
                    data_sets.append(_data_set(obj, name))
                elif obj.tag == "roi":
                    rois.append(_roi(obj, name, src))
                elif obj.tag in ("study", "fiducial_mark"):
                    pass
                else:
                    continue
                todo.append(obj)
    centre = study.find("view_center")
    return {"name": (study.text or "").strip(), "data_sets": data_sets, "rois": rois,
            "n_data_sets": len(data_sets), "n_rois": len(rois),
            "roi_names": sorted(r["name"] for r in rois),
            "view_center": _numbers(centre, 3, "view centre") if centre is not None else None,
            "zoom": _number(study, "zoom"),
            "data_set": data_sets[0] if len(data_sets) == 1 else None}
