"""The synthetic whole-slide-like H-DAB tile of the ``tile`` generator: nuclei placed at known
positions (none straddling an annotation's edge) and the tile rendered by the Beer-Lambert law,
so counts, positive percentages and areas are known exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sciagent_gym.envs.qupath.stains import unit


def render_hdab(h_conc: np.ndarray, dab_conc: np.ndarray, h_vec: Any, dab_vec: Any,
                rng: np.random.Generator, noise: float = 1.5) -> np.ndarray:
    """Beer-Lambert: RGB = 255 * 10^-(cH * vH + cDAB * vDAB), plus noise; uint8 RGB."""
    vh, vd = unit(h_vec), unit(dab_vec)
    od = h_conc[..., None] * vh + dab_conc[..., None] * vd
    rgb = 255.0 * np.power(10.0, -od) + rng.normal(0, noise, od.shape)
    return np.clip(np.round(rgb), 0, 255).astype(np.uint8)


def place_nuclei(rng: np.random.Generator, size: tuple[int, int], n: int, r_max: float,
                  avoid: list[tuple[float, float, float, float]], margin: float,
                  within: tuple[float, float, float, float] | None = None,
                  taken: list[tuple[float, float]] | None = None, outside: bool = False
                  ) -> list[tuple[float, float]]:
    """``n`` centres at least 2.6 r_max apart (from each other and from ``taken``), away from
    the image edge and from the edges of the rectangles ``avoid`` (x, y, w, h) by ``margin``
    (so no nucleus straddles them; with ``outside``, none lies in them either); with
    ``within`` (x, y, w, h), all inside that rectangle by ``margin``."""
    h, w = size
    x0, y0, x1, y1 = margin, margin, w - margin, h - margin
    if within is not None:
        wx, wy, ww, wh = within
        x0, y0 = max(x0, wx + margin), max(y0, wy + margin)
        x1, y1 = min(x1, wx + ww - margin), min(y1, wy + wh - margin)
    pts: list[tuple[float, float]] = []
    near = np.array(list(taken or []), float).reshape(-1, 2)
    d2 = (2.6 * r_max) ** 2
    tries = 0
    while len(pts) < n:
        tries += 1
        if tries > 200 * n + 2000:
            raise ValueError(f"cannot place {n} nuclei in a {w}x{h} tile; use fewer")
        x, y = rng.uniform(x0, x1), rng.uniform(y0, y1)
        if len(near) and float(np.min((near[:, 0] - x) ** 2 + (near[:, 1] - y) ** 2)) < d2:
            continue
        bad = False
        for ax, ay, aw, ah in avoid:
            near_x = ax - margin < x < ax + aw + margin
            near_y = ay - margin < y < ay + ah + margin
            inside_x = ax + margin < x < ax + aw - margin
            inside_y = ay + margin < y < ay + ah - margin
            if near_x and near_y and (outside or not (inside_x and inside_y)):
                bad = True
                break
        if not bad:
            pts.append((x, y))
            near = np.vstack([near, [(x, y)]])
    return pts
