"""DS9-specific getters: region files, exported PNGs and positions in DS9's state dump.

Imported by :func:`sciagent_gym.tools.load_tool_getters` as ``sciagent_gym.envs.ds9.getters``.
Every missing or malformed input raises GetterError, which the evaluator turns into a failed
criterion. Region files are parsed by :mod:`sciagent_gym.envs.ds9.regions`; shapes in sky
coordinates are converted to image pixels with the TAN WCS of the FITS file they belong to
(read from the work directory with the numpy FITS reader of :mod:`.data`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
from sciagent_gym.envs.ds9.data import TanWCS, read_fits
from sciagent_gym.envs.ds9.regions import PIXEL_SYSTEMS, RegionError, parse_regions

from sciagent_gym.evaluation import GetterError, register
from sciagent_gym.evaluation.getters._io import decode_text, pick_key, read_bytes
from sciagent_gym.evaluation.getters._limits import check_fits, open_image

if TYPE_CHECKING:
    from sciagent_gym.evaluation import FinalState

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


@register("png_colour")
def png_colour(state: FinalState, path: str, key: str | None = None) -> Any:
    """An exported PNG's "width", "height", "mean_r"/"mean_g"/"mean_b" and "dominant" channel
    ("red", "green", "blue", or "none" when no channel leads the others by 8 levels)."""
    data = read_bytes(state, path, _MAX_FITS_BYTES)
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        raise GetterError(f"{path}: not a PNG file")
    with open_image(data, path) as im:
        try:
            rgb = np.asarray(im.convert("RGB"))
        except (OSError, ValueError) as exc:
            raise GetterError(f"{path}: cannot read the PNG: {exc}") from None
    means = rgb.reshape(-1, 3).mean(axis=0, dtype=np.float64)
    order = np.argsort(means)[::-1]
    dominant = ("red", "green", "blue")[int(order[0])] \
        if means[order[0]] - means[order[1]] >= 8 else "none"
    info = {"width": int(rgb.shape[1]), "height": int(rgb.shape[0]),
            "mean_r": float(means[0]), "mean_g": float(means[1]), "mean_b": float(means[2]),
            "dominant": dominant}
    return pick_key(path, info, key)
