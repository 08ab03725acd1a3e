"""Molecules and crystals for the Avogadro tasks, and the gold values derived from them.

Every generator takes ``(work_dir, rng, **args)``, writes its input into the task's working
directory and returns gold values computed from what it wrote.

Molecules are built from internal coordinates (bond lengths, angles, torsions: the Z-matrix a
chemist writes) around literature values, with a seeded jitter so that every variant has a
geometry of its own, and written as Chemical JSON (``.cjson``, Avogadro's own format) with
their bonds and bond orders listed in a known order (Avogadro's Bond Properties table lists
bonds in file order). Crystals are the seeded structures of :mod:`sciagent_gym.datagen.crystals`
(a real compound of a structure family, lattice jittered per seed) written as VASP POSCAR
files, which Avogadro 1.97 reads natively (it reads CIF only through Open Babel, which Debian
does not install with it). Gold values never enter the sandbox.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

#: Atomic numbers and standard atomic weights (IUPAC 2013, abridged) of the elements used.
Z = {"H": 1, "C": 6, "N": 7, "O": 8, "F": 9, "S": 16, "Cl": 17, "Br": 35, "I": 53}
MASS = {"H": 1.008, "C": 12.011, "N": 14.007, "O": 15.999, "F": 18.998, "S": 32.06,
        "Cl": 35.45, "Br": 79.904, "I": 126.904}

#: Aromatic C-X bond lengths (A), literature values for halobenzenes and toluene.
ARYL_BOND = {"F": 1.354, "Cl": 1.737, "Br": 1.899, "I": 2.095, "C": 1.510}


# -- geometry ------------------------------------------------------------------------------------

def place(a: np.ndarray, b: np.ndarray, c: np.ndarray, r: float, theta: float,
          phi: float) -> np.ndarray:
    """The atom at distance ``r`` from ``c``, angle ``theta`` (deg) b-c-new and torsion ``phi``
    (deg) a-b-c-new (the natural extension reference frame of a Z-matrix)."""
    bc = c - b
    bc /= np.linalg.norm(bc)
    n = np.cross(b - a, bc)
    n /= np.linalg.norm(n)
    m = np.cross(n, bc)
    t, p = np.radians(theta), np.radians(phi)
    d = np.array([-r * np.cos(t), r * np.sin(t) * np.cos(p), r * np.sin(t) * np.sin(p)])
    return c + d[0] * bc + d[1] * m + d[2] * n


def distance(xyz: np.ndarray, i: int, j: int) -> float:
    return float(np.linalg.norm(xyz[i] - xyz[j]))


def angle(xyz: np.ndarray, i: int, j: int, k: int) -> float:
    u, v = xyz[i] - xyz[j], xyz[k] - xyz[j]
    return float(np.degrees(np.arccos(np.clip(u @ v / np.linalg.norm(u) / np.linalg.norm(v),
                                              -1, 1))))


def dihedral(xyz: np.ndarray, i: int, j: int, k: int, m: int) -> float:
    b0, b1, b2 = xyz[i] - xyz[j], xyz[k] - xyz[j], xyz[m] - xyz[k]
    b1 = b1 / np.linalg.norm(b1)
    v = b0 - (b0 @ b1) * b1
    w = b2 - (b2 @ b1) * b1
    return float(np.degrees(np.arctan2(np.cross(b1, v) @ w, v @ w)))


def hill_formula(elements: list[str]) -> str:
    """Hill order: C, then H, then the rest alphabetically (no C: all alphabetically)."""
    counts: dict[str, int] = {}
    for el in elements:
        counts[el] = counts.get(el, 0) + 1
    first = [k for k in ("C", "H") if k in counts] if "C" in counts else []
    order = first + sorted(k for k in counts if k not in first)
    return "".join(f"{el}{counts[el] if counts[el] > 1 else ''}" for el in order)


def write_cjson(path: Path, elements: list[str], xyz: np.ndarray,
                bonds: list[tuple[int, int, int]], name: str) -> None:
    doc = {"chemicalJson": 1, "name": name,
           "atoms": {"elements": {"number": [Z[e] for e in elements]},
                     "coords": {"3d": [round(float(v), 5) for v in np.asarray(xyz).ravel()]}},
           "bonds": {"connections": {"index": [i for b in bonds for i in b[:2]]},
                     "order": [b[2] for b in bonds]}}
    path.write_text(json.dumps(doc, indent=1))


def _jitter(rng: np.random.Generator, value: float, rel: float) -> float:
    return float(value * (1 + rng.uniform(-rel, rel)))


# -- molecules -----------------------------------------------------------------------------------

def aryl(work: Path, rng: np.random.Generator, substituent: str = "Cl", path: str = "aryl.cjson",
         row: int = 1, hydrogens: bool = True, swap: str | None = None,
         scan: list[float] | None = None, swap2: str | None = None) -> dict[str, Any]:
    """A monosubstituted benzene C6H5-X in the xy plane (X = F, Cl, Br, I, or C for toluene's
    methyl carbon, hydrogens of the methyl group included). Atoms: ring C1..C6, X (line 7 of
    Avogadro's coordinate editor), then H. The C1-X bond is listed as bond number ``row``
    (1-based) of the file. Gold: ``cx`` (the C-X length, A), ``cc``, ``ch``, ``formula``,
    ``elements``, ``coords`` (flat list) and the same without hydrogens (``heavy_*``); with
    ``swap``, ``swapped_elements`` and ``swapped_formula`` (X replaced by that element),
    ``swapped_heavy_elements`` and ``swapped_heavy_formula`` (the same without hydrogens);
    with ``swap2`` the same for a second replacement element (``swapped2_*``).

    ``scan`` ([low, high], A): the geometry is one frame of a relaxed scan along the C-X bond,
    its C-X length the equilibrium value plus a uniform offset in that range (the answer then
    depends on the file, not on which halogen the instruction names); without it the C-X
    length is the equilibrium value within 1.8 %."""
    cc = round(_jitter(rng, 1.395, 0.006), 4)
    ch = round(_jitter(rng, 1.084, 0.01), 4)
    if scan:
        cx = round(ARYL_BOND[substituent] + float(rng.uniform(scan[0], scan[1])), 4)
    else:
        cx = round(_jitter(rng, ARYL_BOND[substituent], 0.018), 4)
    ring = np.array([[cc * np.cos(np.radians(60 * k)), cc * np.sin(np.radians(60 * k)), 0.0]
                     for k in range(6)])
    elements = ["C"] * 6 + [substituent]
    coords = [*ring, ring[0] * (1 + cx / cc)]
    bonds: list[tuple[int, int, int]] = [(k, (k + 1) % 6, 2 if k % 2 == 0 else 1)
                                         for k in range(6)]
    ring_h = []
    for k in range(1, 6):
        elements.append("H")
        coords.append(ring[k] * (1 + ch / cc))
        ring_h.append((k, len(elements) - 1, 1))
    if substituent == "C" and hydrogens:
        x = coords[6]
        for tors in (90.0, 210.0, 330.0):
            elements.append("H")
            coords.append(place(ring[1], ring[0], x, 1.09, 109.5, tors))
            ring_h.append((6, len(elements) - 1, 1))
    if not hydrogens:
        keep = [i for i, e in enumerate(elements) if e != "H"]
        elements = [elements[i] for i in keep]
        coords = [coords[i] for i in keep]
        ring_h = []
    others = bonds + ring_h
    target = (0, 6, 1)
    row = max(1, min(int(row), len(others) + 1))
    ordered = others[: row - 1] + [target] + others[row - 1:]
    xyz = np.array(coords)
    write_cjson(work / path, elements, xyz, ordered, f"C6H5{substituent}")
    heavy = [i for i, e in enumerate(elements) if e != "H"]
    gold = {"cx": cx, "cc": cc, "ch": ch, "formula": hill_formula(elements),
            "elements": elements, "coords": [round(float(v), 5) for v in xyz.ravel()],
            "heavy_formula": hill_formula([elements[i] for i in heavy]),
            "heavy_elements": [elements[i] for i in heavy],
            "heavy_coords": [round(float(v), 5) for v in xyz[heavy].ravel()], "row": row}
    for prefix, new in (("swapped", swap), ("swapped2", swap2)):
        if new:
            swapped = [new if i == 6 else e for i, e in enumerate(elements)]
            gold.update({f"{prefix}_elements": swapped, f"{prefix}_formula": hill_formula(swapped),
                         f"{prefix}_heavy_elements": [swapped[i] for i in heavy],
                         f"{prefix}_heavy_formula": hill_formula([swapped[i] for i in heavy])})
    return gold


#: Heavy-atom skeletons as Z-matrices: (element, (ref atoms), (r, theta, phi)) and the bonds
#: with their orders, plus the formula once hydrogens are added by valence.
SKELETONS: dict[str, dict[str, Any]] = {
    "propane": {"atoms": [("C", ()), ("C", (0,), 1.526), ("C", (1, 0), 1.526, 112.4)],
                "bonds": [(0, 1, 1), (1, 2, 1)], "formula": "C3H8"},
    "butane": {"atoms": [("C", ()), ("C", (0,), 1.531), ("C", (1, 0), 1.531, 112.0),
                         ("C", (2, 1, 0), 1.531, 112.0, 180.0)],
               "bonds": [(0, 1, 1), (1, 2, 1), (2, 3, 1)], "formula": "C4H10"},
    "ethanol": {"atoms": [("C", ()), ("C", (0,), 1.512), ("O", (1, 0), 1.425, 108.0)],
                "bonds": [(0, 1, 1), (1, 2, 1)], "formula": "C2H6O"},
    "propan-2-ol": {"atoms": [("C", ()), ("C", (0,), 1.522), ("O", (1, 0), 1.430, 109.5),
                              ("C", (1, 0, 2), 1.522, 111.0, 120.0)],
                    "bonds": [(0, 1, 1), (1, 2, 1), (1, 3, 1)], "formula": "C3H8O"},
    "ethylamine": {"atoms": [("C", ()), ("C", (0,), 1.524), ("N", (1, 0), 1.470, 110.0)],
                   "bonds": [(0, 1, 1), (1, 2, 1)], "formula": "C2H7N"},
    "acetone": {"atoms": [("C", ()), ("C", (0,), 1.507), ("O", (1, 0), 1.213, 121.5),
                          ("C", (1, 0, 2), 1.507, 117.0, 180.0)],
                "bonds": [(0, 1, 1), (1, 2, 2), (1, 3, 1)], "formula": "C3H6O"},
    "propene": {"atoms": [("C", ()), ("C", (0,), 1.501), ("C", (1, 0), 1.336, 124.3)],
                "bonds": [(0, 1, 1), (1, 2, 2)], "formula": "C3H6"},
    "dimethyl ether": {"atoms": [("C", ()), ("O", (0,), 1.410), ("C", (1, 0), 1.410, 111.7)],
                       "bonds": [(0, 1, 1), (1, 2, 1)], "formula": "C2H6O"},
}


def _build_zmatrix(rng: np.random.Generator, atoms: list[tuple], jitter: float) -> np.ndarray:
    xyz: list[np.ndarray] = []
    for spec in atoms:
        refs = spec[1]
        vals = [_jitter(rng, v, jitter) if k < 2 else v for k, v in enumerate(spec[2:])]
        if not refs:
            xyz.append(np.zeros(3))
        elif len(refs) == 1:
            xyz.append(xyz[refs[0]] + np.array([vals[0], 0.0, 0.0]))
        elif len(refs) == 2:
            a = xyz[refs[0]] + np.array([0.0, 1.0, 0.0])
            xyz.append(place(a, xyz[refs[1]], xyz[refs[0]], vals[0], vals[1], 0.0))
        else:
            xyz.append(place(xyz[refs[2]], xyz[refs[1]], xyz[refs[0]], *vals))
    return np.array(xyz)


def skeleton(work: Path, rng: np.random.Generator, molecule: str = "propane",
             path: str = "skeleton.cjson") -> dict[str, Any]:
    """The heavy atoms of ``molecule`` (no hydrogens) with their bonds and bond orders, built
    from its Z-matrix with lengths and angles jittered by 1.5 %. Gold: ``formula`` (with the
    hydrogens valence asks for), ``heavy_formula``, ``elements`` and ``coords`` (flat)."""
    spec = SKELETONS[molecule]
    xyz = _build_zmatrix(rng, spec["atoms"], 0.015)
    xyz -= xyz.mean(axis=0)
    elements = [a[0] for a in spec["atoms"]]
    write_cjson(work / path, elements, xyz, spec["bonds"], molecule)
    return {"formula": spec["formula"], "heavy_formula": hill_formula(elements),
            "elements": elements, "coords": [round(float(v), 5) for v in xyz.ravel()]}


def dihaloethane(work: Path, rng: np.random.Generator, halogen: str = "Cl",
                 conformer: str = "gauche", path: str = "dihaloethane.cjson") -> dict[str, Any]:
    """1,2-dihaloethane X-CH2-CH2-X with a seeded X-C-C-X torsion (gauche: 55-80 deg, anti:
    160-180 deg, sign drawn too). Atoms: C1, C2, X1 (on C1), X2 (on C2), then the four H; bonds
    C1-C2, C1-X1, C2-X2, then C-H. Gold: ``torsion`` (signed, deg), ``abs_torsion``, ``cx``."""
    cc = _jitter(rng, 1.513, 0.01)
    cx = {"F": 1.389, "Cl": 1.790, "Br": 1.950}[halogen]
    cx = round(_jitter(rng, cx, 0.01), 4)
    lo, hi = (55.0, 80.0) if conformer == "gauche" else (160.0, 179.0)
    tors = float(rng.uniform(lo, hi)) * (1 if rng.random() < 0.5 else -1)
    c1 = np.zeros(3)
    c2 = np.array([cc, 0.0, 0.0])
    x1 = place(np.array([cc, 1.0, 0.0]), c2, c1, cx, 110.0, 0.0)
    x2 = place(x1, c1, c2, cx, 110.0, tors)
    hs = [place(x1, c2, c1, 1.09, 110.0, 120.0), place(x1, c2, c1, 1.09, 110.0, -120.0),
          place(x2, c1, c2, 1.09, 110.0, 120.0), place(x2, c1, c2, 1.09, 110.0, -120.0)]
    xyz = np.array([c1, c2, x1, x2, *hs])
    elements = ["C", "C", halogen, halogen, "H", "H", "H", "H"]
    bonds = [(0, 1, 1), (0, 2, 1), (1, 3, 1), (0, 4, 1), (0, 5, 1), (1, 6, 1), (1, 7, 1)]
    xyz -= xyz.mean(axis=0)
    write_cjson(work / path, elements, xyz, bonds, f"1,2-di{halogen}ethane")
    t = dihedral(xyz, 2, 0, 1, 3)
    return {"torsion": round(t, 3), "abs_torsion": round(abs(t), 3), "cx": cx,
            "formula": hill_formula(elements)}


def empty(work: Path, rng: np.random.Generator, **_: Any) -> dict[str, Any]:
    """Nothing to write: the task starts from an empty document (gold from the params)."""
    return {}


# -- crystals ------------------------------------------------------------------------------------

def _poscar(lattice: np.ndarray, species: list[str], frac: np.ndarray, title: str,
            cartesian: bool = False) -> str:
    order = list(dict.fromkeys(species))
    idx = [i for el in order for i in range(len(species)) if species[i] == el]
    lines = [title, "1.0"]
    lines += ["  " + "  ".join(f"{v:.8f}" for v in row) for row in lattice]
    lines += ["  " + "  ".join(order), "  " + "  ".join(str(species.count(el)) for el in order)]
    if cartesian:
        lines.append("Cartesian")
        pos = frac[idx] @ lattice
    else:
        lines.append("Direct")
        pos = frac[idx]
    lines += ["  " + "  ".join(f"{v:.8f}" for v in row) for row in pos]
    return "\n".join(lines) + "\n"


def crystal(work: Path, rng: np.random.Generator, family: str, formula: str | None = None,
            path: str = "crystal.poscar", outside: int = 0, volume_scale: float = 1.0,
            repeat: list[int] | None = None, c_length: float | None = None) -> dict[str, Any]:
    """The seeded crystal (conventional cell) as a POSCAR (or, for a ``.cjson`` path, as
    Avogadro's Chemical JSON with the cell vectors and Cartesian positions). With
    ``outside`` > 0, that many atoms are moved out of the cell by whole lattice vectors (the
    file then lists Cartesian positions, as a molecular-dynamics snapshot would): the same
    crystal, atoms not wrapped.
    Gold: :meth:`Crystal.gold` (a, b, c, alpha, beta, gamma, volume, nsites, formula, ...) plus
    ``lattice`` (3x3, rows a, b, c), ``species`` and ``frac`` (in file order, wrapped),
    ``n_outside``; ``supercell_volume`` (A^3): the volume of the cell scaled by ``volume_scale``
    and repeated ``repeat`` = [na, nb, nc] times (what a task asks for after compressing and
    building a supercell); with ``c_length`` (A): ``c_length_volume``, the volume of the cell
    with c set to that length (a, b and the angles kept)."""
    from sciagent_gym.sdk import crystals

    c = crystals.make_crystal(rng, family, formula=formula)
    s = c.structure
    lattice = np.array(s.lattice.matrix)
    lattice[np.abs(lattice) < 1e-9] = 0.0
    species = [site.specie.symbol for site in s]
    frac = np.mod(np.array(s.frac_coords), 1.0)
    frac[np.isclose(frac, 1.0, atol=1e-9)] = 0.0
    order = list(dict.fromkeys(species))
    idx = [i for el in order for i in range(len(species)) if species[i] == el]
    species = [species[i] for i in idx]
    frac = frac[idx]
    shifted = frac.copy()
    n_out = 0
    if outside:
        picks = rng.choice(len(species), size=min(int(outside), len(species)), replace=False)
        for i in picks:
            shift = rng.choice([-1, 1], size=3) * (rng.random(3) < 0.6)
            if not shift.any():
                shift[int(rng.integers(3))] = -1
            # A coordinate of 0 moved by +1 would land on the cell's face (1 = 0): move it by
            # -1 instead, so every moved atom is clearly outside.
            shift[(shift > 0) & (frac[i] < 0.01)] = -1
            shifted[i] += shift
            n_out += 1
    if path.endswith(".cjson"):
        # Avogadro's own format: the cell as vectors (and parameters), Cartesian positions
        from pymatgen.core import Element

        params = c.gold()
        doc = {"chemicalJson": 1, "name": c.formula,
               "unitCell": {**{k: round(float(params[k]), 6)
                               for k in ("a", "b", "c", "alpha", "beta", "gamma")},
                            "cellVectors": [round(float(v), 8) for v in lattice.ravel()]},
               "atoms": {"elements": {"number": [Element(el).Z for el in species]},
                         "coords": {"3d": [round(float(v), 6)
                                           for v in (shifted @ lattice).ravel()]}}}
        (work / path).write_text(json.dumps(doc, indent=1))
    else:
        text = _poscar(lattice, species, shifted, c.formula, cartesian=bool(outside))
        (work / path).write_text(text)
    gold = c.gold()
    gold.update({"lattice": lattice.round(6).tolist(), "species": species,
                 "frac": frac.round(6).tolist(), "n_outside": n_out,
                 "volume": round(float(c.volume), 4)})
    reps = [int(v) for v in (repeat or [1, 1, 1])]
    gold["supercell_volume"] = round(abs(float(np.linalg.det(lattice))) * float(volume_scale)
                                     * reps[0] * reps[1] * reps[2], 4)
    if c_length is not None:
        c_len = float(np.linalg.norm(lattice[2]))
        gold["c_length_volume"] = round(abs(float(np.linalg.det(lattice))) * float(c_length)
                                        / c_len, 4)
    return gold


GENERATORS = {"aryl": aryl, "skeleton": skeleton, "dihaloethane": dihaloethane,
              "crystal": crystal, "empty": empty}
