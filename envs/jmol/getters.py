"""Jmol-specific getters over the state dump (:func:`sciagent_gym.envs.jmol.adapter.summarise`).

Imported by :func:`sciagent_gym.tools.load_tool_getters` as ``sciagent_gym.envs.jmol.getters``.
Every failure (no state, nothing of the asked kind shown) is a GetterError (a failed criterion).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

from sciagent_gym.sdk import GetterError, decode_text, pick_key, read_bytes, register

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState

#: Fractional coordinates closer than this are one site.
SITE_TOLERANCE = 2e-3
#: How far (fractional) past the block an atom may lie and still belong to its display: Jmol's
#: own block loads (``load "" {2 2 2}``) keep symmetry copies just outside the cells (rutile's
#: O at x = -0.305), while a larger block puts atoms a whole cell beyond.
OUTSIDE_MARGIN = 0.35


def _state(state: FinalState) -> dict[str, Any]:
    if state.app_state is None:
        raise GetterError(f"app state unavailable: {state.app_state_error or 'no reason given'}")
    return state.app_state


@register("jmol_supercell")
def jmol_supercell(state: FinalState, n: list[int] | int, key: str | None = None) -> Any:
    """The loaded atoms as an ``n`` (or n1 x n2 x n3) supercell of the file's cell.

    Keys: sites (distinct positions modulo the supercell, each counted once however many
    boundary copies a packed load shows), outside (atoms more than :data:`OUTSIDE_MARGIN`
    beyond the supercell's box), models.
    """
    dims = [int(n)] * 3 if isinstance(n, (int, float)) else [int(v) for v in n]
    st = _state(state)
    fxyz = st.get("fxyz") or []
    if st.get("fxyz") is None and st.get("atoms"):
        raise GetterError(f"{st.get('atoms')} atoms loaded: more than the state dump lists")
    if st.get("cell") is None or not fxyz:
        raise GetterError("no crystal with a unit cell is loaded")
    if any(not isinstance(q, list) or len(q) != 3 for q in fxyz):
        raise GetterError("malformed fractional coordinates in the state dump")
    sites, outside = _block_sites(np.array(fxyz, dtype=float), dims)
    out = {"sites": sites, "outside": outside, "models": st.get("models")}
    return pick_key("supercell", out, key)


def _block_sites(points: np.ndarray, dims: list[int]) -> tuple[int, int]:
    """(distinct sites modulo the ``dims`` block, atoms more than :data:`OUTSIDE_MARGIN`
    beyond it) of fractional coordinates ``points``."""
    box = np.array(dims, dtype=float)
    outside = int(((points < -OUTSIDE_MARGIN) | (points > box + OUTSIDE_MARGIN)).any(axis=1).sum())
    sites = np.empty((0, 3))
    for q in np.mod(points, box):
        if len(sites):
            delta = np.abs(sites - q)
            delta = np.minimum(delta, box - delta)  # periodic: 0.0 and 2.0 are one site
            if (delta.max(axis=1) < SITE_TOLERANCE).any():
                continue
        sites = np.vstack([sites, q])
    return int(len(sites)), outside


@register("jmol_polyhedra")
def jmol_polyhedra(state: FinalState, element: str, key: str | None = None) -> Any:
    """The coordination polyhedra drawn around atoms of ``element``.

    Keys: count, vertices (the distinct vertex counts, sorted), ligands (the distinct
    elements at the vertices, sorted), others (polyhedra around atoms of other elements).
    """
    polys = _state(state).get("polyhedra") or []
    mine = [p for p in polys if p.get("element") == element]
    out = {"count": len(mine),
           "vertices": sorted({int(p.get("vertices", 0)) for p in mine}),
           "ligands": sorted({el for p in mine for el in p.get("vertex_elements", [])}),
           "others": len(polys) - len(mine)}
    return pick_key(f"polyhedra of {element}", out, key)


@register("jmol_distance")
def jmol_distance(state: FinalState, a: str, b: str) -> float:
    """The shortest distance measurement shown between an ``a`` and a ``b`` atom (either
    order), in A."""
    values = [m["value"] for m in _state(state).get("measurements") or []
              if m.get("type") == "distance" and m.get("value") is not None
              and sorted(m.get("elements") or []) == sorted([a, b])]
    if not values:
        raise GetterError(f"no {a}-{b} distance measurement is shown")
    return float(min(values))


@register("jmol_angle")
def jmol_angle(state: FinalState, vertex: str, ends: str) -> list[float]:
    """The angle measurements shown with an ``vertex`` atom in the middle and ``ends`` atoms at
    both ends, in degrees (sorted)."""
    values = sorted(float(m["value"]) for m in _state(state).get("measurements") or []
                    if m.get("type") == "angle" and m.get("value") is not None
                    and (m.get("elements") or [None] * 3)[1:2] == [vertex]
                    and [(m.get("elements") or [])[i] for i in (0, 2)] == [ends, ends])
    if not values:
        raise GetterError(f"no {ends}-{vertex}-{ends} angle measurement is shown")
    return values


#: Largest XYZ or state file a getter reads.
MAX_FILE_BYTES = 4 * 1024 * 1024
#: Most atoms an XYZ file may list for its distances to be computed.
MAX_XYZ_ATOMS = 20000


@register("jmol_xyz")
def jmol_xyz(state: FinalState, path: str, key: str | None = None, a: str | None = None,
             b: str | None = None) -> Any:
    """An XYZ file the agent wrote (Jmol's ``write xyz``), parsed.

    Keys: atoms (the count on its first line, which must match the atom lines), counts
    ({element: atoms}), shortest (with ``a`` and ``b``: the shortest distance between an ``a``
    and a ``b`` atom in the file, in A).
    """
    symbols, xyz = _read_xyz(state, path)
    n = len(symbols)
    out: dict[str, Any] = {"atoms": n,
                           "counts": {el: symbols.count(el) for el in sorted(set(symbols))}}
    if a and b:
        pts = np.array(xyz)
        sym = np.array(symbols)
        pa, pb = pts[sym == a], pts[sym == b]
        if not len(pa) or not len(pb):
            raise GetterError(f"{path}: no {a} or no {b} atoms")
        best = np.inf
        for p in pa:
            d = np.linalg.norm(pb - p, axis=1)
            d = d[d > 1e-3]
            if len(d):
                best = min(best, float(d.min()))
        out["shortest"] = best
    return pick_key(path, out, key)


def _read_xyz(state: FinalState, path: str) -> tuple[list[str], list[list[float]]]:
    """The element symbols and Cartesian coordinates (A) of an XYZ file the agent wrote."""
    text = decode_text(read_bytes(state, path, MAX_FILE_BYTES))
    rows = text.splitlines()
    try:
        n = int(rows[0].split()[0])
    except (IndexError, ValueError):
        raise GetterError(f"{path}: not an XYZ file (no atom count on line 1)") from None
    if not 0 < n <= MAX_XYZ_ATOMS or len(rows) < n + 2:
        raise GetterError(f"{path}: {n} atoms announced, {max(len(rows) - 2, 0)} lines follow")
    symbols, xyz = [], []
    for i, row in enumerate(rows[2:2 + n], 3):
        parts = row.split()
        try:
            symbols.append(parts[0])
            xyz.append([float(v) for v in parts[1:4]])
        except (IndexError, ValueError):
            raise GetterError(f"{path}: line {i} is not an atom line: {row[:80]!r}") from None
        if len(xyz[-1]) != 3 or not np.isfinite(xyz[-1]).all():
            raise GetterError(f"{path}: line {i} is not an atom line: {row[:80]!r}")
    return symbols, xyz


def cell_matrix(cell: dict[str, float]) -> np.ndarray:
    """Rows a, b, c (A) of a cell in Jmol's Cartesian frame: a along x, b in the xy plane."""
    a, b, c = (float(cell[k]) for k in ("a", "b", "c"))
    al, be, ga = (np.radians(float(cell[k])) for k in ("alpha", "beta", "gamma"))
    cx = c * np.cos(be)
    cy = c * (np.cos(al) - np.cos(be) * np.cos(ga)) / np.sin(ga)
    cz = np.sqrt(max(c * c - cx * cx - cy * cy, 0.0))
    return np.array([[a, 0, 0], [b * np.cos(ga), b * np.sin(ga), 0], [cx, cy, cz]])


@register("jmol_xyz_supercell")
def jmol_xyz_supercell(state: FinalState, path: str, n: list[int] | int,
                       key: str | None = None) -> Any:
    """An XYZ file the agent wrote, as an ``n`` (or n1 x n2 x n3) supercell of the loaded
    crystal's cell (its Cartesian coordinates made fractional with the cell Jmol reports).

    Keys: atoms, sites and outside (as :func:`jmol_supercell` counts them), block_sites (the
    sites, when no atom lies beyond the block; otherwise a failure).
    """
    dims = [int(n)] * 3 if isinstance(n, (int, float)) else [int(v) for v in n]
    cell = _state(state).get("cell")
    if not cell:
        raise GetterError("no crystal with a unit cell is loaded")
    symbols, xyz = _read_xyz(state, path)
    frac = np.array(xyz, dtype=float) @ np.linalg.inv(cell_matrix(cell))
    sites, outside = _block_sites(frac, dims)
    out = {"atoms": len(symbols), "sites": sites, "outside": outside}
    if key == "block_sites":
        if outside:
            raise GetterError(f"{path}: {outside} atoms lie beyond the {dims} block")
        return sites
    return pick_key(path, out, key)


_STATE_LOAD = re.compile(r'^\s*load /\*file\*/"([^"\n]*)"[^\n]*?(?:\{([0-9. ]+)\})?\s*;\s*$',
                         re.M)
_STATE_MEASURE = re.compile(r"^\s*measure (\(\{\d+\}\) ?){2,4};\s*$", re.M)
_STATE_POLYHEDRON = re.compile(r'^\s*polyhedron @\{\{.*?"vertexCount":(\d+)', re.M)
_STATE_BACKGROUND = re.compile(r"^\s*background \[x([0-9a-fA-F]{6})\];\s*$", re.M)


@register("jmol_state_file")
def jmol_state_file(state: FinalState, path: str, key: str | None = None) -> Any:
    """A Jmol state script the agent saved (File > Export > Write State..., ``write state``).

    Keys: file (the base name of the file its last ``load`` reads), lattice ([n1, n2, n3] of
    the load's block of cells, [] without one), measures (how many measurements it restores:
    distances, angles and torsions), background ([r, g, b]), polyhedra (how many polyhedra
    it draws), vertices (their distinct vertex counts, sorted).
    """
    text = decode_text(read_bytes(state, path, MAX_FILE_BYTES))
    if not text.lstrip().startswith("# Jmol state"):
        raise GetterError(f"{path}: not a Jmol state script")
    loads = _STATE_LOAD.findall(text)
    if not loads:
        raise GetterError(f"{path}: the state loads no file")
    name, lattice = loads[-1]
    try:
        block = [round(float(v)) for v in lattice.split()] if lattice else []
    except ValueError:
        block = []
    bg = _STATE_BACKGROUND.findall(text)
    rgb = None
    if bg:
        v = int(bg[-1], 16)
        rgb = [v >> 16 & 255, v >> 8 & 255, v & 255]
    poly = [int(v) for v in _STATE_POLYHEDRON.findall(text)]
    out = {"file": name.replace("\\", "/").rsplit("/", 1)[-1], "lattice": block,
           "measures": len(_STATE_MEASURE.findall(text)), "background": rgb,
           "polyhedra": len(poly), "vertices": sorted(set(poly))}
    return pick_key(path, out, key)
