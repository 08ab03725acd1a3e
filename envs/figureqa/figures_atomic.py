"""Atomic-scale figures: projected 2D lattices (atoms as discs) and HRTEM-like lattice images.

Lattice renders place atoms on a 2D Bravais lattice (square, hexagonal, primitive or centred
rectangular), rotated by a random angle and shifted by a random origin, as shaded discs on a
light background. HRTEM-like images are a sum of cosine waves (two at 90 degrees: a square
projection; three at 60 degrees: a hexagonal one) of one period, sharpened into spots by an
exponential, plus a slowly varying background and Gaussian noise. Every length is in pixels
here; the figure's scale bar turns pixels into nanometres.
"""

from __future__ import annotations

import math

import numpy as np

from .common import BOX, smooth_noise

LATTICES = ("square", "hexagonal", "rectangular", "centred rectangular")


def lattice_points(kind: str, a_px: float, ratio: float, angle: float,
                   rng: np.random.Generator) -> np.ndarray:
    """Lattice points (N, 2) in box pixels covering the box: ``a_px`` the short vector,
    ``ratio`` b/a for the rectangular kinds, ``angle`` the rotation in radians."""
    if kind == "square":
        v1, v2, basis = (1.0, 0.0), (0.0, 1.0), [(0.0, 0.0)]
    elif kind == "hexagonal":
        v1, v2, basis = (1.0, 0.0), (0.5, math.sqrt(3) / 2), [(0.0, 0.0)]
    elif kind == "rectangular":
        v1, v2, basis = (1.0, 0.0), (0.0, ratio), [(0.0, 0.0)]
    elif kind == "centred rectangular":
        v1, v2, basis = (1.0, 0.0), (0.0, ratio), [(0.0, 0.0), (0.5, ratio / 2)]
    else:
        raise ValueError(f"unknown lattice {kind!r}")
    rot = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
    _, _, w, h = BOX
    n = int(max(w, h) / (a_px * min(1.0, ratio if kind != "hexagonal" else 0.86))) + 4
    ij = np.stack(np.meshgrid(np.arange(-n, n + 1), np.arange(-n, n + 1)), -1).reshape(-1, 2)
    pts = []
    for bx, by in basis:
        frac = ij[:, :1] * np.array(v1) + ij[:, 1:] * np.array(v2) + np.array([bx, by])
        pts.append(frac * a_px)
    xy = np.concatenate(pts) @ rot.T + np.array([w / 2, h / 2]) + rng.uniform(0, a_px, 2)
    keep = (xy[:, 0] > -a_px) & (xy[:, 0] < w + a_px) & (xy[:, 1] > -a_px) & (xy[:, 1] < h + a_px)
    return xy[keep]


def render_atoms(points: np.ndarray, radius: float, rng: np.random.Generator) -> np.ndarray:
    """The box as RGB: dark blue shaded discs on a light grey background."""
    _, _, w, h = BOX
    img = np.empty((h, w, 3), float)
    img[:] = (236, 238, 242)
    yy, xx = np.mgrid[0:h, 0:w]
    for x0, y0 in points:
        x1, x2 = int(max(0, x0 - radius - 1)), int(min(w, x0 + radius + 2))
        y1, y2 = int(max(0, y0 - radius - 1)), int(min(h, y0 + radius + 2))
        if x1 >= x2 or y1 >= y2:
            continue
        d2 = (xx[y1:y2, x1:x2] - x0) ** 2 + (yy[y1:y2, x1:x2] - y0) ** 2
        inside = d2 <= radius ** 2
        # a highlight up and left of the centre, as ball renders have
        hl = np.exp(-((xx[y1:y2, x1:x2] - x0 + radius / 3) ** 2
                      + (yy[y1:y2, x1:x2] - y0 + radius / 3) ** 2) / (radius ** 2 / 4))
        for c, base in enumerate((30, 50, 130)):
            patch = img[y1:y2, x1:x2, c]
            patch[inside] = (base + 60 * hl)[inside]
    img += rng.normal(0, 2.0, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def hrtem(kind: str, period_px: float, angle: float, rng: np.random.Generator,
          noise: float = 0.35, ratio: float = 1.0) -> np.ndarray:
    """An HRTEM-like grey image of the box: fringes of ``period_px`` along two (square) or
    three (hexagonal) directions, rotated by ``angle`` radians; ``rectangular``: the second
    direction's period is ``ratio`` times longer (a twofold pattern)."""
    _, _, w, h = BOX
    yy, xx = np.mgrid[0:h, 0:w].astype(float)
    dirs = [0.0, math.pi / 3, 2 * math.pi / 3] if kind == "hexagonal" else [0.0, math.pi / 2]
    periods = [period_px, period_px * ratio] if kind == "rectangular" else [period_px] * 3
    field = np.zeros((h, w))
    for d, period in zip(dirs, periods, strict=False):
        k = 2 * math.pi / period
        phase = rng.uniform(0, 2 * math.pi)
        field += np.cos(k * (xx * math.cos(angle + d) + yy * math.sin(angle + d)) + phase)
    spots = np.exp(1.2 * field / len(dirs))
    spots = (spots - spots.min()) / (np.ptp(spots) + 1e-12)
    background = 0.25 * smooth_noise(rng, h, w, 80.0)
    img = spots + background + noise * rng.standard_normal((h, w))
    img = (img - np.percentile(img, 1)) / (np.percentile(img, 99) - np.percentile(img, 1))
    return np.clip(40 + 190 * img, 0, 255).astype(np.uint8)


def atom_radius(kind: str, a_px: float, ratio: float) -> float:
    """A disc radius that keeps every pair of atoms apart (0.24 of the nearest distance)."""
    nearest = a_px
    if kind == "centred rectangular":
        nearest = min(a_px, a_px * math.hypot(1.0, ratio) / 2)
    return 0.24 * nearest
