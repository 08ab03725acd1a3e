"""QuPath's GeoJSON exports, parsed into plain summaries (:func:`parse_geojson`).

Every malformed, partial or binary file raises GetterError, which the evaluator turns into a
failed criterion. The format, as QuPath v0.5.1 writes it (sources in
envs/qupath/tests/fixtures/README.md):

``exportObjectsToGeoJson``, File > Export objects as GeoJSON (PathIO.java,
QuPathTypeAdapters.java, ROITypeAdapters.java, GsonTools.java): a ``FeatureCollection`` with
the FEATURE_COLLECTION option, else a single ``Feature`` (one object) or a JSON array of
Features. A Feature has ``id`` (UUID, since v0.4), ``geometry`` (GeoJSON, coordinates rounded
to 2 decimals; ``isEllipse`` and ``plane`` as foreign members), ``nucleusGeometry`` for cells,
``properties`` {objectType, name, color [r, g, b], classification {name | names, color},
isLocked, measurements {name: value}, metadata}. Measurement NaN is written as the string
"NaN" (and Gson may write NaN/Infinity literals). v0.2 wrote ``"id": "PathAnnotationObject"``
and measurements as a list of {name, value}; v0.3 classifications may be legacy objects with
``parentClass``; plain strings are accepted as QuPath's reader accepts them.
"""

from __future__ import annotations

import json
import math
from typing import Any

from sciagent_gym.envs.qupath.number_text import parse_number

from sciagent_gym.sdk import GetterError, check_json, decode_text, looks_binary

_LEGACY_TYPES = {"PathAnnotationObject": "annotation", "PathDetectionObject": "detection",
                 "PathCellObject": "cell", "PathTileObject": "tile", "TMACoreObject": "tmaCore",
                 "PathRootObject": "root"}
_GEOMETRY_TYPES = ("Point", "MultiPoint", "LineString", "MultiLineString", "Polygon",
                   "MultiPolygon", "GeometryCollection")


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or value is None:
        raise GetterError(f"{where}: not a number ({value!r})")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        number = parse_number(value)
        if number is not None:
            return number
    raise GetterError(f"{where}: not a number ({value!r})")


def _class_name(value: Any, where: str) -> str | None:
    """A classification as QuPath's PathClass.toString() shows it ("Tumor: Positive")."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        raise GetterError(f"{where}: classification is {type(value).__name__}, not an object")
    if not value:
        return None
    if "names" in value:
        names = value["names"]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise GetterError(f"{where}: classification names must be a list of strings")
        return ": ".join(names)
    if "parentClass" in value:  # before v0.4: nested parentClass objects
        parent = _class_name(value["parentClass"], where)
        name = value.get("name")
        return f"{parent}: {name}" if parent else name
    name = value.get("name")
    if name is not None and not isinstance(name, str):
        raise GetterError(f"{where}: classification name is not a string")
    return name


def _measurements(value: Any, where: str) -> dict[str, float]:
    if value is None:
        return {}
    if isinstance(value, dict):
        return {str(k): _number(v, f"{where}: measurement {k!r}") for k, v in value.items()}
    if isinstance(value, list):  # v0.2/v0.3: [{"name": ..., "value": ...}]
        out = {}
        for i, item in enumerate(value):
            if not isinstance(item, dict) or "name" not in item or "value" not in item:
                raise GetterError(f"{where}: measurement {i} is not a {{name, value}} pair")
            out[str(item["name"])] = _number(item["value"], f"{where}: measurement "
                                                            f"{item['name']!r}")
        return out
    raise GetterError(f"{where}: measurements must be an object or a list")


def _points(coords: Any, depth: int, where: str) -> list[tuple[float, float]]:
    """Flatten coordinates of nesting ``depth`` (0 = one position) into (x, y) pairs."""
    if depth == 0:
        if (not isinstance(coords, list) or len(coords) < 2
                or not all(isinstance(c, (int, float)) and not isinstance(c, bool)
                           for c in coords)):
            raise GetterError(f"{where}: bad coordinate {coords!r}")
        return [(float(coords[0]), float(coords[1]))]
    if not isinstance(coords, list):
        raise GetterError(f"{where}: coordinates must be nested lists")
    out: list[tuple[float, float]] = []
    for c in coords:
        out.extend(_points(c, depth - 1, where))
    return out


def _ring_area(ring: list[tuple[float, float]]) -> float:
    s = 0.0
    for (x1, y1), (x2, y2) in zip(ring, ring[1:] + ring[:1], strict=True):
        s += x1 * y2 - x2 * y1
    return abs(s) / 2


def _polygon_area(rings: Any, where: str) -> float:
    if not isinstance(rings, list) or not rings:
        raise GetterError(f"{where}: a polygon needs at least one ring")
    parts = [_points(r, 1, where) for r in rings]
    if any(len(p) < 3 for p in parts):
        raise GetterError(f"{where}: a polygon ring has fewer than 3 positions")
    return max(0.0, _ring_area(parts[0]) - sum(_ring_area(p) for p in parts[1:]))


def parse_geometry(geom: Any, where: str = "geometry") -> dict[str, Any]:
    """{"type", "bounds": [x, y, w, h], "area" (polygons), "n_vertices", "centroid" (of the
    bounds), "is_ellipse", "plane"} of a GeoJSON geometry; GetterError when malformed."""
    if not isinstance(geom, dict):
        raise GetterError(f"{where}: not a geometry object")
    gtype = geom.get("type")
    if gtype not in _GEOMETRY_TYPES:
        raise GetterError(f"{where}: unknown geometry type {gtype!r}")
    area = 0.0
    if gtype == "GeometryCollection":
        parts = geom.get("geometries")
        if not isinstance(parts, list):
            raise GetterError(f"{where}: a GeometryCollection needs 'geometries'")
        subs = [parse_geometry(p, where) for p in parts]
        pts = [pt for s in subs for pt in s["_points"]]
        area = sum(s["area"] for s in subs)
    else:
        if "coordinates" not in geom:
            raise GetterError(f"{where}: {gtype} without coordinates")
        coords = geom["coordinates"]
        depth = {"Point": 0, "MultiPoint": 1, "LineString": 1, "MultiLineString": 2,
                 "Polygon": 2, "MultiPolygon": 3}[gtype]
        pts = _points(coords, depth, where)
        if gtype == "Polygon":
            area = _polygon_area(coords, where)
        elif gtype == "MultiPolygon":
            if not isinstance(coords, list):
                raise GetterError(f"{where}: MultiPolygon coordinates must be a list")
            area = sum(_polygon_area(p, where) for p in coords)
    if not pts:
        bounds = [math.nan] * 4
    else:
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        bounds = [min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)]
    return {"type": gtype, "bounds": bounds, "area": area, "n_vertices": len(pts),
            "centroid": [bounds[0] + bounds[2] / 2, bounds[1] + bounds[3] / 2],
            "is_ellipse": bool(geom.get("isEllipse", False)), "plane": geom.get("plane"),
            "_points": pts}


def _feature(obj: Any, where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise GetterError(f"{where}: not a JSON object")
    if obj.get("type") != "Feature":
        raise GetterError(f"{where}: type is {obj.get('type')!r}, not 'Feature'")
    if "geometry" not in obj or obj["geometry"] is None:
        raise GetterError(f"{where}: Feature without geometry")
    geom = parse_geometry(obj["geometry"], f"{where}: geometry")
    geom.pop("_points")
    props = obj.get("properties") or {}
    if not isinstance(props, dict):
        raise GetterError(f"{where}: properties must be an object")
    raw_id = obj.get("id")
    obj_type = props.get("objectType", props.get("object_type", props.get("type")))
    if obj_type is None and isinstance(raw_id, str) and raw_id in _LEGACY_TYPES:
        obj_type, raw_id = _LEGACY_TYPES[raw_id], None
    obj_type = _LEGACY_TYPES.get(obj_type, obj_type) if isinstance(obj_type, str) else "unknown"
    children = props.get("childObjects", props.get("children"))
    return {
        "id": raw_id, "object_type": obj_type, "name": props.get("name"),
        "classification": _class_name(props.get("classification"), where),
        "color": props.get("color"), "is_locked": bool(props.get("isLocked", False)),
        "measurements": _measurements(props.get("measurements"), where),
        "metadata": props.get("metadata") or {},
        "n_children": len(children) if isinstance(children, list) else 0,
        "has_nucleus": "nucleusGeometry" in obj, **{k: geom[k] for k in geom},
        "geometry_type": geom["type"],
    }


def parse_geojson(data: bytes | str, label: str = "GeoJSON") -> dict[str, Any]:
    """A QuPath GeoJSON export as {"kind", "n_features", "features": [...], "names",
    "classifications", "object_types": {type: count}}.

    ``kind`` is FeatureCollection, Feature, array (what QuPath writes without the
    FEATURE_COLLECTION option for several objects) or geometry (a bare geometry, e.g. ROIs
    exported with GsonTools, read as one unnamed feature).
    """
    if isinstance(data, bytes):
        if not data.strip():
            raise GetterError(f"{label}: empty file")
        if looks_binary(data):
            raise GetterError(f"{label}: binary data, not GeoJSON")
        text = decode_text(data)
    else:
        text = data
    if not text.strip():
        raise GetterError(f"{label}: empty file")
    check_json(text, label)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GetterError(f"{label}: not valid JSON (truncated or malformed) at line "
                          f"{exc.lineno}: {exc.msg}") from None
    if isinstance(obj, list):
        kind, items = "array", obj
    elif isinstance(obj, dict) and obj.get("type") == "FeatureCollection":
        kind, items = "FeatureCollection", obj.get("features")
        if not isinstance(items, list):
            raise GetterError(f"{label}: FeatureCollection without a 'features' list")
    elif isinstance(obj, dict) and obj.get("type") == "Feature":
        kind, items = "Feature", [obj]
    elif isinstance(obj, dict) and obj.get("type") in _GEOMETRY_TYPES:
        kind, items = "geometry", [{"type": "Feature", "geometry": obj, "properties": {}}]
    else:
        raise GetterError(f"{label}: not GeoJSON (no FeatureCollection, Feature or geometry)")
    features = [_feature(f, f"{label}: feature {i}") for i, f in enumerate(items)]
    types: dict[str, int] = {}
    for f in features:
        types[f["object_type"]] = types.get(f["object_type"], 0) + 1
    return {"kind": kind, "n_features": len(features), "features": features,
            "names": [f["name"] for f in features],
            "classifications": [f["classification"] for f in features], "object_types": types}
