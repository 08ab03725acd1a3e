"""What pymatgen (on the host) computes for one stored structure, as the materials tasks define
it: symmetry, density, volume per atom, the XRD peaks (Cu K-alpha, 10-90 degrees, merged as the
sandbox's pymatgen 2022 merges them) and the closest pairs; memoised per template, since a
staged entry's structure is its template's whatever the variant.
"""

from __future__ import annotations

from typing import Any

from sciagent_gym.envs.materials import db
from sciagent_gym.envs.materials.variant import Variant

#: XRD as the tasks define it: pymatgen's XRDCalculator, Cu K-alpha, 2-theta 10-90 degrees,
#: peaks of at least this relative intensity (the strongest is 100).
XRD_RANGE = (10.0, 90.0)
XRD_MIN_INTENSITY = 1.0


def xrd_pattern(structure: Any) -> list[tuple[float, float, float]]:
    """The peaks (2-theta in degrees, intensity with the strongest 100, d-spacing in Å; Cu
    K-alpha, 10-90) of at least :data:`XRD_MIN_INTENSITY` % of the strongest. Reflections at
    one angle are merged (their intensities summed) first, as pymatgen 2022 (the sandbox's)
    does and 2024+ no longer does for some hexagonal families."""
    from pymatgen.analysis.diffraction.xrd import XRDCalculator

    pattern = XRDCalculator(wavelength="CuKa").get_pattern(structure, two_theta_range=XRD_RANGE)
    merged: list[list[float]] = []
    for x, y, d in zip(pattern.x, pattern.y, pattern.d_hkls, strict=True):
        if merged and abs(merged[-1][0] - x) < 1e-3:
            merged[-1][1] += float(y)
        else:
            merged.append([float(x), float(y), float(d)])
    top = max(y for _, y, _ in merged)
    return [(round(x, 4), round(100 * y / top, 3), round(d, 5)) for x, y, d in merged
            if 100 * y / top >= XRD_MIN_INTENSITY]


def xrd_peaks(structure: Any) -> list[float]:
    """Distinct peak positions (2-theta) of :func:`xrd_pattern`."""
    return [x for x, _, _ in xrd_pattern(structure)]


def closest_pairs(structure: Any, tol: float = 0.002) -> tuple[float, list[str]]:
    """The shortest interatomic distance (Å, periodic images included) and the element pairs
    (``"Cl-Na"``, alphabetical) at it within ``tol``: every pair an answer may name."""
    found = [(n.nn_distance, "-".join(sorted((site.specie.symbol, n.specie.symbol))))
             for site in structure for n in structure.get_neighbors(site, 6.0)]
    low = min(d for d, _ in found)
    return low, sorted({p for d, p in found if d <= low + tol})


def shortest_distance(structure: Any) -> float:
    """The shortest interatomic distance (Å), periodic images included."""
    return float(min(n.nn_distance for i in range(len(structure))
                     for n in structure.get_neighbors(structure[i], 6.0)))


def structure_facts(entry: dict[str, Any]) -> dict[str, Any]:
    """What pymatgen (host) computes for a stored entry: symmetry, density, volume per atom,
    nearest-neighbour distance and the XRD peaks of the tasks' definition."""
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

    s = db.structure_of(entry)
    sga = SpacegroupAnalyzer(s, symprec=0.01)
    pattern = xrd_pattern(s)
    peaks = [x for x, _, _ in pattern]
    ranked = sorted(pattern, key=lambda p: -p[1])
    nn, pairs = closest_pairs(s)
    return {"space_group_symbol": sga.get_space_group_symbol(),
            "space_group_number": sga.get_space_group_number(),
            "density": round(float(s.density), 5),
            "volume_per_atom": round(float(s.volume / len(s)), 5),
            "nsites": len(s), "peaks": peaks, "nearest_neighbour": round(float(nn), 5),
            "nn_pairs": pairs, "first_d": pattern[0][2], "strongest_peak": ranked[0][0],
            "strongest_lead": round(ranked[0][1] - ranked[1][1], 3) if len(ranked) > 1
            else 100.0,
            "composition": {str(el): int(n) for el, n in s.composition.items()},
            "lengths": sorted(round(float(x), 5) for x in s.lattice.abc),
            "volume": round(float(s.volume), 5)}


_FACTS: dict[str, dict[str, Any]] = {}
_GROUPS: dict[str, tuple[str, int]] = {}


def _facts(v: Variant, e: dict[str, Any]) -> dict[str, Any]:
    """:func:`structure_facts` of a staged entry (memoised by the template it comes from: its
    structure is that template's)."""
    key = v.template(e["id"])["key"]
    if key not in _FACTS:
        _FACTS[key] = structure_facts(e)
    return _FACTS[key]


def _space_group(v: Variant, e: dict[str, Any]) -> tuple[str, int]:
    """SpacegroupAnalyzer (symprec 0.01) on a staged entry's structure (memoised likewise)."""
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

    key = v.template(e["id"])["key"]
    if key not in _GROUPS:
        sga = SpacegroupAnalyzer(db.structure_of(e), symprec=0.01)
        _GROUPS[key] = (sga.get_space_group_symbol(), sga.get_space_group_number())
    return _GROUPS[key]
