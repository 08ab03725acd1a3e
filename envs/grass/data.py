"""Terrain and land-cover rasters for the GRASS tasks, and the gold values derived from them.

Every generator takes ``(work_dir, rng, **args)``, writes GeoTIFFs (WGS 84 / UTM 33N, the
location's CRS) on the fixed grid of the snapshot's location (200 x 200 cells of 10 m, lower
left corner at E 500000, N 5000000) and returns gold values computed from the data it wrote.

A DEM is a sum of parts whose sizes are drawn per seed: a base level with a gentle regional
tilt, Gaussian hills (one of them the highest, by a margin, so the peak is unambiguous) and a
valley (a Gaussian trough along a random line). A land-cover map has five classes (1 water,
2 forest, 3 grassland, 4 cropland, 5 urban) laid out as smooth random patches, with water in the
valley floor. Values are rounded to what the GeoTIFF holds (float32 millimetres for heights) so
the gold is what GRASS reads.

Slope follows GRASS's r.slope.aspect (Horn's 3 x 3 formula, degrees, edge cells null);
``envs/grass/tests/test_grass_specs.py`` checks it against GRASS itself run in batch mode.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROWS = COLS = 200
RES = 10.0
WEST, SOUTH = 500000.0, 5000000.0
NORTH, EAST = SOUTH + ROWS * RES, WEST + COLS * RES
CELL_HA = RES * RES / 1e4
CLASSES = {1: "water", 2: "forest", 3: "grassland", 4: "cropland", 5: "urban"}


def write_geotiff(path: Path, z: np.ndarray, integer: bool = False, nodata: float | None = None,
                  ) -> None:
    """Write ``z`` (row 0 = north) as a GeoTIFF on the location's grid through an ASCII grid
    and gdal_translate (GDAL's own writer: the file is what any GIS writes)."""
    path = Path(path)
    with tempfile.TemporaryDirectory(prefix="sciagent-grass-gen-") as tmp:
        asc = Path(tmp) / "grid.asc"
        with open(asc, "w") as fh:
            fh.write(f"ncols {z.shape[1]}\nnrows {z.shape[0]}\nxllcorner {WEST}\n"
                     f"yllcorner {SOUTH}\ncellsize {RES}\n")
            if nodata is not None:
                fh.write(f"NODATA_value {nodata:g}\n")
            np.savetxt(fh, z, fmt="%d" if integer else "%.3f")
        cmd = ["gdal_translate", "-q", "-a_srs", "EPSG:32633", "-ot",
               "Byte" if integer else "Float32", "-co", "COMPRESS=NONE", str(asc), str(path)]
        subprocess.run(cmd, check=True, capture_output=True, timeout=60,
                       env={**os.environ, "GDAL_PAM_ENABLED": "NO"})
    aux = Path(str(path) + ".aux.xml")
    if aux.exists():
        aux.unlink()


def horn_slope(z: np.ndarray, res: float = RES) -> np.ndarray:
    """Slope in degrees as r.slope.aspect computes it (Horn); the outer ring of cells NaN."""
    z = np.asarray(z, float)
    out = np.full(z.shape, np.nan)
    a, b, c = z[:-2, :-2], z[:-2, 1:-1], z[:-2, 2:]
    d, f = z[1:-1, :-2], z[1:-1, 2:]
    g, h, i = z[2:, :-2], z[2:, 1:-1], z[2:, 2:]
    dx = ((c + 2 * f + i) - (a + 2 * d + g)) / (8 * res)
    dy = ((g + 2 * h + i) - (a + 2 * b + c)) / (8 * res)
    out[1:-1, 1:-1] = np.degrees(np.arctan(np.hypot(dx, dy)))
    return out.astype(np.float32).astype(float)


def cell_centre(row: int, col: int) -> tuple[float, float]:
    """Easting and northing of a cell's centre."""
    return WEST + (col + 0.5) * RES, NORTH - (row + 0.5) * RES


def _smooth_field(rng: np.random.Generator, scale: float) -> np.ndarray:
    from scipy import ndimage

    field = ndimage.gaussian_filter(rng.normal(size=(ROWS, COLS)), scale, mode="reflect")
    return (field - field.mean()) / max(field.std(), 1e-12)


def make_dem(rng: np.random.Generator, hills: int) -> tuple[np.ndarray, dict[str, Any]]:
    y, x = np.mgrid[0:ROWS, 0:COLS].astype(float)
    base = rng.uniform(180.0, 420.0)
    tilt = rng.uniform(-0.4, 0.4, 2)
    z = base + tilt[0] * (x - COLS / 2) + tilt[1] * (y - ROWS / 2)
    heights = np.sort(rng.uniform(120.0, 380.0, hills))[::-1].copy()
    heights[0] += rng.uniform(120.0, 220.0)  # the highest hill stands out
    centres = []
    for k in range(hills):
        for _ in range(100):
            cx, cy = rng.uniform(30, COLS - 30), rng.uniform(30, ROWS - 30)
            if all(np.hypot(cx - px, cy - py) > 45 for px, py in centres):
                break
        centres.append((cx, cy))
        s = rng.uniform(14.0, 30.0)
        z += heights[k] * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * s * s))
    # a valley: a Gaussian trough along a line through the grid
    angle = rng.uniform(0, np.pi)
    vx, vy = rng.uniform(70, 130, 2)
    dist = (x - vx) * np.sin(angle) - (y - vy) * np.cos(angle)
    depth, width = rng.uniform(40.0, 90.0), rng.uniform(8.0, 14.0)
    z -= depth * np.exp(-dist**2 / (2 * width**2))
    z = np.round(z, 3).astype(np.float32)
    valley = np.abs(dist) < width
    return z, {"valley": valley, "hill_centres": centres}


def make_landcover(rng: np.random.Generator, valley: np.ndarray) -> np.ndarray:
    fields = np.stack([_smooth_field(rng, rng.uniform(10, 18)) for _ in range(4)])
    lc = (np.argmax(fields, axis=0) + 2).astype(np.uint8)  # 2..5
    lc[valley] = 1
    return lc


def dem_gold(z: np.ndarray, threshold: float | None = None) -> dict[str, Any]:
    zf = z.astype(float)
    row, col = np.unravel_index(int(np.argmax(zf)), zf.shape)
    east, north = cell_centre(int(row), int(col))
    slope = horn_slope(zf)
    valid = np.isfinite(slope)
    gold: dict[str, Any] = {
        "max_m": float(zf.max()), "min_m": float(zf.min()), "mean_m": float(zf.mean()),
        "relief_m": float(zf.max() - zf.min()),
        "peak_east": east, "peak_north": north,
        "slope_mean_deg": float(slope[valid].mean()), "slope_max_deg": float(slope[valid].max()),
        "slope_cells": int(valid.sum()),
        "slope_pct_mean": float(np.mean(100 * np.tan(np.radians(slope[valid])))),
        "slope": slope.astype(np.float32),
    }
    if threshold is not None:
        above = zf >= threshold
        gold.update(cells_above=int(above.sum()), cells_below=int((~above).sum()),
                    area_above_ha=float(above.sum() * CELL_HA),
                    fraction_above_pct=float(100 * above.mean()),
                    cells_above_shifted=int((zf >= threshold - 50).sum()))
    return gold


def terrain(work_dir: Path, rng: np.random.Generator, path: str = "dem.tif",
            hills: list[int] | int = (3, 5), threshold: float | None = None,
            landcover_path: str | None = None, decoy_path: str | None = None,
            steep_deg: float | None = None, contradict_share: float | None = None,
            target_class: int | None = None) -> dict[str, Any]:
    """A DEM (and, with ``landcover_path``, its land-cover map; with ``decoy_path``, a second
    DEM of another area that an agent could import by mistake) and their gold values.

    With ``contradict_share`` (a percentage) and ``threshold``, the DEM is raised or lowered as
    a whole so that the share of cells at or above the threshold is 40 points away from it
    (45-55 % for a share of 5-15 or 85-95 %): a requirement that the two agree cannot hold."""
    n = int(rng.integers(hills[0], hills[1] + 1)) if isinstance(hills, (list, tuple)) else hills
    z, parts = make_dem(rng, n)
    if contradict_share is not None and threshold is not None:
        target = contradict_share - 40 if contradict_share >= 50 else contradict_share + 40
        shift = threshold - float(np.quantile(z.astype(float), 1 - target / 100))
        z = np.round(z.astype(float) + shift, 3).astype(np.float32)
    write_geotiff(work_dir / path, z)
    gold = dem_gold(z, threshold)
    gold["hills"] = n
    if decoy_path:
        decoy, _ = make_dem(rng, n)
        write_geotiff(work_dir / decoy_path, decoy)
        gold["decoy_max_m"] = float(decoy.astype(float).max())
    if steep_deg is not None:
        slope = gold["slope"].astype(float)
        steep = np.isfinite(slope) & (slope >= steep_deg)
        gold["steep_cells"] = int(steep.sum())
        gold["steep_area_ha"] = float(steep.sum() * CELL_HA)
        gold["slope_flat_cells"] = int((np.isfinite(slope) & (slope < steep_deg)).sum())
        gold["steep_fraction"] = gold["steep_cells"] / max(1, int(np.isfinite(slope).sum()))
    if landcover_path:
        lc = make_landcover(rng, parts["valley"])
        write_geotiff(work_dir / landcover_path, lc, integer=True)
        zf = z.astype(float)
        counts = {str(k): int((lc == k).sum()) for k in CLASSES}
        gold["class_cells"] = counts
        gold["class_area_ha"] = {k: v * CELL_HA for k, v in counts.items()}
        gold["class_mean_m"] = {str(k): float(zf[lc == k].mean()) if counts[str(k)] else None
                                for k in CLASSES}
        if target_class is not None:
            key = str(int(target_class))
            gold.update(target_area_ha=gold["class_area_ha"][key],
                        target_cells=counts[key], target_mean_m=gold["class_mean_m"][key],
                        other_area_ha=gold["class_area_ha"][str(int(target_class) % 5 + 1)],
                        target_mean_all_m=float(zf.mean()))
        if steep_deg is not None:
            slope = gold["slope"].astype(float)
            steep = np.isfinite(slope) & (slope >= steep_deg)
            gold["steep_class_cells"] = {str(k): int((steep & (lc == k)).sum()) for k in CLASSES}
            if target_class is not None:
                mask = (steep & (lc == int(target_class))).astype(np.float32)
                mask[~np.isfinite(slope)] = np.nan
                gold["steep_target"] = mask
                gold["steep_target_cells"] = int(np.nansum(mask))
                gold["steep_target_ha"] = float(np.nansum(mask) * CELL_HA)
                gold["steep_any_ha"] = float(steep.sum() * CELL_HA)
        if threshold is not None and target_class is not None:
            high = (zf >= threshold)
            both = high & (lc == int(target_class))
            gold["high_target_cells"] = int(both.sum())
            gold["high_target_ha"] = float(both.sum() * CELL_HA)
            gold["highland"] = high.astype(np.float32)
    return gold


def corrupt_geotiff(work_dir: Path, rng: np.random.Generator, path: str = "survey_dem.tif",
                    keep_bytes: int = 600) -> dict[str, Any]:
    """A GeoTIFF cut off after its header: GDAL opens none of its data (an unusable input)."""
    z, _ = make_dem(rng, 3)
    full = work_dir / (path + ".full.tif")
    write_geotiff(full, z)
    data = full.read_bytes()
    full.unlink()
    (work_dir / path).write_bytes(data[:keep_bytes])
    return {"bytes": keep_bytes, "max_m": float(z.astype(float).max())}


def grass_batch(commands: str, files: dict[str, Path] | None = None, timeout: float = 120.0,
                ) -> str:
    """Run shell lines of GRASS commands on the host in a throw-away location of the tasks'
    CRS and grid (``grass --exec``); ``files`` are imported first as rasters of those names.
    Used by the spec tests to check gold values against GRASS itself."""
    grass = shutil.which("grass", path="/usr/bin:/bin") or "grass"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GISRC", "GISBASE"))}
    env.update(LANG="C", LC_ALL="C", PATH="/usr/bin:/bin", GRASS_PYTHON="/usr/bin/python3")
    with tempfile.TemporaryDirectory(prefix="sciagent-grass-host-") as tmp:
        env["HOME"] = tmp
        loc = Path(tmp) / "db" / "sci"
        subprocess.run([grass, "-c", "EPSG:32633", "-e", str(loc)], check=True, env=env,
                       capture_output=True, timeout=timeout)
        imports = "".join(f"r.in.gdal -o --quiet input='{p}' output={name}\n"
                          for name, p in (files or {}).items())
        script = (f"g.region n={NORTH} s={SOUTH} e={EAST} w={WEST} res={RES}\n"
                  + imports + commands)
        run = subprocess.run([grass, str(loc / "PERMANENT"), "--exec", "sh", "-c", script],
                             env=env, capture_output=True, text=True, timeout=timeout)
        if run.returncode != 0:
            raise RuntimeError(f"grass batch failed: {run.stderr[-800:]}")
        return run.stdout


def wells(work_dir: Path, rng: np.random.Generator, path: str = "dem.tif",
          csv_path: str = "wells.csv", count: list[int] | int = (8, 14),
          hills: list[int] | int = (3, 5)) -> dict[str, Any]:
    """A DEM and a CSV of groundwater wells on it (header ``x,y,id,depth_m``; x and y in
    UTM 33N metres, each well inside a cell at least 1 m from its edges, at most one well a
    cell) and the DEM's height under each well, the value ``v.what.rast`` reads (the cell's
    value, no interpolation). ``swapped_*`` are what a map imported with x and y swapped holds:
    no well inside the grid, so no height."""
    gold = terrain(work_dir, rng, path=path, hills=hills)
    z = read_grid(work_dir / path)
    n = int(rng.integers(count[0], count[1] + 1)) if isinstance(count, (list, tuple)) else count
    cells = rng.choice(ROWS * COLS, size=n, replace=False)
    heights, lines = [], ["x,y,id,depth_m"]
    for k, cell in enumerate(cells, start=1):
        row, col = divmod(int(cell), COLS)
        x = WEST + col * RES + rng.uniform(1.0, RES - 1.0)
        y = NORTH - (row + 1) * RES + rng.uniform(1.0, RES - 1.0)
        heights.append(float(z[row, col]))
        lines.append(f"{x:.2f},{y:.2f},{k},{rng.uniform(8.0, 60.0):.1f}")
    (work_dir / csv_path).write_text("\n".join(lines) + "\n")
    h = np.array(heights)
    gold.update(wells=n, elev_mean=float(h.mean()), elev_max=float(h.max()),
                elev_min=float(h.min()), dem_mean_m=gold["mean_m"])
    return gold


def read_grid(path: Path) -> np.ndarray:
    """A GeoTIFF written by :func:`write_geotiff` as float (row 0 = north)."""
    import tifffile

    return np.asarray(tifffile.imread(path), float)


def drainage(work_dir: Path, rng: np.random.Generator, path: str = "dem.tif",
             hills: list[int] | int = (3, 5), threshold: int = 300) -> dict[str, Any]:
    """A DEM and what GRASS's r.watershed makes of it with ``threshold`` (multiple flow
    direction, the default): flow accumulation's mean and maximum, the number of stream
    cells; computed on the host by GRASS itself in batch mode (:func:`grass_batch`), with the
    same numbers for a threshold four times larger and for single flow direction (``-s``)."""
    gold = terrain(work_dir, rng, path=path, hills=hills)
    runs = {"": f"threshold={int(threshold)}", "big_": f"threshold={4 * int(threshold)}",
            "sfd_": f"-s threshold={int(threshold)}"}
    script = "".join(
        f"r.watershed --quiet --overwrite elevation=dem {args} accumulation=acc stream=str\n"
        f"echo {prefix}acc; r.univar -g acc\necho {prefix}str; r.univar -g str\n"
        for prefix, args in runs.items())
    out = grass_batch(script, {"dem": work_dir / path})
    section = ""
    values: dict[str, float] = {}
    for line in out.splitlines():
        if "=" not in line:
            section = line.strip()
        elif line.split("=")[0] in ("n", "mean", "max"):
            key, value = line.split("=", 1)
            values[f"{section}_{key}"] = float(value)
    for prefix in runs:
        gold[f"{prefix}accum_mean"] = values[f"{prefix}acc_mean"]
        gold[f"{prefix}accum_max"] = values[f"{prefix}acc_max"]
        gold[f"{prefix}stream_cells"] = int(values[f"{prefix}str_n"])
    gold.update(threshold=int(threshold), big_threshold=4 * int(threshold))
    return gold


GENERATORS = {"terrain": terrain, "corrupt_geotiff": corrupt_geotiff, "wells": wells,
              "drainage": drainage}
