"""ParaView getters: the state files and tables the agent saved, read back on the host.

Imported by :func:`sciagent_gym.tools.load_tool_getters` as ``sciagent_gym.envs.paraview.getters``.
ParaView has no state channel that answers from outside its GUI (see the adapter), so tasks
are judged on the files the agent saves: CSV tables from File > Save Data (read with the core
table reader, :mod:`sciagent_gym.evaluation.getters.tables`) and state files (``.pvsm``, XML)
from File > Save State, parsed here with a byte limit, refused when they declare a DTD or
entities, and walked without running anything. A missing, oversized or malformed file raises
GetterError, which the evaluator turns into a failed criterion.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any

import numpy as np

from sciagent_gym.sdk import GetterError, decode_text, pick_key, read_bytes, read_table, register

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState

MAX_STATE_BYTES = 16 * 1024 * 1024
MAX_PROXIES = 20000


def _values(prop: ET.Element) -> list[str]:
    return [el.get("value", "") for el in prop.findall("Element")]


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise GetterError(f"{what}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise GetterError(f"{what}: {text!r} is not finite")
    return value


def parse_state(text: str, path: str) -> dict[str, Any]:
    """The parts of a ParaView state file that tasks ask about.

    ``sources``: the pipeline (readers and filters) as ``{name: {"type", "id"}}`` under the
    names the Pipeline Browser shows; ``filters``: the sorted proxy types of the pipeline;
    ``coloring``: ``{source name: array}`` for every visible representation coloured by an
    array; ``lut_range``: ``{array: [low, high]}`` of each colour map (the first and last
    control point); ``properties``: ``{source name: {property: [values]}}``.
    """
    if re.search(r"<!DOCTYPE|<!ENTITY", text[:4096], re.IGNORECASE):
        raise GetterError(f"{path}: declares a DTD or entities; refused")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise GetterError(f"{path}: not a ParaView state file ({exc})") from None
    state = root.find("ServerManagerState")
    if root.tag != "ParaView" or state is None:
        raise GetterError(f"{path}: not a ParaView state file (no ServerManagerState)")
    proxies: dict[str, ET.Element] = {}
    for n, proxy in enumerate(state.iter("Proxy")):
        if n > MAX_PROXIES:
            raise GetterError(f"{path}: more than {MAX_PROXIES} proxies")
        if proxy.get("group") and proxy.get("id"):
            proxies[proxy.get("id", "")] = proxy
    names: dict[str, dict[str, str]] = {}
    for coll in state.findall("ProxyCollection"):
        names[coll.get("name", "")] = {item.get("id", ""): item.get("name", "")
                                       for item in coll.findall("Item")}
    sources = {name: {"id": pid, "type": proxies[pid].get("type", "")}
               for pid, name in names.get("sources", {}).items() if pid in proxies}
    by_id = {v["id"]: k for k, v in sources.items()}

    def props(proxy: ET.Element) -> dict[str, list[str]]:
        out = {}
        for prop in proxy.findall("Property"):
            vals = _values(prop) or [p.get("value", "") for p in prop.findall("Proxy")]
            out[prop.get("name", "")] = vals
        return out

    coloring: dict[str, str] = {}
    for pid in names.get("representations", {}):
        rep = proxies.get(pid)
        if rep is None:
            continue
        p = props(rep)
        src = by_id.get((p.get("Input") or [""])[0])
        color = p.get("ColorArrayName") or []
        if src is None or (p.get("Visibility") or ["0"])[0] != "1":
            continue
        if len(color) == 5 and color[4]:
            coloring[src] = color[4]
    lut_range: dict[str, list[float]] = {}
    for pid, name in names.get("lookup_tables", {}).items():
        lut = proxies.get(pid)
        if lut is None:
            continue
        pts = props(lut).get("RGBPoints") or []
        if len(pts) >= 8 and len(pts) % 4 == 0:
            array = name.rsplit(".PVLookupTable", 1)[0]
            lut_range[array] = [_number(pts[0], f"{path}: {name}"),
                                _number(pts[-4], f"{path}: {name}")]
    return {"sources": sources, "filters": sorted(v["type"] for v in sources.values()),
            "coloring": coloring, "lut_range": lut_range,
            "properties": {name: props(proxies[v["id"]]) for name, v in sources.items()}}


@register("paraview_state")
def paraview_state(state: FinalState, path: str, key: str | None = None,
                   source: str | None = None) -> Any:
    """A saved state file (``.pvsm``) summarised by :func:`parse_state`; ``key`` picks one
    value by a dotted path (``lut_range.pressure.0``, ``filters``); ``source`` names a
    pipeline item (``flow.vtk``: names hold dots) whose ``coloring`` or ``properties`` the key
    then reads (``key`` "coloring", or "properties.Point1")."""
    text = decode_text(read_bytes(state, path, MAX_STATE_BYTES))
    summary = parse_state(text, path)
    if source is not None:
        if source not in summary["sources"]:
            raise GetterError(f"{path}: no pipeline item named {source!r}")
        summary = {"coloring": summary["coloring"].get(source, ""),
                   "properties": summary["properties"][source],
                   "type": summary["sources"][source]["type"]}
    return pick_key(path, summary, key)


@register("paraview_table")
def paraview_table(state: FinalState, path: str, column: str, stat: str) -> float:
    """One statistic of a column of a CSV that ParaView saved (``"pressure"``,
    ``"Points:1"``): ``min``, ``max``, ``mean``, ``sum``, ``spread`` (max - min), ``rows``,
    or ``argmin:<column>`` (the other column's value where this one is lowest)."""
    table = read_table(state, path)
    if stat == "rows":
        return float(len(table.rows))
    idx = table.column_index(column)
    values = []
    for i, row in enumerate(table.rows):
        cell = row[idx]
        if isinstance(cell, str) or not math.isfinite(cell):
            raise GetterError(f"{path}: column {column!r} row {i} is not a finite number")
        values.append(float(cell))
    if not values:
        raise GetterError(f"{path}: column {column!r} is empty")
    if stat == "min":
        return min(values)
    if stat == "max":
        return max(values)
    if stat == "sum":
        return math.fsum(values)
    if stat == "mean":
        return math.fsum(values) / len(values)
    if stat == "spread":
        return max(values) - min(values)
    if stat.startswith("argmin:"):
        other = table.column_index(stat.split(":", 1)[1])
        best = min(range(len(values)), key=values.__getitem__)
        cell = table.rows[best][other]
        if isinstance(cell, str):
            raise GetterError(f"{path}: {stat} is not a number")
        return float(cell)
    raise GetterError(f"unknown statistic {stat!r}")


@register("paraview_png")
def paraview_png(state: FinalState, path: str, stat: str, color: list[int] | None = None,
                 tolerance: int = 12) -> float:
    """A screenshot ParaView saved (PNG): ``width``, ``height``, or ``fraction`` (of its pixels
    within ``tolerance`` of ``color`` on every channel, e.g. the render view's background)."""
    from sciagent_gym.sdk import existing_file, load_image

    img = load_image(existing_file(state, path), path)
    planes = img.planes
    if planes.shape[0] != 1 or planes.shape[-1] < 3:
        raise GetterError(f"{path}: not a single RGB image ({img.describe()})")
    rgb = planes[0, ..., :3].astype(np.int32)
    if stat == "width":
        return float(rgb.shape[1])
    if stat == "height":
        return float(rgb.shape[0])
    if stat == "fraction":
        if color is None or len(color) != 3:
            raise GetterError("fraction needs color [r, g, b]")
        close = np.abs(rgb - np.array(color, dtype=np.int32)).max(axis=-1) <= int(tolerance)
        return float(close.mean())
    raise GetterError(f"unknown statistic {stat!r}")
