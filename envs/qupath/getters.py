"""QuPath-specific getters: GeoJSON exports, measurement tables and the hierarchy dump.

Imported by :func:`sciagent_gym.tools.load_tool_getters` as ``sciagent_gym.envs.qupath.getters``.
Every missing, malformed, partial or binary file raises GetterError, which the evaluator turns
into a failed criterion.

Formats, as QuPath v0.5.1 writes them (sources in tests/fixtures/qupath/README.md):

* GeoJSON (``exportObjectsToGeoJson``, File > Export objects as GeoJSON; PathIO.java,
  QuPathTypeAdapters.java, ROITypeAdapters.java, GsonTools.java): a ``FeatureCollection`` with
  the FEATURE_COLLECTION option, else a single ``Feature`` (one object) or a JSON array of
  Features. A Feature has ``id`` (UUID, since v0.4), ``geometry`` (GeoJSON, coordinates rounded
  to 2 decimals; ``isEllipse`` and ``plane`` as foreign members), ``nucleusGeometry`` for cells,
  ``properties`` {objectType, name, color [r, g, b], classification {name | names, color},
  isLocked, measurements {name: value}, metadata}. Measurement NaN is written as the string
  "NaN" (and Gson may write NaN/Infinity literals). v0.2 wrote ``"id": "PathAnnotationObject"``
  and measurements as a list of {name, value}; v0.3 classifications may be legacy objects with
  ``parentClass``; plain strings are accepted as QuPath's reader accepts them.
* Measurement tables (``saveAnnotationMeasurements`` / Measure > Show measurements > Save;
  SummaryMeasurementTableCommand.getTableModelStrings, ObservableMeasurementTableData.java):
  one header line and one line per object joined by the table delimiter (tab by default),
  fields containing the delimiter in double quotes, numbers as text, "NaN" for missing. Columns
  start with Image, Object ID (v0.4+), Object type, Name, Classification ("Class" before v0.4),
  Parent, ROI, Centroid X µm / px, Centroid Y µm / px, then measurements.
* The hierarchy dump: the JSON that ``state_dump.groovy`` builds inside QuPath (see that file).
"""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING, Any

from sciagent_gym.evaluation import GetterError, register
from sciagent_gym.evaluation.getters._io import decode_text, looks_binary, pick_key, read_bytes
from sciagent_gym.evaluation.getters._limits import (
    MAX_JSON_BYTES,
    MAX_TEXT_BYTES,
    check_json,
    check_lines,
    check_table,
)

if TYPE_CHECKING:
    from sciagent_gym.evaluation import FinalState

_LEGACY_TYPES = {"PathAnnotationObject": "annotation", "PathDetectionObject": "detection",
                 "PathCellObject": "cell", "PathTileObject": "tile", "TMACoreObject": "tmaCore",
                 "PathRootObject": "root"}
_GEOMETRY_TYPES = ("Point", "MultiPoint", "LineString", "MultiLineString", "Polygon",
                   "MultiPolygon", "GeometryCollection")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_SPECIAL = {"nan": math.nan, "infinity": math.inf, "-infinity": -math.inf, "inf": math.inf,
            "-inf": -math.inf}


# --- GeoJSON -------------------------------------------------------------------------------


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or value is None:
        raise GetterError(f"{where}: not a number ({value!r})")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in _SPECIAL:
            return _SPECIAL[text.lower()]
        if _NUMBER.fullmatch(text):
            return float(text)
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


def _pick_named(items: list[dict[str, Any]], name: str, label: str, what: str) -> dict[str, Any]:
    found = [f for f in items if f.get("name") == name]
    if not found:
        names = sorted({str(f.get("name")) for f in items})
        shown = ", ".join(names) or "none"
        raise GetterError(f"{label}: no {what} named {name!r} (names: {shown})")
    if len(found) > 1:
        raise GetterError(f"{label}: {len(found)} {what}s are named {name!r}")
    return found[0]


@register("qupath_geojson")
def qupath_geojson(state: FinalState, path: str, key: str | None = None,
                   name: str | None = None, object_type: str | None = None) -> Any:
    """A GeoJSON export (see :func:`parse_geojson`) or one dotted key of it; ``object_type``
    keeps only features of that type first, ``name`` picks the one feature of that name."""
    doc = parse_geojson(read_bytes(state, path, MAX_JSON_BYTES), path)
    if object_type is not None:
        kept = [f for f in doc["features"] if f["object_type"] == object_type]
        doc = {**doc, "features": kept, "n_features": len(kept),
               "names": [f["name"] for f in kept],
               "classifications": [f["classification"] for f in kept]}
    if name is not None:
        return pick_key(path, _pick_named(doc["features"], name, path, "feature"), key)
    return pick_key(path, doc, key)


# --- measurement tables --------------------------------------------------------------------


def normalize_column(name: str) -> str:
    """Column names compared loosely: µ (U+00B5), μ (U+03BC) and "u" before "m" are one; case
    and spacing ignored; the pre-v0.4 "Class" column is "Classification"."""
    text = " ".join(name.split()).casefold().replace("\u03bc", "\u00b5")
    text = re.sub(r"(?<![a-z])um(?=\b|\^)", "\u00b5m", text)
    return "classification" if text == "class" else text


def _split_line(line: str, delim: str) -> list[str]:
    """getTableModelStrings quotes a field only when it contains the delimiter."""
    if '"' not in line:
        return line.split(delim)
    out, cur, quoted = [], [], False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif ch == delim and not quoted:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if quoted:
        raise GetterError("unbalanced quotes")
    out.append("".join(cur))
    return out


def _cell(text: str) -> Any:
    t = text.strip()
    if t.lower() in _SPECIAL:
        return _SPECIAL[t.lower()]
    if _NUMBER.fullmatch(t):
        return float(t)
    return t


def parse_measurement_table(data: bytes | str, label: str = "table") -> dict[str, Any]:
    """A QuPath measurement table as {"columns", "n_rows", "rows": [{column: value}],
    "names", "classifications", "object_types", "delimiter"}; values are floats (NaN for
    "NaN") or strings ("" for an empty cell). Tab-separated as QuPath writes by default; a
    comma or semicolon header (the tableDelimiter preference changed) is read too."""
    if isinstance(data, bytes):
        if not data.strip():
            raise GetterError(f"{label}: empty file")
        if looks_binary(data):
            raise GetterError(f"{label}: binary data, not a measurement table")
        text = decode_text(data)
    else:
        text = data
    check_lines(text, label)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise GetterError(f"{label}: empty file")
    header_line = lines[0]
    delim = "\t" if "\t" in header_line else "," if "," in header_line else ";" \
        if ";" in header_line else "\t"
    try:
        header = [h.strip() for h in _split_line(header_line, delim)]
    except GetterError as exc:
        raise GetterError(f"{label}: header: {exc}") from None
    known = {normalize_column(h) for h in header}
    if not known & {"object type", "name", "image", "classification", "roi"}:
        raise GetterError(f"{label}: not a QuPath measurement table (header "
                          f"{header_line[:80]!r} has none of Image, Object type, Name, "
                          "Classification, ROI)")
    if len(set(header)) != len(header):
        raise GetterError(f"{label}: duplicate column names in the header")
    check_table(label, len(lines) - 1, (len(lines) - 1) * len(header))
    rows = []
    for i, line in enumerate(lines[1:], start=2):
        try:
            fields = _split_line(line, delim)
        except GetterError as exc:
            raise GetterError(f"{label}: line {i}: {exc}") from None
        if len(fields) != len(header):
            raise GetterError(f"{label}: line {i} has {len(fields)} fields, header has "
                              f"{len(header)} (truncated or malformed)")
        rows.append({h: _cell(f) for h, f in zip(header, fields, strict=True)})

    def col(name: str) -> list[Any]:
        idx = [h for h in header if normalize_column(h) == name]
        return [r[idx[0]] for r in rows] if idx else []

    types: dict[str, int] = {}
    for t in col("object type"):
        types[str(t)] = types.get(str(t), 0) + 1
    return {"columns": header, "n_rows": len(rows), "rows": rows, "names": col("name"),
            "classifications": col("classification"), "object_types": types,
            "delimiter": delim}


def find_column(table: dict[str, Any], column: str, label: str) -> str:
    """The table's own spelling of ``column`` (see :func:`normalize_column`)."""
    want = normalize_column(column)
    found = [h for h in table["columns"] if normalize_column(h) == want]
    if not found:
        raise GetterError(f"{label}: no column {column!r} (columns: "
                          f"{', '.join(table['columns'])})")
    return found[0]


@register("qupath_table")
def qupath_table(state: FinalState, path: str, key: str | None = None,
                 name: str | None = None, column: str | None = None,
                 object_type: str | None = None) -> Any:
    """A QuPath measurement table (see :func:`parse_measurement_table`) or a dotted key of it.

    ``object_type`` keeps rows of that "Object type" (Annotation, Detection, Cell, ...);
    ``name`` picks the one row whose Name is that; ``column`` (µm/um/μm and Class/Classification
    spellings alike) gives that column's values, or with ``name`` that row's cell.
    """
    table = parse_measurement_table(read_bytes(state, path, MAX_TEXT_BYTES), path)
    rows = table["rows"]
    if object_type is not None:
        ot = find_column(table, "Object type", path)
        rows = [r for r in rows if str(r[ot]).casefold() == object_type.casefold()]
        table = {**table, "rows": rows, "n_rows": len(rows)}
    if name is not None:
        name_col = find_column(table, "Name", path)
        found = [r for r in rows if r[name_col] == name]
        if len(found) != 1:
            names = ", ".join(sorted({str(r[name_col]) for r in rows})) or "none"
            raise GetterError(f"{path}: {len(found)} rows named {name!r} (names: {names})")
        row = found[0]
        if column is not None:
            return row[find_column(table, column, path)]
        return pick_key(path, row, key)
    if column is not None:
        c = find_column(table, column, path)
        return [r[c] for r in rows]
    return pick_key(path, table, key)


# --- the live hierarchy dump ---------------------------------------------------------------


def _dump(state: FinalState) -> dict[str, Any]:
    if state.app_state is None:
        raise GetterError(f"QuPath state unavailable: {state.app_state_error or 'no reason given'}")
    if not isinstance(state.app_state.get("annotations"), list):
        raise GetterError("QuPath state has no annotation list (not a QuPath hierarchy dump)")
    return state.app_state


@register("qupath_annotation")
def qupath_annotation(state: FinalState, name: str, key: str | None = None) -> Any:
    """The dumped annotation named ``name`` (GetterError if none or several), or one key of
    it: name, class, roi_type, area_px, area_um2, bounds, n_vertices, locked, measurements,
    num_detections, num_positive, num_negative, positive_percent."""
    ann = _pick_named(_dump(state)["annotations"], name, "QuPath state", "annotation")
    return pick_key(f"annotation {name!r}", ann, key)


@register("qupath_stain_angle")
def qupath_stain_angle(state: FinalState, stain: int, reference: list[float] | str) -> float:
    """Angle in degrees between the image's stain ``stain`` (1, 2 or 3) vector in QuPath and
    ``reference`` (a vector, or its values as text "r g b" as QuPath shows them)."""
    from sciagent_gym.envs.qupath.data import angle_deg

    if isinstance(reference, str):
        reference = [float(v) for v in reference.split()]

    stains = _dump(state).get("stains")
    if not isinstance(stains, dict):
        raise GetterError("the image has no colour deconvolution stains (not brightfield?)")
    entry = stains.get(f"stain{int(stain)}")
    if not isinstance(entry, dict) or not isinstance(entry.get("vector"), list):
        raise GetterError(f"QuPath state has no stain {stain}")
    try:
        return angle_deg(entry["vector"], reference)
    except ValueError as exc:
        raise GetterError(f"stain {stain}: {exc}") from None
