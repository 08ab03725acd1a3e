"""H-DAB stain vectors as QuPath handles them: Ruifrok & Johnston's and QuPath's defaults, the
angle between two vectors, QuPath's stains string, and QuPath's stain vector estimate.

:func:`estimate_stains` is a numpy port of QuPath v0.5.1's
``EstimateStainVectors.estimateStains`` (qupath-core-processing, with the 3x3 mean smoothing
applied twice and the modal-RGB background of ``EstimateStainVectorsCommand``): the gold of a
task that has the agent estimate stains is what QuPath itself would find on the staged image.
"""

from __future__ import annotations

from typing import Any

import numpy as np

RUIFROK_H = (0.650, 0.704, 0.286)
RUIFROK_DAB = (0.268, 0.570, 0.776)
# QuPath's defaults (StainVector.java, v0.5.1): rounded Ruifrok vectors
QUPATH_DEFAULT_H = (0.65, 0.70, 0.29)
QUPATH_DEFAULT_DAB = (0.27, 0.57, 0.78)


def unit(v: Any) -> np.ndarray:
    v = np.asarray(v, float)
    n = float(np.linalg.norm(v))
    if n == 0:
        raise ValueError("zero stain vector")
    return v / n


def angle_deg(a: Any, b: Any) -> float:
    """Angle between two stain vectors in degrees (QuPath's StainVector.computeAngle)."""
    c = float(np.clip(np.dot(unit(a), unit(b)), -1.0, 1.0))
    return float(np.degrees(np.arccos(c)))


def stains_arg(name: str, h: Any, dab: Any, background: Any = (255, 255, 255)) -> str:
    """QuPath's stains string, as ColorDeconvolutionStains.getColorDeconvolutionStainsAsString
    writes it (and setColorDeconvolutionStains parses it)."""
    def vec(v: Any) -> str:
        return " ".join(f"{x:.3f}" for x in unit(v))

    bg = " ".join(f"{float(x):.1f}" for x in background)
    return (f'{{"Name" : "{name}", "Stain 1" : "Hematoxylin", "Values 1" : "{vec(h)}", '
            f'"Stain 2" : "DAB", "Values 2" : "{vec(dab)}", "Background" : " {bg}"}}')


def _smooth3(img: np.ndarray) -> np.ndarray:
    """java.awt ConvolveOp with a 3x3 1/9 kernel and EDGE_NO_OP (border pixels copied),
    rounding to 8 bits as a TYPE_INT_RGB destination does."""
    f = img.astype(np.float32)
    out = img.copy()
    acc = np.zeros_like(f[1:-1, 1:-1])
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            acc += f[1 + dy:f.shape[0] - 1 + dy, 1 + dx:f.shape[1] - 1 + dx] / 9.0
    out[1:-1, 1:-1] = np.clip(acc + 0.5, 0, 255).astype(np.uint8)
    return out


def modal_rgb(rgb: np.ndarray) -> tuple[int, int, int]:
    """EstimateStainVectors.getModeRGB: per-channel mode, ties going to the brighter value."""
    out = []
    for c in range(3):
        hist = np.bincount(rgb[..., c].ravel(), minlength=256)
        out.append(int(255 - np.argmax(hist[::-1])))
    return out[0], out[1], out[2]


def estimate_stains(rgb: np.ndarray, h_ref: Any = QUPATH_DEFAULT_H,
                    dab_ref: Any = QUPATH_DEFAULT_DAB, min_stain: float = 0.05,
                    max_stain: float = 1.0, ignore_percent: float = 1.0,
                    smooth: bool = True, background: tuple[int, int, int] | None = None
                    ) -> dict[str, Any]:
    """QuPath's stain vector estimate for an H-DAB RGB image (check colours on).

    Returns {"hematoxylin": [r, g, b], "dab": [r, g, b], "background": [r, g, b],
    "n_pixels": pixels kept}. Raises ValueError when too few pixels are stained.
    """
    img = np.asarray(rgb, np.uint8)[..., :3]
    if smooth:
        img = _smooth3(_smooth3(img))
    bg = background or modal_rgb(img)
    flat = img.reshape(-1, 3).astype(float)
    od = np.empty_like(flat, dtype=np.float32)
    for c in range(3):  # ColorDeconvolutionHelper.makeOD: max(0, -log10(max(v, 1) / max))
        od[:, c] = np.maximum(0.0, -np.log10(np.maximum(flat[:, c], 1.0) / bg[c]))
    r, g, b = od[:, 0].astype(np.float64), od[:, 1].astype(np.float64), od[:, 2].astype(np.float64)
    mag2 = r * r + g * g + b * b
    keep = ~((mag2 > max_stain ** 2) | (r < min_stain) | (g < min_stain) | (b < min_stain)
             | (mag2 <= 0))
    sqrt3 = 1 / np.sqrt(3)
    with np.errstate(invalid="ignore", divide="ignore"):
        gray = (r * sqrt3 + g * sqrt3 + b * sqrt3) / np.sqrt(mag2) >= np.cos(0.15)
    keep &= ~gray
    if keep.sum() <= 1:
        raise ValueError("Not enough pixels remain after applying stain thresholds!")
    data = np.stack([r[keep], g[keep], b[keep]], axis=1).astype(np.float32).astype(np.float64)
    cov = np.cov(data, rowvar=False, bias=False)
    values, vectors = np.linalg.eigh(cov)
    order = np.argsort(values)
    e1, e2 = vectors[:, order[2]], vectors[:, order[1]]
    phi = np.arctan2(data @ e1, data @ e2)
    inds = np.argsort(phi, kind="stable")
    n = len(data)
    alpha = ignore_percent / 100
    i1 = inds[max(0, int(alpha * n + 0.5))]
    i2 = inds[min(n - 1, int((1 - alpha) * n + 0.5))]
    s1, s2 = unit(data[i1]), unit(data[i2])
    if min(angle_deg(s1, dab_ref), angle_deg(s2, h_ref)) < min(angle_deg(s1, h_ref),
                                                               angle_deg(s2, dab_ref)):
        s1, s2 = s2, s1
    return {"hematoxylin": [float(v) for v in s1], "dab": [float(v) for v in s2],
            "background": [int(v) for v in bg], "n_pixels": int(n)}
