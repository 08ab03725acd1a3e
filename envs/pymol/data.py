"""Input structures for the PyMOL tasks, and the gold values derived from them.

Every generator takes ``(work_dir, rng, **args)`` and writes a seeded variant of a real
structure from the Debian ``pymol-data`` package into the task's working directory
(:func:`write_variant`: a random rigid-body placement, a small coordinate jitter and, where the
task allows, a few terminal residues trimmed and part of the ordered waters dropped), so every
seed has its own input data and its own answers. The gold values are computed from the
written file by PyMOL itself, run headless (``pymol2``, the system ``python3``) outside the
sandbox, so the selection semantics (``polymer``, ``within``, ``byres``) are PyMOL's own.
Headless results are cached per (file digest, question).
The structures are ``sources.py``, the headless runs ``headless.py``, the generators
``questions.py`` (one structure, one question) and ``workflows.py`` (multi-step tasks); this
module is the registry the adapter and the task specs name them from.
"""

from __future__ import annotations

from sciagent_gym.envs.pymol.headless import GoldError, run_headless, run_headless_file
from sciagent_gym.envs.pymol.questions import (
    ca_distance,
    chain,
    chain_alignment,
    colour,
    contacts,
    decoy,
    figure,
    residue_range,
    residue_type,
    structure,
)
from sciagent_gym.envs.pymol.workflows import pocket_workflow, superpose_workflow

#: The adapter, getters and session reader run headless PyMOL through these, from here.
__all__ = ["GENERATORS", "GoldError", "run_headless", "run_headless_file"]

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
