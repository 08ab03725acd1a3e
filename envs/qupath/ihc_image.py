"""Seeded views of scikit-image's immunohistochemistry image for the ``ihc`` generator: a crop
turned, mirrored and with its stain amounts scaled, and the staged annotations jittered, so
every seed shows other data.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def ihc_variant(rng: np.random.Generator, rgb: np.ndarray, crop: int,
                 intensity: float) -> np.ndarray:
    """A seeded view of the IHC image: a ``crop`` x ``crop`` window at a random place, turned by
    a random multiple of 90 degrees and maybe mirrored (the same tissue seen from another
    angle), with the stain amounts scaled by a random factor within 1 +- ``intensity`` in
    optical density (Beer-Lambert, so stain colours keep their direction) and a little noise."""
    h, w = rgb.shape[:2]
    if not 0 < crop <= min(h, w):
        raise ValueError(f"crop {crop} does not fit a {w}x{h} image")
    y0, x0 = int(rng.integers(0, h - crop + 1)), int(rng.integers(0, w - crop + 1))
    out = np.rot90(rgb[y0:y0 + crop, x0:x0 + crop], int(rng.integers(4)))
    if rng.random() < 0.5:
        out = out[:, ::-1]
    if intensity > 0:
        od = -np.log10((out.astype(float) + 1.0) / 256.0)
        od *= rng.uniform(1 - intensity, 1 + intensity)
        out = 256.0 * np.power(10.0, -od) - 1.0 + rng.normal(0, 1.0, out.shape)
        out = np.clip(np.round(out), 0, 255)
    return np.ascontiguousarray(out, np.uint8)


def jittered(rng: np.random.Generator, annotations: list[dict[str, Any]], jitter: int,
              width: int, height: int) -> list[dict[str, Any]]:
    """Each annotation moved by up to ``jitter`` pixels in x and y, kept inside the image."""
    out = []
    for a in annotations:
        b = dict(a)
        if jitter:
            b["x"] = int(a["x"]) + int(rng.integers(-jitter, jitter + 1))
            b["y"] = int(a["y"]) + int(rng.integers(-jitter, jitter + 1))
        if b["w"] > width or b["h"] > height:
            raise ValueError(f"annotation {a['name']!r} is larger than the {width}x{height} image")
        b["x"] = min(max(b["x"], 0), width - b["w"])
        b["y"] = min(max(b["y"], 0), height - b["h"])
        out.append(b)
    return out
