"""Input data for the QGIS tasks (numpy and the standard library only), and the gold values.

Every generator takes ``(work_dir, rng, **args)``, writes its files into the task's working
directory and returns gold values computed with numpy from the data it wrote:

- ``towns``: points (GeoJSON, EPSG:4326) with name, category, region and population; gold
  counts and names for an attribute query, the distinct values of a field, and the points
  projected to UTM 33N or Web Mercator (Krueger series / spherical formula, mm accurate).
- ``sites_csv``: a CSV of sampling sites with lon/lat (EPSG:4326) or easting/northing
  (EPSG:32633) columns; gold count and bounding box.
- ``terrain``: a DEM (GeoTIFF, float32, EPSG:32633, 100 m cells, a sum of Gaussian hills) and
  districts (GeoJSON polygons in EPSG:32633 whose edges follow cell boundaries); gold areas
  (shoelace), zonal mean/max elevations (cells whose centres lie in the district, which is
  how QGIS's zonal statistics count them) and the value of one probe cell.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

# WGS 84 and UTM zone 33N
_A = 6378137.0
_F = 1 / 298.257223563
UTM33_CRS = {"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::32633"}}

_SYLLABLES = ("ka", "lo", "mi", "ra", "ven", "to", "sel", "bri", "dor", "na", "vik", "ste",
              "gra", "pol", "zen", "mar", "ul", "ber", "tan", "cor")
CATEGORIES = ("city", "town", "village")
REGIONS = ("north", "south", "east", "west")
DISTRICT_NAMES = ("Ashford", "Birchdale", "Cobham", "Dunmore", "Elmstead", "Fenwick",
                  "Glenrock", "Holloway")


def unique_names(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` distinct made-up place names."""
    names: list[str] = []
    while len(names) < n:
        parts = rng.choice(len(_SYLLABLES), size=int(rng.integers(2, 4)))
        name = "".join(_SYLLABLES[int(i)] for i in parts).capitalize()
        if name not in names:
            names.append(name)
    return names


def utm_forward(lon: np.ndarray, lat: np.ndarray, zone: int = 33) -> tuple[np.ndarray,
                                                                           np.ndarray]:
    """WGS 84 geographic (degrees) to UTM north (m): Krueger's series to n^4 (Karney 2011)."""
    n = _F / (2 - _F)
    big_a = _A / (1 + n) * (1 + n**2 / 4 + n**4 / 64)
    alpha = (n / 2 - 2 * n**2 / 3 + 5 * n**3 / 16 + 41 * n**4 / 180,
             13 * n**2 / 48 - 3 * n**3 / 5 + 557 * n**4 / 1440,
             61 * n**3 / 240 - 103 * n**4 / 140,
             49561 * n**4 / 161280)
    phi = np.radians(np.asarray(lat, float))
    lam = np.radians(np.asarray(lon, float) - (zone * 6 - 183))
    c = 2 * math.sqrt(n) / (1 + n)
    t = np.sinh(np.arctanh(np.sin(phi)) - c * np.arctanh(c * np.sin(phi)))
    xi = np.arctan2(t, np.cos(lam))
    eta = np.arctanh(np.sin(lam) / np.sqrt(1 + t * t))
    e, nn = eta.copy(), xi.copy()
    for j, a in enumerate(alpha, start=1):
        e += a * np.cos(2 * j * xi) * np.sinh(2 * j * eta)
        nn += a * np.sin(2 * j * xi) * np.cosh(2 * j * eta)
    k0 = 0.9996
    return 500000.0 + k0 * big_a * e, k0 * big_a * nn


def web_mercator(lon: np.ndarray, lat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """WGS 84 geographic (degrees) to EPSG:3857 (m)."""
    lam, phi = np.radians(np.asarray(lon, float)), np.radians(np.asarray(lat, float))
    return _A * lam, _A * np.log(np.tan(np.pi / 4 + phi / 2))


def project_points(lon, lat, crs: str) -> tuple[np.ndarray, np.ndarray]:
    if crs == "EPSG:32633":
        return utm_forward(lon, lat, 33)
    if crs == "EPSG:32632":
        return utm_forward(lon, lat, 32)
    if crs == "EPSG:3857":
        return web_mercator(lon, lat)
    raise ValueError(f"no projection formula for {crs}")


def shoelace(ring: list[list[float]]) -> float:
    """Planar area of a closed or open ring (absolute value)."""
    pts = np.asarray(ring, float)
    x, y = pts[:, 0], pts[:, 1]
    return float(abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2)


def _write_json(path: Path, doc: dict) -> None:
    path.write_text(json.dumps(doc, indent=1) + "\n")


def towns(work: Path, rng: np.random.Generator, path: str = "towns.geojson", n: int = 24,
          threshold: int = 20000, category: str = "town", field: str = "category",
          target: str = "EPSG:32633", above: int | None = None,
          below: int | None = None) -> dict[str, Any]:
    """``n`` towns (points, EPSG:4326) west of 16 E in Slovenia/Croatia.

    The populations include ``threshold`` itself once, so "greater than" and "at least" select
    different sets. With ``above`` and ``below`` (the counting tasks, issue 33: a count drawn
    over a wide range, not one that follows from ``n`` and the threshold) the survey holds
    exactly ``above`` towns larger than ``threshold`` and ``below`` smaller ones (``n`` is then
    ``above + below + 1``), populations log-uniform from 1/30 of the threshold up to 12 times
    it, as a regional register of villages, towns and cities spans. Gold: n, names, names_gt /
    count_gt (population > threshold), names_ge / count_ge, names_in_category /
    count_in_category (for ``category``), values (distinct values of ``field``), rows (name, x,
    y in ``target``), rows_other (in the other projection), rows_lonlat, attr_rows (every
    attribute of every town) and rows_in_category (attributes plus lon/lat of the towns of
    ``category``) and rows_gt (name, x, y in ``target`` of the towns with population >
    threshold), so exports can be compared by content.
    """
    if above is not None and below is not None:
        n = int(above) + int(below) + 1
    names = unique_names(rng, n)
    lon = np.round(rng.uniform(14.2, 15.8, n), 5)
    lat = np.round(rng.uniform(45.6, 46.6, n), 5)
    cats = [CATEGORIES[i] for i in rng.permutation(np.arange(n) % len(CATEGORIES))]
    regions = [REGIONS[i] for i in rng.permutation(np.arange(n) % len(REGIONS))]
    if above is not None and below is not None:
        t = math.log(threshold)
        big = np.exp(rng.uniform(t + math.log(1.02), t + math.log(12), int(above)))
        small = np.exp(rng.uniform(t - math.log(30), t - math.log(1.02), int(below)))
        pop = np.concatenate([np.round(big), np.round(small), [threshold]])[rng.permutation(n)]
    else:
        pop = rng.integers(800, 60000, n)
        pop[int(rng.integers(n))] = threshold
    pop = [int(p) for p in pop]
    feats = [{"type": "Feature",
              "properties": {"name": names[i], "category": cats[i], "region": regions[i],
                             "population": pop[i]},
              "geometry": {"type": "Point", "coordinates": [float(lon[i]), float(lat[i])]}}
             for i in range(n)]
    _write_json(work / path, {"type": "FeatureCollection", "name": Path(path).stem,
                              "features": feats})
    gt = sorted(names[i] for i in range(n) if pop[i] > threshold)
    ge = sorted(names[i] for i in range(n) if pop[i] >= threshold)
    in_cat = sorted(names[i] for i in range(n) if cats[i] == category)
    columns = {"category": cats, "region": regions, "name": names}
    other = "EPSG:3857" if target != "EPSG:3857" else "EPSG:32633"
    x, y = project_points(lon, lat, target)
    xo, yo = project_points(lon, lat, other)
    attrs = [{"name": names[i], "category": cats[i], "region": regions[i],
              "population": pop[i]} for i in range(n)]
    return {"n": n, "names": sorted(names), "names_gt": gt, "count_gt": len(gt),
            "names_ge": ge, "count_ge": len(ge), "names_in_category": in_cat,
            "count_in_category": len(in_cat),
            "values": sorted(set(columns.get(field, cats))),
            "total_population": int(sum(pop)),
            "rows": [{"name": names[i], "x": float(x[i]), "y": float(y[i])} for i in range(n)],
            "rows_other": [{"name": names[i], "x": float(xo[i]), "y": float(yo[i])}
                           for i in range(n)],
            "rows_lonlat": [{"name": names[i], "x": float(lon[i]), "y": float(lat[i])}
                            for i in range(n)],
            "rows_gt": [{"name": names[i], "x": float(x[i]), "y": float(y[i])}
                        for i in range(n) if pop[i] > threshold],
            "attr_rows": attrs,
            "rows_in_category": [{**attrs[i], "x": float(lon[i]), "y": float(lat[i])}
                                 for i in range(n) if cats[i] == category]}


def sites_csv(work: Path, rng: np.random.Generator, path: str = "sites.csv", n: int = 15,
              kind: str = "lonlat", target: str | None = None) -> dict[str, Any]:
    """Sampling sites as CSV: columns id, name, lon, lat, ph (``kind`` "lonlat", EPSG:4326) or
    id, name, easting, northing, ph ("utm", EPSG:32633). Gold: n, crs and the bounding box
    [xmin, ymin, xmax, ymax] in that CRS (and swapped, as if x and y were mixed up); with
    ``target`` also ``rows`` (name, x, y in that CRS) and ``rows_lonlat`` (the same in degrees,
    for a copy exported without reprojecting). ``target`` draws nothing: the file is the same."""
    names = unique_names(rng, n)
    lon = np.round(rng.uniform(14.3, 15.6, n), 5)
    lat = np.round(rng.uniform(45.7, 46.5, n), 5)
    if kind == "lonlat":
        xs, ys, header, crs = lon, lat, ("lon", "lat"), "EPSG:4326"
    else:
        e, nn = utm_forward(lon, lat, 33)
        xs, ys, header, crs = np.round(e, 1), np.round(nn, 1), ("easting", "northing"), \
            "EPSG:32633"
    ph = np.round(rng.uniform(5.5, 8.5, n), 2)
    with (work / path).open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "name", *header, "ph"])
        for i in range(n):
            w.writerow([i + 1, names[i], f"{xs[i]}", f"{ys[i]}", f"{ph[i]}"])
    gold = {"n": n, "crs": crs, "x_field": header[0], "y_field": header[1],
            "bbox": [float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max())],
            "bbox_swapped": [float(ys.min()), float(xs.min()), float(ys.max()), float(xs.max())]}
    if target is not None:
        tx, ty = project_points(lon, lat, target)
        gold["rows"] = [{"name": names[i], "x": float(tx[i]), "y": float(ty[i])}
                        for i in range(n)]
        gold["rows_lonlat"] = [{"name": names[i], "x": float(lon[i]), "y": float(lat[i])}
                               for i in range(n)]
    return gold


def _geotiff(path: Path, z: np.ndarray, x0: float, ymax: float, cell: float, epsg: int) -> None:
    import tifffile

    geokeys = [1, 1, 0, 4,
               1024, 0, 1, 1,        # GTModelTypeGeoKey: projected
               1025, 0, 1, 1,        # GTRasterTypeGeoKey: PixelIsArea
               3072, 0, 1, epsg,     # ProjectedCSTypeGeoKey
               3076, 0, 1, 9001]     # ProjLinearUnitsGeoKey: metre
    tifffile.imwrite(path, z.astype(np.float32), photometric="minisblack", extratags=[
        (33550, "d", 3, (cell, cell, 0.0), True),
        (33922, "d", 6, (0.0, 0.0, 0.0, x0, ymax, 0.0), True),
        (34735, "H", len(geokeys), geokeys, True),
    ])


def terrain(work: Path, rng: np.random.Generator, dem: str = "dem.tif",
            districts: str = "districts.geojson", unit: str = "ha",
            probe_x: float | None = None, probe_y: float | None = None) -> dict[str, Any]:
    """A DEM (120 x 100 cells of 100 m, EPSG:32633) and 6 rectangular districts on it.

    Gold: max/min/mean elevation, the probe point (a cell centre; ``probe_x``, ``probe_y`` when
    given) with its value, the values of the cell mirrored top-to-bottom (a row counted from
    the wrong end) and of its right-hand neighbour; per district rows {name, area (in
    ``unit``: m2, ha or km2), area_m2, mean, max}.
    """
    nx, ny, cell = 120, 100, 100.0
    x0, y0 = 460000.0, 5090000.0
    ymax = y0 + ny * cell
    xc = x0 + (np.arange(nx) + 0.5) * cell
    yc = ymax - (np.arange(ny) + 0.5) * cell
    gx, gy = np.meshgrid(xc, yc)
    z = np.full((ny, nx), 180.0) + rng.normal(0, 2.0, (ny, nx))
    for _ in range(5):
        cx, cy = rng.uniform(x0, x0 + nx * cell), rng.uniform(y0, ymax)
        amp, sig = rng.uniform(150, 700), rng.uniform(1200, 3500)
        z += amp * np.exp(-((gx - cx) ** 2 + (gy - cy) ** 2) / (2 * sig**2))
    z = np.round(z, 2).astype(np.float32)
    _geotiff(work / dem, z, x0, ymax, cell, 32633)
    zf = z.astype(np.float64)

    # districts: two bands of rows, each cut into three by columns (cuts differ per band)
    row_cut = int(rng.integers(40, 61))
    bands = [(0, row_cut), (row_cut, ny)]  # rows from the top
    factor = {"m2": 1.0, "ha": 1e-4, "km2": 1e-6}[unit]
    feats, rows = [], []
    names = list(rng.permutation(DISTRICT_NAMES)[:6])
    k = 0
    for r0, r1 in bands:
        c1 = int(rng.integers(30, 51))
        c2 = int(rng.integers(70, 91))
        for a, b in ((0, c1), (c1, c2), (c2, nx)):
            xa, xb = x0 + a * cell, x0 + b * cell
            ya, yb = ymax - r1 * cell, ymax - r0 * cell
            ring = [[xa, ya], [xb, ya], [xb, yb], [xa, yb], [xa, ya]]
            pop = int(rng.integers(2000, 90000))
            name = str(names[k])
            feats.append({"type": "Feature",
                          "properties": {"name": name, "code": f"D{k + 1}", "population": pop},
                          "geometry": {"type": "Polygon", "coordinates": [ring]}})
            area = shoelace(ring)
            block = zf[r0:r1, a:b]
            rows.append({"name": name, "area": area * factor, "area_m2": area,
                         "mean": float(block.mean()), "max": float(block.max()),
                         "min": float(block.min())})
            k += 1
    _write_json(work / districts, {"type": "FeatureCollection", "name": Path(districts).stem,
                                   "crs": UTM33_CRS, "features": feats})
    if probe_x is None or probe_y is None:
        pi, pj = int(rng.integers(10, ny - 10)), int(rng.integers(10, nx - 10))
    else:
        pi, pj = int((ymax - probe_y) // cell), int((probe_x - x0) // cell)
        if not (0 <= pi < ny and 0 <= pj < nx - 1):
            raise ValueError(f"probe point {probe_x}, {probe_y} is outside the DEM")
    return {"max": float(zf.max()), "min": float(zf.min()), "mean": float(zf.mean()),
            "probe_x": float(xc[pj]), "probe_y": float(yc[pi]), "probe_value": float(zf[pi, pj]),
            "probe_mirrored": float(zf[ny - 1 - pi, pj]),
            "probe_neighbour": float(zf[pi, pj + 1]),
            "districts": rows, "names": sorted(r["name"] for r in rows),
            "area_rows": [{"name": r["name"], "area": r["area"]} for r in rows],
            "area_rows_m2": [{"name": r["name"], "area": r["area_m2"]} for r in rows],
            "mean_rows": [{"name": r["name"], "mean": r["mean"]} for r in rows],
            "max_rows": [{"name": r["name"], "mean": r["max"]} for r in rows],
            "extent": [x0, y0, x0 + nx * cell, ymax]}


GENERATORS = {
    "towns": towns,
    "sites_csv": sites_csv,
    "terrain": terrain,
}
