"""ImageJ-specific getters: selections saved as ``.roi`` files (and their overlap with a gold
shape), the calibration of saved TIFFs, and grey-level error against a gold image.

Imported by :func:`sciagent_gym.tools.load_tool_getters` as ``sciagent_gym.envs.imagej.getters``
(import it under that name only: the getter registry refuses a second module registering the
same names).

The ``.roi`` layout follows ImageJ's ``ij/io/RoiDecoder.java`` (big-endian throughout)::

    0-3   "Iout"                      4-5   version
    6     roi type (one byte)         8-15  top, left, bottom, right (signed shorts)
    16-17 n coordinates (polygons)    18-33 x1,y1,x2,y2 floats (lines) | subpixel x,y,w,h (rect,
                                            oval, when options has SUB_PIXEL_RESOLUTION)
    36-39 ShapeRoi size (>0: composite; type byte is then rect)
    48-49 subtype                     50-51 options
"""

from __future__ import annotations

import math
import re
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sciagent_gym.sdk import (
    GetterError,
    existing_file,
    load_image,
    pick_key,
    read_bytes,
    register,
    tiff_layout,
)

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState

ROI_TYPES = {0: "polygon", 1: "rectangle", 2: "oval", 3: "line", 4: "freeline", 5: "polyline",
             6: "noroi", 7: "freehand", 8: "traced", 9: "angle", 10: "point"}
ROI_SUBTYPES = {0: None, 1: "text", 2: "arrow", 3: "ellipse", 4: "image", 5: "rotated_rect"}
HEADER_SIZE = 64
SUB_PIXEL_RESOLUTION = 128
_MAX_ROI_BYTES = 16 * 1024 * 1024


def decode_roi(data: bytes, label: str = "roi") -> dict[str, Any]:
    """Decode the header of one ImageJ ``.roi`` file into a plain dict.

    Returns type ("oval", "rectangle", "polygon", ..., "composite" for a ShapeRoi), subtype,
    version, the bounding box x, y, width, height (sub-pixel when the file stores it), its
    centre cx, cy and, for polygon-like types, n_coordinates. Raises GetterError when ``data``
    is not a .roi file.
    """
    if len(data) < 4 or data[:4] != b"Iout":
        head = data[:4]
        raise GetterError(f"{label}: not an ImageJ .roi file (starts with {head!r}, "
                          "expected b'Iout'; a .zip from the ROI Manager is not a single ROI)")
    if len(data) < HEADER_SIZE:
        raise GetterError(f"{label}: truncated .roi file ({len(data)} bytes, the header alone "
                          f"has {HEADER_SIZE})")
    version, = struct.unpack_from(">h", data, 4)
    type_code = data[6]
    if type_code not in ROI_TYPES:
        raise GetterError(f"{label}: unknown roi type code {type_code}")
    top, left, bottom, right, n_coords = struct.unpack_from(">hhhhH", data, 8)
    shape_size, = struct.unpack_from(">i", data, 36)
    subtype_code, options = struct.unpack_from(">hh", data, 48)
    kind = ROI_TYPES[type_code]
    if type_code == 1 and shape_size > 0:
        kind = "composite"
    if kind == "noroi":
        raise GetterError(f"{label}: the file holds no selection (type 'noroi')")
    x, y = float(left), float(top)
    width, height = float(right - left), float(bottom - top)
    if width < 0 or height < 0:
        raise GetterError(f"{label}: malformed bounds (top {top}, left {left}, bottom {bottom}, "
                          f"right {right})")
    subpixel = version >= 223 and bool(options & SUB_PIXEL_RESOLUTION) and type_code in (1, 2)
    if subpixel and shape_size <= 0:
        xd, yd, wd, hd = struct.unpack_from(">ffff", data, 18)
        if all(math.isfinite(v) for v in (xd, yd, wd, hd)) and wd >= 0 and hd >= 0:
            x, y, width, height = float(xd), float(yd), float(wd), float(hd)
    out: dict[str, Any] = {
        "type": kind,
        "subtype": ROI_SUBTYPES.get(subtype_code, str(subtype_code)),
        "version": int(version),
        "x": x, "y": y, "width": width, "height": height,
        "cx": x + width / 2, "cy": y + height / 2,
    }
    if type_code in (0, 4, 5, 7, 8, 9, 10):
        out["n_coordinates"] = int(n_coords)
        needed = HEADER_SIZE + 4 * n_coords
        if shape_size <= 0 and len(data) < needed:
            raise GetterError(f"{label}: truncated .roi file ({len(data)} bytes, its "
                              f"{n_coords} coordinates need {needed})")
    if kind == "composite" and len(data) < HEADER_SIZE + 4 * shape_size:
        raise GetterError(f"{label}: truncated .roi file ({len(data)} bytes, its shape data "
                          f"needs {HEADER_SIZE + 4 * shape_size})")
    return out


@register("imagej_roi")
def imagej_roi(state: FinalState, path: str, key: str | None = None) -> Any:
    """A selection saved with File > Save As > Selection... (``.roi``) as a dict, or one key.

    Keys: type ("oval", "rectangle", "polygon", "freehand", ..., "composite"), subtype (e.g.
    "ellipse" for the elliptical selection tool), version, x, y, width, height (bounding box in
    pixels), cx, cy (its centre) and n_coordinates for polygon-like selections.
    """
    return pick_key(path, decode_roi(read_bytes(state, path, _MAX_ROI_BYTES), path), key)


_UNIT = re.compile(r"^unit=(.*)$", re.MULTILINE)
_RES_UNITS = {2: "inch", 3: "cm"}


def _unescape(text: str) -> str:
    """ImageJ writes non-ASCII units in TIFF descriptions as Java escapes (\\u00B5m)."""
    return re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)


@register("imagej_tiff_calibration")
def imagej_tiff_calibration(state: FinalState, path: str, key: str | None = None) -> Any:
    """The spatial calibration ImageJ reads back from a saved TIFF, as a dict or one key.

    Keys: pixel_width, pixel_height (units per pixel, from the X/YResolution tags), unit (from
    the ImageJ description's ``unit=``, else the TIFF resolution unit; "pixel" when the file
    carries no calibration) and calibrated (False for 1 pixel per "pixel").
    """
    p = existing_file(state, path)
    tiff_layout(p, path)  # bounds the pages and tags tifffile will parse
    try:
        import tifffile

        with tifffile.TiffFile(p) as tif:
            page = tif.pages[0]
            tags = page.tags
            xres = tags.get("XResolution")
            yres = tags.get("YResolution")
            res_unit = tags.get("ResolutionUnit")
            desc = page.description or ""
            res_unit_code = int(res_unit.value) if res_unit is not None else 1
            xr = tuple(xres.value) if xres is not None else None
            yr = tuple(yres.value) if yres is not None else None
    except Exception as exc:  # tifffile raises anything on junk input
        raise GetterError(f"{path}: cannot read TIFF: {type(exc).__name__}: {exc}") from None

    def per_pixel(res: tuple[int, int] | None) -> float | None:
        if res is None or len(res) != 2 or not res[0] or not res[1]:
            return None
        return float(res[1]) / float(res[0])

    pw, ph = per_pixel(xr), per_pixel(yr)
    unit: str | None = None
    if desc.startswith("ImageJ="):
        m = _UNIT.search(desc)
        if m:
            unit = _unescape(m.group(1).strip())
    if unit is None:
        unit = _RES_UNITS.get(res_unit_code)
    if pw is None or unit is None or unit.casefold() in ("pixel", "pixels", ""):
        out = {"pixel_width": 1.0, "pixel_height": 1.0, "unit": "pixel", "calibrated": False}
    else:
        out = {"pixel_width": pw, "pixel_height": ph if ph is not None else pw, "unit": unit,
               "calibrated": True}
    return pick_key(path, out, key)


@register("imagej_image_mae")
def imagej_image_mae(state: FinalState, path: str, reference_path: str) -> float:
    """Mean absolute difference in grey levels between a saved image and a gold image.

    Unlike SSIM (which forgives a brightness offset or a contrast stretch, and gives a uniform
    image at the right mean a fair score on low-contrast pictures), this measures whether the
    grey values themselves are the ones ImageJ's operation gives. The sizes must be equal.
    """
    img, ref = _with_reference(state, path, reference_path)
    diff = img.planes.astype(float) - ref.planes.astype(float)
    return float(np.abs(diff).mean())


def _with_reference(state: FinalState, path: str, reference_path: str):
    """The agent's image at ``path`` and the gold image at ``reference_path`` (host side,
    absolute), of the same size."""
    img = load_image(existing_file(state, path), path)
    ref_path = Path(str(reference_path))
    if not ref_path.is_absolute() or not ref_path.is_file():
        raise GetterError(f"reference {str(reference_path)!r}: not an existing absolute path")
    ref = load_image(ref_path, f"reference {ref_path}")
    if img.planes.shape != ref.planes.shape:
        raise GetterError(f"{path}: image is {img.describe()}, reference is {ref.describe()}")
    return img, ref


@register("imagej_tile_correlation")
def imagej_tile_correlation(state: FinalState, path: str, reference_path: str,
                            tiles: int = 2) -> float:
    """The lowest Pearson correlation with a gold image over ``tiles`` x ``tiles`` blocks.

    A smoothing of the whole image (any Gaussian sigma near the gold's, a box or median filter)
    follows a gold blur closely in every block; the noisy input itself, an image smoothed in one
    part only, or a uniform image (no correlation: 0) do not. The sizes must be equal.
    """
    img, ref = _with_reference(state, path, reference_path)
    a = img.planes.astype(float).mean(axis=0)
    b = ref.planes.astype(float).mean(axis=0)
    n = max(1, int(tiles))
    worst = 1.0
    for rows in np.array_split(np.arange(a.shape[0]), n):
        for cols in np.array_split(np.arange(a.shape[1]), n):
            x = a[np.ix_(rows, cols)].ravel()
            y = b[np.ix_(rows, cols)].ravel()
            if x.size < 2 or x.std() == 0 or y.std() == 0:
                return 0.0
            worst = min(worst, float(np.corrcoef(x, y)[0, 1]))
    return worst


_IOU_STEP = 0.25  # raster step in pixels: IoU to about 1% on a 20-pixel shape


def _shape_mask(kind: str, box: tuple[float, float, float, float], xs: np.ndarray,
                ys: np.ndarray) -> np.ndarray:
    """Points (xs, ys) inside an oval (the ellipse inscribed in ``box``) or a rectangle."""
    x, y, w, h = box
    if kind == "rectangle":
        return (xs >= x) & (xs < x + w) & (ys >= y) & (ys < y + h)
    rx, ry = max(w / 2, 1e-9), max(h / 2, 1e-9)
    return ((xs - x - w / 2) / rx) ** 2 + ((ys - y - h / 2) / ry) ** 2 <= 1.0


@register("imagej_roi_iou")
def imagej_roi_iou(state: FinalState, path: str, x: float, y: float, width: float,
                   height: float) -> float:
    """Intersection over union of a saved oval or rectangle selection with a reference ellipse
    (given by its bounding box x, y, width, height in pixels).

    Why: centre and size checks alone give credit to an oval of the right size anywhere; the
    overlap says whether the selection covers the object at all. Other selection types raise a
    GetterError (their area is not defined by the header alone).
    """
    roi = decode_roi(read_bytes(state, path, _MAX_ROI_BYTES), path)
    if roi["type"] not in ("oval", "rectangle"):
        raise GetterError(f"{path}: overlap is measured for oval and rectangle selections, "
                          f"not {roi['type']!r}")
    mine = (roi["x"], roi["y"], roi["width"], roi["height"])
    ref = (float(x), float(y), float(width), float(height))
    left, top = min(mine[0], ref[0]), min(mine[1], ref[1])
    right = max(mine[0] + mine[2], ref[0] + ref[2])
    bottom = max(mine[1] + mine[3], ref[1] + ref[3])
    if (right - left) * (bottom - top) / _IOU_STEP ** 2 > 4e7:
        raise GetterError(f"{path}: selection too large to compare ({right - left:.0f} x "
                          f"{bottom - top:.0f} pixels)")
    ys, xs = np.mgrid[top + _IOU_STEP / 2:bottom:_IOU_STEP, left + _IOU_STEP / 2:right:_IOU_STEP]
    a = _shape_mask(roi["type"], mine, xs, ys)
    b = _shape_mask("oval", ref, xs, ys)
    union = int((a | b).sum())
    return float((a & b).sum()) / union if union else 0.0


@register("imagej_mask_iou")
def imagej_mask_iou(state: FinalState, path: str, reference_path: str) -> float:
    """Intersection over union of the objects in a saved binary mask with a gold mask (an
    absolute host path; its nonzero pixels are the objects).

    The saved mask's objects are the pixels that differ from its most common value (the
    background), so a mask with an inverting LUT (objects 255 shown black), a plain one, or
    one saved with objects as 0 all count the same. A mask of another size raises a
    GetterError; a uniform image has no objects and scores 0.
    """
    img = load_image(existing_file(state, path), path)
    ref_path = Path(str(reference_path))
    if not ref_path.is_absolute() or not ref_path.is_file():
        raise GetterError(f"reference {reference_path!r}: not an existing absolute host path")
    ref = load_image(ref_path, f"reference {ref_path}")
    if img.planes.shape[0] != 1 or ref.planes.shape[1:3] != img.planes.shape[1:3]:
        raise GetterError(f"{path}: mask is {img.describe()}, reference is {ref.describe()}")
    mine = img.planes[0].max(axis=2)  # (H, W, samples): colour collapses to one value
    values, counts = np.unique(mine, return_counts=True)
    objects = mine != values[int(np.argmax(counts))]
    gold = ref.planes[0].max(axis=2) != 0
    union = int((objects | gold).sum())
    return float((objects & gold).sum()) / union if union else 0.0


def _plot_frame(dark: np.ndarray, label: str) -> tuple[int, int, int, int]:
    """The axis frame of an ImageJ plot: the outermost rows and columns that are dark over more
    than half the image (the frame's four lines; tick labels and grid lines are shorter or
    grey). Raises GetterError when there is no such box."""
    cols = np.nonzero(dark.mean(axis=0) > 0.5)[0]
    rows = np.nonzero(dark.mean(axis=1) > 0.5)[0]
    if len(cols) < 2 or len(rows) < 2 or cols[-1] - cols[0] < 20 or rows[-1] - rows[0] < 20:
        raise GetterError(f"{label}: no plot frame found (an ImageJ plot draws a box of axes)")
    return int(cols[0]), int(rows[0]), int(cols[-1]), int(rows[-1])


_TICKS = 10  # pixels inside the frame that tick marks may cover


@register("imagej_plot_curve")
def imagej_plot_curve(state: FinalState, path: str, key: str | None = None) -> Any:
    """The curve of a line plot ImageJ saved as an image (a Plot window saved as PNG or TIFF),
    read from its pixels, as a dict or one key.

    Keys: ``start`` and ``end``, the height of the black data line at the frame's left and right
    edges as a fraction of the frame (0 bottom, 1 top; ImageJ fits the y range to the data, so
    a decay from its maximum to its minimum gives about 1 and 0), ``drop`` (start - end) and
    ``markers``, the number of red point markers drawn inside the frame (ImageJ's profile plots
    mark every data point except those clipped at the frame's edges).
    """
    img = load_image(existing_file(state, path), path)
    if img.planes.shape[0] != 1:
        raise GetterError(f"{path}: a plot is one image, this is {img.describe()}")
    plane = img.planes[0].astype(float)
    if plane.shape[-1] == 1:
        plane = np.repeat(plane, 3, axis=-1)
    if img.planes.dtype != np.uint8:
        raise GetterError(f"{path}: a saved plot is 8-bit RGB, this is {img.describe()}")
    rgb = plane[..., :3]
    dark = rgb.max(axis=2) < 80
    x0, y0, x1, y1 = _plot_frame(dark, path)
    inner = dark[y0 + 2:y1 - 1, x0 + 2:x1 - 1]
    height = float(y1 - y0)

    def edge_height(columns: range) -> float:
        for c in columns:
            ys = np.nonzero(inner[:, c])[0]
            if len(ys):
                return float(y1 - (y0 + 2 + ys.mean())) / height
        raise GetterError(f"{path}: no data line inside the plot frame")

    width = inner.shape[1]
    # ImageJ draws tick marks inward from the frame (a few pixels): skip them
    start = edge_height(range(_TICKS, width // 4))
    end = edge_height(range(width - 1 - _TICKS, width - width // 4, -1))
    red = (rgb[..., 0] > 150) & (rgb[..., 1] < 110) & (rgb[..., 2] < 110)
    from scipy import ndimage

    # a marker is a small circle the data line crosses: merge its pieces before counting
    marks = ndimage.binary_dilation(red[y0 + 1:y1, x0 + 1:x1], iterations=2)
    labels, n = ndimage.label(marks, structure=np.ones((3, 3)))
    sizes = np.bincount(labels.ravel())[1:] if n else np.zeros(0)
    out = {"start": start, "end": end, "drop": start - end, "markers": int((sizes >= 12).sum())}
    return pick_key(path, out, key)
