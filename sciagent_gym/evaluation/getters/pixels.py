"""Getters reading pixels of the final screenshot (cheap, exact; no OCR).

Regions are ``[x, y, width, height]`` in screen pixels. A region that sticks out of the screen is
clipped to it (windows may sit partly off screen); one with nothing left is a GetterError, as is
a single pixel off screen, so a wrong coordinate in a task never silently scores.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .registry import GetterError, register

if TYPE_CHECKING:
    from ..state import FinalState

_HEX_COLOR = re.compile(r"#?([0-9a-fA-F]{6})")


def screen_rgb(state: FinalState) -> np.ndarray:
    """The screenshot as an (H, W, 3) uint8 array; gray or RGBA captures are converted."""
    shot = state.screenshot
    if shot is None:
        raise GetterError("no screenshot was captured at the end of the episode")
    arr = np.asarray(shot)
    if arr.dtype != np.uint8:
        arr = np.clip(np.nan_to_num(arr.astype(np.float64)), 0, 255).astype(np.uint8)
    if arr.ndim == 2:
        arr = np.repeat(arr[:, :, np.newaxis], 3, axis=2)
    elif arr.ndim == 3 and arr.shape[2] == 4:
        arr = arr[:, :, :3]
    elif arr.ndim == 3 and arr.shape[2] == 1:
        arr = np.repeat(arr, 3, axis=2)
    if arr.ndim != 3 or arr.shape[2] != 3 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise GetterError(f"unsupported screenshot shape {list(np.shape(shot))}")
    return arr


def _int(v: Any, what: str) -> int:
    """JSON numbers as pixel coordinates: ints, or floats with no fractional part."""
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise GetterError(f"{what} must be an integer, got {v!r}")
    f = float(v)
    if not math.isfinite(f) or f != int(f):
        raise GetterError(f"{what} must be an integer, got {v!r}")
    return int(f)


def screen_size(arr: np.ndarray) -> str:
    return f"{arr.shape[1]}x{arr.shape[0]}"


def clip_region(arr: np.ndarray, region: Any) -> tuple[int, int, int, int]:
    """``[x, y, w, h]`` (None: whole screen) -> clipped (x0, y0, x1, y1) with a non-empty area."""
    h, w = arr.shape[:2]
    if region is None:
        return 0, 0, w, h
    if isinstance(region, (str, bytes)) or not isinstance(region, Sequence) or len(region) != 4:
        raise GetterError(f"region must be [x, y, width, height], got {region!r}")
    x, y, rw, rh = (_int(v, f"region[{i}]") for i, v in enumerate(region))
    if rw <= 0 or rh <= 0:
        raise GetterError(f"region {[x, y, rw, rh]} is empty (width and height must be > 0)")
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + rw, w), min(y + rh, h)
    if x1 <= x0 or y1 <= y0:
        raise GetterError(f"region {[x, y, rw, rh]} lies outside the screen ({screen_size(arr)})")
    return x0, y0, x1, y1


def crop(arr: np.ndarray, region: Any) -> np.ndarray:
    """The clipped region of an (H, W, C) array (a view)."""
    x0, y0, x1, y1 = clip_region(arr, region)
    return arr[y0:y1, x0:x1]


def parse_color(color: Any) -> np.ndarray:
    """[r, g, b] with 0..255 components, or "#rrggbb" -> int16 array of 3."""
    if isinstance(color, str):
        m = _HEX_COLOR.fullmatch(color.strip())
        if not m:
            raise GetterError(f"color must be [r, g, b] or '#rrggbb', got {color!r}")
        return np.array([int(m.group(1)[i : i + 2], 16) for i in (0, 2, 4)], dtype=np.int16)
    if not isinstance(color, Sequence) or len(color) != 3:
        raise GetterError(f"color must be [r, g, b] or '#rrggbb', got {color!r}")
    rgb = [_int(c, "color component") for c in color]
    if any(not 0 <= c <= 255 for c in rgb):
        raise GetterError(f"color components must be in 0..255, got {color!r}")
    return np.array(rgb, dtype=np.int16)


@register("pixel_color")
def pixel_color(state: FinalState, x: int, y: int) -> list[int]:
    """[r, g, b] of one screen pixel, e.g. a status LED or a checkbox tick."""
    arr = screen_rgb(state)
    px, py = _int(x, "x"), _int(y, "y")
    h, w = arr.shape[:2]
    if not (0 <= px < w and 0 <= py < h):
        raise GetterError(f"pixel ({px}, {py}) is outside the screen ({screen_size(arr)})")
    return [int(c) for c in arr[py, px]]


@register("region_mean_color")
def region_mean_color(state: FinalState, region: list[int]) -> list[float]:
    """Mean [r, g, b] over a region: tells an empty canvas from a drawn one, or a colour LUT."""
    part = crop(screen_rgb(state), region)
    return [float(v) for v in part.reshape(-1, 3).mean(axis=0)]


@register("region_fraction")
def region_fraction(
    state: FinalState, region: list[int], color: Any, tolerance: float = 10
) -> float:
    """Fraction (0..1) of a region's pixels within ``tolerance`` of ``color`` on every channel.

    E.g. how much of an image window shows the red threshold overlay.
    """
    if (
        isinstance(tolerance, bool)
        or not isinstance(tolerance, (int, float))
        or not (math.isfinite(tolerance) and tolerance >= 0)
    ):
        raise GetterError(f"tolerance must be a number >= 0, got {tolerance!r}")
    want = parse_color(color)
    part = crop(screen_rgb(state), region).astype(np.int16)
    close = np.abs(part - want).max(axis=2) <= tolerance
    return float(close.mean())


def _load_reference(reference_path: str) -> np.ndarray:
    from PIL import Image

    ref_path = Path(str(reference_path))
    if not ref_path.is_absolute():
        raise GetterError(f"reference_path {str(reference_path)!r} must be an absolute host path")
    if not ref_path.is_file():
        raise GetterError(f"reference {ref_path}: not found")
    try:
        with Image.open(ref_path) as im:
            return np.asarray(im.convert("RGB")).copy()
    except Exception as exc:  # PIL raises anything on junk input
        raise GetterError(
            f"reference {ref_path}: cannot read image: {type(exc).__name__}: {exc}"
        ) from None


def _gray(rgb: np.ndarray) -> np.ndarray:
    """Luma as PIL's "L" mode computes it (ITU-R 601-2), kept as float for SSIM."""
    return rgb.astype(np.float64) @ np.array([0.299, 0.587, 0.114])


@register("screen_ssim")
def screen_ssim(
    state: FinalState, reference_path: str, region: list[int] | None = None, gray: bool = True
) -> float:
    """SSIM of the screen (or a region) against a reference screenshot file on the host.

    No resizing: a reference of another size is a GetterError naming both sizes, because a
    resized comparison would hide a window that moved or changed size. ``gray`` compares luma
    only, so anti-aliasing colour fringes cost less.
    """
    from skimage.metrics import structural_similarity

    part = crop(screen_rgb(state), region)
    ref = _load_reference(reference_path)
    if part.shape != ref.shape:
        what = "screen" if region is None else f"screen region {list(region)}"
        raise GetterError(
            f"{what} is {part.shape[1]}x{part.shape[0]}, reference {reference_path} is "
            f"{ref.shape[1]}x{ref.shape[0]} (sizes must match)"
        )
    side = min(part.shape[:2])
    win = min(7, side if side % 2 else side - 1)
    if win < 3:
        raise GetterError(f"region too small for SSIM ({part.shape[1]}x{part.shape[0]})")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if gray:
            score = structural_similarity(_gray(part), _gray(ref), data_range=255.0, win_size=win)
        else:
            score = structural_similarity(
                part.astype(np.float64),
                ref.astype(np.float64),
                data_range=255.0,
                win_size=win,
                channel_axis=-1,
            )
    return float(score)
