"""The real structures the PyMOL tasks start from (Debian's ``pymol-data``), how far each
source's seeded variants depart from it, and writing one variant where a generator asks.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.pymol.variants import Perturbation, write_variant

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
