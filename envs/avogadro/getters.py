"""Avogadro getters: the molecules and crystals the agent saved, read back on the host.

Imported by :func:`sciagent_gym.tools.load_tool_getters` as ``sciagent_gym.envs.avogadro.getters``.
Avogadro 1.97 has no state channel to read from (see the adapter), so tasks are judged on the
files the agent saves: Chemical JSON (``.cjson``, Avogadro's own format), Chemical Markup
Language (``.cml``) and XYZ. They are parsed here in pure Python with size limits (no program
runs on them): JSON and text with a byte limit, CML refused when it declares a DTD or entities.
A missing, oversized or malformed file raises GetterError, which the evaluator turns into a
failed criterion. Reference geometries (gold) come from the task's generator on the host.
"""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sciagent_gym.sdk import GetterError, decode_text, pick_key, read_bytes, register

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState

MAX_BYTES = 8 * 1024 * 1024
MAX_ATOMS = 20000

SYMBOLS = ("X H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn "
           "Ga Ge As Se Br Kr Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr "
           "Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb Lu Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi").split()
NUMBER = {s: i for i, s in enumerate(SYMBOLS)}


@dataclass
class Saved:
    """A structure read from a file: element symbols, Cartesian coordinates (A) and, for a
    crystal, the cell (rows a, b, c in A)."""

    elements: list[str]
    xyz: np.ndarray
    cell: np.ndarray | None = None


def _symbol(number: Any) -> str:
    try:
        n = int(number)
    except (TypeError, ValueError):
        raise GetterError(f"atomic number {number!r} is not a number") from None
    if not 0 < n < len(SYMBOLS):
        raise GetterError(f"atomic number {n} is out of range")
    return SYMBOLS[n]


def _finite(arr: np.ndarray, what: str) -> np.ndarray:
    if not np.isfinite(arr).all():
        raise GetterError(f"{what}: holds values that are not finite")
    return arr


def _cell_from_params(a: float, b: float, c: float, al: float, be: float, ga: float) -> np.ndarray:
    al, be, ga = (math.radians(v) for v in (al, be, ga))
    ax = np.array([a, 0.0, 0.0])
    bx = np.array([b * math.cos(ga), b * math.sin(ga), 0.0])
    cx = c * math.cos(be)
    cy = c * (math.cos(al) - math.cos(be) * math.cos(ga)) / math.sin(ga)
    cz = math.sqrt(max(c * c - cx * cx - cy * cy, 0.0))
    return np.array([ax, bx, [cx, cy, cz]])


def _parse_cjson(text: str) -> Saved:
    try:
        doc = json.loads(text)
        atoms = doc["atoms"]
        numbers = atoms["elements"]["number"]
        coords = atoms.get("coords", {})
    except (json.JSONDecodeError, KeyError, TypeError, RecursionError):
        raise GetterError("not a Chemical JSON file with atoms") from None
    if not isinstance(numbers, list) or len(numbers) > MAX_ATOMS:
        raise GetterError("atoms.elements.number is not a list of at most "
                          f"{MAX_ATOMS} numbers")
    elements = [_symbol(n) for n in numbers]
    cell = None
    uc = doc.get("unitCell")
    if isinstance(uc, dict):
        try:
            if isinstance(uc.get("cellVectors"), list) and len(uc["cellVectors"]) == 9:
                cell = np.array(uc["cellVectors"], float).reshape(3, 3)
            else:
                cell = _cell_from_params(*(float(uc[k]) for k in
                                           ("a", "b", "c", "alpha", "beta", "gamma")))
        except (KeyError, TypeError, ValueError):
            raise GetterError("unitCell is malformed") from None
        _finite(cell, "unitCell")
    try:
        if isinstance(coords.get("3d"), list):
            xyz = np.array(coords["3d"], float).reshape(-1, 3)
        elif isinstance(coords.get("3dFractional"), list) and cell is not None:
            xyz = np.array(coords["3dFractional"], float).reshape(-1, 3) @ cell
        else:
            raise GetterError("the atoms have no 3D coordinates")
    except (TypeError, ValueError):
        raise GetterError("atoms.coords is malformed") from None
    if len(xyz) != len(elements):
        raise GetterError(f"{len(elements)} elements but {len(xyz)} positions")
    return Saved(elements, _finite(xyz, "coordinates"), cell)


def _parse_xyz(text: str) -> Saved:
    lines = text.splitlines()
    try:
        n = int(lines[0].split()[0])
    except (IndexError, ValueError):
        raise GetterError("not an XYZ file (no atom count on line 1)") from None
    if not 0 < n <= MAX_ATOMS or len(lines) < n + 2:
        raise GetterError("XYZ atom count does not match its lines")
    elements, rows = [], []
    for line in lines[2:n + 2]:
        parts = line.split()
        try:
            sym = parts[0]
            sym = _symbol(sym) if sym.isdigit() else sym.capitalize()
            if sym not in NUMBER:
                raise GetterError(f"unknown element {parts[0]!r}")
            rows.append([float(v) for v in parts[1:4]])
        except (IndexError, ValueError):
            raise GetterError(f"malformed XYZ line {line[:60]!r}") from None
        elements.append(sym)
    return Saved(elements, _finite(np.array(rows, float).reshape(-1, 3), "coordinates"))


def _parse_cml(text: str) -> Saved:
    if re.search(r"<!(DOCTYPE|ENTITY)", text[:65536], re.IGNORECASE):
        raise GetterError("CML with a DTD or entities is refused")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise GetterError(f"not well-formed CML: {exc}") from None
    elements, rows = [], []
    for el in root.iter():
        if el.tag.rsplit("}", 1)[-1] != "atom":
            continue
        sym = el.get("elementType", "")
        if sym not in NUMBER:
            raise GetterError(f"CML atom with element {sym!r}")
        try:
            rows.append([float(el.get(k, "nan")) for k in ("x3", "y3", "z3")])
        except ValueError:
            raise GetterError("CML atom coordinates are not numbers") from None
        elements.append(sym)
        if len(elements) > MAX_ATOMS:
            raise GetterError(f"more than {MAX_ATOMS} atoms")
    if not elements:
        raise GetterError("the CML file holds no atoms")
    return Saved(elements, _finite(np.array(rows, float).reshape(-1, 3), "CML coordinates"))


def read_structure(state: FinalState, path: str) -> Saved:
    """The structure saved at ``path``, by its extension (.cjson, .cml, .xyz)."""
    text = decode_text(read_bytes(state, path, MAX_BYTES))
    ext = path.rsplit(".", 1)[-1].lower()
    parser = {"cjson": _parse_cjson, "cml": _parse_cml, "xyz": _parse_xyz}.get(ext)
    if parser is None:
        raise GetterError(f"{path}: no reader for .{ext} files")
    try:
        return parser(text)
    except GetterError as exc:
        raise GetterError(f"{path}: {exc}") from None


def hill(elements: list[str]) -> str:
    counts: dict[str, int] = {}
    for el in elements:
        counts[el] = counts.get(el, 0) + 1
    first = [k for k in ("C", "H") if k in counts] if "C" in counts else []
    order = first + sorted(k for k in counts if k not in first)
    return "".join(f"{el}{counts[el] if counts[el] > 1 else ''}" for el in order)


def _cell_params(cell: np.ndarray) -> dict[str, float]:
    a, b, c = (float(np.linalg.norm(v)) for v in cell)

    def ang(u: np.ndarray, v: np.ndarray) -> float:
        return math.degrees(math.acos(max(-1.0, min(1.0, float(u @ v) / (
            np.linalg.norm(u) * np.linalg.norm(v) + 1e-300)))))

    return {"a": a, "b": b, "c": c, "alpha": ang(cell[1], cell[2]),
            "beta": ang(cell[0], cell[2]), "gamma": ang(cell[0], cell[1]),
            "volume": abs(float(np.linalg.det(cell)))}


def _max_dev(saved: Saved, ref_elements: list[str], ref_xyz: np.ndarray) -> float:
    """For each reference atom, the distance to the nearest saved atom of the same element;
    the largest of these (inf when an element is missing)."""
    worst = 0.0
    for el, pos in zip(ref_elements, ref_xyz, strict=True):
        same = saved.xyz[[i for i, e in enumerate(saved.elements) if e == el]]
        if not len(same):
            return math.inf
        worst = max(worst, float(np.min(np.linalg.norm(same - pos, axis=1))))
    return worst


@register("avogadro_molecule")
def avogadro_molecule(state: FinalState, path: str, key: str | None = None,
                      ref_elements: list[str] | None = None,
                      ref_coords: list[float] | None = None,
                      atoms: list[int] | None = None) -> Any:
    """A saved molecule: ``n_atoms``, ``formula`` (Hill order), ``heavy_formula``, ``elements``;
    with a reference (elements and flat coordinates): ``max_dev`` (A, the largest distance
    from a reference atom to the nearest saved atom of its element: 0 when every reference
    atom is where it was); ``h_bonded`` (every H within 0.90-1.20 A of a C, N, O or S and the
    closest atom to it); with ``atoms`` (2 or 3 zero-based indices): ``geometry``, their
    distance (A) or angle (deg)."""
    saved = read_structure(state, path)
    info: dict[str, Any] = {"n_atoms": len(saved.elements), "formula": hill(saved.elements),
                            "heavy_formula": hill([e for e in saved.elements if e != "H"]),
                            "elements": saved.elements}
    if ref_elements is not None and ref_coords is not None:
        ref = np.array(ref_coords, float).reshape(-1, 3)
        info["max_dev"] = _max_dev(saved, list(ref_elements), ref)
    hs = [i for i, e in enumerate(saved.elements) if e == "H"]
    ok = bool(hs)
    for i in hs:
        d = np.linalg.norm(saved.xyz - saved.xyz[i], axis=1)
        d[i] = np.inf
        j = int(np.argmin(d))
        ok = ok and saved.elements[j] in ("C", "N", "O", "S") and 0.90 <= d[j] <= 1.20
    info["h_bonded"] = ok
    if atoms:
        if max(atoms) >= len(saved.elements):
            raise GetterError(f"{path}: has {len(saved.elements)} atoms, atom {max(atoms)} "
                              "is missing")
        x = saved.xyz
        if len(atoms) == 2:
            info["geometry"] = float(np.linalg.norm(x[atoms[0]] - x[atoms[1]]))
        elif len(atoms) == 3:
            u, v = x[atoms[0]] - x[atoms[1]], x[atoms[2]] - x[atoms[1]]
            cosv = float(u @ v) / (np.linalg.norm(u) * np.linalg.norm(v) + 1e-300)
            info["geometry"] = math.degrees(math.acos(max(-1.0, min(1.0, cosv))))
    return pick_key(path, info, key)


@register("avogadro_geometry")
def avogadro_geometry(state: FinalState, path: str, center: str, ligand: str,
                      key: str | None = None) -> Any:
    """The bonds from the (single) ``center`` atom to its ``ligand`` atoms in a saved molecule:
    ``n_center``, ``n_ligand``, ``formula``, ``lengths`` (sorted, A), ``min_length``,
    ``max_length`` and ``angle`` (deg, between the first two ligands)."""
    saved = read_structure(state, path)
    centers = [i for i, e in enumerate(saved.elements) if e == center]
    ligands = [i for i, e in enumerate(saved.elements) if e == ligand]
    info: dict[str, Any] = {"n_center": len(centers), "n_ligand": len(ligands),
                            "formula": hill(saved.elements)}
    if len(centers) != 1 or len(ligands) < 2:
        raise GetterError(f"{path}: expected one {center} and at least two {ligand} atoms, "
                          f"found {len(centers)} and {len(ligands)}")
    x = saved.xyz
    c = x[centers[0]]
    lengths = sorted(float(np.linalg.norm(x[i] - c)) for i in ligands)
    u, v = x[ligands[0]] - c, x[ligands[1]] - c
    cosv = float(u @ v) / (np.linalg.norm(u) * np.linalg.norm(v) + 1e-300)
    info.update({"lengths": lengths, "min_length": lengths[0], "max_length": lengths[-1],
                 "angle": math.degrees(math.acos(max(-1.0, min(1.0, cosv))))})
    return pick_key(path, info, key)


@register("avogadro_crystal")
def avogadro_crystal(state: FinalState, path: str, key: str | None = None,
                     ref_lattice: list[list[float]] | None = None,
                     ref_species: list[str] | None = None,
                     ref_frac: list[list[float]] | None = None,
                     repeat: list[int] | None = None, scale: list[float] | None = None,
                     volume_scale: float | None = None,
                     lengths: list[float | None] | None = None) -> Any:
    """A saved crystal (a file with a unit cell): ``a``, ``b``, ``c``, ``alpha``, ``beta``,
    ``gamma``, ``volume``, ``n_atoms``, ``formula``, ``wrapped`` (every atom's fractional
    coordinates in [0, 1], to 0.001: an atom on a face counts as inside).
    With the reference cell (``ref_lattice`` rows, ``ref_species``,
    ``ref_frac``), optionally repeated ``repeat`` = [na, nb, nc] times and its axes scaled by
    ``scale`` = [sa, sb, sc] (atoms moved with the cell; ``volume_scale`` f: every axis by
    f^(1/3); ``lengths`` [a, b, c], null for unchanged: those axes set to these lengths), the
    expected structure is built and
    compared: ``cell_dev`` (largest relative difference of a, b, c; angles as |d|/90),
    ``site_dev`` (A: for each expected atom, the periodic distance to the nearest saved atom
    of its element, the largest of these), ``count_ok`` (as many atoms of each element)."""
    saved = read_structure(state, path)
    if saved.cell is None:
        raise GetterError(f"{path}: holds no unit cell")
    params = _cell_params(saved.cell)
    inv = np.linalg.inv(saved.cell) if params["volume"] > 1e-6 else None
    if inv is None:
        raise GetterError(f"{path}: the unit cell has no volume")
    frac = saved.xyz @ inv
    info: dict[str, Any] = {**params, "n_atoms": len(saved.elements),
                            "formula": hill(saved.elements),
                            "wrapped": bool(((frac > -1e-3) & (frac < 1 + 1e-3)).all())}
    if ref_lattice is not None and ref_species is not None and ref_frac is not None:
        reps = [int(v) for v in (repeat or [1, 1, 1])]
        ref = np.array(ref_lattice, float)
        sc = np.array(scale or [1.0, 1.0, 1.0], float)
        if volume_scale is not None:
            sc = sc * float(volume_scale) ** (1 / 3)
        for axis, value in enumerate(lengths or []):
            if value is not None:
                sc[axis] = float(value) / float(np.linalg.norm(ref[axis]))
        base = ref * sc[:, None]
        lattice = base * np.array(reps, float)[:, None]
        species, fracs = [], []
        for i, j, k in np.ndindex(*reps):
            for el, f in zip(ref_species, ref_frac, strict=True):
                species.append(el)
                fracs.append((np.array(f, float) + [i, j, k]) / reps)
        exp = _cell_params(lattice)
        info["cell_dev"] = max(
            *(abs(params[k] - exp[k]) / exp[k] for k in ("a", "b", "c")),
            *(abs(params[k] - exp[k]) / 90.0 for k in ("alpha", "beta", "gamma")))
        info["count_ok"] = sorted(species) == sorted(saved.elements)
        # Compare in the expected cell's frame: fractional coordinates of the saved atoms in
        # the saved cell, distances measured with the expected metric (orientation-free).
        worst = 0.0
        for el, f in zip(species, fracs, strict=True):
            mine = frac[[i for i, e in enumerate(saved.elements) if e == el]]
            if not len(mine):
                worst = math.inf
                break
            d = mine - f
            d -= np.round(d)
            worst = max(worst, float(np.min(np.linalg.norm(d @ lattice, axis=1))))
        info["site_dev"] = worst
    return pick_key(path, info, key)
