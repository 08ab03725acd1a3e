"""AMIDE ROI statistics, judged two ways: the mean inside a saved study's ellipsoid ROI,
recomputed on the host from the task's gold volume with AMIDE's partial-voxel weighting
(``amide_roi_mean``), and the statistics file AMIDE exports (``amide_stats``).

Registered by importing this module; ``getters.py`` (what discovery imports) does that.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np
from sciagent_gym.envs.amide.xif import read_study

from sciagent_gym.sdk import GetterError, decode_text, pick_key, read_bytes, register

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState


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
