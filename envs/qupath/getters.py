"""QuPath-specific getters: GeoJSON exports, measurement tables and the hierarchy dump.

Imported by :func:`sciagent_gym.tools.load_tool_getters` as ``sciagent_gym.envs.qupath.getters``.
Every missing, malformed, partial or binary file raises GetterError, which the evaluator turns
into a failed criterion. The files are parsed by :mod:`sciagent_gym.envs.qupath.geojson` and
:mod:`sciagent_gym.envs.qupath.tables` (which describe the formats as QuPath v0.5.1 writes them);
the hierarchy dump is the JSON that ``state_dump.groovy`` builds inside QuPath (see that file).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sciagent_gym.envs.qupath.geojson import parse_geojson
from sciagent_gym.envs.qupath.tables import find_column, parse_measurement_table

from sciagent_gym.sdk import (
    MAX_JSON_BYTES,
    MAX_TEXT_BYTES,
    GetterError,
    pick_key,
    read_bytes,
    register,
)

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState


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
    from sciagent_gym.envs.qupath.stains import angle_deg

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
