"""DS9's colour maps as numbers, and an exported PNG mapped back to colour-map positions.

The evaluator checks an exported PNG by its content: which colour map painted it and whether the
picture is the task's data. DS9 8.4 builds its simple maps from piecewise-linear channel curves
(SAOimage's definitions, the same as the bars in DS9's Color menu): the curves below, written as
(position, level) knots with positions and levels in 0..1. envs/ds9/tests/test_ds9_specs.py compares
them with the menu's colour-bar icons and envs/ds9/tests/test_ds9_adapter_e2e.py with DS9's own PNG
export.
"""

from __future__ import annotations

import numpy as np

Knots = tuple[tuple[float, float], ...]

_RAMP: Knots = ((0.0, 0.0), (1.0, 1.0))
_ZERO: Knots = ((0.0, 0.0), (1.0, 0.0))

#: (red, green, blue) curves of the colour maps tasks ask for.
COLORMAPS: dict[str, tuple[Knots, Knots, Knots]] = {
    "grey": (_RAMP, _RAMP, _RAMP),
    "red": (_RAMP, _ZERO, _ZERO),
    "green": (_ZERO, _RAMP, _ZERO),
    "blue": (_ZERO, _ZERO, _RAMP),
    "heat": (((0.0, 0.0), (0.34, 1.0), (1.0, 1.0)), _RAMP,
             ((0.0, 0.0), (0.65, 0.0), (0.98, 1.0), (1.0, 1.0))),
    "cool": (((0.0, 0.0), (0.29, 0.0), (0.76, 0.1), (1.0, 1.0)),
             ((0.0, 0.0), (0.22, 0.0), (0.96, 1.0), (1.0, 1.0)),
             ((0.0, 0.0), (0.53, 1.0), (1.0, 1.0))),
}
LEVELS = 256
#: How far (Euclidean, 0..255 per channel) a pixel may lie from the map's curve and still count
#: as painted by it: DS9 quantises each channel to 8 bits, so on-map pixels are within ~2.
ON_MAP_DISTANCE = 12.0


def lut(name: str, levels: int = LEVELS) -> np.ndarray:
    """The map sampled at ``levels`` evenly spaced positions: (levels, 3) floats in 0..255."""
    if name not in COLORMAPS:
        raise KeyError(f"unknown colour map {name!r} (known: {', '.join(sorted(COLORMAPS))})")
    t = np.linspace(0.0, 1.0, levels)
    return np.stack([np.interp(t, [p for p, _ in knots], [v for _, v in knots])
                     for knots in COLORMAPS[name]], axis=1) * 255.0


def paint(t: np.ndarray, name: str) -> np.ndarray:
    """Positions in 0..1 painted with the map: uint8 RGB (what DS9 exports for them)."""
    table = lut(name)
    index = np.clip(np.rint(np.asarray(t, float) * (LEVELS - 1)), 0, LEVELS - 1).astype(int)
    return np.rint(table[index]).astype(np.uint8)


def invert(rgb: np.ndarray, name: str, chunk: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """Each pixel's nearest position on the map (0..1) and its distance from the map's curve.

    Distances are computed once per distinct colour (an export has at most a few hundred), in
    chunks, so a noise image of every colour costs bounded memory.
    """
    flat = np.asarray(rgb, np.uint8).reshape(-1, 3)
    packed = (flat[:, 0].astype(np.int64) << 16) | (flat[:, 1].astype(np.int64) << 8) | flat[:, 2]
    colours, back = np.unique(packed, return_inverse=True)
    cols = np.stack([(colours >> 16) & 255, (colours >> 8) & 255, colours & 255], 1).astype(float)
    table = lut(name)
    pos = np.empty(len(cols))
    dist = np.empty(len(cols))
    for start in range(0, len(cols), chunk):
        d = np.linalg.norm(cols[start:start + chunk, None, :] - table[None, :, :], axis=2)
        best = np.argmin(d, axis=1)
        pos[start:start + chunk] = best / (LEVELS - 1)
        dist[start:start + chunk] = d[np.arange(len(best)), best]
    shape = np.asarray(rgb).shape[:-1]
    return pos[back].reshape(shape), dist[back].reshape(shape)
