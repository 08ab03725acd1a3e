"""Getters for images the agent saved (TIFF via tifffile when available, else PIL; PNG/JPEG).

Every read is bounded (:mod:`.limits`): the declared size is checked before pixels are
decoded, and compressed TIFFs go through PIL, whose decoders stop at the declared size
(tifffile's pure-Python fallbacks inflate a whole strip first, however large).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .limits import LimitError, check_array, iter_frames, open_image, tiff_layout
from .reading import existing_file
from .registry import GetterError, register

if TYPE_CHECKING:
    from ..state import FinalState

try:  # tifffile understands ImageJ hyperstacks and float TIFFs better than PIL
    import tifffile
except ImportError:  # pragma: no cover - depends on the venv
    tifffile = None

_TIFF_SUFFIXES = {".tif", ".tiff"}
STATS = ("width", "height", "channels", "dtype", "bit_depth", "mean", "min", "max", "n_frames")


@dataclass
class LoadedImage:
    """The array as read plus a normalised (planes, H, W, samples) view for statistics."""

    array: np.ndarray
    planes: np.ndarray
    channels: int
    n_frames: int

    @property
    def samples(self) -> int:
        return int(self.planes.shape[-1])

    def describe(self) -> str:
        _, h, w, s = self.planes.shape
        extra = f"x{s}" if s > 1 else ""
        return f"{w}x{h}{extra} {self.planes.dtype}, {self.planes.shape[0]} plane(s)"


def _native(arr: np.ndarray) -> np.ndarray:
    """Native byte order so numpy/skimage never see big-endian views."""
    return arr.astype(arr.dtype.newbyteorder("="), copy=False)


def _from_axes(arr: np.ndarray, axes: str) -> LoadedImage:
    """Normalise a tifffile series with axis letters (e.g. "TZCYX", "YXS") to planes."""
    arr = _native(arr)
    axes = axes.upper()
    if len(axes) != arr.ndim or "Y" not in axes or "X" not in axes:
        return _from_shape(arr)
    sizes = dict(zip(axes, arr.shape, strict=True))
    order = [i for i, a in enumerate(axes) if a not in "YXS"]
    order += [axes.index("Y"), axes.index("X")]
    if "S" in axes:
        order.append(axes.index("S"))
    samples = sizes.get("S", 1)
    planes = np.transpose(arr, order).reshape(-1, sizes["Y"], sizes["X"], samples)
    if samples > 1:
        channels, n_frames = samples, planes.shape[0]
    else:
        channels = sizes.get("C", 1)
        n_frames = planes.shape[0] // channels
    return LoadedImage(arr, planes, channels, n_frames)


def _from_shape(arr: np.ndarray, frames_first: bool = False) -> LoadedImage:
    """Guess the layout: (H,W), (H,W,3|4), (N,H,W) or (N,H,W,3|4)."""
    arr = _native(arr)
    if arr.ndim == 2:
        planes = arr[np.newaxis, :, :, np.newaxis]
    elif arr.ndim == 3 and arr.shape[-1] in (2, 3, 4) and not frames_first:
        planes = arr[np.newaxis]
    elif arr.ndim == 3:
        planes = arr[..., np.newaxis]
    elif arr.ndim >= 4 and arr.shape[-1] in (2, 3, 4):
        planes = arr.reshape(-1, *arr.shape[-3:])
    elif arr.ndim >= 4:
        planes = arr.reshape(-1, *arr.shape[-2:], 1)
    else:
        raise GetterError(f"unsupported image shape {arr.shape}")
    s = planes.shape[-1]
    return LoadedImage(arr, planes, s, planes.shape[0])


def _read_pil(p: Path, label: str) -> LoadedImage:
    frames: list[np.ndarray] = []
    with open_image(p, label) as im:
        for frame in iter_frames(im, label):
            if frame.mode == "1":
                frame = frame.convert("L")
            elif frame.mode in ("CMYK", "YCbCr", "LAB", "HSV"):
                frame = frame.convert("RGB")
            elif frame.mode == "PA":
                frame = frame.convert("RGBA")
            frames.append(_native(np.asarray(frame)))
    if not frames:
        raise GetterError("no frames")
    if any(f.shape != frames[0].shape or f.dtype != frames[0].dtype for f in frames):
        raise GetterError("frames differ in size or type")
    if len(frames) == 1:
        return _from_shape(frames[0])
    return _from_shape(np.stack(frames), frames_first=frames[0].ndim == 2)


def _read_tifffile(p: Path, label: str) -> LoadedImage:
    with tifffile.TiffFile(p) as tif:
        if not tif.series:
            raise GetterError("no image data")
        series = tif.series[0]
        axes = series.axes.upper()
        check_array(label, tuple(series.shape), series.dtype,
                    axes.index("S") if "S" in axes and len(axes) == len(series.shape) else None)
        return _from_axes(series.asarray(), series.axes)


def _is_tiff(p: Path) -> bool:
    with p.open("rb") as fh:
        return fh.read(4) in (b"II*\0", b"MM\0*", b"II+\0", b"MM\0+")


def load_image(p: Path, label: str) -> LoadedImage:
    """Read ``p`` within the limits of :mod:`.limits`; any parser failure or limit becomes
    a GetterError mentioning ``label``."""
    try:
        compressed = _is_tiff(p) and tiff_layout(p, label).compressed
        if p.suffix.lower() in _TIFF_SUFFIXES and tifffile is not None and not compressed:
            img = _read_tifffile(p, label)
        else:
            img = _read_pil(p, label)
    except LimitError:
        raise
    except GetterError as exc:
        why = str(exc).removeprefix(f"{label}: ").removeprefix("cannot read image: ")
        raise GetterError(f"{label}: cannot read image: {why}") from None
    except Exception as exc:  # parsers raise anything on junk input
        raise GetterError(f"{label}: cannot read image: {type(exc).__name__}: {exc}") from None
    if img.planes.size == 0:
        raise GetterError(f"{label}: image is empty")
    return img


def _bit_depth(img: LoadedImage) -> int:
    """ImageJ's notion: 8/16/32, and 24 for RGB (32 for RGBA) byte images."""
    dtype = img.planes.dtype
    if dtype == np.bool_:
        return 1
    if dtype == np.uint8 and img.samples in (3, 4):
        return 8 * img.samples
    return dtype.itemsize * 8


def _stats(planes: np.ndarray) -> tuple[float, float, float]:
    """Mean, min, max ignoring NaN like ImageJ does; all-NaN images give NaN. Sums in
    float64 without a float64 copy of the image (8 bytes per sample)."""
    if not np.issubdtype(planes.dtype, np.floating):
        return (float(planes.mean(dtype=np.float64)), float(planes.min()),
                float(planes.max()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return (float(np.nanmean(planes, dtype=np.float64)), float(np.nanmin(planes)),
                float(np.nanmax(planes)))


def info_of(img: LoadedImage) -> dict[str, Any]:
    mean, lo, hi = _stats(img.planes)
    return {
        "width": int(img.planes.shape[2]),
        "height": int(img.planes.shape[1]),
        "channels": int(img.channels),
        "dtype": str(img.planes.dtype),
        "bit_depth": _bit_depth(img),
        "mean": mean,
        "min": lo,
        "max": hi,
        "n_frames": int(img.n_frames),
    }


@register("image_info")
def image_info(state: FinalState, path: str) -> dict[str, Any]:
    """Size, channels, dtype, bit depth, mean/min/max and number of frames of an image file."""
    return info_of(load_image(existing_file(state, path), path))


@register("image_array")
def image_array(state: FinalState, path: str) -> np.ndarray:
    """The pixel array as read: (H,W), (H,W,3) for RGB, (N,H,W) for stacks."""
    return load_image(existing_file(state, path), path).array


@register("image_stat")
def image_stat(state: FinalState, path: str, stat: str) -> Any:
    """One field of :func:`image_info`."""
    if stat not in STATS:
        raise GetterError(f"unknown image stat {stat!r} (known: {', '.join(STATS)})")
    return image_info(state, path)[stat]


def _rescale(a: np.ndarray) -> np.ndarray:
    """Map an image's own min..max to 0..1 (constant images become 0)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = float(np.nanmin(a)), float(np.nanmax(a))
    if math.isnan(lo) or hi <= lo:
        return np.where(np.isnan(a), np.nan, 0.0)
    return (a - lo) / (hi - lo)


def _ssim_planes(a: np.ndarray, b: np.ndarray, normalize: bool) -> float:
    from skimage.metrics import structural_similarity

    fa, fb = a.astype(np.float64), b.astype(np.float64)
    if normalize:
        fa, fb = _rescale(fa), _rescale(fb)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo = float(np.nanmin([np.nanmin(fa), np.nanmin(fb)]))
        hi = float(np.nanmax([np.nanmax(fa), np.nanmax(fb)]))
    if math.isnan(lo):
        lo = hi = 0.0
    fa, fb = np.nan_to_num(fa, nan=lo), np.nan_to_num(fb, nan=lo)
    data_range = hi - lo if hi > lo else 1.0
    side = min(fa.shape[1], fa.shape[2])
    win = min(7, side if side % 2 else side - 1)
    if win < 3:
        raise GetterError(f"image too small for SSIM ({fa.shape[2]}x{fa.shape[1]}, need 3x3)")
    scores = [
        structural_similarity(fa[i], fb[i], data_range=data_range, channel_axis=-1, win_size=win)
        for i in range(fa.shape[0])
    ]
    return float(np.mean(scores))


@register("image_ssim")
def image_ssim(
    state: FinalState, path: str, reference_path: str, normalize: bool = False
) -> float:
    """Mean SSIM over planes against a gold reference at an absolute host path.

    Raw pixel values are compared with the joint min..max of both images as data range, so a
    brightness change costs points. ``normalize=True`` first maps each image's own min..max to
    0..1, so the same picture saved as 8-bit, 16-bit or float still scores ~1. NaN pixels are set
    to the joint minimum in both images.
    """
    img = load_image(existing_file(state, path), path)
    ref_path = Path(str(reference_path))
    if not ref_path.is_absolute():
        raise GetterError(f"reference_path {str(reference_path)!r} must be an absolute host path")
    if not ref_path.is_file():
        raise GetterError(f"reference {ref_path}: not found")
    ref = load_image(ref_path, f"reference {ref_path}")
    if img.planes.shape != ref.planes.shape:
        raise GetterError(f"{path}: image is {img.describe()}, reference is {ref.describe()}")
    return _ssim_planes(img.planes, ref.planes, bool(normalize))
