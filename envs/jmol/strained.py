"""Seeded, strained and substituted crystals for the Jmol tasks (issue 33), and the geometry
(shortest distances, first shells, bond angles) every Jmol generator computes its gold with.

A named textbook compound lets a policy answer from memory (the space group of "CaF2", the
angle of "ZnO"). :func:`seeded` draws the structure family, the compound of the family and a
homogeneous strain per seed: a strain that lowers the lattice's symmetry lowers the space group
with it (cubic rock salt Fm-3m #225 becomes I4/mmm, Fmmm, C2/m, R-3m or P-1), changes the
conventional cell and the atoms it holds, splits coordination shells and bends bond angles.
Symmetry is found with spglib at :data:`SYMPREC` and :data:`ANGLE_TOLERANCE` (pymatgen's 5
degree default would call an 88 degree rhombohedral cell cubic); the CIF is written in the
standard conventional setting spglib refines, and every gold value is computed on that cell.
"""

from __future__ import annotations

import functools
import itertools
from pathlib import Path
from typing import Any

import numpy as np

from sciagent_gym.sdk import crystals

#: Relative slack above the shortest A-X distance within which X atoms count as A's neighbours.
SHELL_TOLERANCE = 0.10


def pair_distances(crystal: crystals.Crystal, cutoff: float = 6.0) -> dict[str, float]:
    """Shortest distance (A) between every ordered pair of elements "A-B" (and "A-A"),
    periodic images included."""
    s = crystal.structure
    out: dict[str, float] = {}
    for site in s:
        a = site.specie.symbol
        for n in s.get_neighbors(site, cutoff):
            key = f"{a}-{n.specie.symbol}"
            d = float(n.nn_distance)
            if d > 1e-6 and d < out.get(key, np.inf):
                out[key] = d
    return {k: round(v, 4) for k, v in sorted(out.items())}


def coordination(crystal: crystals.Crystal, centre: str, ligand: str) -> int:
    """How many ``ligand`` atoms surround a ``centre`` atom in its first shell (within
    :data:`SHELL_TOLERANCE` of the shortest centre-ligand distance)."""
    s = crystal.structure
    site = next(x for x in s if x.specie.symbol == centre)
    shell = [n.nn_distance for n in s.get_neighbors(site, 6.0) if n.specie.symbol == ligand]
    shortest = min(shell)
    return int(sum(d <= shortest * (1 + SHELL_TOLERANCE) for d in shell))


def min_angle(crystal: crystals.Crystal, centre: str, ligand: str) -> float:
    """The smallest ligand-centre-ligand angle (degrees) between two bonds of a ``centre``
    atom's first shell of ``ligand`` atoms (as :func:`coordination` counts it)."""
    s = crystal.structure
    site = next(x for x in s if x.specie.symbol == centre)
    shell = [n for n in s.get_neighbors(site, 6.0) if n.specie.symbol == ligand]
    shortest = min(n.nn_distance for n in shell)
    vectors = [n.coords - site.coords for n in shell
               if n.nn_distance <= shortest * (1 + SHELL_TOLERANCE)]
    best = 180.0
    for u, v in itertools.combinations(vectors, 2):
        cos = float(np.dot(u, v) / np.linalg.norm(u) / np.linalg.norm(v))
        best = min(best, float(np.degrees(np.arccos(np.clip(cos, -1, 1)))))
    return best


#: Cartesian distance tolerance (A) and angle tolerance (degrees) of the symmetry search.
SYMPREC, ANGLE_TOLERANCE = 1e-3, 0.5
#: The homogeneous strains; "none" keeps the family's own lattice.
STRAINS = ("none", "tetragonal", "orthorhombic", "monoclinic", "trigonal", "triclinic")
#: Polar distortions (the space-group task only, alone or after a strain, "monoclinic+polar-001"):
#: the first cation's atoms displaced along the parent cell's [001], [110] or [111] by a seeded
#: 0.02-0.06 of the cell (a ferroelectric shift, as in BaTiO3's tetragonal, orthorhombic and
#: rhombohedral phases).
POLAR = {"polar-001": (0, 0, 1), "polar-110": (1, 1, 0), "polar-111": (1, 1, 1)}
#: A first-shell neighbour must lie this far (relative) from the shell's cut (10 % above the
#: shortest bond), so that Jmol's and pymatgen's shells agree however each rounds.
SHELL_MARGIN = 0.025
#: Isovalent substitutes: what a substituted cell puts on some sites of an element.
SUBSTITUTES = {"Na": "K", "K": "Rb", "Li": "Na", "Mg": "Ni", "Ca": "Sr", "Sr": "Ba", "Ba": "Sr",
               "Ni": "Co", "Ti": "Zr", "Zr": "Hf", "Nb": "Ta", "La": "Nd", "Al": "Ga",
               "Cs": "Rb", "Pb": "Sn", "Zn": "Cd", "Ga": "In", "In": "Ga", "Si": "Ge",
               "Cd": "Hg", "Ce": "Th", "Co": "Ni", "Fe": "Cr", "Cr": "Fe", "Sn": "Ge",
               "Tl": "In", "Cl": "Br", "Br": "I", "F": "Cl", "O": "S", "S": "Se", "As": "P",
               "P": "As", "Te": "Se", "C": "Si", "N": "P"}
#: Textbook angles of undistorted polyhedra (degrees): an angle task redraws a shell whose
#: smallest angle is one of them.
IDEAL_ANGLES = (60.0, 70.529, 90.0, 109.471, 120.0, 180.0)
#: Families the seeded tasks draw from (every one in :data:`crystals.FAMILIES`).
FAMILIES = tuple(sorted(crystals.FAMILIES))
#: Supercells a substituted cell may be built in (the CIF's cell is then the refined cell of
#: the substituted structure, which may be smaller again).
SUPERCELLS = tuple(sorted(itertools.product((1, 2, 3), repeat=3), key=lambda d: d[0] * d[1] * d[2]))
#: Most atoms a substituted cell may hold.
MAX_SITES = 240
#: The counts a substituted cell's question is drawn from (uniformly: 1 to this).
MAX_COUNT = 24


def strain_matrix(rng: np.random.Generator, kind: str, low: float = 0.04,
                  high: float = 0.14) -> np.ndarray:
    """A deformation gradient F (x' = F x) of ``kind``, each component a seeded strain of
    magnitude in [low, high] and random sign."""
    def e() -> float:
        return float(rng.choice([-1.0, 1.0]) * rng.uniform(low, high))

    f = np.eye(3)
    if kind == "tetragonal":
        f[2, 2] += e()
    elif kind == "orthorhombic":
        f[0, 0] += e()
        f[2, 2] += e()
    elif kind == "monoclinic":
        f[0, 2] += e()
        f[1, 1] += e()
    elif kind == "trigonal":
        f += e() / 2 * (np.ones((3, 3)) - np.eye(3))
    elif kind == "triclinic":
        f[0, 1] += e()
        f[0, 2] += e()
        f[1, 2] += e()
        f[2, 2] += e()
    elif kind != "none" and kind not in POLAR:
        raise ValueError(f"unknown strain {kind!r}")
    return f


def analyse(structure: Any) -> Any:
    """spglib's view of ``structure`` at this module's tolerances."""
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

    return SpacegroupAnalyzer(structure, symprec=SYMPREC, angle_tolerance=ANGLE_TOLERANCE)


def describe(structure: Any, family: str, order: list[str]) -> crystals.Crystal:
    """:func:`crystals.describe` at this module's tolerances, of the standard conventional
    cell (the cell the CIF is written in)."""
    s = analyse(analyse(structure).get_refined_structure()).get_refined_structure()
    sga = analyse(s)
    lat = s.lattice
    return crystals.Crystal(
        family=family, structure=s, formula=crystals.formula_of(s, order),
        spacegroup=sga.get_space_group_symbol(), spacegroup_number=sga.get_space_group_number(),
        lattice={"a": round(lat.a, 4), "b": round(lat.b, 4), "c": round(lat.c, 4),
                 "alpha": round(lat.alpha, 3), "beta": round(lat.beta, 3),
                 "gamma": round(lat.gamma, 3)},
        density=float(s.density), volume=float(lat.volume), nsites=len(s))


@functools.cache
def _parent(family: str, formula: str) -> Any:
    """The family's compound at its nominal lattice (pymatgen's space-group expansion takes
    seconds for the cubic groups, so it is done once per compound)."""
    return crystals.make_crystal(np.random.default_rng(0), family, jitter=0.0,
                                 formula=formula).structure


def strained_crystal(rng: np.random.Generator, family: str, strain: str,
                     formula: str | None = None) -> crystals.Crystal:
    """A seeded compound of ``family`` (``formula``: that one; its lattice scaled by up to
    4 %) under a seeded ``strain``, refined to its standard conventional cell."""
    from pymatgen.core import Lattice, Structure

    fam = crystals.FAMILIES[family]
    if formula is None:
        elements, _ = _pick(rng, fam["compounds"])
        formula = "".join(dict.fromkeys(elements[label] for label, _ in fam["sites"]))
    s = _parent(family, formula)
    order = list(dict.fromkeys(site.specie.symbol for site in s))
    lattice_strain, _, polar = strain.partition("+")  # "orthorhombic+polar-001": both
    if lattice_strain in POLAR:
        lattice_strain, polar = "none", lattice_strain
    f = strain_matrix(rng, lattice_strain) * (1 + float(rng.uniform(-0.04, 0.04)))
    frac = s.frac_coords.copy()
    if polar:
        moved = np.array([site.specie.symbol == order[0] for site in s])
        frac[moved] += float(rng.uniform(0.02, 0.06)) * np.array(POLAR[polar], dtype=float)
    s = Structure(Lattice(s.lattice.matrix @ f.T), s.species, frac)
    return describe(s, family, order)


def substituted(rng: np.random.Generator, parent: crystals.Crystal, element: str, k: int,
                supercell: tuple[int, int, int]) -> crystals.Crystal:
    """``parent`` repeated ``supercell`` times with k seeded sites of ``element`` taken by its
    :data:`SUBSTITUTES` partner, refined to its standard conventional cell."""
    s = parent.structure.copy()
    s.make_supercell(list(supercell))
    order = list(dict.fromkeys(site.specie.symbol for site in s))
    sites = [i for i, site in enumerate(s) if site.specie.symbol == element]
    new = SUBSTITUTES[element]
    for i in rng.choice(sites, size=k, replace=False):
        s.replace(int(i), new)
    order.insert(order.index(element) + 1, new)
    return describe(s, parent.family, order)


def shell_is_clear(c: crystals.Crystal, centre: str, ligand: str) -> bool:
    """Whether every ``centre`` atom is one orbit (symmetry-equivalent) and no ``ligand``
    atom lies within :data:`SHELL_MARGIN` of the first shell's cut."""
    s = c.structure
    orbits = [grp for grp in analyse(s).get_symmetrized_structure().equivalent_sites
              if grp[0].specie.symbol == centre]
    if len(orbits) != 1:
        return False
    site = next(x for x in s if x.specie.symbol == centre)
    near = [n.nn_distance for n in s.get_neighbors(site, 6.0) if n.specie.symbol == ligand]
    if not near or min(near) < 1.2:
        return False
    return all(abs(d / min(near) - (1 + SHELL_TOLERANCE)) > SHELL_MARGIN for d in near)


def counting_traps(c: crystals.Crystal, species: str) -> bool:
    """Whether counting ``species`` in the cell needs the work: one of its atoms lies on the
    cell's boundary, so a packed cell shows copies that belong to neighbouring cells. (A
    substituted cell is often P1, whose asymmetric unit is the whole cell.)"""
    frac = np.array([x.frac_coords for x in c.structure if x.specie.symbol == species]) % 1.0
    return bool((np.minimum(frac, 1.0 - frac) < 1e-4).any())


def first_pair(cif: str, c: crystals.Crystal, a: str, b: str) -> float:
    """The distance (A, no periodic images) between the first ``a`` and the first ``b`` atom
    of the asymmetric unit in ``cif`` (what measuring the first two atoms Jmol shows gives)."""
    rows = [line.split() for line in cif.splitlines()]
    first = {}
    for row in rows:
        if len(row) == 7 and row[0] in (a, b) and row[0] not in first:
            first[row[0]] = np.array([float(v) for v in row[3:6]])
    if len(first) < 2:
        return float("nan")
    return float(np.linalg.norm(c.structure.lattice.get_cartesian_coords(first[a] - first[b])))


@functools.cache
def space_group_table() -> dict[int, list[tuple[str, str]]]:
    """Space-group number -> the (family, strain) pairs that give it (measured once on a
    fixed draw; :func:`seeded` checks every variant's own number)."""
    table: dict[int, list[tuple[str, str]]] = {}
    for family in FAMILIES:
        for strain in STRAINS:
            for polar in ("", *POLAR):
                both = f"{strain}+{polar}" if polar else strain
                c = strained_crystal(np.random.default_rng(0), family, both)
                table.setdefault(c.spacegroup_number, []).append((family, both))
    return dict(sorted(table.items()))


def _pick(rng: np.random.Generator, items: list | tuple) -> Any:
    return items[int(rng.integers(len(items)))]


def _gold(c: crystals.Crystal) -> dict[str, Any]:
    elements = list(dict.fromkeys(site.specie.symbol for site in c.structure))
    gold = c.gold()
    gold.update({"counts": {el: int(sum(x.specie.symbol == el for x in c.structure))
                            for el in elements},
                 "elements": elements, "volume": round(c.volume, 4),
                 "density": round(c.density, 4), "volume_nm3": round(c.volume / 1000, 6)})
    return gold


def seeded(work: Path, rng: np.random.Generator, quantity: str, family: str | None = None,
           formula: str | None = None, centre: str | None = None, ligand: str | None = None,
           element: str | None = None, species: str | None = None, path: str = "crystal.cif",
           attempts: int = 200) -> dict[str, Any]:
    """Write a seeded strained (for ``quantity`` "count" also substituted) crystal to
    ``path`` as CIF in its standard conventional setting. ``family`` and ``formula`` name the
    compound (else both are drawn); the strain is always drawn. Gold: the crystal's (formula,
    spacegroup, spacegroup_number, a, b, c, alpha, beta, gamma, density, volume, nsites,
    counts, elements), ``strain``, and by ``quantity``:

    - "spacegroup": the space group drawn uniformly over the numbers the families and strains
      reach (:func:`space_group_table`), then a family and strain that give it;
    - "count": ``species_count``, the atoms of ``species`` in the conventional cell (drawn
      uniformly from 1 to :data:`MAX_COUNT`) of a substituted cell: seeded sites of
      ``element`` in a supercell taken by its :data:`SUBSTITUTES` partner (``species`` is one
      of the two), with :func:`counting_traps`;
    - "bond", "angle", "polyhedra": ``bond`` (the shortest ``centre``-``ligand`` distance),
      ``centre_cn`` (:func:`coordination`) and ``angle`` (:func:`min_angle`), drawn until every
      centre atom is one orbit with a clear first shell of at least 2 ("bond"), 3 ("angle",
      and no textbook angle) or 4 ("polyhedra") ligands.
    """
    target = int(rng.integers(1, MAX_COUNT + 1))  # "count": drawn once, so that every count
    for _ in range(attempts):                      # is as likely however often a draw fails
        extra: dict[str, Any] = {}
        if quantity == "spacegroup":
            table = space_group_table()
            number = _pick(rng, sorted(table))
            fam, strain = _pick(rng, table[number])
            c = strained_crystal(rng, fam, strain)
            if c.spacegroup_number != number:
                continue
        elif quantity == "count":
            strain = _pick(rng, STRAINS)
            parent = strained_crystal(rng, family, strain, formula)
            per_cell = sum(x.specie.symbol == element for x in parent.structure)
            fits = [d for d in SUPERCELLS if per_cell * np.prod(d) > target
                    and parent.nsites * np.prod(d) <= MAX_SITES]
            if not fits:
                continue
            smallest = int(np.prod(fits[0]))
            cell = _pick(rng, [d for d in fits if np.prod(d) <= 2 * smallest])
            total = per_cell * int(np.prod(cell))
            c = substituted(rng, parent, element, total - target if species == element
                            else target, cell)
            extra = {"species_count": int(sum(x.specie.symbol == species for x in c.structure))}
            if extra["species_count"] != target or not counting_traps(c, species):
                continue  # refined to a smaller cell, or a count the file shows as is
        elif quantity in ("bond", "angle", "polyhedra"):
            strain = _pick(rng, STRAINS)
            c = strained_crystal(rng, family, strain, formula)
            if not shell_is_clear(c, centre, ligand):
                continue
            cn = coordination(c, centre, ligand)
            if cn < {"bond": 2, "angle": 3, "polyhedra": 4}[quantity]:
                continue
            angle = min_angle(c, centre, ligand)
            if quantity == "angle" and min(abs(angle - x) for x in IDEAL_ANGLES) < 0.5:
                continue  # an unbent polyhedron's textbook angle
            extra = {"centre_cn": int(cn), "bond": pair_distances(c)[f"{centre}-{ligand}"],
                     "angle": round(angle, 3)}
        else:
            raise ValueError(f"unknown quantity {quantity!r}")
        from pymatgen.io.cif import CifWriter

        text = str(CifWriter(c.structure, symprec=SYMPREC, angle_tolerance=ANGLE_TOLERANCE))
        if quantity == "bond" and abs(first_pair(text, c, centre, ligand) - extra["bond"]) < 0.05:
            continue  # the first two atoms Jmol shows would already be the bond
        (work / path).write_text(text)
        gold = _gold(c)
        gold.update(extra, strain=strain)
        return gold
    raise RuntimeError(f"no clear {quantity} structure in {attempts} draws")
