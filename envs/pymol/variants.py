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
  atom, residue and water counts differ per seed;
- optionally (a task's own choice, see :class:`Perturbation`): more of a named chain's
  C-terminal tail left unmodelled (``tails``), a smooth distortion of each polymer chain of its
  own seeded amplitude with both termini swung about their hinges (``flex``: independently
  refined copies of one subunit, or a model, differ by such shifts, not by white noise), and
  the ligand ``ligand`` placed in a seeded pose near its own (``ligand_shift`` Å,
  ``ligand_turn`` degrees: another docked pose).

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
    #: (chain, n): 0..n more residues cut from that chain's C-terminal end.
    tails: tuple[tuple[str, int], ...] = ()
    #: RMS amplitude range (Å) of each polymer chain's smooth distortion, drawn log-uniformly
    #: per chain; (0, 0): none.
    flex: tuple[float, float] = (0.0, 0.0)
    #: residue name of a ligand placed in a seeded pose: moved by up to ``ligand_shift`` Å and
    #: turned by up to ``ligand_turn`` degrees about its own centre.
    ligand: str = ""
    ligand_shift: float = 0.0
    ligand_turn: float = 0.0

    @property
    def extra(self) -> bool:
        """Whether any of the task-specific departures (tails, flex, ligand) is asked for."""
        return bool(self.tails) or self.flex[1] > 0 or bool(self.ligand)


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


def _tail_residues(lines: list[str], tails: tuple[tuple[str, int], ...],
                   rng: np.random.Generator) -> set[tuple[str, str, str]]:
    """Residues of the C-terminal tails left unmodelled: 0..n from the end of each named
    chain (drawn in ``tails`` order)."""
    cut: set[tuple[str, str, str]] = set()
    for name, most in tails:
        residues: list[tuple[str, str, str]] = []
        for line in lines:
            if line.startswith("ATOM  ") and line[21:22] == name:
                key = _residue_key(line)
                if not residues or residues[-1] != key:
                    residues.append(key)
        n = int(rng.integers(0, most + 1))
        cut.update(residues[len(residues) - n:] if n else [])
    return cut


def axis_rotation(axis: np.ndarray, degrees: float) -> np.ndarray:
    """The rotation by ``degrees`` about ``axis`` (Rodrigues)."""
    x, y, z = axis / np.linalg.norm(axis)
    k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    t = np.radians(degrees)
    return np.eye(3) + np.sin(t) * k + (1 - np.cos(t)) * k @ k


def smooth_field(xyz: np.ndarray, rms: float, rng: np.random.Generator, modes: int = 6,
                 wavelength: tuple[float, float] = (30.0, 70.0), bumps: int = 2,
                 radius: float = 10.0) -> np.ndarray:
    """A smooth displacement of the points ``xyz``: a sum of ``modes`` plane waves of random
    direction, polarisation, phase and wavelength, scaled to an RMS of ``rms`` Å, plus
    ``bumps`` local shifts of 2-3 x ``rms`` around random atoms (Gaussian envelope of
    ``radius`` Å: a loop or a terminus that moved more than the rest). Neighbouring atoms
    move together, so bond lengths change little."""
    field = np.zeros_like(xyz)
    for _ in range(modes):
        k = rng.normal(size=3)
        k *= 2 * np.pi / (np.linalg.norm(k) * rng.uniform(*wavelength))
        pol = rng.normal(size=3)
        field += np.outer(np.sin(xyz @ k + rng.uniform(0, 2 * np.pi)), pol)
    size = float(np.sqrt((field ** 2).sum(axis=1).mean()))
    field = field * (rms / size) if size > 0 else field
    for _ in range(bumps):
        centre = xyz[int(rng.integers(len(xyz)))]
        step = rng.normal(size=3)
        step *= rms * rng.uniform(2.0, 3.0) / np.linalg.norm(step)
        weight = np.exp(-((xyz - centre) ** 2).sum(axis=1) / (2 * radius ** 2))
        field += np.outer(weight, step)
    return field


def _swing(xyz: np.ndarray, rows: np.ndarray, residues: np.ndarray, names: np.ndarray,
           order: list[str], rng: np.random.Generator, span: tuple[int, int] = (4, 8),
           degrees: tuple[float, float] = (8.0, 20.0)) -> None:
    """Swing a chain's terminal segment (the first 4-8 residues of ``order``) as a rigid body
    about its hinge, the CA of the next residue, by 8-20 degrees about a random axis: frayed
    termini differ between copies of a chain while bond lengths stay as they are."""
    n = int(rng.integers(span[0], span[1] + 1))
    axis, angle = rng.normal(size=3), float(rng.uniform(*degrees))
    if len(order) < 4 * n:
        return
    hinge = rows & (residues == order[n]) & (names == " CA ")
    segment = rows & np.isin(residues, order[:n])
    if hinge.sum() != 1:
        return
    pivot = xyz[hinge][0]
    xyz[segment] = (xyz[segment] - pivot) @ axis_rotation(axis, angle).T + pivot


def _extra_moves(kept: list[str], atom_rows: list[int], xyz: np.ndarray, how: Perturbation,
                 rng: np.random.Generator) -> np.ndarray:
    """The task-specific departures of :class:`Perturbation` applied to ``xyz`` (the
    source frame, before placement)."""
    xyz = xyz.copy()
    chains = np.array([kept[i][21:22] for i in atom_rows])
    polymer = np.array([kept[i].startswith("ATOM  ") for i in atom_rows])
    if how.flex[1] > 0:
        lo, hi = np.log(how.flex[0]), np.log(how.flex[1])
        residues = np.array([kept[i][22:27] for i in atom_rows])
        names = np.array([kept[i][12:16] for i in atom_rows])
        for name in sorted(set(chains[polymer])):
            rows = polymer & (chains == name)
            rms = float(np.exp(rng.uniform(lo, hi)))
            xyz[rows] += smooth_field(xyz[rows], rms, rng, bumps=0)
            order = list(dict.fromkeys(residues[rows]))
            for end in (order, order[::-1]):  # N- then C-terminal segment
                _swing(xyz, rows, residues, names, end, rng)
    if how.ligand:
        rows = np.array([kept[i].startswith("HETATM") and kept[i][17:20].strip() == how.ligand
                         for i in atom_rows])
        if rows.any():
            centre = xyz[rows].mean(axis=0)
            turn = axis_rotation(rng.normal(size=3), rng.uniform(-how.ligand_turn,
                                                                 how.ligand_turn))
            step = rng.normal(size=3)
            step *= rng.uniform(0, how.ligand_shift) / np.linalg.norm(step)
            xyz[rows] = (xyz[rows] - centre) @ turn.T + centre + step
    return xyz


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
    if how.tails:
        removed |= _tail_residues([line for line in lines
                                   if not (line.startswith(ATOM_RECORDS)
                                           and _residue_key(line) in removed)], how.tails, rng)
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
    if how.extra:  # drawn after everything else: variants without them keep their bytes
        xyz = _extra_moves(kept, atom_rows, xyz, how, rng)
    moved = (xyz - centre) @ rotation.T + centre + shift + noise
    for i, (x, y, z) in zip(atom_rows, moved, strict=True):
        kept[i] = f"{kept[i][:30]}{x:8.3f}{y:8.3f}{z:8.3f}{kept[i][54:]}"
    return "\n".join(kept) + "\n"


def write_variant(source: Path, dest: Path, rng: np.random.Generator, how: Perturbation
                  ) -> Path:
    """Write the seeded variant of ``source`` to ``dest``."""
    dest.write_text(perturbed_pdb(source.read_text(), rng, how))
    return dest
