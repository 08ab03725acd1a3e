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
The XIF reader is ``xif.py``; the ROI statistics getters (``amide_roi_mean``,
``amide_stats``) are ``roi_stats.py``, registered by the import below.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

# the ROI statistics getters live in roi_stats.py; importing them here registers them
from sciagent_gym.envs.amide.roi_stats import amide_roi_mean, amide_stats  # noqa: F401
from sciagent_gym.envs.amide.xif import read_study

from sciagent_gym.sdk import GetterError, pick_key, register

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState


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
