"""Input images for the QuPath tasks, and the gold values derived from them.

Every generator takes ``(work_dir, rng, **args)``, writes its files into the task's working
directory and returns gold values computed from the data it wrote (numpy, scikit-image and
tifffile only; seeded by ``rng``).

Two kinds of image:

* ``ihc``: the immunohistochemistry image shipped with scikit-image
  (``skimage.data.immunohistochemistry()``, 512 x 512 RGB, hematoxylin + DAB), saved as TIFF,
  whole or as a seeded crop (turned, mirrored, stain amounts scaled) so every seed differs.
* ``tile``: a synthetic whole-slide-like H-DAB tile. Nuclei are ellipses at known positions; a
  known subset is DAB-positive (brown) and the rest hematoxylin-only (blue). Pixels follow the
  Beer-Lambert law with the stain vectors the generator is given (Ruifrok & Johnston's H-DAB
  vectors by default, H 0.650 0.704 0.286 and DAB 0.268 0.570 0.776), plus a faint hematoxylin
  background, a little blur and noise. Counts, positive percentages and areas are therefore
  known exactly; what QuPath's watershed detection finds is compared with tolerances.

Stain vectors "as QuPath would estimate them" come from :func:`.stains.estimate_stains`, a
numpy port of QuPath's own estimate. The tile's nuclei and rendering are in :mod:`.hdab_tile`,
the IHC image's seeded views in :mod:`.ihc_image`.

Each generator also returns ``qupath_stage``: what the adapter's staging script must set up in
the QuPath project before the GUI opens it (image, image type, pixel size, stains, annotations
already drawn). It holds setup only, never an answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.qupath.hdab_tile import place_nuclei, render_hdab
from sciagent_gym.envs.qupath.ihc_image import ihc_variant, jittered
from sciagent_gym.envs.qupath.stains import (
    QUPATH_DEFAULT_DAB,
    QUPATH_DEFAULT_H,
    RUIFROK_DAB,
    RUIFROK_H,
    angle_deg,
    estimate_stains,
    stains_arg,
    unit,
)


def write_tiff(path: Path, rgb: np.ndarray, pixel_size: float | None) -> None:
    """An 8-bit RGB TIFF; with ``pixel_size`` (µm) the resolution tags say so (ImageJ-style
    metadata too), which QuPath's readers turn into a pixel calibration."""
    import tifffile

    kwargs: dict[str, Any] = {"photometric": "rgb"}
    if pixel_size:
        kwargs["resolution"] = (1e4 / pixel_size, 1e4 / pixel_size)
        kwargs["resolutionunit"] = "CENTIMETER"
    tifffile.imwrite(path, np.ascontiguousarray(rgb, np.uint8), **kwargs)


def _rect(a: dict[str, Any]) -> tuple[float, float, float, float]:
    return float(a["x"]), float(a["y"]), float(a["w"]), float(a["h"])


def tile(work: Path, rng: np.random.Generator, path: str = "tile.tif", width: int = 640,
         height: int = 480, n_nuclei: int = 60, positive_fraction: float = 0.3,
         h_vector: Any = RUIFROK_H, dab_vector: Any = RUIFROK_DAB, pixel_size: float = 0.5,
         annotations: list[dict[str, Any]] | None = None,
         region_fractions: dict[str, float] | None = None, image_type: str = "BRIGHTFIELD_H_DAB",
         set_stains: bool = False, background_h: float = 0.04, target: str | None = None,
         region_counts: dict[str, list[int]] | None = None,
         min_axis_ratio: float | None = None) -> dict[str, Any]:
    """A synthetic H-DAB tile with ``n_nuclei`` nuclei, ``positive_fraction`` DAB-positive.

    ``annotations`` (name, class, x, y, w, h in pixels) are rectangles QuPath's project gets at
    staging; with ``region_fractions`` {annotation name: positive fraction} nuclei inside that
    annotation are positive with that fraction instead. No nucleus straddles an annotation's
    edge. ``set_stains``: the project's stains are the rendering vectors (otherwise QuPath's
    defaults for the image type).

    ``region_counts`` {annotation name: [lo, hi]}: that annotation holds a seeded number of
    nuclei drawn uniformly from lo..hi, and ``n_nuclei`` more lie outside every annotation.
    With a ``target``, every other counted annotation holds at least a quarter as many nuclei
    as the target (detecting in all of them is then told apart from detecting in the target
    alone). ``min_axis_ratio``: no nucleus is more elongated than this minor/major axis ratio
    allows (rounder nuclei, which a shape watershed has no reason to split).

    Gold: n_nuclei, n_positive, n_negative, positive_percent, nuclei (x, y, positive), per
    annotation {n_nuclei, n_positive, positive_percent, area_px, area_um2, bounds},
    true stain vectors, QuPath's estimate on this image (estimated_h, estimated_dab).
    """
    annotations = [dict(a) for a in (annotations or [])]
    fractions = dict(region_fractions or {})
    r_max = 9.0
    rects = [_rect(a) for a in annotations]
    margin = r_max + 5
    if region_counts:
        by_name = {a["name"]: r for a, r in zip(annotations, rects, strict=True)}
        unknown = set(region_counts) - set(by_name)
        if unknown:
            raise ValueError(f"region_counts names no annotation: {sorted(unknown)}")
        counts = {name: int(rng.integers(int(region_counts[name][0]),
                                         int(region_counts[name][1]) + 1))
                  for name in by_name if name in region_counts}
        if target in counts:
            floor = int(np.ceil(counts[target] / 4))
            counts = {k: (v if k == target else max(v, floor)) for k, v in counts.items()}
        pts: list[tuple[float, float]] = []
        for name, k in counts.items():
            pts += place_nuclei(rng, (height, width), k, r_max, [], margin,
                                 within=by_name[name], taken=pts)
        pts += place_nuclei(rng, (height, width), n_nuclei, r_max, rects, margin, taken=pts,
                             outside=True)
    else:
        pts = place_nuclei(rng, (height, width), n_nuclei, r_max, rects, margin=margin)

    def region_of(x: float, y: float) -> str | None:
        for a, (ax, ay, aw, ah) in zip(annotations, rects, strict=True):
            if ax <= x < ax + aw and ay <= y < ay + ah:
                return a["name"]
        return None

    # Exactly round(fraction * n) positives in each group (a region, or outside them all)
    groups: dict[str | None, list[int]] = {}
    for i, (x, y) in enumerate(pts):
        groups.setdefault(region_of(x, y), []).append(i)
    positive = np.zeros(len(pts), bool)
    for name, idx in groups.items():
        frac = fractions.get(name, positive_fraction) if name is not None else positive_fraction
        k = int(round(frac * len(idx)))
        positive[rng.permutation(np.array(idx))[:k]] = True

    h_conc = np.full((height, width), background_h) + rng.normal(0, 0.01, (height, width))
    dab_conc = np.clip(rng.normal(0.0, 0.008, (height, width)), 0, None)
    nuclei = []
    for (x, y), pos in zip(pts, positive, strict=True):
        a_ax = rng.uniform(6.5, r_max)
        b_ax = rng.uniform(5.5, a_ax)
        if min_axis_ratio:
            b_ax = max(b_ax, min_axis_ratio * a_ax)
        theta = rng.uniform(0, np.pi)
        c, s = np.cos(theta), np.sin(theta)
        # only the pixels the nucleus and its ring can reach (rr <= 2.4 lies within
        # sqrt(2.4) * a_ax of the centre)
        reach = int(np.ceil(np.sqrt(2.4) * a_ax)) + 2
        ys = slice(max(0, int(y) - reach), min(height, int(y) + reach + 1))
        xs = slice(max(0, int(x) - reach), min(width, int(x) + reach + 1))
        yy, xx = np.mgrid[ys, xs].astype(float)
        u = ((xx - x) * c + (yy - y) * s) / a_ax
        v = (-(xx - x) * s + (yy - y) * c) / b_ax
        rr = u * u + v * v
        inside = rr <= 1.0
        h_win, dab_win = h_conc[ys, xs], dab_conc[ys, xs]
        if pos:
            # brown nucleus, and brown (DAB-only) cytoplasm around it
            ring = (rr > 1.0) & (rr <= 2.4)
            dab_win[ring] += rng.uniform(0.25, 0.4)
            h_win[inside] += rng.uniform(0.35, 0.45)
            dab_win[inside] += rng.uniform(0.55, 0.75)
        else:
            h_win[inside] += rng.uniform(0.6, 0.8)
        nuclei.append({"x": float(x), "y": float(y), "positive": bool(pos),
                       "area_px": float(np.pi * a_ax * b_ax)})
    from scipy.ndimage import gaussian_filter

    h_conc = gaussian_filter(np.clip(h_conc, 0, None), 0.8)
    dab_conc = gaussian_filter(dab_conc, 0.8)
    rgb = render_hdab(h_conc, dab_conc, h_vector, dab_vector, rng)
    write_tiff(work / path, rgb, pixel_size)

    n_pos = int(positive.sum())
    per_annotation = {}
    for a, (ax, ay, aw, ah) in zip(annotations, rects, strict=True):
        idx = groups.get(a["name"], [])
        k = int(positive[idx].sum()) if idx else 0
        per_annotation[a["name"]] = {
            "n_nuclei": len(idx), "n_positive": k, "n_negative": len(idx) - k,
            "positive_percent": 100.0 * k / len(idx) if idx else 0.0,
            "area_px": aw * ah, "area_um2": aw * ah * pixel_size ** 2,
            "bounds": [ax, ay, aw, ah], "class": a.get("class"),
        }
    est = estimate_stains(rgb)
    stage = {"image": path, "image_type": image_type, "pixel_size": pixel_size,
             "annotations": [{"name": a["name"], "class": a.get("class"),
                              "roi": {"type": "rectangle", "x": a["x"], "y": a["y"],
                                      "w": a["w"], "h": a["h"]}} for a in annotations]}
    if set_stains:
        stage["stains"] = stains_arg("H-DAB rendering", h_vector, dab_vector)
    return {"width": width, "height": height, "pixel_size": pixel_size,
            "n_nuclei": len(pts), "n_positive": n_pos, "n_negative": len(pts) - n_pos,
            "positive_percent": 100.0 * n_pos / len(pts) if pts else 0.0,
            "nuclei": nuclei, "annotations": per_annotation,
            "true_h": [float(v) for v in unit(h_vector)],
            "true_dab": [float(v) for v in unit(dab_vector)],
            "estimated_h": est["hematoxylin"], "estimated_dab": est["dab"],
            "estimated_background": est["background"],
            "annotation_list": [per_annotation[a["name"]] for a in annotations],
            "target": per_annotation[target] if target else None,
            "image_area_um2": width * height * pixel_size ** 2, "qupath_stage": stage}


def ihc(work: Path, rng: np.random.Generator, path: str = "ihc.tif", pixel_size: float = 0.5,
        image_type: str = "BRIGHTFIELD_H_DAB",
        annotations: list[dict[str, Any]] | None = None, crop: int | None = None,
        jitter: int = 0, intensity: float = 0.0) -> dict[str, Any]:
    """scikit-image's immunohistochemistry image (H-DAB, 512 x 512 RGB) as a TIFF.

    With ``crop`` the TIFF is a seeded ``crop`` x ``crop`` view of it (see
    :func:`.ihc_image.ihc_variant`, ``intensity`` scales the stain amounts), so every seed shows
    other data; ``jitter`` moves each annotation by up to that many pixels (kept inside the
    image).

    Gold: size, QuPath's stain estimate on the whole image (estimated_h, estimated_dab,
    background) and, for each annotation, its area and bounds as staged.
    """
    from skimage import data as skdata

    rgb = skdata.immunohistochemistry()
    if crop:
        rgb = ihc_variant(rng, rgb, int(crop), float(intensity))
    height, width = rgb.shape[:2]
    write_tiff(work / path, rgb, pixel_size)
    est = estimate_stains(rgb)
    annotations = jittered(rng, [dict(a) for a in (annotations or [])], int(jitter), width,
                            height)
    per_annotation = {a["name"]: {"area_px": float(a["w"] * a["h"]),
                                  "area_um2": float(a["w"] * a["h"] * pixel_size ** 2),
                                  "bounds": list(_rect(a)), "class": a.get("class")}
                      for a in annotations}
    stage = {"image": path, "image_type": image_type, "pixel_size": pixel_size,
             "annotations": [{"name": a["name"], "class": a.get("class"),
                              "roi": {"type": "rectangle", "x": a["x"], "y": a["y"],
                                      "w": a["w"], "h": a["h"]}} for a in annotations]}
    return {"width": int(width), "height": int(height), "pixel_size": pixel_size,
            "estimated_h": est["hematoxylin"], "estimated_dab": est["dab"],
            "estimated_background": est["background"],
            "default_angle_h": angle_deg(est["hematoxylin"], QUPATH_DEFAULT_H),
            "default_angle_dab": angle_deg(est["dab"], QUPATH_DEFAULT_DAB),
            "annotations": per_annotation,
            "annotation_list": [per_annotation[a["name"]] for a in annotations],
            "image_area_um2": width * height * pixel_size ** 2, "qupath_stage": stage}


def stage_of(gold: dict[str, Any]) -> dict[str, Any] | None:
    """The one ``qupath_stage`` among a task's gold values (the image QuPath opens)."""
    stages = [v["qupath_stage"] for v in gold.values()
              if isinstance(v, dict) and isinstance(v.get("qupath_stage"), dict)]
    if len(stages) > 1:
        raise ValueError("a QuPath task opens one image: several generators returned a stage")
    return stages[0] if stages else None


GENERATORS = {
    "ihc": ihc,
    "tile": tile,
}
