"""Gwyddion getters: the channels and masks of ``.gwy`` files the agent saved.

Imported by :func:`sciagent_gym.tools.load_tool_getters` as ``sciagent_gym.envs.gwyddion.getters``.
Files are read with the bounded reader of :mod:`.gwyfmt`; a missing, oversized or malformed
file raises GetterError, which the evaluator turns into a failed criterion. Reference arrays
(gold) are TIFF files on the host side, written when the task was staged.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

import numpy as np
from sciagent_gym.envs.gwyddion.gwyfmt import (
    Channel,
    GwyFormatError,
    GwyObject,
    channels,
    datafield_array,
    parse_gwy,
)

from sciagent_gym.evaluation import GetterError, register
from sciagent_gym.evaluation.getters.reading import pick_key, read_bytes

if TYPE_CHECKING:
    from sciagent_gym.evaluation import FinalState

MAX_GWY_BYTES = 64 * 1024 * 1024
NM = 1e-9


def _container(state: FinalState, path: str) -> GwyObject:
    data = read_bytes(state, path, MAX_GWY_BYTES)
    try:
        return parse_gwy(data)
    except GwyFormatError as exc:
        raise GetterError(f"{path}: {exc}") from None
    except (RecursionError, MemoryError, struct.error) as exc:
        raise GetterError(f"{path}: unreadable ({type(exc).__name__})") from None


def _channels(state: FinalState, path: str) -> list[Channel]:
    top = _container(state, path)
    try:
        found = channels(top)
    except GwyFormatError as exc:
        raise GetterError(f"{path}: {exc}") from None
    if not found:
        raise GetterError(f"{path}: holds no image channel")
    return found


def _reference(reference_path: str) -> np.ndarray:
    import tifffile

    try:
        return np.asarray(tifffile.imread(reference_path), float)
    except Exception as exc:
        raise GetterError(f"reference {reference_path}: cannot read: {exc}") from None


def _rel_diff(data: np.ndarray, ref: np.ndarray) -> float:
    """RMS of the difference (each without its mean) over the reference's standard deviation;
    inf when the shapes differ or the data are not finite."""
    if data.shape != ref.shape or not np.isfinite(data).all():
        return float("inf")
    diff = (data - data.mean()) - (ref - ref.mean())
    return float(np.sqrt(np.mean(diff**2)) / max(ref.std(), 1e-30))


@register("gwy_file")
def gwy_file(state: FinalState, path: str, key: str | None = None,
             reference_path: str | None = None) -> Any:
    """A saved ``.gwy`` file: ``n_channels``, ``titles``, ``units_z``; with a reference array,
    ``best`` (the channel closest to it) as {"rel_diff", "title", "shape", "xreal_nm",
    "yreal_nm", "unit_z", "log"} and ``rel_diff`` (its RMS difference, means removed, over
    the reference's standard deviation: 0 for the same heights; inf for another shape)."""
    found = _channels(state, path)
    info: dict[str, Any] = {"n_channels": len(found), "titles": [c.title for c in found],
                            "units_z": [c.unit_z for c in found]}
    if reference_path is not None:
        ref = _reference(reference_path)
        scored = [(_rel_diff(c.data, ref), c) for c in found]
        rel, best = min(scored, key=lambda pair: pair[0])
        info["rel_diff"] = rel
        info["best"] = {"rel_diff": rel, "title": best.title, "shape": list(best.data.shape),
                        "xreal_nm": best.xreal / NM, "yreal_nm": best.yreal / NM,
                        "unit_z": best.unit_z, "log": best.log}
    return pick_key(path, info, key)


def _components(mask: np.ndarray) -> tuple[np.ndarray, int]:
    from scipy import ndimage

    labels, count = ndimage.label(mask > 0.5)
    return labels, int(count)


@register("gwy_mask")
def gwy_mask(state: FinalState, path: str, particles: list[dict[str, float]],
             key: str | None = None) -> Any:
    """The grain mask saved with a channel of a ``.gwy`` file, against the particles the
    generator placed ({"x", "y", "r_px"}): ``n_grains`` (4-connected components), ``hit``
    (particles whose centre pixel is masked), ``one_each`` (particles whose centre lies in a
    grain of its own, no two sharing one), ``stray`` (grains that hold no particle centre) and
    ``fraction`` (masked share of the image)."""
    top = _container(state, path)
    masks = [(k, v) for k, v in top.items.items()
             if k.endswith("/mask") and isinstance(v, GwyObject)]
    if not masks:
        raise GetterError(f"{path}: no mask saved (mark the grains before saving)")
    try:
        found = channels(top)
        mask, _ = datafield_array(masks[0][1], masks[0][0])
    except GwyFormatError as exc:
        raise GetterError(f"{path}: {exc}") from None
    if found and mask.shape != found[0].data.shape:
        raise GetterError(f"{path}: the mask's shape {mask.shape} is not the data's")
    labels, count = _components(mask)
    centres = []
    for p in particles:
        x, y = int(p["x"]), int(p["y"])
        inside = 0 <= y < labels.shape[0] and 0 <= x < labels.shape[1]
        centres.append(int(labels[y, x]) if inside else 0)
    hit = [c for c in centres if c > 0]
    info = {"n_grains": count, "hit": len(hit), "one_each": len(set(hit)) == len(particles)
            and len(hit) == len(particles),
            "stray": count - len(set(hit)), "fraction": float((mask > 0.5).mean())}
    return pick_key(path, info, key)
