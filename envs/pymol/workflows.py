"""Generators of the PyMOL multi-step workflows: the ligand pocket figure
(:func:`pocket_workflow`) and the superposition of a model on a crystal structure
(:func:`superpose_workflow`), with the figure headless PyMOL ray-traces after the same steps.
"""

from __future__ import annotations

import dataclasses
import hashlib
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.pymol.headless import run_headless
from sciagent_gym.envs.pymol.questions import colour
from sciagent_gym.envs.pymol.sources import SOURCES, _copy, _load
from sciagent_gym.envs.pymol.variants import Perturbation, write_variant


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
