"""Seeded variants of the pymol-data structures, so every task seed has its own input data.

The Debian ``pymol-data`` package ships only a handful of structures; a task that always
opened the same file would repeat its held-out (``test``) episodes in ``train``. A variant
keeps the molecule (its chains, residues and ligands) but is placed, and perturbed, per seed:

- a random rigid-body rotation and translation (the picture PyMOL shows differs per seed and
  no coordinate can be memorised);
- a Gaussian jitter of every coordinate (sigma 0.05 Å, well inside a crystal structure's own
  coordinate error), so distances, RMSDs and contacts near a cutoff differ per seed;
- optionally, up to ``trim`` residues cut from each end of every polymer chain (disordered
  termini differ between constructs) and a seeded fraction of the ordered waters kept, so
  atom, residue and water counts differ per seed.

Crystal-frame records (CRYST1, SCALEn, ORIGXn), ANISOU records and the MASTER checksum line
would no longer match the moved atoms and are dropped; CONECT records that name a removed
atom are dropped too. Serial numbers are kept, so the remaining CONECT records stay valid.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

WATERS = {"HOH", "WAT", "H2O", "DOD", "SOL", "TIP3"}
JITTER = 0.05
DROPPED = ("CRYST1", "SCALE", "ORIGX", "MASTER", "ANISOU", "SIGATM", "SIGUIJ")
ATOM_RECORDS = ("ATOM  ", "HETATM")


@dataclass(frozen=True)
class Perturbation:
    """How far a source's variants may depart from it (see the module docstring)."""

    trim: int = 0
    keep_waters: tuple[float, float] = (1.0, 1.0)
    shift: float = 25.0
    jitter: float = JITTER


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A rotation matrix drawn uniformly from SO(3) (a normalised Gaussian quaternion)."""
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def _residue_key(line: str) -> tuple[str, str, str]:
    """Chain, number with insertion code, and name: a water never shares a protein's key."""
    return line[21:22], line[22:27], line[17:20]


def _trimmed_residues(lines: list[str], trim: int, rng: np.random.Generator
                      ) -> set[tuple[str, str, str]]:
    """Residues cut from the ends of each polymer (ATOM) chain: 0..trim per end, drawn per
    chain in file order; chains shorter than ``4 * trim + 8`` residues are left whole."""
    chains: dict[str, list[tuple[str, str, str]]] = {}
    for line in lines:
        if line.startswith("ATOM  "):
            key = _residue_key(line)
            residues = chains.setdefault(key[0], [])
            if not residues or residues[-1] != key:
                residues.append(key)
    cut: set[tuple[str, str, str]] = set()
    for residues in chains.values():
        head, tail = (int(v) for v in rng.integers(0, trim + 1, size=2))
        if trim and len(residues) >= 4 * trim + 8:
            cut.update(residues[:head])
            cut.update(residues[len(residues) - tail:])
    return cut


def _dropped_waters(lines: list[str], keep: tuple[float, float], rng: np.random.Generator
                    ) -> set[tuple[str, str, str]]:
    """Water residues left out: each kept with one seeded probability in ``keep``."""
    p = float(rng.uniform(*keep)) if keep[0] < keep[1] else keep[0]
    waters = sorted({_residue_key(line) for line in lines
                     if line.startswith(ATOM_RECORDS) and line[17:20].strip() in WATERS})
    draws = rng.random(len(waters))
    return {w for w, u in zip(waters, draws, strict=True) if u >= p}


def _conect_serials(line: str) -> list[int]:
    out = []
    for start in range(6, min(len(line), 31), 5):
        field = line[start:start + 5].strip()
        if field.isdigit():
            out.append(int(field))
    return out


def perturbed_pdb(text: str, rng: np.random.Generator, how: Perturbation) -> str:
    """The variant of PDB ``text`` drawn from ``rng`` (same rng state, same bytes)."""
    lines = [line for line in text.splitlines() if not line.startswith(DROPPED)]
    rotation = random_rotation(rng)
    shift = rng.uniform(-how.shift, how.shift, size=3)
    removed = _trimmed_residues(lines, how.trim, rng) | _dropped_waters(lines, how.keep_waters,
                                                                        rng)
    kept, gone = [], set()
    for line in lines:  # CONECT records come after every atom record
        if line.startswith(ATOM_RECORDS) and _residue_key(line) in removed:
            gone.add(int(line[6:11]))
            continue
        if line.startswith("CONECT") and gone.intersection(_conect_serials(line)):
            continue
        kept.append(line)
    atom_rows = [i for i, line in enumerate(kept) if line.startswith(ATOM_RECORDS)]
    xyz = np.array([[float(kept[i][c:c + 8]) for c in (30, 38, 46)] for i in atom_rows])
    centre = xyz.mean(axis=0)
    noise = np.clip(rng.normal(0.0, how.jitter, size=xyz.shape), -3 * how.jitter,
                    3 * how.jitter)
    moved = (xyz - centre) @ rotation.T + centre + shift + noise
    for i, (x, y, z) in zip(atom_rows, moved, strict=True):
        kept[i] = f"{kept[i][:30]}{x:8.3f}{y:8.3f}{z:8.3f}{kept[i][54:]}"
    return "\n".join(kept) + "\n"


def write_variant(source: Path, dest: Path, rng: np.random.Generator, how: Perturbation
                  ) -> Path:
    """Write the seeded variant of ``source`` to ``dest``."""
    dest.write_text(perturbed_pdb(source.read_text(), rng, how))
    return dest
