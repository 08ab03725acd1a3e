"""AMIDE getters: the studies, ROI statistics and volumes the agent saved, read back on the host.

Imported by :func:`sciagent_gym.tools.load_tool_getters` as ``sciagent_gym.envs.amide.getters``.
AMIDE has no state channel (see the adapter), so tasks are judged on files:

- a study saved as XIF, either a flat ``.xif`` file ("Save Study As": a 64-byte header, the
  location and size of the study's XML at 0x40, XML parts that point at each other by
  "location size", raw data between them) or a ``.xif`` directory ("Save As XIF Directory":
  one XML file per object). Only the XML is read (never the raw voxels), with a size limit,
  and refused when it declares a DTD or entities;
- the ROI statistics AMIDE exports (a tab-separated text with ``# ROI:`` blocks);
- a NIfTI volume AMIDE exported (read with nibabel, shape and voxel size only).

A missing, oversized or malformed file raises GetterError, which the evaluator turns into a
failed criterion. Gold positions and sizes come from the task's generator on the host.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sciagent_gym.sdk import GetterError, decode_text, pick_key, read_bytes, register

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


@register("amide_study")
def amide_study(state: FinalState, path: str, key: str | None = None) -> Any:
    """A saved AMIDE study: ``n_data_sets``, ``n_rois``, ``roi_names``, ``view_center``,
    ``zoom``, ``data_set`` (the only data set: ``dims``, ``voxel_size``, ``threshold_min``,
    ``threshold_max``, ``color_table``, ``modality``, ``subject_name``...) and the lists."""
    return pick_key(path, read_study(state, path), key)


@register("amide_roi")
def amide_roi(state: FinalState, path: str, target: list[float], name: str | None = None,
              key: str | None = None) -> Any:
    """One ROI of a saved study, with its ``distance`` (mm) from ``target`` [x, y, z]: the
    ROI called ``name`` (case-insensitive), or without a name the ROI nearest ``target``.
    Also ``type``, ``centre``, ``radii``, ``min_radius``, ``max_radius``, ``volume`` (mm^3,
    from its shape)."""
    rois = read_study(state, path)["rois"]
    if name is not None:
        rois = [r for r in rois if r["name"].strip().lower() == name.lower()]
        if not rois:
            raise GetterError(f"{path}: no ROI named {name!r}")
    if not rois:
        raise GetterError(f"{path}: the study has no ROI")
    t = np.asarray(target, float)
    for r in rois:
        r["distance"] = float(np.linalg.norm(np.asarray(r["centre"]) - t))
        r["min_radius"], r["max_radius"] = min(r["radii"]), max(r["radii"])
    best = min(rois, key=lambda r: r["distance"])
    return pick_key(path, best, key)


#: Sub-samples per voxel edge when weighting the voxels an ellipsoid ROI cuts (4^3 a voxel).
SUBSAMPLE = 4


def roi_weights(roi: dict[str, Any], ds: dict[str, Any], shape: tuple[int, int, int],
                sub: int = SUBSAMPLE) -> tuple[tuple[slice, slice, slice], np.ndarray]:
    """The fraction of each voxel of a data set (AMIDE raw order: x, y, z indices) that an
    ellipsoid ROI covers, by sampling ``sub``^3 points evenly inside every voxel near it:
    the block of the array it touches and the weights there. Both objects are placed by
    their own coordinate spaces (offset, rotation), as AMIDE places them."""
    voxel = np.abs(np.asarray(ds["voxel_size"], float))
    if not np.all(voxel > 0):
        raise GetterError("the data set has no voxel size")
    ds_off, ds_rot = np.asarray(ds["offset"], float), np.asarray(ds["rotation"], float)
    roi_off, roi_rot = np.asarray(roi["offset"], float), np.asarray(roi["rotation"], float)
    half = np.asarray(roi["radii"], float)
    if not np.all(half > 0):
        return (slice(0, 0),) * 3, np.zeros((0, 0, 0))
    corner_half = np.asarray(roi["corner"], float) / 2
    # the ROI's centre in the data set's own frame; a box that holds it whatever its rotation
    centre = ds_rot @ (np.asarray(roi["centre"], float) - ds_off)
    reach = float(half.max()) + float(voxel.max())
    lo = np.maximum(np.floor((centre - reach) / voxel).astype(int), 0)
    hi = np.minimum(np.ceil((centre + reach) / voxel).astype(int), np.asarray(shape))
    if np.any(hi <= lo):
        return (slice(0, 0),) * 3, np.zeros((0, 0, 0))
    axes_idx = [np.arange(a, b) for a, b in zip(lo, hi, strict=True)]
    frac = (np.arange(sub) + 0.5) / sub
    # sample positions along each data-set axis (mm in the data set's frame)
    pos = [((idx[:, None] + frac[None, :]) * v).ravel() for idx, v in zip(axes_idx, voxel,
                                                                           strict=True)]
    n = [len(i) for i in axes_idx]
    w = np.empty(n)
    for i in range(n[0]):  # one slab of voxels at a time: memory stays bounded for any ROI
        P = np.stack(np.meshgrid(pos[0][i * sub:(i + 1) * sub], pos[1], pos[2],
                                 indexing="ij"), axis=-1)
        world = ds_off + P @ ds_rot  # data-set frame -> world (rows of ds_rot: its axes)
        local = (world - roi_off) @ roi_rot.T  # world -> ROI frame
        inside = (((local - corner_half) / half) ** 2).sum(axis=-1) <= 1.0
        w[i] = inside.reshape(sub, n[1], sub, n[2], sub).mean(axis=(0, 2, 4))
    return tuple(slice(a, b) for a, b in zip(lo, hi, strict=True)), w


def _gold_volume(path: str) -> np.ndarray:
    import tifffile

    try:
        arr = np.asarray(tifffile.imread(path))
    except Exception as exc:  # noqa: BLE001 (a missing gold file is the task's fault)
        raise GetterError(f"the reference volume cannot be read ({exc})") from None
    if arr.ndim != 3:
        raise GetterError(f"the reference volume has shape {arr.shape}")
    return arr


@register("amide_roi_mean")
def amide_roi_mean(state: FinalState, path: str, volume: str, name: str,
                   target: list[float] | None = None, key: str | None = None) -> Any:
    """The mean intensity inside an ellipsoid ROI of a saved study, recomputed on the host
    from the task's volume (``volume``: the generator's gold array, NIfTI order; the saved
    study's data set places it, its ROI named ``name`` (the one nearest ``target`` if several)
    selects the voxels), each voxel weighted by the fraction of it inside the ROI (sampled
    4^3 times), as AMIDE's ROI statistics weight the voxels the ROI's edge cuts. Returns
    ``mean``, ``voxels`` (the summed weights), ``answer`` (the number the agent answered, or
    None) and ``rel_error`` (|answer - mean| / |mean|; None without an answer)."""
    study = read_study(state, path)
    ds = study["data_set"]
    if ds is None:
        raise GetterError(f"{path}: {study['n_data_sets']} data sets (one expected)")
    rois = [r for r in study["rois"] if r["name"].strip().lower() == name.lower()]
    if not rois:
        raise GetterError(f"{path}: no ROI named {name!r}")
    if target is not None:
        t = np.asarray(target, float)
        rois.sort(key=lambda r: float(np.linalg.norm(np.asarray(r["centre"]) - t)))
    roi = rois[0]
    if roi["type"] != "ellipsoid":
        raise GetterError(f"{path}: ROI {name!r} is a {roi['type']}, not an ellipsoid")
    arr = _gold_volume(volume)
    raw = arr[:, ::-1, :].astype(float)  # AMIDE's raw order: the second axis flipped
    if list(raw.shape) != list(ds["dims"]):
        raise GetterError(f"{path}: the data set is {ds['dims']}, not the task's "
                          f"{list(raw.shape)}")
    block, w = roi_weights(roi, ds, raw.shape)
    total = float(w.sum())
    if total <= 0:
        raise GetterError(f"{path}: ROI {name!r} holds no voxel of the data set")
    mean = float((raw[block] * w).sum() / total)
    out: dict[str, Any] = {"mean": mean, "voxels": total, "answer": None,
                           "rel_error": None}
    if (state.answer or "").strip():
        from sciagent_gym.sdk import answer_number

        try:
            out["answer"] = float(answer_number(state))
        except GetterError:
            out["answer"] = None
        if out["answer"] is not None and mean:
            out["rel_error"] = abs(out["answer"] - mean) / abs(mean)
    return pick_key(path, out, key)


_STAT_COLUMNS = ("frame", "duration", "midpoint", "gate", "gate_time", "median", "mean", "var",
                 "std", "min", "max", "size", "frac_voxels", "voxels")


def read_stats(state: FinalState, path: str) -> list[dict[str, Any]]:
    """The rows of an ROI statistics file AMIDE exported: one per ROI and data set (frame 0)."""
    text = decode_text(read_bytes(state, path, 4 * 1024 * 1024))
    if "amide" not in text[:200].lower():
        raise GetterError(f"{path}: not an AMIDE ROI analysis file")
    rows: list[dict[str, Any]] = []
    roi = kind = data_set = None
    for line in text.splitlines():
        m = re.match(r"#\s*ROI:\s*\t(.*?)\tType:\s*\t(\S+)", line)
        if m:
            roi, kind = m.group(1).strip(), m.group(2).strip()
            continue
        m = re.match(r"#\s*Data Set:\s*\t([^\t]*)", line)
        if m:
            data_set = m.group(1).strip()
            continue
        if line.startswith("#") or not line.strip():
            continue
        cells = line.split()
        if len(cells) != len(_STAT_COLUMNS) or roi is None:
            raise GetterError(f"{path}: unexpected line {line[:80]!r}")
        try:
            values = [float(c) for c in cells]
        except ValueError:
            raise GetterError(f"{path}: a statistics row is not numeric: {line[:80]!r}") from None
        row: dict[str, Any] = dict(zip(_STAT_COLUMNS, values, strict=True))
        row.update({"roi": roi, "type": kind, "data_set": data_set})
        rows.append(row)
        if len(rows) > 1000:
            raise GetterError(f"{path}: too many rows")
    if not rows:
        raise GetterError(f"{path}: no statistics rows")
    return rows


@register("amide_stats")
def amide_stats(state: FinalState, path: str, roi: str | None = None, key: str | None = None
                ) -> Any:
    """An exported ROI statistics file: with ``roi``, that ROI's row (``mean``, ``median``,
    ``std``, ``min``, ``max``, ``size`` in mm^3, ``voxels``, ``type``); without, ``n_rows``,
    ``rois`` (the ROI names) and ``rows``."""
    rows = read_stats(state, path)
    if roi is not None:
        match = [r for r in rows if r["roi"].lower() == roi.lower()]
        if not match:
            raise GetterError(f"{path}: no statistics for an ROI named {roi!r}")
        return pick_key(path, match[0], key)
    return pick_key(path, {"n_rows": len(rows), "rois": sorted(r["roi"] for r in rows),
                           "rows": rows}, key)


@register("nifti_volume")
def nifti_volume(state: FinalState, path: str, key: str | None = None) -> Any:
    """A NIfTI volume: ``shape``, ``voxel_size``, ``max``, ``mean``."""
    import nibabel as nib

    p = state.path(path)
    if not p.is_file():
        raise GetterError(f"{path}: not found")
    if p.stat().st_size > 256 * 1024 * 1024:
        raise GetterError(f"{path}: too large")
    try:
        img = nib.load(str(p))
        data = np.asanyarray(img.dataobj, dtype=float)
    except Exception as exc:  # noqa: BLE001 (any parse failure of an agent-written file)
        raise GetterError(f"{path}: not a readable NIfTI volume ({exc})") from None
    data = np.squeeze(data)
    out = {"shape": list(data.shape), "voxel_size": [float(v) for v in img.header.get_zooms()[:3]],
           "max": float(data.max()) if data.size else 0.0,
           "mean": float(data.mean()) if data.size else 0.0}
    return pick_key(path, out, key)


@register("amide_view_blob")
def amide_view_blob(state: FinalState, path: str, key: str | None = None,
                    level: int = 170) -> Any:
    """The brightest structure in an exported view image: the largest connected region of
    pixels whose green channel is at least ``level`` (white in AMIDE's grey scales, yellow to
    white in its hot-metal table, where normal tissue stays red or orange):
    ``area`` (pixels), ``fraction`` (of the image), ``x`` and ``y`` (its centroid as fractions
    of the width and height), ``width``, ``height``."""
    from scipy import ndimage

    from sciagent_gym.sdk import load_image

    img = load_image(existing_path(state, path), path)
    arr = np.asarray(img.planes[0], dtype=float)  # (H, W, samples)
    if arr.shape[-1] < 3:
        arr = np.repeat(arr[..., :1], 3, axis=-1)
    arr = arr[..., :3]
    if arr.max() > 255:
        arr = arr * 255.0 / arr.max()
    mask = arr[..., 1] >= level
    labels, count = ndimage.label(mask)
    h, w = mask.shape
    out: dict[str, Any] = {"area": 0, "fraction": 0.0, "x": -1.0, "y": -1.0, "width": w,
                           "height": h}
    if count:
        sizes = ndimage.sum(mask, labels, range(1, count + 1))
        best = int(np.argmax(sizes)) + 1
        ys, xs = np.nonzero(labels == best)
        out.update({"area": int(sizes[best - 1]), "fraction": float(sizes[best - 1]) / (w * h),
                    "x": float((xs.mean() + 0.5) / w),
                    "y": float((ys.mean() + 0.5) / h)})
    return pick_key(path, out, key)


def existing_path(state: FinalState, path: str) -> Path:
    p = state.path(path)
    if not p.is_file():
        raise GetterError(f"{path}: not found")
    return p
