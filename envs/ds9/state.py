"""DS9's state as the dump reads it: the ``xpaget`` queries asked, and their answers as JSON
data (:func:`build_state`). The answers come from DS9's own Tcl procedures, which its Tcl
console can redefine: the threat model says so (``console-rebind``)."""

from __future__ import annotations

from typing import Any

from sciagent_gym.envs.ds9.xpa import XPA_NAME

# What dump_state asks, by key (each an ``xpaget`` argument).
QUERIES = {
    "version": "version", "file": "file", "frame": "frame", "frames": "frame all",
    "scale": "scale", "scale_mode": "scale mode", "scale_limits": "scale limits",
    "scale_log_exp": "scale log exp", "cmap": "cmap", "cmap_invert": "cmap invert",
    "zoom": "zoom", "rotate": "rotate", "pan_image": "pan image",
    "pan_fk5": "pan wcs fk5 degrees", "crosshair_image": "crosshair image",
    "crosshair_fk5": "crosshair wcs fk5 degrees", "mode": "mode",
    "regions": "regions -format ds9 -system image",
    "smooth": "smooth", "smooth_function": "smooth function", "smooth_radius": "smooth radius",
    "smooth_sigma": "smooth sigma", "contour": "contour", "contour_nlevels": "contour nlevels",
    # not "contour levels": DS9 answers it from the Contour Parameters dialog, which it opens
    # on screen to do so (a dump must never change what the agent sees)
    "contour_limits": "contour limits",
    "contour_scale": "contour scale", "contour_smooth": "contour smooth",
    "crop_image": "crop image", "size": "fits size", "object": "fits header keyword OBJECT",
    "block": "block", "tile": "tile", "colorbar": "colorbar", "grid": "grid",
    "view_info": "view info", "view_panner": "view panner", "view_magnifier": "view magnifier",
    "view_graph_horz": "view graph horizontal", "view_graph_vert": "view graph vertical",
}



def _floats(text: str | None) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(v) for v in text.split()]
    except ValueError:
        return None


def _float(text: str | None) -> float | None:
    values = _floats(text)
    return values[0] if values else None


def _yes(text: str | None) -> bool | None:
    return None if text is None else text.strip().lower() in ("yes", "1", "true")


def build_state(raw: dict[str, str | None]) -> dict[str, Any]:
    """The state dump as JSON data from the raw ``xpaget`` answers (None: the query failed)."""
    from sciagent_gym.envs.ds9.regions import RegionError, parse_regions

    file = (raw.get("file") or "").strip()
    try:
        parsed = parse_regions(raw.get("regions") or "")
        regions = [{"shape": s["shape"], "exclude": s["exclude"], "coords": s["coords"],
                    "sizes": [v for v, _ in s["sizes"]], "angles": s["angles"],
                    "props": s["props"]} for s in parsed["shapes"]]
        region_error = None
    except RegionError as exc:
        regions, region_error = [], str(exc)
    crop = _floats(raw.get("crop_image"))
    size = _floats(raw.get("size"))
    return {
        "xpa_name": XPA_NAME, "version": (raw.get("version") or "").split()[-1:] or None,
        "file": file, "loaded": bool(file),
        "file_name": file.rsplit("/", 1)[-1] if file else "",
        "frame": _float(raw.get("frame")),
        "frames": [int(v) for v in (_floats(raw.get("frames")) or [])],
        "n_frames": len(_floats(raw.get("frames")) or []),
        "scale": {"function": (raw.get("scale") or "").strip() or None,
                  "mode": (raw.get("scale_mode") or "").strip() or None,
                  "limits": _floats(raw.get("scale_limits")),
                  "log_exp": _float(raw.get("scale_log_exp"))},
        "cmap": {"name": (raw.get("cmap") or "").strip() or None,
                 "invert": _yes(raw.get("cmap_invert"))},
        "zoom": _float(raw.get("zoom")), "rotate": _float(raw.get("rotate")),
        "pan": {"image": _floats(raw.get("pan_image")), "fk5": _floats(raw.get("pan_fk5"))},
        "crosshair": {"image": _floats(raw.get("crosshair_image")),
                      "fk5": _floats(raw.get("crosshair_fk5"))},
        "mode": (raw.get("mode") or "").strip() or None,
        "regions": regions, "n_regions": len(regions), "regions_error": region_error,
        "smooth": {"on": _yes(raw.get("smooth")),
                   "function": (raw.get("smooth_function") or "").strip() or None,
                   "radius": _float(raw.get("smooth_radius")),
                   "sigma": _float(raw.get("smooth_sigma"))},
        "contour": {"on": _yes(raw.get("contour")), "nlevels": _float(raw.get("contour_nlevels")),
                    "limits": _floats(raw.get("contour_limits")),
                    "scale": (raw.get("contour_scale") or "").strip() or None,
                    "smooth": _float(raw.get("contour_smooth"))},
        "crop": {"image": crop,
                 "cropped": bool(crop and size and (crop[2] < size[0] or crop[3] < size[1]))},
        "size": size,
        "object": (raw.get("object") or "").strip() or None,
        "block": _float(raw.get("block")), "tile": _yes(raw.get("tile")),
        "colorbar": _yes(raw.get("colorbar")), "grid": _yes(raw.get("grid")),
        "view": {"info": _yes(raw.get("view_info")), "panner": _yes(raw.get("view_panner")),
                 "magnifier": _yes(raw.get("view_magnifier")),
                 "graph_horz": _yes(raw.get("view_graph_horz")),
                 "graph_vert": _yes(raw.get("view_graph_vert"))},
    }
