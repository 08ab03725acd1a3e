"""GRASS getters: rasters the agent exported as GeoTIFF (r.out.gdal), compared by content.

Imported by :func:`sciagent_gym.tools.load_tool_getters` as ``sciagent_gym.envs.grass.getters``.
The file is read on the host with tifffile under a size limit; a missing, oversized or
unreadable file raises GetterError, which the evaluator turns into a failed criterion. Cells
GDAL marks as no-data (the GDAL_NODATA tag r.out.gdal writes) and non-finite cells count as
null. Reference arrays (gold) are TIFF files on the host side, written when the task was staged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sciagent_gym.sdk import GetterError, existing_file, pick_key, register

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState

MAX_TIFF_BYTES = 64 * 1024 * 1024
_GDAL_NODATA = 42113


def read_geotiff(path: Any, label: str) -> np.ndarray:
    """The first band of a GeoTIFF as float with no-data cells NaN."""
    import tifffile

    try:
        with tifffile.TiffFile(path) as tif:
            page = tif.pages[0]
            if int(np.prod(page.shape)) > 16_000_000:
                raise GetterError(f"{label}: {page.shape} is too large a raster")
            data = np.asarray(page.asarray(), float)
            tag = page.tags.get(_GDAL_NODATA)
            nodata = tag.value if tag is not None else None
    except GetterError:
        raise
    except Exception as exc:  # tifffile raises many types on junk input
        raise GetterError(f"{label}: not a GeoTIFF tifffile can read "
                          f"({type(exc).__name__}: {exc})") from None
    if data.ndim == 3:
        data = data[..., 0] if data.shape[-1] <= 4 else data[0]
    if data.ndim != 2:
        raise GetterError(f"{label}: not a single-band raster (shape {data.shape})")
    if nodata is not None:
        try:
            value = float(str(nodata).strip("\x00 "))
        except ValueError:
            value = None
        if value is not None and np.isfinite(value):
            data[data == value] = np.nan
    data[~np.isfinite(data)] = np.nan
    return data


@register("grass_geotiff")
def grass_geotiff(state: FinalState, path: str, key: str | None = None,
                  reference_path: str | None = None) -> Any:
    """An exported GeoTIFF: ``shape``, ``valid`` (non-null cells), ``min``, ``max``, ``mean``;
    with a reference array, ``rms_diff`` and ``max_abs_diff`` over the cells valid in both
    (inf for another shape or no common cell) and ``null_mismatch`` (cells null in one only)."""
    p = existing_file(state, path)
    size = p.stat().st_size
    if size > MAX_TIFF_BYTES:
        raise GetterError(f"{path}: {size} bytes is larger than {MAX_TIFF_BYTES}")
    data = read_geotiff(p, path)
    valid = np.isfinite(data)
    info: dict[str, Any] = {"shape": list(data.shape), "valid": int(valid.sum())}
    if valid.any():
        info.update(min=float(np.nanmin(data)), max=float(np.nanmax(data)),
                    mean=float(np.nanmean(data)))
    if reference_path is not None:
        import tifffile

        try:
            ref = np.asarray(tifffile.imread(reference_path), float)
        except Exception as exc:
            raise GetterError(f"reference {reference_path}: cannot read: {exc}") from None
        if ref.shape != data.shape:
            info.update(rms_diff=float("inf"), max_abs_diff=float("inf"),
                        null_mismatch=int(ref.size))
        else:
            both = valid & np.isfinite(ref)
            diff = data[both] - ref[both]
            info["rms_diff"] = float(np.sqrt(np.mean(diff**2))) if both.any() else float("inf")
            info["max_abs_diff"] = float(np.max(np.abs(diff))) if both.any() else float("inf")
            info["null_mismatch"] = int((valid != np.isfinite(ref)).sum())
    return pick_key(path, info, key)
