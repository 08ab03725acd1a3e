"""Crystal structures for the Jmol tasks, and the gold values derived from them.

Every generator takes ``(work_dir, rng, **args)``, writes a seeded structure of a real compound
(:mod:`sciagent_gym.datagen.crystals`: a structure family's space group and Wyckoff sites with
the compound's lattice parameters jittered per seed) into the task's working directory as CIF,
and returns what pymatgen computes for it: formula, space group, lattice, volume, density, the
atoms of each element in the conventional cell, the shortest distance between every pair of
elements (periodic images included) and coordination numbers. Gold values never enter the
sandbox.

Tasks name their compound through a parameter (``{"family": ..., "formula": ...}``), so the
instruction can say which atoms to measure; the lattice jitter still comes from the seed.

The answer tasks that a named textbook compound would decide (space group, atom count, bond
length, bond angle, coordination) use ``seeded`` instead (:mod:`.strained`, issue 33): the
structure is strained (and for counting, substituted) per seed and written in the symmetry it
then has, and their instructions name no compound.
"""

from __future__ import annotations

import itertools
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.jmol import strained as _strained
from sciagent_gym.envs.jmol.strained import (  # re-exported: the tasks' geometry
    coordination,
    min_angle,
    pair_distances,
    seeded,
)

from sciagent_gym.sdk import crystals


def build(rng: np.random.Generator, family: str, formula: str | None = None,
          jitter: float = 0.02) -> crystals.Crystal:
    """A seeded crystal of ``family``; with ``formula``, that compound of the family."""
    return crystals.make_crystal(rng, family, jitter, formula=formula)


def crystal(work: Path, rng: np.random.Generator, family: str, formula: str | None = None,
            path: str = "crystal.cif", symmetrized: bool = True, centre: str | None = None,
            ligand: str | None = None, species: str | None = None, cells: int | None = None,
            lattice: list[int] | None = None) -> dict[str, Any]:
    """Write the seeded crystal to ``path`` as CIF. Gold: :meth:`Crystal.gold` (formula,
    spacegroup, spacegroup_number, a, b, c, alpha, beta, gamma, density in g/cm3, volume in
    A3, nsites), ``counts`` ({element: atoms in the conventional cell}), ``distance``
    ({"A-B": shortest A-B distance in A}), ``cn`` ({"A-B": how many B around each A}),
    ``elements`` (in site order) and ``volume_nm3``. With ``centre`` and ``ligand``: ``bond`` (their
    shortest distance), ``centre_cn`` and ``angle`` (:func:`min_angle`); with ``species``:
    ``species_count`` (its atoms in the conventional cell); with ``cells``: ``cells_sites``
    (the atoms of that many conventional cells); with ``lattice`` ([n1, n2, n3]):
    ``supercell`` ({a, b, c}: the edge lengths in A of that block of cells)."""
    c = build(rng, family, formula)
    (work / path).write_text(crystals.cif_text(c, symmetrized=symmetrized))
    elements = list(dict.fromkeys(site.specie.symbol for site in c.structure))
    counts = {el: int(sum(site.specie.symbol == el for site in c.structure)) for el in elements}
    distances = pair_distances(c)
    cn = {f"{a}-{b}": int(coordination(c, a, b))
          for a, b in itertools.permutations(elements, 2) if f"{a}-{b}" in distances}
    gold = c.gold()
    gold.update({"counts": counts, "distance": distances, "cn": cn, "elements": elements,
                 "volume": round(c.volume, 4), "density": round(c.density, 4),
                 "volume_nm3": round(c.volume / 1000, 6)})
    if centre and ligand:
        gold.update({"bond": distances[f"{centre}-{ligand}"], "centre_cn": cn[f"{centre}-{ligand}"],
                     "angle": round(min_angle(c, centre, ligand), 3)})
    if species:
        gold["species_count"] = counts[species]
    if cells:
        gold["cells_sites"] = c.nsites * int(cells)
    if lattice:
        n1, n2, n3 = (int(v) for v in lattice)
        gold["supercell"] = {"a": round(n1 * gold["a"], 4), "b": round(n2 * gold["b"], 4),
                             "c": round(n3 * gold["c"], 4)}
    return gold


#: Jmol's headless build renders the gold images: the same renderer as the GUI's.
JMOL_DATA = "/usr/share/java/JmolData.jar"
#: The GUI's display size (the adapter's -g): an image written at this size matches the GUI's.
DISPLAY = (960, 640)


class GoldError(RuntimeError):
    """Headless Jmol could not render a gold image."""


def render_view(cif: Path, script: str, timeout: float = 120.0) -> np.ndarray:
    """What Jmol shows after loading ``cif`` and running ``script`` (``$CIF`` stands for the
    file), rendered by headless Jmol at the GUI's display size, as an RGB array. The input
    is this task's own generated CIF, never an agent's file."""
    from PIL import Image

    width, height = DISPLAY
    with tempfile.TemporaryDirectory(prefix="sciagent-jmol-gold-") as tmp:
        out = Path(tmp) / "gold.png"
        spt = Path(tmp) / "gold.spt"
        spt.write_text(script.replace("$CIF", str(cif))
                       + f'\nwrite image {width} {height} png "{out}"\n')
        argv = ["java", f"-Duser.home={tmp}", "-Djava.awt.headless=true", "-jar", JMOL_DATA,
                "-n", "-i", "-g", f"{width}x{height}", "-s", str(spt)]
        try:
            res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                                 cwd=tmp, env={"PATH": "/usr/bin:/bin", "HOME": tmp,
                                               "LANG": "C.UTF-8"})
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GoldError(f"headless Jmol did not run: {exc}") from None
        if not out.is_file():
            raise GoldError(f"headless Jmol wrote no image (exit {res.returncode}): "
                            f"{(res.stderr or res.stdout)[-800:]}")
        with Image.open(out) as img:
            return np.asarray(img.convert("RGB")).copy()


def view(work: Path, rng: np.random.Generator, family: str, formula: str | None = None,
         lattice: str = "2 2 2", axis: str = "c", background: str = "white",
         path: str = "crystal.cif", cells: int | None = None, species: str | None = None,
         percent: int | None = None, color: str | None = None, axes: bool = False,
         ) -> dict[str, Any]:
    """Write the seeded crystal to ``path``; gold: :func:`crystal`'s values (``cells_sites``
    with ``cells``) and ``render``, the view of a ``lattice`` block of cells (an empty
    ``lattice``: the file as Jmol opens it, its asymmetric unit) looked at down ``axis`` (an
    empty ``axis``: Jmol's default orientation) on ``background`` (an array: the task stores
    it host-side as the reference image); with ``species``, its atoms drawn at ``percent`` %
    of their van der Waals radius in ``color`` (a Jmol colour name); with ``axes``, Jmol's
    axes shown."""
    gold = crystal(work, rng, family, formula, path, cells=cells)
    style = ""
    if species:
        if not (species.isalpha() and str(color).isalpha()):
            raise ValueError(f"bad species or colour: {species!r}, {color!r}")
        style = f"select _{species}; spacefill {int(percent or 0)}%; color {color}; select none\n"
    if not str(background).isalpha():
        raise ValueError(f"bad background: {background!r}")
    block = f" {{{lattice}}}" if lattice else ""
    script = (f'load "$CIF"{block}\n{style}background {background}\n'
              + ("axes on\n" if axes else "") + (f"moveto 0 axis {axis}\n" if axis else ""))
    gold["render"] = render_view(work / path, script)
    return gold


def run_headless(cif: Path, script: str, outputs: tuple[str, ...] = (),
                 timeout: float = 120.0) -> dict[str, bytes]:
    """Run ``script`` in headless Jmol (JmolData) after nothing is loaded: ``$CIF`` stands for
    ``cif`` (this task's own generated file, never an agent's) and ``$OUT/<name>`` for a private
    output folder; returns the bytes of each named output file the script wrote."""
    with tempfile.TemporaryDirectory(prefix="sciagent-jmol-gold-") as tmp:
        spt = Path(tmp) / "gold.spt"
        spt.write_text(script.replace("$CIF", str(cif)).replace("$OUT", tmp) + "\n")
        width, height = DISPLAY
        argv = ["java", f"-Duser.home={tmp}", "-Djava.awt.headless=true", "-jar", JMOL_DATA,
                "-n", "-i", "-g", f"{width}x{height}", "-s", str(spt)]
        try:
            res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                                 cwd=tmp, env={"PATH": "/usr/bin:/bin", "HOME": tmp,
                                               "LANG": "C.UTF-8"})
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GoldError(f"headless Jmol did not run: {exc}") from None
        out: dict[str, bytes] = {}
        for name in outputs:
            f = Path(tmp) / name
            if not f.is_file():
                raise GoldError(f"headless Jmol wrote no {name} (exit {res.returncode}): "
                                f"{(res.stderr or res.stdout)[-800:]}")
            out[name] = f.read_bytes()
        return out


def _png_array(data: bytes) -> np.ndarray:
    import io

    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:
        return np.asarray(img.convert("RGB")).copy()


#: The polyhedra a long-horizon task draws: around each ``C`` atom, its first shell of ``L``
#: atoms (10 % above the shortest C-L distance), complete shells only (Jmol's ``polyhedra N``
#: draws a polyhedron only where exactly N vertices are found).
POLYHEDRA_SCRIPT = (
    "var __c = {{_{centre} and cell=666}}[1]; var __b = 100;\n"
    "for (var __x in {{_{ligand} and within(5.0, __c)}}) "
    "{{ var __d = __c.distance(__x); if (__d < __b) {{ __b = __d }} }}\n"
    "var __n = {{_{ligand} and within(@{{__b * 1.1}}, __c)}}.size;\n"
    "polyhedra @__n RADIUS @{{__b * 1.1}} {{_{centre}}} TO {{_{ligand}}}\n")


#: Smallest ratio of a first shell's thinnest to widest extent (singular values of its bond
#: vectors) for a strained workflow's polyhedra: a shell that strain has flattened towards a
#: plane (4 of a sheared cube's 8 corners) is not drawn as a polyhedron.
MIN_SHELL_FLATNESS = 0.3
#: The strains a workflow's compound is put under: every one of :data:`strained.STRAINS` that
#: deforms the cell (a merely scaled cell keeps its textbook angles and nearly its bond) ...
WORKFLOW_STRAINS = tuple(k for k in _strained.STRAINS if k != "none")
#: ... each alone or with a polar shift of the first cation (:data:`strained.POLAR`), which
#: puts it off the centre of its polyhedron (as Ti in BaTiO3): the polyhedra's angles then
#: spread far wider than a homogeneous strain alone bends them.
WORKFLOW_DISTORTIONS = WORKFLOW_STRAINS + tuple(
    f"{k}+{p}" for k in WORKFLOW_STRAINS for p in _strained.POLAR)


def shell_vectors(c: crystals.Crystal, centre: str, ligand: str) -> np.ndarray:
    """The bond vectors (A) from the first ``centre`` atom to its first-shell ``ligand``
    atoms (as :func:`coordination` counts them)."""
    s = c.structure
    site = next(x for x in s if x.specie.symbol == centre)
    shell = [n for n in s.get_neighbors(site, 6.0) if n.specie.symbol == ligand]
    cut = min(n.nn_distance for n in shell) * (1 + _strained.SHELL_TOLERANCE)
    return np.array([n.coords - site.coords for n in shell if n.nn_distance <= cut])


def strained_workflow_crystal(work: Path, rng: np.random.Generator, family: str, formula: str,
                              centre: str, ligand: str, polyhedra: bool, path: str,
                              cells: int, attempts: int = 200) -> dict[str, Any]:
    """The named compound under a seeded distortion of :data:`WORKFLOW_DISTORTIONS` (issue 33:
    the compound's textbook bond and angle would otherwise decide the answer), written as
    CIF in the symmetry it then has, as :func:`strained.seeded` writes it. Drawn until every
    ``centre`` atom is one orbit with a clear first shell of ``ligand`` atoms: at least 2 of
    them; with ``polyhedra`` at least 4 spanning three dimensions
    (:data:`MIN_SHELL_FLATNESS`) and a smallest angle that is no undistorted polyhedron's
    textbook angle. Gold as :func:`crystal`'s with ``centre``,
    ``ligand`` and ``cells``, plus ``strain``."""
    from pymatgen.io.cif import CifWriter

    for _ in range(attempts):
        strain = _strained._pick(rng, WORKFLOW_DISTORTIONS)
        c = _strained.strained_crystal(rng, family, strain, formula)
        if not _strained.shell_is_clear(c, centre, ligand):
            continue
        cn = coordination(c, centre, ligand)
        angle = min_angle(c, centre, ligand)
        if polyhedra:
            if cn < 4 or min(abs(angle - x) for x in _strained.IDEAL_ANGLES) < 0.5:
                continue
            sv = np.linalg.svd(shell_vectors(c, centre, ligand), compute_uv=False)
            if sv[-1] / sv[0] < MIN_SHELL_FLATNESS:
                continue
        elif cn < 2:
            continue
        text = str(CifWriter(c.structure, symprec=_strained.SYMPREC,
                             angle_tolerance=_strained.ANGLE_TOLERANCE))
        (work / path).write_text(text)
        gold = _strained._gold(c)
        distances = pair_distances(c)
        gold.update({"distance": distances, "strain": strain,
                     "bond": distances[f"{centre}-{ligand}"], "centre_cn": int(cn),
                     "angle": round(angle, 3), "cells_sites": c.nsites * int(cells)})
        return gold
    raise RuntimeError(f"no clear {centre}-{ligand} shell in {attempts} strained {formula}")


def workflow(work: Path, rng: np.random.Generator, family: str, formula: str, centre: str,
             ligand: str, lattice: str = "2 2 2", axis: str = "c", background: str = "white",
             polyhedra: bool = False, path: str = "crystal.cif", strained: bool = False,
             ) -> dict[str, Any]:
    """A long-horizon workflow's crystal: :func:`crystal`'s gold (with ``bond``, ``centre_cn``
    and ``angle`` of ``centre`` and ``ligand``; with ``strained``, of the seeded strained cell
    of :func:`strained_workflow_crystal`), plus what headless Jmol shows for the block of
    cells ``lattice`` (``load FILE {lattice}``): ``block_atoms`` and ``block_counts`` (the
    atoms it loads, boundary copies included), ``lattice`` ([n1, n2, n3]) and ``render``, the
    block (with the ``centre`` polyhedra of :data:`POLYHEDRA_SCRIPT` when ``polyhedra``, then
    also ``polyhedra_count``: how many complete shells it draws) seen down ``axis`` on
    ``background`` at the GUI's display size."""
    n = [int(v) for v in lattice.split()]
    if strained:
        gold = strained_workflow_crystal(work, rng, family, formula, centre, ligand, polyhedra,
                                         path, int(np.prod(n)))
    else:
        gold = crystal(work, rng, family, formula, path, centre=centre, ligand=ligand,
                       cells=int(np.prod(n)))
    poly = POLYHEDRA_SCRIPT.format(centre=centre, ligand=ligand) if polyhedra else ""
    script = (f'load "$CIF" {{{lattice}}}\n{poly}background {background}\n'
              f'moveto 0 axis {axis}\nwrite xyz "$OUT/block.xyz"\n'
              f'write image {DISPLAY[0]} {DISPLAY[1]} png "$OUT/render.png"\n'
              'write state "$OUT/state.spt"')
    out = run_headless(work / path, script, ("block.xyz", "render.png", "state.spt"))
    rows = out["block.xyz"].decode().splitlines()
    atoms = int(rows[0].split()[0])
    symbols = [r.split()[0] for r in rows[2:2 + atoms]]
    gold.update({"block_atoms": atoms, "lattice": n,
                 "block_counts": {el: symbols.count(el) for el in sorted(set(symbols))},
                 "render": _png_array(out["render.png"])})
    if polyhedra:
        gold["polyhedra_count"] = out["state.spt"].decode().count("\n  polyhedron @{{")
    return gold


GENERATORS = {
    "crystal": crystal,
    "view": view,
    "workflow": workflow,
    "seeded": seeded,
}
