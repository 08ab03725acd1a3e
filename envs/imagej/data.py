"""Input images for the ImageJ tasks, and the gold values derived from them.

Every generator takes ``(work_dir, rng, **args)``, writes its files into the task's working
directory and returns the gold values computed from the data it wrote (never typed by hand).
Real images come from scikit-image's bundled data (no download); synthetic ones are seeded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import tifffile
from scipy import ndimage as ndi
from skimage import data as skdata
from skimage import filters, measure


def _save(path: Path, array: np.ndarray) -> None:
    tifffile.imwrite(path, array, imagej=True)


def nuclei(work: Path, rng: np.random.Generator, path: str, n: int, min_size: int = 50
           ) -> dict[str, Any]:
    """A fluorescence-like field of ``n`` separated nuclei plus noise and small debris.

    Gold: the particle count and mean area a correct threshold + size filter gives (Otsu on
    the smoothed image, particles of at least ``min_size`` pixels, not touching excluded).
    """
    h, w = 512, 512
    yy, xx = np.mgrid[0:h, 0:w]
    img = np.zeros((h, w), float)
    centres: list[tuple[float, float, float]] = []
    tries = 0
    while len(centres) < n and tries < 10000:
        tries += 1
        r = rng.uniform(8, 14)
        cy, cx = rng.uniform(r + 6, h - r - 6), rng.uniform(r + 6, w - r - 6)
        if all((cy - y) ** 2 + (cx - x) ** 2 > (r + rr + 10) ** 2 for y, x, rr in centres):
            centres.append((cy, cx, r))
    for cy, cx, r in centres:
        ecc = rng.uniform(0.75, 1.0)
        angle = rng.uniform(0, np.pi)
        dy, dx = yy - cy, xx - cx
        u = dx * np.cos(angle) + dy * np.sin(angle)
        v = -dx * np.sin(angle) + dy * np.cos(angle)
        inside = (u / r) ** 2 + (v / (r * ecc)) ** 2 <= 1.0
        img[inside] = np.maximum(img[inside], rng.uniform(120, 200))
    for _ in range(n // 2):  # debris: tiny bright specks below the size filter
        y, x = rng.integers(5, h - 5), rng.integers(5, w - 5)
        img[y - 1:y + 2, x - 1:x + 2] = np.maximum(img[y - 1:y + 2, x - 1:x + 2], 150)
    img = ndi.gaussian_filter(img, 1.2) + 25 + rng.normal(0, 4, (h, w))
    arr = np.clip(img, 0, 255).astype(np.uint8)
    _save(work / path, arr)
    mask = arr > filters.threshold_otsu(arr)
    labels = measure.label(mask)
    areas = [p.area for p in measure.regionprops(labels) if p.area >= min_size]
    return {"count": len(areas), "mean_area": float(np.mean(areas)), "n_drawn": len(centres)}


def ihc_gray(work: Path, rng: np.random.Generator, path: str, box: int = 80) -> dict[str, Any]:
    """scikit-image's immunohistochemistry image as 8-bit grey, and a seeded square region.

    Grey is ImageJ's unweighted (R+G+B)/3 conversion. Gold: the region and its mean and area.
    """
    rgb = skdata.immunohistochemistry().astype(float)
    grey = np.round(rgb.mean(axis=2)).astype(np.uint8)
    _save(work / path, grey)
    h, w = grey.shape
    x, y = int(rng.integers(20, w - box - 20)), int(rng.integers(20, h - box - 20))
    region = grey[y:y + box, x:x + box].astype(float)
    return {"x": x, "y": y, "w": box, "h": box, "mean": float(region.mean()),
            "area": box * box, "min": float(region.min()), "max": float(region.max())}


def cell_tiff(work: Path, rng: np.random.Generator, path: str) -> dict[str, Any]:
    """scikit-image's cell micrograph (8-bit) as a TIFF; gold: its shape and mean."""
    arr = skdata.cell()
    _save(work / path, arr)
    return {"width": arr.shape[1], "height": arr.shape[0], "mean": float(arr.mean())}


def blur_reference(work: Path, rng: np.random.Generator, source: str, sigma: float,
                   reference: str) -> dict[str, Any]:
    """What a Gaussian blur of ``source`` with ``sigma`` should look like.

    The reference is written next to the task on the host side (outside the sandbox) by the
    caller's gold directory; here it is returned as an array for the evaluator.
    """
    arr = tifffile.imread(work / source).astype(float)
    blurred = ndi.gaussian_filter(arr, sigma, mode="nearest")
    return {"array": np.clip(np.round(blurred), 0, 255).astype(np.uint8), "sigma": sigma}


def moon16(work: Path, rng: np.random.Generator, path: str, crop_w: int = 200,
           crop_h: int = 150) -> dict[str, Any]:
    """A 16-bit image made from scikit-image's moon (offset, gain, noise) and a crop box.

    Gold: the crop box and the 8-bit image ImageJ's min-max scaling gives inside it.
    """
    moon = skdata.moon().astype(float)
    arr = np.clip(moon * 37 + 900 + rng.normal(0, 30, moon.shape), 0, 65535).astype(np.uint16)
    _save(work / path, arr)
    h, w = arr.shape
    x, y = int(rng.integers(10, w - crop_w - 10)), int(rng.integers(10, h - crop_h - 10))
    lo, hi = float(arr.min()), float(arr.max())
    scaled = np.clip(np.floor((arr.astype(float) - lo) * 256.0 / (hi - lo + 1)), 0, 255)
    crop = scaled[y:y + crop_h, x:x + crop_w].astype(np.uint8)
    return {"x": x, "y": y, "w": crop_w, "h": crop_h, "crop8": crop}


def round_cell(work: Path, rng: np.random.Generator, path: str) -> dict[str, Any]:
    """A dim field with one large bright round cell among smaller dim ones.

    Gold: the big cell's centre and diameter (pixels).
    """
    h, w = 400, 500
    yy, xx = np.mgrid[0:h, 0:w]
    img = np.full((h, w), 30.0)
    d = float(rng.integers(60, 91))
    cy, cx = float(rng.integers(int(d) + 10, h - int(d) - 10)), \
        float(rng.integers(int(d) + 10, w - int(d) - 10))
    img[(yy - cy) ** 2 + (xx - cx) ** 2 <= (d / 2) ** 2] = 200
    for _ in range(6):
        r = rng.uniform(6, 12)
        y, x = rng.uniform(r, h - r), rng.uniform(r, w - r)
        if (y - cy) ** 2 + (x - cx) ** 2 > (d / 2 + r + 15) ** 2:
            img[(yy - y) ** 2 + (xx - x) ** 2 <= r * r] = 90
    img = ndi.gaussian_filter(img, 1.0) + rng.normal(0, 3, (h, w))
    _save(work / path, np.clip(img, 0, 255).astype(np.uint8))
    return {"cx": cx, "cy": cy, "d": d, "x": cx - d / 2, "y": cy - d / 2}


GENERATORS = {
    "nuclei": nuclei,
    "ihc_gray": ihc_gray,
    "cell_tiff": cell_tiff,
    "blur_reference": blur_reference,
    "moon16": moon16,
    "round_cell": round_cell,
}
