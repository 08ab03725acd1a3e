"""Synthetic head volumes with lesions for the AMIDE tasks, and the gold values derived from them.

Every generator takes ``(work_dir, rng, **args)``, writes its input into the task's working
directory and returns gold values computed from what it wrote. A volume is a head-like MR image:
scalp, a dark skull, a brain with a brighter cortical rim, two dark ventricles, and lesions
(spheres or axis-aligned ellipsoids of known semi-axes, hence known volumes in mm^3, and known
centres) that enhance above the brain, plus Gaussian noise. Voxels are 2 mm cubes on a fixed
96 x 112 x 80 grid (192 x 224 x 160 mm), so the GUI's canvases have one fixed layout.

Positions are in AMIDE's own world frame, described in ``frame.py``.

The same volume can be written as an AMIDE study (a flat ``.xif`` file: raw data and XML parts,
the layout AMIDE's own "Save Study As" writes) for the tasks that start with it open.
Gold values never enter the sandbox. The frame and the canvases' layout are ``frame.py``,
the writers of both files ``study_files.py``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.amide.frame import SHAPE, VOXEL, screen_points, voxel_of, world_axes
from sciagent_gym.envs.amide.study_files import write_nifti, write_xif

#: Mean intensities of the tissues (arbitrary MR units).
SCALP, SKULL, BRAIN, CORTEX, CSF, AIR = 300.0, 80.0, 700.0, 850.0, 250.0, 0.0


def _grid() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x, y, z = world_axes()
    return np.meshgrid(x, y, z, indexing="ij")


def _ellipsoid(X: np.ndarray, Y: np.ndarray, Z: np.ndarray, centre: tuple[float, float, float],
               axes: tuple[float, float, float]) -> np.ndarray:
    return (((X - centre[0]) / axes[0]) ** 2 + ((Y - centre[1]) / axes[1]) ** 2
            + ((Z - centre[2]) / axes[2]) ** 2) <= 1.0


def _rho2(X: np.ndarray, Y: np.ndarray, Z: np.ndarray, centre: tuple[float, float, float],
          axes: tuple[float, float, float]) -> np.ndarray:
    """The squared normalised radius of points relative to an axis-aligned ellipsoid."""
    return (((X - centre[0]) / axes[0]) ** 2 + ((Y - centre[1]) / axes[1]) ** 2
            + ((Z - centre[2]) / axes[2]) ** 2)


def _snap(v: float) -> float:
    """The nearest voxel-centre coordinate (odd multiples of 1 mm on the 2 mm grid)."""
    return float(2 * math.floor(v / 2) + 1)


#: Where the reference ROI of normal brain may sit (a 16 mm sphere): lesions keep clear of all.
REFERENCES = ((-16.0, -40.0, -20.0), (16.0, 40.0, -20.0), (-16.0, 40.0, -20.0),
              (16.0, -40.0, -20.0))


def _place_lesions(rng: np.random.Generator, count: int, radius: tuple[float, float],
                   elongation: float, min_abs_z: float = 0.0,
                   radii: list[list[float]] | None = None,
                   min_abs_x: float = 0.0) -> list[dict[str, Any]]:
    """``count`` lesions inside the brain, clear of the ventricles, of the reference spheres
    and of each other; with ``min_abs_z`` the first lesion stays off the z = 0 slice by that
    margin beyond its own extent."""
    out: list[dict[str, Any]] = []
    tries = 0
    while len(out) < count:
        tries += 1
        if tries > 5000:
            raise RuntimeError("could not place the lesions")
        r = float(rng.uniform(*(radii[len(out)] if radii else radius)))
        axes = [r, r, r]
        if elongation > 1.0:
            axis = int(rng.integers(0, 3))
            axes[axis] = r * float(rng.uniform(1.2, elongation))
        c = (_snap(rng.uniform(-44, 44)), _snap(rng.uniform(-56, 56)), _snap(rng.uniform(-30, 30)))
        # inside the brain with a margin (the brain ellipsoid has semi-axes 62, 78, 54 mm)
        reach = max(axes) + 6
        if (abs(c[0]) + reach) / 62 > 1 or (abs(c[1]) + reach) / 78 > 1 \
                or (abs(c[2]) + reach) / 54 > 1:
            continue
        if ((c[0] / 62) ** 2 + (c[1] / 78) ** 2 + (c[2] / 54) ** 2) ** 0.5 \
                + reach / 54 > 1:
            continue
        # away from the ventricles (near the midline, |x| < 16, |y| < 30, |z| < 16)
        if abs(c[0]) < 16 + reach and abs(c[1]) < 30 + reach and abs(c[2]) < 16 + reach:
            continue
        if any(math.dist(c, o["centre"]) < max(axes) + max(o["axes"]) + 8 for o in out):
            continue
        if any(math.dist(c, ref) < max(axes) + 8 + 6 for ref in REFERENCES):
            continue
        if not out and (abs(c[2]) < axes[2] + min_abs_z or abs(c[0]) < max(8, min_abs_x)):
            continue
        out.append({"centre": c, "axes": tuple(axes)})
    return out


def head(work_dir: Path, rng: np.random.Generator, path: str = "head.nii",
         lesions: list[int] | int = 1, radius: list[float] = (6.0, 11.0),
         elongation: float = 1.0, level: list[float] = (1300.0, 1700.0),
         noise: list[float] = (15.0, 30.0), threshold_fraction: float = 0.5,
         point: list[float] | None = None, study_name: str = "patient",
         rois: list[str] = (), zoom: float = 2.0, min_abs_z: float = 0.0,
         roi_shrink: float = 1.0, threshold: float | None = None,
         radii: list[list[float]] | None = None, min_abs_x: float = 0.0,
         gain: list[float] | None = None, rim: list[float] | None = None) -> dict[str, Any]:
    """A head volume with lesions, written as NIfTI (``.nii``/``.nii.gz``, with nibabel) or as an
    AMIDE flat XIF study (``.xif``); gold sizes, positions and statistics.

    ``lesions`` is a count or [lo, hi]; ``radius`` [lo, hi] mm the semi-axis of each (or
    ``radii``, one [lo, hi] per lesion, which also sets the count); with
    ``elongation`` > 1 one semi-axis of each is stretched by up to that factor (ellipsoids).
    ``threshold`` is the isocontour threshold a task names (by default ``threshold_fraction``
    of the way between the brain and the faintest lesion); ``iso_volume`` is the volume of
    the voxels at or above it connected to lesion 0's centre. ``point`` [x, y, z] (mm, a
    voxel centre: odd numbers) is a probe
    point whose intensity is gold. ``rois`` names ROIs to put into a ``.xif``
    study: "lesion" (an ellipsoid on lesion 0, its semi-axes times ``roi_shrink``) and
    "reference" (a 16 mm sphere of normal brain). Lesion 0 is the largest (without
    ``min_abs_z``). ``min_abs_z``
    keeps the first lesion placed that far (mm) off the z = 0 slice (use it with one lesion),
    ``min_abs_x`` that far off the midline (at least 8 mm always). ``gain`` [lo, hi] scales
    the whole scan (tissues, lesions and noise) by one factor drawn log-uniformly from that
    range, as a scanner's receiver gain does: MR intensities have no absolute unit, so each
    scan's values are its own (gold ``gain``).

    ``rim`` [lo, hi] makes the lesions ring-enhancing instead of uniform, as an enhancing
    tumour with a necrotic centre is on a contrast T1 scan: each lesion's intensity rises
    from a core level at its centre to its rim level (``level``) at its edge with the square
    of the normalised radius rho (``core + (level - core) rho^2``), the core being a fraction
    of the rim level drawn uniformly from [lo, hi] (gold ``core`` per lesion). The mean of an
    ROI inside such a lesion then depends on where it sits and how large it is, so tasks check
    the mean under the agent's own ROI (gold ``array``: the volume, kept on the host; the
    whole lesion's ``mean`` and ``centre_mean``, the mean where rho <= 0.35, are what a
    misplaced or wrongly sized ROI gives). Without ``rim`` nothing changes (data, rng stream).
    """
    count = int(rng.integers(lesions[0], lesions[1] + 1)) if isinstance(lesions, (list, tuple)) \
        else int(lesions)
    X, Y, Z = _grid()
    data = np.full(SHAPE, AIR)
    data[_ellipsoid(X, Y, Z, (0, 0, 0), (80, 96, 70))] = SCALP
    data[_ellipsoid(X, Y, Z, (0, 0, 0), (72, 88, 63))] = SKULL
    brain = _ellipsoid(X, Y, Z, (0, 0, 0), (68, 84, 60))
    data[brain] = CORTEX
    data[_ellipsoid(X, Y, Z, (0, 0, 0), (62, 78, 54))] = BRAIN
    for side in (-1, 1):
        data[_ellipsoid(X, Y, Z, (side * 8.0, 0.0, 4.0), (5, 24, 9))] = CSF
    if radii:
        count = len(radii)
    placed = _place_lesions(rng, count, tuple(radius), float(elongation), float(min_abs_z),
                            radii, float(min_abs_x))
    if not min_abs_z:
        placed.sort(key=lambda o: -float(np.prod(o["axes"])))
    masks = []
    for o in placed:
        o["level"] = float(np.round(rng.uniform(*level)))
        mask = _ellipsoid(X, Y, Z, o["centre"], o["axes"])
        if rim is None:
            data[mask] = o["level"]
        else:
            o["core"] = float(np.round(o["level"] * rng.uniform(*rim)))
            rho2 = _rho2(X[mask], Y[mask], Z[mask], o["centre"], o["axes"])
            data[mask] = o["core"] + (o["level"] - o["core"]) * rho2
        masks.append(mask)
    sigma = float(rng.uniform(*noise))
    data = data + rng.normal(0.0, sigma, SHAPE)
    scale = 1.0
    if gain is not None:
        scale = float(np.exp(rng.uniform(np.log(gain[0]), np.log(gain[1]))))
        data = data * scale
        sigma *= scale
        for o in placed:
            o["level"] = float(np.round(o["level"] * scale))
            if "core" in o:
                o["core"] = float(np.round(o["core"] * scale))
    data = np.clip(np.round(data), -32768, 32767).astype(np.int16)

    gold: dict[str, Any] = {"count": count, "noise": sigma, "max": int(data.max()),
                            "min": int(data.min()), "gain": scale,
                            "scalp_level": round(SCALP * scale)}
    out = []
    for o, mask in zip(placed, masks, strict=True):
        a, b, c = o["axes"]
        values = data[mask].astype(float)
        i, j, k = voxel_of(o["centre"])
        out.append({"i": i, "j": j, "k": k, "nifti_x": -o["centre"][0],
                    "nifti_y": o["centre"][1], "nifti_z": -o["centre"][2],
                    "x": o["centre"][0], "y": o["centre"][1], "z": o["centre"][2],
                    "centre": list(o["centre"]), "axes": [a, b, c],
                    "diameter": 2 * max(a, b, c), "rmax": max(a, b, c), "rmin": min(a, b, c),
                    "level": o["level"],
                    "volume": 4.0 / 3.0 * math.pi * a * b * c,
                    "voxel_volume": float(mask.sum()) * VOXEL ** 3,
                    "mean": float(values.mean()), "max": int(values.max())})
        if "core" in o:
            centre = _ellipsoid(X, Y, Z, o["centre"], tuple(0.35 * r for r in o["axes"]))
            out[-1].update({"core": o["core"],
                            "centre_mean": float(data[centre].astype(float).mean())})
    gold["lesions"] = out
    gold["lesion"] = out[0]
    normal = brain & ~np.any(masks, axis=0) if masks else brain
    gold["brain_mean"] = float(data[_ellipsoid(X, Y, Z, (0, 0, 0), (62, 78, 54))
                                    & normal].mean())
    gold["contrast"] = out[0]["mean"] / gold["brain_mean"]
    # the isocontour threshold: between the brain (+ 5 sigma of noise) and the faintest lesion
    faint = min(o["level"] for o in placed)
    if threshold is None:
        threshold = float(np.round(scale * CORTEX + 5 * sigma + threshold_fraction
                                   * (faint - scale * CORTEX - 10 * sigma)))
    gold["threshold"] = threshold
    above = data >= threshold
    from scipy import ndimage

    labels, _ = ndimage.label(above)
    i, j, k = voxel_of(out[0]["centre"])
    seed = labels[i, j, k]
    component = labels == seed if seed else np.zeros_like(above)
    gold["iso_volume"] = float(component.sum()) * VOXEL ** 3
    gold["iso_volume_ml"] = gold["iso_volume"] / 1000.0
    gold["iso_mean"] = float(data[component].mean()) if component.any() else 0.0
    gold["above_volume"] = float(above[brain].sum()) * VOXEL ** 3
    gold["total_lesion_volume"] = float(sum(o["voxel_volume"] for o in out))
    if point is not None:
        p = tuple(float(v) for v in point)
        pi, pj, pk = voxel_of(p)
        gold["point"] = {"x": p[0], "y": p[1], "z": p[2], "value": int(data[pi, pj, pk]),
                         "screen": screen_points(p)}
    # a sphere of normal brain for a reference ROI: the candidate farthest from lesion 0
    ref = max(REFERENCES, key=lambda r: math.dist(r, out[0]["centre"]))
    ref_mask = _ellipsoid(X, Y, Z, ref, (8, 8, 8))
    gold["reference"] = {"centre": list(ref), "mean": float(data[ref_mask].mean())}
    gold["ref_screen"] = screen_points(ref)
    gold["ref_screen"].update({"x0": gold["ref_screen"]["tx"] - 5,
                               "y0": gold["ref_screen"]["ty"] - 5,
                               "x1": gold["ref_screen"]["tx"] + 5,
                               "y1": gold["ref_screen"]["ty"] + 5})
    roi_axes = tuple(a * roi_shrink for a in out[0]["axes"])
    roi_mask = _ellipsoid(X, Y, Z, out[0]["centre"], roi_axes)
    gold["lesion_roi"] = {"axes": list(roi_axes), "mean": float(data[roi_mask].mean())}
    gold["ratio"] = gold["lesion_roi"]["mean"] / gold["reference"]["mean"]
    gold["screen"] = screen_points(out[0]["centre"])
    # lesion 0 mirrored left-right: where a misplaced ROI starts
    gold["misplaced"] = [-out[0]["x"], out[0]["y"], out[0]["z"]]
    gold["mis_screen"] = screen_points(gold["misplaced"])
    # a box well inside lesion 0 on the transverse canvas (for drawing an ROI by dragging)
    inner = 0.55 * min(out[0]["axes"][:2])
    gold["screen"].update({"x0": gold["screen"]["tx"] - int(inner),
                           "y0": gold["screen"]["ty"] - int(inner),
                           "x1": gold["screen"]["tx"] + int(inner),
                           "y1": gold["screen"]["ty"] + int(inner)})
    # where lesion 0 sits in an exported transverse view (fractions of width and height)
    gold["slice_fraction"] = {"x": (out[0]["x"] + SHAPE[0] * VOXEL / 2) / (SHAPE[0] * VOXEL),
                              "y": (SHAPE[1] * VOXEL / 2 - out[0]["y"]) / (SHAPE[1] * VOXEL)}

    target = Path(work_dir) / path
    if path.endswith(".xif"):
        roi_list = []
        if "lesion" in rois:
            roi_list.append(("lesion", out[0]["centre"], roi_axes))
        if "reference" in rois:
            roi_list.append(("reference", ref, (8.0, 8.0, 8.0)))
        if "misplaced" in rois:
            roi_list.append(("lesion", gold["misplaced"], roi_axes))
        write_xif(target, data, study_name, roi_list, zoom=zoom)
    else:
        write_nifti(target, data)
    gold["path"] = path
    if rim is not None:
        # the volume itself (NIfTI order), stored host-side by the task as a gold array: the
        # mean under the agent's saved ROI is recomputed from it (roi_stats.amide_roi_mean)
        gold["array"] = data
    return gold


def missing(work_dir: Path, rng: np.random.Generator, present: str = "t1_head.nii",
            **args: Any) -> dict[str, Any]:
    """An infeasible task's work directory: a head volume ``present`` is there, the file the
    instruction asks for is not."""
    return head(work_dir, rng, path=present, **args)


GENERATORS = {"head": head, "missing": missing}
