"""Comparing a figure the agent saved with PyMOL's own render of the same view (the gold).

A figure is judged by what it shows, not by its size or one pixel: the molecule's silhouette
(the pixels that differ from the figure's own background colour) must overlap the gold
render's silhouette (intersection over union), the background must have the asked colour, and
the whole picture must be structurally similar (SSIM) to the gold. A blank or uniform image
has no silhouette (IoU 0); a render of another molecule, view or size does not overlap.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

#: A pixel belongs to the molecule when one channel differs from the background by more
#: than this (0-255): above anti-aliasing and fog noise at the molecule's edge, far below
#: the contrast of any cartoon colour on any background the tasks use.
FOREGROUND_TOLERANCE = 24


def background_colour(rgb: np.ndarray) -> list[int]:
    """The most common colour of the image's one-pixel border: its background (a ray-traced
    PyMOL figure has the molecule in the middle and the background all around)."""
    border = np.concatenate([rgb[0], rgb[-1], rgb[1:-1, 0], rgb[1:-1, -1]]).astype(np.int64)
    keys = (border[:, 0] << 16) | (border[:, 1] << 8) | border[:, 2]
    values, counts = np.unique(keys, return_counts=True)
    best = int(values[np.argmax(counts)])
    return [(best >> 16) & 255, (best >> 8) & 255, best & 255]


def foreground(rgb: np.ndarray) -> np.ndarray:
    """Pixels that differ from the image's own background colour (the molecule)."""
    bg = np.array(background_colour(rgb), dtype=np.int16)
    return np.abs(rgb.astype(np.int16) - bg).max(axis=2) > FOREGROUND_TOLERANCE


def silhouette_iou(rgb: np.ndarray, gold: np.ndarray) -> float:
    """Intersection over union of the two images' molecule pixels (0 if neither has any)."""
    a, b = foreground(rgb), foreground(gold)
    union = int(np.logical_or(a, b).sum())
    return float(np.logical_and(a, b).sum()) / union if union else 0.0


def ssim(rgb: np.ndarray, gold: np.ndarray) -> float:
    """Structural similarity of two RGB images of one size (data range 0-255)."""
    from skimage.metrics import structural_similarity

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(structural_similarity(rgb.astype(np.float64), gold.astype(np.float64),
                                           data_range=255.0, channel_axis=-1))


def compare(rgb: np.ndarray, gold: np.ndarray) -> dict[str, Any]:
    """Everything the figure criteria read: size, background, silhouette IoU, SSIM.

    The IoU and SSIM need both images at one size; a figure of another size gets 0 for both
    (the size criterion says why).
    """
    height, width = rgb.shape[:2]
    same = rgb.shape == gold.shape
    fg = foreground(rgb)
    return {"width": int(width), "height": int(height),
            "background": background_colour(rgb),
            "molecule_fraction": round(float(fg.mean()), 4),
            "molecule_iou": round(silhouette_iou(rgb, gold), 4) if same else 0.0,
            "ssim": round(ssim(rgb, gold), 4) if same else 0.0}
