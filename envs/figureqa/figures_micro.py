"""Micro- and meso-scale figures: grain and phase micrographs, porous and composite sections.

- Grains: a Voronoi tessellation of seeds kept at least ``0.6 sqrt(A/N)`` apart (no sliver
  grains), each grain a random grey (an etched micrograph), boundaries dark and 3 px wide.
  The mean grain size is the equivalent-circle diameter of the mean grain area,
  ``d = sqrt(4 A / (pi N))`` over the whole field (edge grains count as grains).
- Phases: Gaussian-filtered noise thresholded at the quantile that gives the dark phase its
  exact area fraction.
- Pores: dark elliptical pores in a grey matrix; porosity is the dark area fraction.
- Fibres: long bright fibres at one angle (a few degrees of scatter) in a darker matrix.
- Particles: non-overlapping dark discs (a particle-reinforced composite), none cut by the edge.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.ndimage import binary_dilation
from scipy.spatial import cKDTree

from .common import BOX, disc_mask, smooth_noise


def spaced_points(rng: np.random.Generator, n: int, w: int, h: int, min_dist: float,
                  margin: float = 0.0, tries: int = 20000) -> np.ndarray:
    """Up to ``n`` random points in [margin, w - margin] x [margin, h - margin], each at least
    ``min_dist`` from the others (rejection sampling)."""
    pts: list[tuple[float, float]] = []
    for _ in range(tries):
        if len(pts) >= n:
            break
        p = (rng.uniform(margin, w - margin), rng.uniform(margin, h - margin))
        if all((p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 >= min_dist ** 2 for q in pts):
            pts.append(p)
    return np.array(pts)


def grains(rng: np.random.Generator, n: int) -> tuple[np.ndarray, int]:
    """A grain micrograph of the box with ``n`` grains: (grey image, number of grains)."""
    _, _, w, h = BOX
    seeds = spaced_points(rng, n, w, h, 0.6 * math.sqrt(w * h / n))
    yy, xx = np.mgrid[0:h, 0:w]
    _, label = cKDTree(seeds).query(np.column_stack([xx.ravel(), yy.ravel()]))
    label = label.reshape(h, w)
    edge = np.zeros((h, w), bool)
    edge[:, 1:] |= label[:, 1:] != label[:, :-1]
    edge[1:, :] |= label[1:, :] != label[:-1, :]
    edge = binary_dilation(edge, iterations=1)
    tone = rng.uniform(130, 225, len(seeds))
    img = tone[label] + rng.normal(0, 4.0, (h, w))
    img[edge] = 35 + rng.normal(0, 4.0, int(edge.sum()))
    return np.clip(img, 0, 255).astype(np.uint8), len(seeds)


def phases(rng: np.random.Generator, fraction: float, sigma: float) -> tuple[np.ndarray, float]:
    """A two-phase micrograph: (grey image, exact dark-phase area fraction)."""
    _, _, w, h = BOX
    field = smooth_noise(rng, h, w, sigma)
    dark = field > np.quantile(field, 1 - fraction)
    img = np.where(dark, 70.0, 205.0) + 6 * smooth_noise(rng, h, w, 2.0) + rng.normal(0, 4, (h, w))
    return np.clip(img, 0, 255).astype(np.uint8), float(dark.mean())


def pores(rng: np.random.Generator, target: float) -> tuple[np.ndarray, float]:
    """A porous cross-section: (grey image, exact porosity) with porosity near ``target``."""
    _, _, w, h = BOX
    yy, xx = np.mgrid[0:h, 0:w]
    dark = np.zeros((h, w), bool)
    count, need = 0, target * w * h
    while count < need:
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        a, b = rng.uniform(6, 28), rng.uniform(5, 20)
        t = rng.uniform(0, math.pi)
        x1, x2 = int(max(0, cx - a - 2)), int(min(w, cx + a + 2))
        y1, y2 = int(max(0, cy - a - 2)), int(min(h, cy + a + 2))
        dx, dy = xx[y1:y2, x1:x2] - cx, yy[y1:y2, x1:x2] - cy
        u, v = dx * math.cos(t) + dy * math.sin(t), -dx * math.sin(t) + dy * math.cos(t)
        new = ((u / a) ** 2 + (v / b) ** 2 <= 1) & ~dark[y1:y2, x1:x2]
        dark[y1:y2, x1:x2] |= new
        count += int(new.sum())
    img = 165 + 12 * smooth_noise(rng, h, w, 3.0) + rng.normal(0, 5, (h, w))
    img[dark] = 22 + rng.normal(0, 4, int(dark.sum()))
    return np.clip(img, 0, 255).astype(np.uint8), float(dark.mean())


def fibres(rng: np.random.Generator, angle_deg: float) -> np.ndarray:
    """A fibre composite's longitudinal section with fibres at ``angle_deg`` counter-clockwise
    from the horizontal (the image's y axis points down, so a positive angle rises to the
    right)."""
    _, _, w, h = BOX
    yy, xx = np.mgrid[0:h, 0:w]
    bright = np.zeros((h, w), bool)
    for _ in range(int(rng.integers(55, 80))):
        t = math.radians(angle_deg + rng.normal(0, 2.0))
        cx, cy = rng.uniform(-50, w + 50), rng.uniform(-50, h + 50)
        a, b = rng.uniform(180, 420), rng.uniform(4, 7)
        x1, x2 = int(max(0, cx - a - b)), int(min(w, cx + a + b + 1))
        y1, y2 = int(max(0, cy - a - b)), int(min(h, cy + a + b + 1))
        if x1 >= x2 or y1 >= y2:
            continue
        dx, dy = xx[y1:y2, x1:x2] - cx, -(yy[y1:y2, x1:x2] - cy)
        u, v = dx * math.cos(t) + dy * math.sin(t), -dx * math.sin(t) + dy * math.cos(t)
        bright[y1:y2, x1:x2] |= (np.abs(u) <= a) & (np.abs(v) <= b)
    img = 85 + 10 * smooth_noise(rng, h, w, 4.0) + rng.normal(0, 6, (h, w))
    img[bright] = 215 + rng.normal(0, 6, int(bright.sum()))
    return np.clip(img, 0, 255).astype(np.uint8)


def particles(rng: np.random.Generator, n: int) -> tuple[np.ndarray, int]:
    """A particle-reinforced composite: (grey image, number of particles), no two touching
    and none cut by the field's edge."""
    _, _, w, h = BOX
    radii = rng.uniform(10, 24, n)
    centres: list[tuple[float, float, float]] = []
    for r in radii:
        for _ in range(4000):
            c = (rng.uniform(r + 4, w - r - 4), rng.uniform(r + 4, h - r - 4))
            if all(math.hypot(c[0] - x, c[1] - y) >= r + q + 8 for x, y, q in centres):
                centres.append((c[0], c[1], r))
                break
    arr = np.array(centres)
    dark = disc_mask(h, w, arr[:, 0], arr[:, 1], arr[:, 2])
    img = 190 + 10 * smooth_noise(rng, h, w, 3.0) + rng.normal(0, 5, (h, w))
    img[dark] = 55 + rng.normal(0, 5, int(dark.sum()))
    return np.clip(img, 0, 255).astype(np.uint8), len(centres)
