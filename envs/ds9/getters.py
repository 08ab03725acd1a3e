"""DS9-specific getters: region files, exported PNGs and positions in DS9's state dump.

Imported by :func:`sciagent_gym.tools.load_tool_getters` as ``sciagent_gym.envs.ds9.getters``.
Every missing or malformed input raises GetterError, which the evaluator turns into a failed
criterion. Region files are parsed by :mod:`sciagent_gym.envs.ds9.regions`; shapes in sky
coordinates are converted to image pixels with the TAN WCS of the FITS file they belong to
(read from the work directory with the numpy FITS reader of :mod:`.data`).

Exported PNGs are judged by their content (:func:`ds9_png_content`): mapped back through the
colour map to data levels and rank-correlated with the task's pixel data, a host-side gold copy
(never the work directory's file), so a blank, uniform or unrelated picture of the right size
fails.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from sciagent_gym.envs.ds9 import colormaps
from sciagent_gym.envs.ds9.data import TanWCS, read_fits
from sciagent_gym.envs.ds9.regions import PIXEL_SYSTEMS, RegionError, parse_regions

from sciagent_gym.sdk import (
    GetterError,
    check_fits,
    decode_text,
    open_image,
    pick_key,
    read_bytes,
    register,
)

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState

_MAX_REGION_BYTES = 1024 * 1024
_MAX_FITS_BYTES = 64 * 1024 * 1024


def _wcs(state: FinalState, fits: str) -> TanWCS:
    data = read_bytes(state, fits, _MAX_FITS_BYTES)
    check_fits(data, fits)
    try:
        header, _ = read_fits(data)
        return TanWCS.from_header(header)
    except (ValueError, KeyError) as exc:
        raise GetterError(f"{fits}: no usable TAN WCS: {exc}") from None


def _to_pixels(shape: dict[str, Any], wcs: TanWCS | None) -> dict[str, Any]:
    """A parsed shape's centre and sizes in image pixels."""
    system = shape["system"]
    (a, b) = shape["coords"][0]
    if system in PIXEL_SYSTEMS:
        x, y = a, b
    elif system in ("fk5", "icrs"):
        if wcs is None:
            raise GetterError("a region in sky coordinates needs the image's WCS")
        x, y = (float(v) for v in wcs.world2pix(a, b))
    else:
        raise GetterError(f"regions in {system} coordinates are not supported here")
    sizes = []
    for value, unit in shape["sizes"]:
        if unit == "pixel":
            sizes.append(value)
        else:
            if wcs is None:
                raise GetterError("a size in angular units needs the image's WCS")
            arcsec = value if unit == "arcsec" else value * 3600.0
            sizes.append(arcsec / wcs.pixel_scale_arcsec)
    return {"shape": shape["shape"], "x": x, "y": y, "sizes": sizes,
            "r": sizes[0] if sizes else None, "system": system, "exclude": shape["exclude"],
            "props": shape["props"]}


def regions_in_pixels(text: str, wcs: TanWCS | None, label: str) -> dict[str, Any]:
    """{"n_shapes", "n_circles", "shapes": [...], "circles": [...], "systems"} with centres
    and sizes in image pixels."""
    try:
        parsed = parse_regions(text)
    except RegionError as exc:
        raise GetterError(f"{label}: {exc}") from None
    if parsed["format"] not in (None, "ds9"):
        raise GetterError(f"{label}: region file format {parsed['format']!r}, expected ds9")
    shapes = [_to_pixels(s, wcs) for s in parsed["shapes"]]
    circles = [s for s in shapes if s["shape"] == "circle" and not s["exclude"]]
    return {"n_shapes": len(shapes), "n_circles": len(circles), "shapes": shapes,
            "circles": circles, "systems": sorted({s["system"] for s in shapes})}


@register("ds9_regions")
def ds9_regions(state: FinalState, path: str, fits: str | None = "field.fits",
                key: str | None = None) -> Any:
    """A saved DS9 region file in image pixels (see :func:`regions_in_pixels`), or one dotted
    key ("n_circles", "circles.0.r"); sky coordinates are converted with ``fits``'s WCS."""
    text = decode_text(read_bytes(state, path, _MAX_REGION_BYTES))
    wcs = _wcs(state, fits) if fits else None
    return pick_key(path, regions_in_pixels(text, wcs, path), key)


@register("ds9_circle_near")
def ds9_circle_near(state: FinalState, path: str, x: float, y: float,
                    fits: str | None = "field.fits", key: str = "distance") -> Any:
    """Of the circles in a region file, the one whose centre is nearest (x, y) (image
    pixels): its "distance" (pixels), "r" (radius, pixels), "x", "y"."""
    found = ds9_regions(state, path, fits)
    if not found["circles"]:
        raise GetterError(f"{path}: no circle region in the file")
    best = min(found["circles"], key=lambda c: math.hypot(c["x"] - x, c["y"] - y))
    info = {"distance": math.hypot(best["x"] - x, best["y"] - y), "r": best["r"],
            "x": best["x"], "y": best["y"]}
    return pick_key(path, info, key)


def _app(state: FinalState) -> dict[str, Any]:
    if state.app_state is None:
        raise GetterError(f"DS9's state is unavailable: {state.app_state_error or 'not read'}")
    return state.app_state


@register("ds9_sky_offset")
def ds9_sky_offset(state: FinalState, ra: float, dec: float, what: str = "pan") -> float:
    """Angular distance (arcsec) from (ra, dec) of DS9's ``what`` ("pan" or "crosshair")
    position in FK5."""
    pos = (_app(state).get(what) or {}).get("fk5")
    if not pos or len(pos) < 2:
        raise GetterError(f"DS9 reports no {what} position in sky coordinates")
    r1, d1, r2, d2 = (math.radians(v) for v in (pos[0], pos[1], ra, dec))
    h = math.sin((d2 - d1) / 2) ** 2 + math.cos(d1) * math.cos(d2) * math.sin((r2 - r1) / 2) ** 2
    return math.degrees(2 * math.asin(min(1.0, math.sqrt(h)))) * 3600.0  # haversine


@register("ds9_pixel_offset")
def ds9_pixel_offset(state: FinalState, x: float, y: float, what: str = "pan") -> float:
    """Distance (image pixels) from (x, y) of DS9's ``what``: "pan", "crosshair" or "crop"
    (the crop box's centre)."""
    app = _app(state)
    pos = (app.get(what) or {}).get("image")
    if not pos or len(pos) < 2:
        raise GetterError(f"DS9 reports no {what} position in image coordinates")
    return math.hypot(pos[0] - x, pos[1] - y)


@register("ds9_live_circle_near")
def ds9_live_circle_near(state: FinalState, x: float, y: float, key: str = "distance") -> Any:
    """Of the circle regions DS9 shows now (image pixels), the one whose centre is nearest
    (x, y): its "distance" (pixels), "r", "x", "y"; and "n_circles"."""
    circles = [r for r in _app(state).get("regions") or []
               if r.get("shape") == "circle" and r.get("coords")]
    if not circles:
        raise GetterError("DS9 shows no circle region")
    best = min(circles, key=lambda r: math.hypot(r["coords"][0][0] - x, r["coords"][0][1] - y))
    cx, cy = best["coords"][0][0], best["coords"][0][1]
    info = {"distance": math.hypot(cx - x, cy - y), "x": cx, "y": cy,
            "r": (best.get("sizes") or [None])[0], "n_circles": len(circles)}
    return pick_key("regions", info, key)


@register("ds9_live_circles_on")
def ds9_live_circles_on(state: FinalState, stars: list[dict[str, Any]], threshold: float,
                        max_distance: float = 2.0, key: str | None = None) -> Any:
    """How the circle regions DS9 shows now mark the ``stars`` (gold dicts with ``peak``,
    ``peak_x``, ``peak_y``, 1-based image pixels) whose peak exceeds ``threshold``: "marked"
    (such stars with a circle centred within ``max_distance`` pixels of their brightest
    pixel), "targets" (how many there are), "extra" (circles near none of them: on a fainter
    star, the galaxy, empty sky or a second circle on one star), "n_circles", and "exact"
    (every such star marked once and nothing else)."""
    circles = [r["coords"][0] for r in _app(state).get("regions") or []
               if r.get("shape") == "circle" and r.get("coords")]
    targets = [s for s in stars if float(s["peak"]) > float(threshold)]
    used: set[int] = set()
    for s in targets:
        near = [(math.hypot(c[0] - s["peak_x"], c[1] - s["peak_y"]), i)
                for i, c in enumerate(circles) if i not in used]
        near = [d for d in near if d[0] <= max_distance]
        if near:
            used.add(min(near)[1])
    marked, extra = len(used), len(circles) - len(used)
    info = {"marked": marked, "targets": len(targets), "extra": extra,
            "n_circles": len(circles), "exact": marked == len(targets) and extra == 0}
    return pick_key("regions", info, key)


# --- exported PNGs by content ----------------------------------------------------------------

#: Below this rank correlation a PNG is not a picture of the data: its colour fit, offset and
#: the like are not reported (a solid colour on the right map must earn nothing).
_PICTURE_MIN = 0.5


def _png_rgb(state: FinalState, path: str) -> np.ndarray:
    data = read_bytes(state, path, _MAX_FITS_BYTES)
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        raise GetterError(f"{path}: not a PNG file")
    with open_image(data, path) as im:
        try:
            return np.asarray(im.convert("RGB"))
        except (OSError, ValueError) as exc:
            raise GetterError(f"{path}: cannot read the PNG: {exc}") from None


def _reference(reference_path: str) -> np.ndarray:
    """The gold pixel data (a host-side TIFF the task's generator wrote), FITS row order."""
    import tifffile

    ref = Path(str(reference_path))
    if not ref.is_absolute() or not ref.is_file():
        raise GetterError(f"reference {reference_path!r}: not an existing absolute host path")
    return np.asarray(tifffile.imread(ref), float)


def rank_correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation; 0.0 when either side is constant (no picture at all)."""
    from scipy.stats import rankdata

    ra, rb = rankdata(np.ravel(a)), rankdata(np.ravel(b))
    if ra.std() == 0 or rb.std() == 0:
        return 0.0
    return float(np.corrcoef(ra, rb)[0, 1])


def _best_cutout(levels: np.ndarray, ref: np.ndarray, x: float, y: float,
                 search: int) -> tuple[float, float]:
    """(correlation, offset in pixels) of the ``levels``-sized cut-out of ``ref`` that matches
    best among those centred within ``search`` pixels of image pixel (x, y)."""
    h, w = levels.shape
    c0, r0 = int(round(x - w / 2 - 0.5)), int(round(y - h / 2 - 0.5))
    best = (-1.0, math.inf)
    for dr in range(-search, search + 1):
        for dc in range(-search, search + 1):
            r, c = r0 + dr, c0 + dc
            if r < 0 or c < 0 or r + h > ref.shape[0] or c + w > ref.shape[1]:
                continue
            corr = rank_correlation(levels, ref[r:r + h, c:c + w])
            if corr > best[0]:
                best = (corr, math.hypot(dr, dc))
    return best


@register("ds9_png_content")
def ds9_png_content(state: FinalState, path: str, reference_path: str,
                    cmap: str | None = None, x: float | None = None, y: float | None = None,
                    search: int = 2, key: str | None = None) -> Any:
    """An exported PNG compared with the task's pixel data (``reference_path``: the gold array).

    DS9 writes the top image row (highest y) first; the PNG is flipped back. Its pixels are
    mapped to levels: through ``cmap`` (nearest position on the map's curve) or, without one,
    as the mean of R, G and B. Keys: "size" [width, height]; "correlation", the rank correlation
    of the levels with the data (any monotonic scale function or limits keep it near 1),
    against the whole image, or with ``x``/``y`` against the best PNG-sized cut-out centred
    within ``search`` pixels of image pixel (x, y); "offset" (pixels) of that cut-out's centre
    from (x, y); "cmap_fit", the fraction of pixels on the map's curve. "offset" and "cmap_fit"
    are None/0 unless the PNG is a picture of the data (correlation >= 0.5).
    """
    rgb = _png_rgb(state, path)
    info: dict[str, Any] = {"width": int(rgb.shape[1]), "height": int(rgb.shape[0]),
                            "size": [int(rgb.shape[1]), int(rgb.shape[0])],
                            "correlation": 0.0, "offset": None, "cmap_fit": 0.0}
    ref = _reference(reference_path)
    fits_rows = rgb[::-1]
    if cmap is not None:
        try:
            levels, dist = colormaps.invert(fits_rows, cmap)
        except KeyError as exc:
            raise GetterError(str(exc)) from None
    else:
        levels, dist = fits_rows.astype(float).mean(axis=2), None
    if x is not None and y is not None:
        if levels.shape[0] <= ref.shape[0] and levels.shape[1] <= ref.shape[1]:
            corr, offset = _best_cutout(levels, ref, float(x), float(y), int(search))
            info["correlation"], info["offset"] = corr, offset
    elif levels.shape == ref.shape:
        info["correlation"], info["offset"] = rank_correlation(levels, ref), 0.0
    if info["correlation"] < _PICTURE_MIN:
        info["offset"] = None
    elif dist is not None:
        info["cmap_fit"] = float(np.mean(dist <= colormaps.ON_MAP_DISTANCE))
    return pick_key(path, info, key)
