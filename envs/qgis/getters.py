"""QGIS-specific getters: GeoJSON files QGIS exported and saved projects (.qgz / .qgs).

Imported by :func:`sciagent_gym.tools.load_tool_getters` as ``sciagent_gym.envs.qgis.getters``.
Every missing, truncated or malformed file raises GetterError, which the evaluator turns into a
failed criterion.

QGIS writes GeoJSON through GDAL/OGR: a FeatureCollection with a ``name``, a GeoJSON-2008
``crs`` member naming the layer's CRS (``urn:ogc:def:crs:EPSG::32633``; CRS84 or no ``crs`` means
WGS 84 longitude/latitude) and features whose ``geometry`` may be null. A ``.qgz`` is a zip
holding one ``.qgs`` (XML) plus auxiliary storage; a ``.qgs`` is that XML alone.
"""

from __future__ import annotations

import io
import json
import math
import re
import xml.etree.ElementTree as ET
import zipfile
import zlib
from typing import TYPE_CHECKING, Any

from sciagent_gym.sdk import (
    MAX_JSON_BYTES,
    GetterError,
    check_json,
    check_zip,
    decode_text,
    pick_key,
    read_bytes,
    register,
)

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState

_MAX_GEOJSON = MAX_JSON_BYTES
_MAX_PROJECT = 16 * 1024 * 1024  # parsed XML takes about ten times its text
_EPSG = re.compile(r"EPSG:{1,2}(?:[\d.]*:)?(\d+)$", re.IGNORECASE)


def normalize_crs(name: Any) -> str:
    """``urn:ogc:def:crs:EPSG::32633`` / ``EPSG:32633`` -> ``EPSG:32633``; CRS84 -> EPSG:4326."""
    text = str(name or "").strip()
    if not text or re.search(r"CRS:?84$", text, re.IGNORECASE):
        return "EPSG:4326"
    m = _EPSG.search(text)
    return f"EPSG:{m.group(1)}" if m else text


def _coords(geom: Any, label: str) -> list[list[float]]:
    """Every position of a geometry (flattened), validated as finite numbers."""
    out: list[list[float]] = []

    def walk(c: Any, depth: int) -> None:
        if depth > 6:
            raise GetterError(f"{label}: geometry nested too deeply")
        if isinstance(c, list) and c and all(isinstance(v, (int, float)) and
                                             not isinstance(v, bool) for v in c):
            if len(c) < 2 or not all(math.isfinite(v) for v in c):
                raise GetterError(f"{label}: bad position {c!r}")
            out.append([float(c[0]), float(c[1])])
        elif isinstance(c, list):
            for item in c:
                walk(item, depth + 1)
        else:
            raise GetterError(f"{label}: bad coordinates {str(c)[:60]!r}")

    walk(geom.get("coordinates"), 0)
    return out


def _ring_area(ring: list[list[float]]) -> float:
    n = len(ring)
    s = sum(ring[i][0] * ring[(i + 1) % n][1] - ring[(i + 1) % n][0] * ring[i][1]
            for i in range(n))
    return abs(s) / 2


def _polygon_area(geom: dict, label: str) -> float:
    """Shoelace area of a (Multi)Polygon: outer rings minus holes, in the file's units."""
    polys = [geom["coordinates"]] if geom["type"] == "Polygon" else geom["coordinates"]
    total = 0.0
    for poly in polys:
        if not isinstance(poly, list):
            raise GetterError(f"{label}: bad polygon")
        for k, ring in enumerate(poly):
            pts = _coords({"coordinates": ring}, label)
            area = _ring_area(pts)
            total += area if k == 0 else -area
    return total


def parse_geojson(data: bytes | str, label: str = "GeoJSON") -> dict[str, Any]:
    """A GeoJSON FeatureCollection summarised.

    Returns {"name", "crs", "n_features", "fields", "geometry_types", "names", "columns":
    {field: [value per feature]}, "rows": [properties + "x", "y" (point or centroid of the
    vertices) + "area" (polygons, shoelace in the file's units)], "bbox"}.
    """
    check_json(data, label)
    text = data if isinstance(data, str) else decode_text(data)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GetterError(f"{label}: not valid JSON (line {exc.lineno}: {exc.msg}); is the "
                          "export complete?") from None
    except (ValueError, RecursionError) as exc:
        raise GetterError(f"{label}: not valid JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("type") != "FeatureCollection":
        raise GetterError(f"{label}: not a GeoJSON FeatureCollection")
    feats = doc.get("features")
    if not isinstance(feats, list):
        raise GetterError(f"{label}: FeatureCollection without a features list")
    crs_member = doc.get("crs")
    crs_name = None
    if isinstance(crs_member, dict):
        crs_name = (crs_member.get("properties") or {}).get("name")
    crs = normalize_crs(crs_name)
    fields: list[str] = []
    rows: list[dict[str, Any]] = []
    types: set[str] = set()
    xs: list[float] = []
    ys: list[float] = []
    for i, feat in enumerate(feats):
        where = f"{label}: feature {i}"
        if not isinstance(feat, dict) or feat.get("type") != "Feature":
            raise GetterError(f"{where} is not a Feature")
        props = feat.get("properties") or {}
        if not isinstance(props, dict):
            raise GetterError(f"{where}: properties is not an object")
        for key in props:
            if key not in fields:
                fields.append(key)
        row = dict(props)
        geom = feat.get("geometry")
        if geom is not None:
            if not isinstance(geom, dict) or not isinstance(geom.get("type"), str):
                raise GetterError(f"{where}: malformed geometry")
            types.add(geom["type"])
            pts = _coords(geom, where)
            if pts:
                row["x"] = sum(p[0] for p in pts) / len(pts)
                row["y"] = sum(p[1] for p in pts) / len(pts)
                xs += [p[0] for p in pts]
                ys += [p[1] for p in pts]
            if geom["type"] in ("Polygon", "MultiPolygon"):
                row["area"] = _polygon_area(geom, where)
        rows.append(row)
    columns = {f: [r.get(f) for r in rows] for f in fields}
    names = sorted(str(r["name"]) for r in rows if r.get("name") is not None)
    bbox = [min(xs), min(ys), max(xs), max(ys)] if xs else None
    return {"name": doc.get("name"), "crs": crs, "n_features": len(rows), "fields": fields,
            "geometry_types": sorted(types), "names": names, "columns": columns, "rows": rows,
            "bbox": bbox}


@register("qgis_geojson")
def qgis_geojson(state: FinalState, path: str, key: str | None = None) -> Any:
    """A GeoJSON file as summarised by :func:`parse_geojson`, or one dotted ``key`` of it
    ("n_features", "crs", "names", "columns.category", "fields")."""
    summary = parse_geojson(read_bytes(state, path, _MAX_GEOJSON), path)
    return pick_key(path, summary, key)


@register("qgis_geojson_rows")
def qgis_geojson_rows(state: FinalState, path: str, columns: list[str],
                      names: list[str] | None = None) -> list[dict]:
    """Rows of a GeoJSON file reduced to ``columns`` (properties, or "x", "y", "area"),
    renamed to ``names`` (same length) when given, so that rows from a field the task names
    can be compared with gold rows; a column missing from a feature is a GetterError."""
    summary = parse_geojson(read_bytes(state, path, _MAX_GEOJSON), path)
    if names is not None and len(names) != len(columns):
        raise GetterError(f"{path}: names must match columns one for one")
    labels = names if names is not None else columns
    out = []
    for i, row in enumerate(summary["rows"]):
        missing = [c for c in columns if c not in row]
        if missing:
            raise GetterError(f"{path}: feature {i} has no {missing[0]!r} (fields: "
                              f"{summary['fields']})")
        out.append({label: row[c] for label, c in zip(labels, columns, strict=True)})
    return out


def _authid(elem: ET.Element | None) -> str | None:
    if elem is None:
        return None
    node = elem.find(".//spatialrefsys/authid")
    return node.text.strip() if node is not None and node.text else None


def source_file(datasource: str) -> str:
    """The file name a layer's data source points at: ``./towns.geojson|layername=towns`` or
    ``file:///w/sites.csv?type=csv&...`` -> ``towns.geojson`` / ``sites.csv``, so a saved
    project can be checked for holding the task's own data, whatever path form QGIS chose."""
    path = datasource.split("|", 1)[0]
    if path.startswith("file:"):
        path = path[5:].split("?", 1)[0]
    return path.rstrip("/").rsplit("/", 1)[-1]


def _saved_renderer(ml: ET.Element) -> dict[str, Any]:
    """A saved vector layer's renderer: {"type", "attribute", "categories"} (categorized:
    the class values, sorted, the catch-all class left out); type None for rasters."""
    node = ml.find("renderer-v2")
    if node is None:
        return {"type": None, "attribute": None, "categories": []}
    values = [c.get("value") for c in node.iterfind("./categories/category")]
    return {"type": node.get("type"), "attribute": node.get("attr"),
            "categories": sorted(v for v in values if v not in (None, ""))}


def _saved_labels(ml: ET.Element) -> dict[str, Any]:
    """A saved layer's labels: {"enabled", "field", "is_expression"} (simple labeling)."""
    style = ml.find("./labeling/settings/text-style")
    return {"enabled": ml.get("labelsEnabled") == "1",
            "field": style.get("fieldName") if style is not None else None,
            "is_expression": style is not None and style.get("isExpression") == "1"}


def parse_project(data: bytes, label: str = "project") -> dict[str, Any]:
    """A QGIS project (.qgz zip or .qgs XML): {"title", "crs", "version", "n_layers",
    "layer_names", "layers": [{"name", "type", "provider", "source", "file", "crs", "renderer",
    "labels"}], "layers_by_name" (the first layer of each name), "sources" (the layers' file
    names, sorted), "visible_layers"}: what the file holds, whatever the live session shows."""
    if data[:2] == b"PK":
        check_zip(data, label)
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                inner = [n for n in zf.namelist() if n.lower().endswith(".qgs")]
                if not inner:
                    raise GetterError(f"{label}: a zip without a .qgs project inside")
                info = zf.getinfo(inner[0])
                if info.file_size > _MAX_PROJECT:
                    raise GetterError(f"{label}: project XML too large")
                data = zf.read(inner[0])
        except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, NotImplementedError,
                ValueError, zlib.error) as exc:
            raise GetterError(f"{label}: broken .qgz archive: {exc}") from None
    if b"<!ENTITY" in data:  # QGIS writes none; expat bounds expansion, this refuses it early
        raise GetterError(f"{label}: project XML declares entities")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise GetterError(f"{label}: not valid project XML: {exc}") from None
    if root.tag != "qgis":
        raise GetterError(f"{label}: not a QGIS project (root element <{root.tag}>)")
    title = root.findtext("title")
    if title is None:
        title = root.get("projectname", "")
    layers = []
    for ml in root.iterfind("./projectlayers/maplayer"):
        source = (ml.findtext("datasource") or "").strip()
        layers.append({"name": (ml.findtext("layername") or "").strip(),
                       "type": ml.get("type"), "provider": (ml.findtext("provider") or "").strip(),
                       "source": source, "file": source_file(source),
                       "crs": _authid(ml.find("srs")), "renderer": _saved_renderer(ml),
                       "labels": _saved_labels(ml)})
    visible = [n.get("name") for n in root.iter("layer-tree-layer")
               if n.get("checked") == "Qt::Checked"]
    by_name: dict[str, dict] = {}
    for item in layers:
        by_name.setdefault(item["name"], item)
    return {"title": title.strip(), "crs": _authid(root.find("projectCrs")),
            "version": root.get("version"), "n_layers": len(layers),
            "layer_names": [item["name"] for item in layers], "layers": layers,
            "layers_by_name": by_name,
            "sources": sorted(item["file"] for item in layers), "visible_layers": visible}


@register("qgis_project")
def qgis_project(state: FinalState, path: str, key: str | None = None) -> Any:
    """A saved project as parsed by :func:`parse_project`, or one dotted ``key`` of it.

    QGIS always writes a ``.qgz`` as a zip: XML under that name was not saved by QGIS."""
    data = read_bytes(state, path, _MAX_PROJECT)
    if path.lower().endswith(".qgz") and data[:2] != b"PK":
        raise GetterError(f"{path}: not a zip archive, so not a project QGIS saved as .qgz")
    return pick_key(path, parse_project(data, path), key)


@register("qgis_geojson_deviation")
def qgis_geojson_deviation(state: FinalState, path: str, reference: list[dict],
                           columns: list[str], names: list[str] | None = None,
                           key: str = "name", relative: bool = False) -> float:
    """The largest difference between a GeoJSON file's values and reference rows.

    Features and reference rows are matched on ``key``; each file column in ``columns`` is
    compared with the reference value of the same position in ``names`` (default: the same
    names). Returns max |got - expected| (divided by |expected| when ``relative``). A missing or
    extra feature, a missing column or a non-number is a GetterError naming it.
    """
    summary = parse_geojson(read_bytes(state, path, _MAX_GEOJSON), path)
    labels = names if names is not None else columns
    if len(labels) != len(columns):
        raise GetterError(f"{path}: names must match columns one for one")
    if not isinstance(reference, list) or not all(isinstance(r, dict) for r in reference):
        raise GetterError("reference must be a list of rows")
    rows: dict[str, dict] = {}
    for i, row in enumerate(summary["rows"]):
        if key not in row:
            raise GetterError(f"{path}: feature {i} has no {key!r}")
        if str(row[key]) in rows:
            raise GetterError(f"{path}: {key} {row[key]!r} appears twice")
        rows[str(row[key])] = row
    want = {str(r[key]) for r in reference}
    extra = sorted(set(rows) - want)
    if extra:
        raise GetterError(f"{path}: unexpected features {extra[:5]}")
    worst = 0.0
    for ref in reference:
        got = rows.get(str(ref[key]))
        if got is None:
            raise GetterError(f"{path}: no feature with {key} {ref[key]!r}")
        for col, label in zip(columns, labels, strict=True):
            value = got.get(col)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                    not math.isfinite(value):
                raise GetterError(f"{path}: {ref[key]!r} has {col} = {value!r}, not a number"
                                  f" (fields: {summary['fields']})")
            diff = abs(float(value) - float(ref[label]))
            if relative:
                diff /= max(abs(float(ref[label])), 1e-12)
            worst = max(worst, diff)
    return worst
