"""Input structures for the PyMOL tasks, and the gold values derived from them.

Every generator takes ``(work_dir, rng, **args)`` and writes a seeded variant of a real
structure from the Debian ``pymol-data`` package into the task's working directory
(:func:`write_variant`: a random rigid-body placement, a small coordinate jitter and, where the
task allows, a few terminal residues trimmed and part of the ordered waters dropped), so every
seed has its own input data and its own answers. The gold values are computed from the
written file by PyMOL itself, run headless (``pymol2``, the system ``python3``) outside the
sandbox, so the selection semantics (``polymer``, ``within``, ``byres``) are PyMOL's own.
Headless results are cached per (file digest, question).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import secrets
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.pymol.variants import Perturbation, perturbed_pdb, write_variant

DATA = Path("/usr/share/pymol/data")
SOURCES = {"1tii.pdb": DATA / "demo/1tii.pdb", "1hpv.pdb": DATA / "tut/1hpv.pdb",
           "il2.pdb": DATA / "demo/il2.pdb", "pept.pdb": DATA / "demo/pept.pdb"}
#: How far each source's variants depart from it. 1hpv keeps residues 4-96 of both chains
#: (the distance task asks about 25-85); pept keeps all 10 residues (the session task
#: selects ranges up to residue 10); il2 loses up to 10 residues per end, so residue counts
#: differ per seed.
PERTURBATIONS = {"1tii.pdb": Perturbation(trim=3, keep_waters=(0.6, 1.0)),
                 "1hpv.pdb": Perturbation(trim=3, keep_waters=(0.6, 1.0)),
                 "il2.pdb": Perturbation(trim=10),
                 "pept.pdb": Perturbation()}
SYSTEM_PYTHON = "/usr/bin/python3"
_MARK = "@@SCIAGENT-JSON@@"
_PRELUDE = """\
import json
from pymol2 import PyMOL
_p = PyMOL()
_p.start()
cmd = _p.cmd
"""


class GoldError(RuntimeError):
    """Headless PyMOL could not compute a gold value."""


def run_headless(code: str, timeout: float = 120.0) -> Any:
    """Run ``code`` in a headless PyMOL (``cmd`` defined); returns what it leaves in ``out``."""
    return json.loads(_run_headless_cached(code, timeout))


@functools.lru_cache(maxsize=256)
def _run_headless_cached(code: str, timeout: float) -> str:
    script = f"{_PRELUDE}out = None\n{code}\nprint({_MARK!r} + json.dumps(out))\n"
    with tempfile.TemporaryDirectory(prefix="sciagent-pymol-gold-") as home:
        try:
            res = subprocess.run([SYSTEM_PYTHON, "-I", "-c", script], capture_output=True,
                                 text=True, timeout=timeout, cwd=home,
                                 env={"PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8"})
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GoldError(f"headless PyMOL did not run: {exc}") from None
    for line in res.stdout.splitlines():
        if line.startswith(_MARK):
            return line[len(_MARK):]
    raise GoldError(f"headless PyMOL gave no answer (exit {res.returncode}): "
                    f"{(res.stderr or res.stdout)[-800:]}")


#: Where the agent's file appears inside the sandbox that reads it.
INSIDE_FILE = "/input/file"
#: The answer marker comes on stdin, read before the file is touched: the file cannot know it.
_FILE_PRELUDE = """\
import sys
_mark = sys.stdin.readline().strip()
sys.stdin.close()
import json
from pymol2 import PyMOL
_p = PyMOL()
_p.start()
cmd = _p.cmd
"""


def run_headless_file(code: str, path: str, timeout: float = 120.0,
                      max_output: int = 4 << 20) -> Any:
    """Run ``code`` in a headless PyMOL with the agent's file at ``sys.argv[1]``; returns
    what it leaves in ``out`` (not cached: the file is an agent's output).

    The file is untrusted, so PyMOL runs in a throwaway sandbox (no network, an unprivileged
    uid, the file shown read-only; :func:`sciagent_gym.evaluation.isolated.run_sandboxed`),
    and only the output line that starts with a random per-call marker counts as the answer.
    """
    from sciagent_gym.sdk import SandboxError, run_sandboxed

    marker = secrets.token_hex(16)
    script = f"{_FILE_PRELUDE}out = None\n{code}\nprint(_mark + json.dumps(out), flush=True)\n"
    try:
        res = run_sandboxed([SYSTEM_PYTHON, "-I", "-c", script, INSIDE_FILE],
                            files={INSIDE_FILE: Path(path)}, stdin=f"{marker}\n".encode(),
                            timeout=timeout, max_output=max_output)
    except (SandboxError, OSError) as exc:
        raise GoldError(f"headless PyMOL did not run: {exc}") from None
    if res.timed_out:
        raise GoldError(f"headless PyMOL did not finish within {timeout:g} s")
    for line in reversed(res.output.splitlines()):
        if line.startswith(marker):
            try:
                return json.loads(line[len(marker):])
            except ValueError as exc:
                raise GoldError(f"headless PyMOL gave a malformed answer: {exc}") from None
    raise GoldError(f"headless PyMOL gave no answer (exit {res.returncode}): "
                    f"{res.output[-800:]}")


def perturbation(source: str, variant: dict[str, Any] | None = None) -> Perturbation:
    """``source``'s :data:`PERTURBATIONS` entry with a task's own ``variant`` departures
    (JSON: ``{"tails": {"C": 12}, "flex": [0.1, 1.0], "ligand": "478", ...}``)."""
    how = PERTURBATIONS[source]
    if not variant:
        return how
    extra = dict(variant)
    if "tails" in extra:
        extra["tails"] = tuple((str(k), int(v)) for k, v in dict(extra["tails"]).items())
    for key in ("flex", "keep_waters"):
        if key in extra:
            extra[key] = tuple(float(v) for v in extra[key])
    return dataclasses.replace(how, **extra)


def _copy(work: Path, rng: np.random.Generator, source: str, path: str,
          variant: dict[str, Any] | None = None) -> Path:
    """Write this seed's variant of ``source`` (see :mod:`.variants`) to ``work/path``."""
    if source not in SOURCES:
        raise ValueError(f"unknown structure {source!r} (known: {', '.join(SOURCES)})")
    return write_variant(SOURCES[source], work / path, rng, perturbation(source, variant))


def _load(dest: Path) -> str:
    # the gold is computed from the bytes written, loaded under a fixed object name
    digest = hashlib.sha256(dest.read_bytes()).hexdigest()[:16]
    return f"# {digest}\ncmd.load({str(dest)!r}, 'm')\n"


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


def pocket_workflow(work: Path, rng: np.random.Generator, source: str, cutoff: float,
                    resi: int, carbon: str, bg: str, width: int, height: int,
                    path: str | None = None) -> dict[str, Any]:
    """Write ``source``'s variant (a complex with a ligand ``resn 478`` and waters); gold for the
    pocket workflow: atoms without solvent, the pocket (whole polymer residues within ``cutoff``
    of the ligand: atoms, residues, carbons, centroid), the CA-CA distance of residue ``resi``
    between chains A and B, and the figure ray-traced by headless PyMOL after the same steps
    (pocket carbons coloured ``carbon``, background ``bg``) in the view PyMOL opens the file
    with (``image``, kept host-side)."""
    from PIL import Image

    dest = _copy(work, rng, source, path or source)
    pocket = f"byres (m and polymer within {float(cutoff)} of (m and resn 478))"
    a = f"m and chain A and resi {int(resi)} and name CA"
    b = f"m and chain B and resi {int(resi)} and name CA"
    with tempfile.TemporaryDirectory(prefix="sciagent-pymol-figure-") as tmp:
        png = Path(tmp) / "gold.png"
        code = _load(dest) + f"""
def residues(sel):
    res = set()
    cmd.iterate(sel, "res.add((chain, segi, resi))", space={{"res": res}})
    return len(res)
out = {{"atoms": cmd.count_atoms("m"), "solvent": cmd.count_atoms("m and solvent"),
       "polymer": cmd.count_atoms("m and polymer"), "organic": cmd.count_atoms("m and organic")}}
cmd.remove("solvent")
out["no_solvent"] = cmd.count_atoms("m")
sel = {pocket!r}
out["pocket_atoms"] = cmd.count_atoms(sel)
out["pocket_residues"] = residues(sel)
out["pocket_carbons"] = cmd.count_atoms("(%s) and elem C" % sel)
out["pocket_centroid"] = [float(v) for v in cmd.get_coords(sel).mean(axis=0)]
wider = "byres (m and polymer within {float(cutoff) + 1.5} of (m and resn 478))"
out["wider_atoms"] = cmd.count_atoms(wider)
out["distance"] = cmd.get_distance({a!r}, {b!r})
cmd.select("pocket", sel)
cmd.show("sticks", "m and resn 478")
cmd.show("sticks", "pocket")
cmd.color({carbon!r}, "pocket and elem C")
cmd.distance("dist_ab", {a!r}, {b!r})
cmd.bg_color({bg!r})
cmd.png({str(png)!r}, width={int(width)}, height={int(height)}, ray=1)
"""
        gold = run_headless(code + "\n")
        with Image.open(png) as img:
            gold["image"] = np.asarray(img.convert("RGB"))
    bgc = colour(work, rng, bg)
    gold["bg_rgb"], gold["bg_rgb8"] = bgc["rgb"], bgc["rgb8"]
    return gold


def decoy(work: Path, rng: np.random.Generator, source: str, path: str) -> dict[str, Any]:
    """Write ``source``'s variant to ``path`` (an input the task does not ask about). Gold:
    its atoms."""
    dest = _copy(work, rng, source, path)
    return {"atoms": sum(1 for line in dest.read_text().splitlines()
                         if line.startswith(("ATOM  ", "HETATM")))}


#: The second structure of the superposition workflow: the same protein as another model of
#: it would give (every coordinate displaced by a seeded ``jitter``, other termini, no waters),
#: placed elsewhere, so aligning it has something to do and an RMSD of its own per seed.
MODEL_PERTURBATION = Perturbation(trim=3, keep_waters=(0.0, 0.0), jitter=0.35)


def _log_uniform(rng: np.random.Generator, value: float | list[float]) -> float:
    """``value`` itself, or a log-uniform draw from a ``[lo, hi]`` range."""
    if isinstance(value, list | tuple):
        lo, hi = (float(v) for v in value)
        return float(np.exp(rng.uniform(np.log(lo), np.log(hi))))
    return float(value)


def superpose_workflow(work: Path, rng: np.random.Generator, source: str, crystal: str,
                       predicted: str, crystal_colour: str, predicted_colour: str, bg: str,
                       width: int, height: int, jitter: float | list[float] = 0.35,
                       flex: list[float] | None = None) -> dict[str, Any]:
    """Write ``source``'s variant as ``crystal`` and a model of it as ``predicted``
    (:data:`MODEL_PERTURBATION`); gold for superimposing the model onto the crystal with PyMOL's
    ``align`` on CA atoms (default outlier rejection): atom counts, the RMSD after refinement
    and the aligned CA count, both objects' CA centroids and the model's centroid after the
    alignment, and the figure ray-traced by headless PyMOL after the same steps (the view
    zoomed on everything once aligned, objects coloured, background ``bg``: ``image``, kept
    host-side). Without the zoom the view stays where the model was before it moved, and on
    some seeds the crystal structure then fills the picture. The model's error is seeded:
    ``jitter`` (Å, or a ``[lo, hi]`` range drawn log-uniformly) and ``flex`` (the range of
    each chain's smooth distortion, see :class:`Perturbation`), so the RMSD spreads widely."""
    from PIL import Image

    first = _copy(work, rng, source, crystal)
    model = dataclasses.replace(MODEL_PERTURBATION, jitter=_log_uniform(rng, jitter),
                                flex=tuple(float(v) for v in flex) if flex else (0.0, 0.0))
    second = write_variant(SOURCES[source], work / predicted, rng, model)
    a, b = Path(crystal).stem, Path(predicted).stem
    digest = hashlib.sha256(first.read_bytes() + second.read_bytes()).hexdigest()[:16]
    with tempfile.TemporaryDirectory(prefix="sciagent-pymol-figure-") as tmp:
        png = Path(tmp) / "gold.png"
        code = f"""# {digest}
cmd.load({str(first)!r}, {a!r})
cmd.load({str(second)!r}, {b!r})
def centroid(sel):
    return [float(v) for v in cmd.get_coords(sel).mean(axis=0)]
out = {{"crystal_atoms": cmd.count_atoms({a!r}), "predicted_atoms": cmd.count_atoms({b!r}),
       "crystal_ca": centroid("{a} and name CA"),
       "predicted_ca_before": centroid("{b} and name CA"),
       "predicted_centroid_before": centroid({b!r})}}
out["rmsd_unaligned"] = cmd.rms_cur("{b} and name CA", "{a} and name CA", matchmaker=4)
r = cmd.align("{b} and name CA", "{a} and name CA")
out["rmsd"], out["aligned_atoms"], out["rmsd_before_rejection"] = r[0], r[1], r[3]
out["predicted_ca"] = centroid("{b} and name CA")
out["predicted_centroid"] = centroid({b!r})
cmd.zoom()
cmd.color({crystal_colour!r}, {a!r})
cmd.color({predicted_colour!r}, {b!r})
cmd.bg_color({bg!r})
cmd.png({str(png)!r}, width={int(width)}, height={int(height)}, ray=1)
"""
        gold = run_headless(code)
        with Image.open(png) as img:
            gold["image"] = np.asarray(img.convert("RGB"))
    bgc = colour(work, rng, bg)
    gold["bg_rgb"], gold["bg_rgb8"] = bgc["rgb"], bgc["rgb8"]
    return gold


GENERATORS = {
    "structure": structure,
    "chain": chain,
    "residue_type": residue_type,
    "ca_distance": ca_distance,
    "contacts": contacts,
    "chain_alignment": chain_alignment,
    "colour": colour,
    "figure": figure,
    "residue_range": residue_range,
    "decoy": decoy,
    "pocket_workflow": pocket_workflow,
    "superpose_workflow": superpose_workflow,
}
