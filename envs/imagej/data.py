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


def _check_box(shape: tuple[int, ...], x: int, y: int, w: int, h: int) -> None:
    """A box given by task params must lie inside the image (a spec bug otherwise)."""
    height, width = shape[:2]
    if not (0 <= x and 0 <= y and w > 0 and h > 0 and x + w <= width and y + h <= height):
        raise ValueError(f"box x={x} y={y} w={w} h={h} is not inside a {width}x{height} image")


def ihc_gray(work: Path, rng: np.random.Generator, path: str, x: int, y: int, w: int = 80,
             h: int = 80) -> dict[str, Any]:
    """scikit-image's immunohistochemistry image as 8-bit grey, and the region x, y, w, h.

    Grey is ImageJ's unweighted (R+G+B)/3 conversion, rounded. The box comes from the task's
    params (the instruction names it). Gold: the region's mean, area, min and max as ImageJ's
    Measure reports them for that rectangle on the uncalibrated image.
    """
    rgb = skdata.immunohistochemistry().astype(float)
    grey = np.round(rgb.mean(axis=2)).astype(np.uint8)
    _check_box(grey.shape, x, y, w, h)
    _save(work / path, grey)
    region = grey[y:y + h, x:x + w].astype(float)
    return {"x": x, "y": y, "w": w, "h": h, "mean": float(region.mean()),
            "area": w * h, "min": float(region.min()), "max": float(region.max()),
            "image_mean": float(grey.mean())}


def cell_tiff(work: Path, rng: np.random.Generator, path: str) -> dict[str, Any]:
    """scikit-image's cell micrograph (8-bit) as a TIFF; gold: its shape and mean."""
    arr = skdata.cell()
    _save(work / path, arr)
    return {"width": arr.shape[1], "height": arr.shape[0], "mean": float(arr.mean())}


def blur_reference(work: Path, rng: np.random.Generator, source: str, sigma: float
                   ) -> dict[str, Any]:
    """What ImageJ's Gaussian Blur of ``source`` (8-bit) with ``sigma`` pixels looks like.

    ImageJ extends edges with the border pixels (``mode="nearest"``) and rounds back to 8 bits.
    The reference is returned as an array; the task stores it in its host-side gold directory,
    outside the sandbox, and criteria compare the agent's saved image with it.
    """
    arr = tifffile.imread(work / source).astype(float)
    blurred = ndi.gaussian_filter(arr, sigma, mode="nearest")
    return {"array": np.clip(np.round(blurred), 0, 255).astype(np.uint8), "sigma": sigma}


def moon16(work: Path, rng: np.random.Generator, path: str, x: int, y: int, w: int = 200,
           h: int = 150) -> dict[str, Any]:
    """A 16-bit image made from scikit-image's moon (offset, gain, seeded noise) and a crop box.

    Gold: the crop box and the 8-bit crop ImageJ gives for Image > Type > 8-bit with "Scale
    when converting" on: the display range is the 16-bit min..max when the file is opened, and
    ``v8 = min(255, int((v - min) * 256 / (max - min + 1) + 0.5))``.
    """
    moon = skdata.moon().astype(float)
    arr = np.clip(moon * 37 + 900 + rng.normal(0, 30, moon.shape), 0, 65535).astype(np.uint16)
    _check_box(arr.shape, x, y, w, h)
    _save(work / path, arr)
    lo, hi = float(arr.min()), float(arr.max())
    scale = 256.0 / (hi - lo + 1)
    scaled = np.minimum(np.floor((arr.astype(float) - lo) * scale + 0.5), 255)
    crop = scaled[y:y + h, x:x + w].astype(np.uint8)
    return {"x": x, "y": y, "w": w, "h": h, "crop8": crop, "min16": lo, "max16": hi}


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
