"""Generators of the PyMOL questions about one structure: counts, chains, a residue type, a
CA-CA distance, contacts, a chain alignment, a colour, a figure, a residue range, a decoy
input. Each writes its seed's variant and asks headless PyMOL for the gold.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.pymol.headless import run_headless
from sciagent_gym.envs.pymol.sources import PERTURBATIONS, SOURCES, _copy, _load
from sciagent_gym.envs.pymol.variants import perturbed_pdb


def structure(work: Path, rng: np.random.Generator, source: str, path: str | None = None
              ) -> dict[str, Any]:
    """Write ``source``'s variant (e.g. "1tii.pdb") to ``path``. Gold: atom counts of the
    whole model, its polymer, solvent and organic (ligand) parts, its chains and atoms per
    chain, and the centroid of everything but the solvent."""
    dest = _copy(work, rng, source, path or source)
    code = _load(dest) + """
chains = [c for c in cmd.get_chains('m') if c]
out = {"atoms": cmd.count_atoms('m'), "polymer": cmd.count_atoms('m and polymer'),
       "solvent": cmd.count_atoms('m and solvent'), "organic": cmd.count_atoms('m and organic'),
       "no_solvent": cmd.count_atoms('m and not solvent'), "chains": chains,
       "organic_carbons": cmd.count_atoms('m and organic and elem C'),
       "chain_atoms": {c: cmd.count_atoms("m and chain %s" % c) for c in chains},
       "chain_polymer": {c: cmd.count_atoms("m and polymer and chain %s" % c) for c in chains},
       "no_solvent_centroid": [float(v) for v in
                               cmd.get_coords('m and not solvent').mean(axis=0)]}
"""
    return run_headless(code)


def chain(work: Path, rng: np.random.Generator, source: str, chain: str,
          path: str | None = None) -> dict[str, Any]:
    """Write ``source``'s variant; gold for one chain: its atoms (all, polymer only, carbons),
    residues (CA) and the centroid of its polymer atoms."""
    dest = _copy(work, rng, source, path or source)
    code = _load(dest) + f"""
c = {chain!r}
out = {{"atoms": cmd.count_atoms("m and chain " + c),
       "polymer": cmd.count_atoms("m and polymer and chain " + c),
       "residues": cmd.count_atoms("m and polymer and name CA and chain " + c),
       "carbons": cmd.count_atoms("m and elem C and chain " + c),
       "polymer_centroid": [float(v) for v in
                            cmd.get_coords("m and polymer and chain " + c).mean(axis=0)],
       "other_atoms": cmd.count_atoms("m and not chain " + c),
       "total": cmd.count_atoms("m")}}
"""
    return run_headless(code)


#: What a substituted residue becomes, and which residues may take the asked type: no Gly,
#: Pro or Cys (backbone and disulfides stay as they are).
SUBSTITUTES = ("ALA", "SER", "THR", "VAL", "LEU", "ILE", "ASN", "GLN", "GLU", "LYS", "ARG",
               "ASP", "PHE", "TYR", "MET", "HIS")


def _mutations(text: str, resn: str, rng: np.random.Generator, out: float, into: int
               ) -> list[tuple[str, str, str]]:
    """Seeded substitutions (chain, resi, new resn): up to ``out`` of the ``resn`` residues
    replaced by other types and up to ``into`` residues of other types made ``resn``."""
    residues: list[tuple[str, str, str]] = []
    for line in text.splitlines():
        if line.startswith("ATOM  ") and line[12:16].strip() == "CA":
            residues.append((line[21:22].strip(), line[22:27].strip(), line[17:20].strip()))
    own = [r for r in residues if r[2] == resn]
    other = [r for r in residues if r[2] != resn and r[2] in SUBSTITUTES]
    n_out = int(rng.integers(0, int(len(own) * out) + 1))
    n_in = int(rng.integers(0, into + 1))
    swaps = [r for r in SUBSTITUTES if r != resn]
    picked = [own[i] for i in sorted(rng.choice(len(own), n_out, replace=False))]
    made = [other[i] for i in sorted(rng.choice(len(other), n_in, replace=False))]
    return ([(c, i, swaps[int(rng.integers(len(swaps)))]) for c, i, _ in picked]
            + [(c, i, resn) for c, i, _ in made])


def mutant_text(source: str, mutations: list[tuple[str, str, str]]) -> str:
    """``source`` with ``mutations`` made by PyMOL's mutagenesis wizard (its least strained
    rotamer of the new side chain), as PDB text."""
    code = f"cmd.load({str(SOURCES[source])!r}, 'm')\ncmd.wizard('mutagenesis')\n" \
        "w = cmd.get_wizard()\n"
    for c, i, new in mutations:
        code += f"w.set_mode({new!r})\nw.do_select('/m//{c}/{i}/')\nw.apply()\n"
    code += "cmd.set_wizard()\nout = cmd.get_pdbstr('m')\n"
    return run_headless(code)


def residue_type(work: Path, rng: np.random.Generator, source: str, resn: str,
                 path: str | None = None, mutate: dict[str, Any] | None = None
                 ) -> dict[str, Any]:
    """Write ``source``'s variant; gold: the number of residues and atoms of residue type
    ``resn``. ``mutate`` (``{"out": 0.5, "in": 5}``) makes the variant an engineered mutant
    first: a seeded share (up to ``out``) of the ``resn`` residues substituted by other types
    and up to ``in`` residues of other types made ``resn`` (:func:`_mutations`), so the count
    comes from the file, not from the protein's textbook sequence."""
    if mutate:
        if source not in SOURCES:
            raise ValueError(f"unknown structure {source!r} (known: {', '.join(SOURCES)})")
        text = SOURCES[source].read_text()
        swaps = _mutations(text, resn, rng, float(mutate.get("out", 0.5)),
                           int(mutate.get("in", 5)))
        dest = work / (path or source)
        dest.write_text(perturbed_pdb(mutant_text(source, swaps) if swaps else text, rng,
                                      PERTURBATIONS[source]))
    else:
        dest = _copy(work, rng, source, path or source)
    code = _load(dest) + f"""
r = {resn!r}
res = set()
cmd.iterate("m and resn " + r, "res.add((chain, segi, resi))", space={{"res": res}})
out = {{"residues": len(res), "atoms": cmd.count_atoms("m and resn " + r),
       "ca": cmd.count_atoms("m and name CA and resn " + r)}}
"""
    gold = run_headless(code)
    if mutate:
        gold["mutations"] = len(swaps)
    return gold


def ca_distance(work: Path, rng: np.random.Generator, source: str, resi: int,
                chain1: str = "A", chain2: str = "B", atom: str = "CA",
                path: str | None = None) -> dict[str, Any]:
    """Write ``source``'s variant; gold: the distance between atom ``atom`` of residue ``resi`` in
    ``chain1`` and in ``chain2`` (Å), and that between residue ``resi`` and ``resi + 1`` in
    ``chain1`` (a plausible mix-up)."""
    dest = _copy(work, rng, source, path or source)
    code = _load(dest) + f"""
a = "m and chain {chain1} and resi {resi} and name {atom}"
b = "m and chain {chain2} and resi {resi} and name {atom}"
c = "m and chain {chain1} and resi {int(resi) + 1} and name {atom}"
assert cmd.count_atoms(a) == 1 and cmd.count_atoms(b) == 1, "atoms not unique"
out = {{"distance": cmd.get_distance(a, b), "neighbour": cmd.get_distance(a, c),
       "resn": cmd.get_model(a).atom[0].resn, "resi_next": {int(resi) + 1}}}
"""
    return run_headless(code)


def contacts(work: Path, rng: np.random.Generator, source: str, near: str, cutoff: float,
             of: str = "polymer", path: str | None = None,
             variant: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write ``source``'s variant (with the task's ``variant`` departures, see
    :func:`perturbation`); gold: the residues of ``of`` with any atom within ``cutoff`` Å of
    ``near`` (PyMOL: ``byres (of within cutoff of near)``), as residue and atom counts, plus
    the counts for a cutoff 1.5 Å larger and for atoms instead of whole residues."""
    dest = _copy(work, rng, source, path or source, variant)
    code = _load(dest) + f"""
def count(sel):
    res = set()
    cmd.iterate(sel, "res.add((chain, segi, resi))", space={{"res": res}})
    return len(res), cmd.count_atoms(sel)
near = "m and ({near})"
of = "m and ({of})"
r, a = count("byres ((%s) within {float(cutoff)} of (%s))" % (of, near))
r2, a2 = count("byres ((%s) within {float(cutoff) + 1.5} of (%s))" % (of, near))
_, a_only = count("(%s) within {float(cutoff)} of (%s)" % (of, near))
ra, aa = count("byres (m within {float(cutoff)} of (%s)) and not (%s)" % (near, near))
out = {{"residues": r, "atoms": a, "residues_wider": r2, "atoms_wider": a2,
       "wider": {float(cutoff) + 1.5},
       "atoms_only": a_only, "residues_any": ra, "atoms_any": aa}}
"""
    return run_headless(code)


def chain_alignment(work: Path, rng: np.random.Generator, source: str, mobile: str,
                    target: str, path: str | None = None,
                    variant: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write ``source``'s variant; gold for superimposing chain ``mobile`` onto chain
    ``target`` with PyMOL's ``align`` on CA atoms (default outlier rejection): the RMSD after
    refinement, the aligned atom count, the RMSD before rejection, the RMSD of the chains as
    they are in the file (no superposition), ``super``'s RMSD, the target chain's CA centroid
    and the mobile chain's CA centroid after the alignment (with outlier rejection the two
    centroids can lie 0.5 A and more apart: the superposition fits the core, not all CAs).
    ``variant``: the task's departures (:func:`perturbation`), e.g. each chain's own smooth
    distortion."""
    dest = _copy(work, rng, source, path or source, variant)
    code = _load(dest) + f"""
cmd.create("mob", "m and chain {mobile}")
cmd.create("tgt", "m and chain {target}")
before = cmd.rms_cur("mob and name CA", "tgt and name CA", matchmaker=4)
r = cmd.align("mob and name CA", "tgt and name CA")
cmd.create("mob2", "m and chain {mobile}")
s = cmd.super("mob2 and name CA", "tgt and name CA")
cmd.create("mob3", "m and chain {mobile}")
allatoms = cmd.align("mob3", "tgt")
ca = cmd.get_coords("tgt and name CA").mean(axis=0)
moved = cmd.get_coords("mob and name CA").mean(axis=0)
out = {{"rmsd": r[0], "aligned_atoms": r[1], "rmsd_before_rejection": r[3],
       "rmsd_unaligned": before, "rmsd_super": s[0], "rmsd_all_atoms": allatoms[0],
       "target_ca_centroid": [float(v) for v in ca],
       "aligned_mobile_ca_centroid": [float(v) for v in moved],
       "mobile_atoms": cmd.count_atoms("mob"), "target_atoms": cmd.count_atoms("tgt")}}
"""
    return run_headless(code)


def colour(work: Path, rng: np.random.Generator, name: str, source: str | None = None,
           path: str | None = None) -> dict[str, Any]:
    """PyMOL's RGB for colour ``name`` (0-1 and 0-255), writing ``source``'s variant if
    given."""
    if source:
        _copy(work, rng, source, path or source)
    rgb = run_headless(f"out = list(cmd.get_color_tuple({name!r}))")
    return {"rgb": [round(float(v), 4) for v in rgb],
            "rgb8": [int(round(float(v) * 255)) for v in rgb]}


def figure(work: Path, rng: np.random.Generator, source: str, bg: str, width: int,
           height: int, path: str | None = None) -> dict[str, Any]:
    """Write ``source``'s variant; gold: the background colour ``bg`` (as :func:`colour`) and
    the figure itself, ray-traced by headless PyMOL from the written file in the view PyMOL
    opens it with (the task asks to keep that view): ``image`` is an RGB array, which the
    task stores host-side in its gold directory, never in the work dir."""
    from PIL import Image

    dest = _copy(work, rng, source, path or source)
    gold = colour(work, rng, bg)
    with tempfile.TemporaryDirectory(prefix="sciagent-pymol-figure-") as tmp:
        png = Path(tmp) / "gold.png"
        run_headless(_load(dest) + f"cmd.bg_color({bg!r})\n"
                     f"cmd.png({str(png)!r}, width={int(width)}, height={int(height)}, "
                     "ray=1)\nout = 1\n")
        with Image.open(png) as img:
            gold["image"] = np.asarray(img.convert("RGB"))
    return gold


def residue_range(work: Path, rng: np.random.Generator, source: str, lo: int, hi: int,
                  path: str | None = None) -> dict[str, Any]:
    """Write ``source``'s variant; gold: atoms of the whole model and of residues ``lo``-``hi``."""
    dest = _copy(work, rng, source, path or source)
    code = _load(dest) + f"""
out = {{"atoms": cmd.count_atoms("m"), "range_atoms": cmd.count_atoms("m and resi {lo}-{hi}"),
       "range_residues": cmd.count_atoms("m and name CA and resi {lo}-{hi}"),
       "hi_plus": {int(hi) + 2}}}
"""
    return run_headless(code)


def decoy(work: Path, rng: np.random.Generator, source: str, path: str) -> dict[str, Any]:
    """Write ``source``'s variant to ``path`` (an input the task does not ask about). Gold:
    its atoms."""
    dest = _copy(work, rng, source, path)
    return {"atoms": sum(1 for line in dest.read_text().splitlines()
                         if line.startswith(("ATOM  ", "HETATM")))}
