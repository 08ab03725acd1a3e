"""Jmol-specific getters over the state dump (:func:`sciagent_gym.envs.jmol.adapter.summarise`).

Imported by :func:`sciagent_gym.tools.load_tool_getters` as ``sciagent_gym.envs.jmol.getters``.
Every failure (no state, nothing of the asked kind shown) is a GetterError (a failed criterion).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sciagent_gym.evaluation import GetterError, register
from sciagent_gym.evaluation.getters.reading import pick_key

if TYPE_CHECKING:
    from sciagent_gym.evaluation import FinalState

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
    box = np.array(dims, dtype=float)
    points = np.array(fxyz, dtype=float)
    outside = int(((points < -OUTSIDE_MARGIN) | (points > box + OUTSIDE_MARGIN)).any(axis=1).sum())
    sites = np.empty((0, 3))
    for q in np.mod(points, box):
        if len(sites):
            delta = np.abs(sites - q)
            delta = np.minimum(delta, box - delta)  # periodic: 0.0 and 2.0 are one site
            if (delta.max(axis=1) < SITE_TOLERANCE).any():
                continue
        sites = np.vstack([sites, q])
    out = {"sites": int(len(sites)), "outside": outside, "models": st.get("models")}
    return pick_key("supercell", out, key)


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
