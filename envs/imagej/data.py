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

    Gold: the particle count, mean area and sorted areas a correct threshold + size filter gives
    (Otsu on the smoothed image, particles of at least ``min_size`` pixels).
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
    return {"count": len(areas), "mean_area": float(np.mean(areas)), "n_drawn": len(centres),
            "areas": sorted(int(a) for a in areas)}


def _particle_gold(arr: np.ndarray, min_size: float) -> tuple[list[int], float]:
    """Areas (pixels) of the Otsu-foreground particles of at least ``min_size`` pixels, as
    ImageJ's Analyze Particles traces them (8-connected), and the Otsu threshold used."""
    thr = filters.threshold_otsu(arr)
    labels = measure.label(arr > thr)
    return [int(p.area) for p in measure.regionprops(labels) if p.area >= min_size], float(thr)


def nuclei_calibrated(work: Path, rng: np.random.Generator, path: str, n: int, px_um: float,
                      min_um2: float, n_micro: int = 6) -> dict[str, Any]:
    """The :func:`nuclei` field plus ``n_micro`` bright micronuclei of 30-45 pixels, to be
    analysed at ``px_um`` micrometres per pixel with a minimum particle area of ``min_um2``
    square micrometres (the file itself is uncalibrated).

    The micronuclei sit between the µm² limit read as pixels and the true limit in pixels
    (``min_um2 / px_um**2``, about 57-60 pixels for the task's objectives), so a size filter
    typed in the wrong unit keeps them. Gold: the count and mean area in µm² that Analyze
    Particles gives on the calibrated image (``size=min_um2-Infinity`` compares calibrated
    areas), and the limit in pixels.
    """
    nuclei(work, rng, path, n, min_size=50)
    arr = tifffile.imread(work / path).astype(float)
    h, w = arr.shape
    yy, xx = np.mgrid[0:h, 0:w]
    occupied = ndi.binary_dilation(arr > 60, iterations=10)
    placed, tries = 0, 0
    while placed < n_micro and tries < 10000:
        tries += 1
        r = float(rng.uniform(3.1, 3.6))
        cy, cx = float(rng.uniform(12, h - 12)), float(rng.uniform(12, w - 12))
        disk = (yy - cy) ** 2 + (xx - cx) ** 2 <= r * r
        if occupied[disk].any() or occupied[int(cy), int(cx)]:
            continue
        blob = ndi.gaussian_filter(disk * float(rng.uniform(150, 190)), 1.2) + 25
        arr = np.maximum(arr, blob)
        occupied |= ndi.binary_dilation(disk, iterations=10)
        placed += 1
    out = np.clip(np.round(arr), 0, 255).astype(np.uint8)
    _save(work / path, out)
    px2 = float(px_um) ** 2
    min_px = float(min_um2) / px2
    areas, thr = _particle_gold(out, min_px)
    small, _ = _particle_gold(out, 0)
    return {"count": len(areas), "mean_area": float(np.mean(areas)),
            "mean_area_um2": float(np.mean(areas)) * px2, "min_px": min_px,
            "areas_um2": sorted(a * px2 for a in areas),
            "px_um": float(px_um), "n_micro": placed, "threshold": thr,
            "count_px_limit": sum(1 for a in small if a >= float(min_um2)),
            "count_unfiltered": len(small)}


def nuclei_morphometry(work: Path, rng: np.random.Generator, path: str, n: int, px_um: float,
                       min_um2: float) -> dict[str, Any]:
    """The :func:`nuclei_calibrated` field for a whole morphometry workflow (calibrate, segment,
    size-filter, measure, export a mask and an outline figure).

    Gold besides :func:`nuclei_calibrated`'s: ``mask``, the kept nuclei as a 0/255 image (what
    Analyze Particles' Masks output holds), the mean centroid X and Y in µm (ImageJ puts a
    pixel's centre at i + 0.5), the mean of the nuclei's mean grey values and the total nuclear
    area in µm².
    """
    gold = nuclei_calibrated(work, rng, path, n, px_um, min_um2)
    arr = tifffile.imread(work / path)
    labels = measure.label(arr > filters.threshold_otsu(arr))
    keep = [p for p in measure.regionprops(labels) if p.area >= gold["min_px"]]
    mask = np.zeros(arr.shape, np.uint8)
    for p in keep:
        mask[labels == p.label] = 255
    px = float(px_um)
    gold.update({
        "mask": mask,
        "mean_intensity": float(np.mean([arr[labels == p.label].mean() for p in keep])),
        "mean_x_um": float(np.mean([(p.centroid[1] + 0.5) * px for p in keep])),
        "mean_y_um": float(np.mean([(p.centroid[0] + 0.5) * px for p in keep])),
        "total_area_um2": float(sum(p.area for p in keep)) * px * px,
    })
    return gold


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


def cell_tiff(work: Path, rng: np.random.Generator, path: str, noise: float = 0.0
              ) -> dict[str, Any]:
    """scikit-image's cell micrograph (8-bit) as a TIFF, optionally with seeded Gaussian noise
    of standard deviation ``noise`` grey levels (a low-light acquisition worth denoising).

    Gold: its shape, mean and the pixels written.
    """
    arr = skdata.cell()
    if noise > 0:
        noisy = arr.astype(float) + rng.normal(0, float(noise), arr.shape)
        arr = np.clip(np.round(noisy), 0, 255).astype(np.uint8)
    _save(work / path, arr)
    return {"width": arr.shape[1], "height": arr.shape[0], "mean": float(arr.mean()),
            "array": arr}


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

    Gold: the crop box and the 8-bit crop (and its mean) ImageJ gives for 8-bit with "Scale
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
    return {"x": x, "y": y, "w": w, "h": h, "crop8": crop, "crop_mean": float(crop.mean()),
            "min16": lo, "max16": hi}


def round_cell(work: Path, rng: np.random.Generator, path: str, n_small: int = 6
               ) -> dict[str, Any]:
    """A dim field with one large bright round cell among ``n_small`` smaller, dimmer ones.

    Gold, in ImageJ's coordinates (pixel i spans i..i+1, so a pixel's centre is at i + 0.5):
    the big cell's centre cx, cy, its diameter d (pixel extent), the top-left x, y of its
    bounding box, and the first small cell's centre and diameter (for negatives).
    """
    h, w = 400, 500
    yy, xx = np.mgrid[0:h, 0:w]
    img = np.full((h, w), 30.0)
    d = int(rng.integers(60, 91))
    r = d / 2
    cy = int(rng.integers(d // 2 + 20, h - d // 2 - 20))
    cx = int(rng.integers(d // 2 + 20, w - d // 2 - 20))
    img[(yy - cy) ** 2 + (xx - cx) ** 2 <= r * r] = 200
    small: list[tuple[float, float, float]] = []
    tries = 0
    while len(small) < n_small and tries < 10000:
        tries += 1
        rs = float(rng.uniform(6, 12))
        y, x = float(rng.uniform(rs + 2, h - rs - 2)), float(rng.uniform(rs + 2, w - rs - 2))
        far_from_big = (y - cy) ** 2 + (x - cx) ** 2 > (r + rs + 15) ** 2
        apart = all((y - sy) ** 2 + (x - sx) ** 2 > (rs + sr + 6) ** 2 for sy, sx, sr in small)
        if far_from_big and apart:
            small.append((y, x, rs))
            img[(yy - y) ** 2 + (xx - x) ** 2 <= rs * rs] = 90
    if len(small) < n_small:
        raise RuntimeError("could not place the small cells")
    img = ndi.gaussian_filter(img, 1.0) + rng.normal(0, 3, (h, w))
    _save(work / path, np.clip(np.round(img), 0, 255).astype(np.uint8))
    sy, sx, sr = small[0]
    return {"cx": cx + 0.5, "cy": cy + 0.5, "d": float(2 * int(r) + 1),
            "x": float(cx - int(r)), "y": float(cy - int(r)),
            "small_cx": sx + 0.5, "small_cy": sy + 0.5, "small_d": 2 * sr}


def bleach_timecourse(work: Path, rng: np.random.Generator, path: str, frames: int,
                      offset: int, x: int, y: int, w: int = 40, h: int = 40
                      ) -> dict[str, Any]:
    """A 16-bit time-lapse (``frames`` frames, an ImageJ hyperstack of frames) of a few
    fluorescent cells that photobleach, recorded by a camera that adds a dark ``offset`` to
    every pixel. The cell of interest fills the box x, y, w, h (the task's params name it);
    the other cells bleach at other rates and lie outside the box.

    Gold, as ImageJ gives it after Process > Math > Subtract (the offset, every frame; 16-bit
    clips at 0): ``corrected`` (the whole corrected stack), the box's mean grey value per
    frame (``profile``, what Measure Stack lists), its first and last values, their mean, the
    fraction left at the end, and the same last value without the correction (for negatives).
    """
    hgt, wid = 224, 256
    _check_box((hgt, wid), x, y, w, h)
    yy, xx = np.mgrid[0:hgt, 0:wid]

    def cell(cy: float, cx: float, ry: float, rx: float) -> np.ndarray:
        angle = rng.uniform(0, np.pi)
        dy, dx = yy - cy, xx - cx
        u = dx * np.cos(angle) + dy * np.sin(angle)
        v = -dx * np.sin(angle) + dy * np.cos(angle)
        return ndi.gaussian_filter(((u / rx) ** 2 + (v / ry) ** 2 <= 1.0).astype(float), 1.5)

    shapes = [cell(y + h / 2, x + w / 2, rng.uniform(0.3, 0.4) * h, rng.uniform(0.36, 0.45) * w)]
    rates = [float(rng.uniform(0.05, 0.12))]
    brightness = [float(rng.uniform(1800, 3000))]
    tries = 0
    while len(shapes) < 5 and tries < 10000:
        tries += 1
        cy, cx = rng.uniform(22, hgt - 22), rng.uniform(22, wid - 22)
        if x - 24 < cx < x + w + 24 and y - 24 < cy < y + h + 24:
            continue  # keep the box for the cell of interest alone
        shapes.append(cell(cy, cx, rng.uniform(9, 15), rng.uniform(9, 15)))
        rates.append(float(rng.uniform(0.01, 0.2)))
        brightness.append(float(rng.uniform(800, 3000)))
    base = 40.0 + 10.0 * ndi.gaussian_filter(rng.normal(0, 1, (hgt, wid)), 8)
    stack = np.empty((frames, hgt, wid), np.uint16)
    cells = list(zip(shapes, rates, brightness, strict=True))
    for t in range(frames):
        img = base + sum(b * np.exp(-k * t) * s for s, k, b in cells)
        img = img + offset + rng.normal(0, 6, (hgt, wid))
        stack[t] = np.clip(np.round(img), 0, 65535).astype(np.uint16)
    tifffile.imwrite(work / path, stack, imagej=True, metadata={"axes": "TYX"})
    corrected = np.clip(stack.astype(np.int64) - int(offset), 0, 65535).astype(np.uint16)
    profile = [float(f[y:y + h, x:x + w].mean()) for f in corrected]
    raw = [float(f[y:y + h, x:x + w].mean()) for f in stack]
    return {"corrected": corrected, "profile": profile, "first": profile[0],
            "last": profile[-1], "mean": float(np.mean(profile)),
            "fraction_left": profile[-1] / profile[0], "raw_last": raw[-1],
            "raw_mean": float(np.mean(raw)), "frames": int(frames)}


GENERATORS = {
    "nuclei": nuclei,
    "nuclei_calibrated": nuclei_calibrated,
    "nuclei_morphometry": nuclei_morphometry,
    "ihc_gray": ihc_gray,
    "cell_tiff": cell_tiff,
    "blur_reference": blur_reference,
    "moon16": moon16,
    "round_cell": round_cell,
    "bleach_timecourse": bleach_timecourse,
}
