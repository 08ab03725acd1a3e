"""PyMOL-specific getters: PDB files, numbers written to text files and saved sessions.

Imported by :func:`sciagent_gym.tools.load_tool_getters` as ``sciagent_gym.envs.pymol.getters``.
Every failure on a missing or malformed file is a GetterError (a failed criterion).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sciagent_gym.envs.pymol.session import MAX_SESSION_BYTES, SESSION_LOADER

from sciagent_gym.sdk import (
    MAX_TEXT_BYTES,
    GetterError,
    check_lines,
    check_size,
    decode_text,
    existing_file,
    file_size,
    looks_binary,
    pick_key,
    read_bytes,
    register,
)

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState

WATERS = {"HOH", "WAT", "H2O", "DOD", "SOL", "TIP3"}


def parse_pdb(text: str, label: str = "pdb") -> dict[str, Any]:
    """Summary of the ATOM/HETATM records of a PDB file (first model only).

    Keys: atoms, chains (sorted, "" for blank), residues (distinct chain+resi+icode), waters
    (water atoms), hetero (HETATM atoms other than water), resn (sorted residue names),
    chain_atoms {chain: atoms}, centroid ([x, y, z] of all atoms: the task's seeded
    coordinates, so a file from another structure or seed does not match).
    """
    atoms, waters, hetero = 0, 0, 0
    total = [0.0, 0.0, 0.0]
    chains: dict[str, int] = {}
    residues, resn = set(), set()
    for line in text.splitlines():
        if line.startswith("ENDMDL"):
            break
        if not line.startswith(("ATOM  ", "HETATM")):
            continue
        if len(line) < 54:
            raise GetterError(f"{label}: malformed atom record: {line[:40]!r}")
        name3, chain, resi = line[17:20].strip(), line[21:22].strip(), line[22:27].strip()
        try:
            xyz = [float(line[c:c + 8]) for c in (30, 38, 46)]
        except ValueError:
            raise GetterError(f"{label}: malformed coordinates: {line[:54]!r}") from None
        total = [t + v for t, v in zip(total, xyz, strict=True)]
        atoms += 1
        chains[chain] = chains.get(chain, 0) + 1
        residues.add((chain, resi))
        resn.add(name3)
        if name3 in WATERS:
            waters += 1
        elif line.startswith("HETATM"):
            hetero += 1
    if atoms == 0:
        raise GetterError(f"{label}: no ATOM/HETATM records (not a PDB file?)")
    return {"atoms": atoms, "chains": sorted(chains), "residues": len(residues),
            "waters": waters, "hetero": hetero, "resn": sorted(resn), "chain_atoms": chains,
            "centroid": [round(t / atoms, 4) for t in total]}


@register("pdb_summary")
def pdb_summary(state: FinalState, path: str, key: str | None = None) -> Any:
    """A saved PDB file's :func:`parse_pdb` summary, or one key of it."""
    data = read_bytes(state, path, MAX_TEXT_BYTES)
    if looks_binary(data):
        raise GetterError(f"{path}: binary data, not a PDB text file")
    text = decode_text(data)
    check_lines(text, path)
    return pick_key(path, parse_pdb(text, path), key)


SESSION_CODE = SESSION_LOADER + """
import sys
try:
    load_session(sys.argv[1], cmd)
except Exception as exc:
    out = {"error": "%s: %s" % (type(exc).__name__, exc)}
else:
    objs = cmd.get_names("objects")
    mols = [o for o in objs if cmd.get_type(o) == "object:molecule"]
    bg = cmd.get_setting_tuple("bg_rgb")[1]
    bg = bg[0] if isinstance(bg, (list, tuple)) and len(bg) == 1 else bg
    out = {"objects": objs,
           "atoms": {o: cmd.count_atoms("%" + o) for o in mols},
           "sticks": {o: cmd.count_atoms("%%%s and rep sticks" % o) for o in mols},
           "cartoon": {o: cmd.count_atoms("%%%s and rep cartoon" % o) for o in mols},
           "lines": {o: cmd.count_atoms("%%%s and rep lines" % o) for o in mols},
           "selections": {s: cmd.count_atoms(s) for s in cmd.get_names("selections")},
           "background": [round(float(v), 4) for v in
                          (cmd.get_color_tuple(bg) if isinstance(bg, int) else bg)]}
"""


@register("pymol_session")
def pymol_session(state: FinalState, path: str, key: str | None = None) -> Any:
    """A saved PyMOL session (``.pse``) as PyMOL reads it back (headless, in a throwaway
    sandbox, through the restricted unpickler of :data:`SESSION_LOADER`).

    Keys: objects (names), atoms / sticks / cartoon / lines ({object: atom count}), selections
    ({name: atoms}), background (RGB).
    """
    from sciagent_gym.envs.pymol.data import GoldError, run_headless_file

    p = existing_file(state, path)
    size = file_size(p, path)
    if size == 0:
        raise GetterError(f"{path}: empty file")
    check_size(path, size, MAX_SESSION_BYTES)
    try:
        summary = run_headless_file(SESSION_CODE, str(p))
    except GoldError as exc:
        raise GetterError(f"{path}: PyMOL could not read it: {exc}") from None
    if not isinstance(summary, dict):
        raise GetterError(f"{path}: PyMOL gave no summary")
    if "error" in summary:
        raise GetterError(f"{path}: not a PyMOL session: {summary['error']}")
    return pick_key(path, json.loads(json.dumps(summary)), key)


def _rgb(img: Any) -> Any:
    """An (H, W, 3) uint8 view of a loaded image (grey, RGBA, 16-bit and stacks refused)."""
    import numpy as np

    planes = img.planes
    if planes.shape[0] != 1 or planes.dtype != np.uint8 or planes.shape[-1] not in (1, 3, 4):
        raise GetterError(f"not an 8-bit picture ({img.describe()})")
    rgb = planes[0]
    return np.repeat(rgb, 3, axis=2) if rgb.shape[-1] == 1 else rgb[..., :3]


@register("pymol_figure")
def pymol_figure(state: FinalState, path: str, reference_path: str,
                 key: str | None = None) -> Any:
    """A saved figure compared with PyMOL's own render of it (an absolute host path, in the
    task's gold directory): :func:`sciagent_gym.envs.pymol.figures.compare`.

    Keys: width, height, background ([R, G, B] of the border), molecule_fraction,
    molecule_iou (the molecule's silhouette against the gold's), ssim.
    """
    from pathlib import Path

    from sciagent_gym.envs.pymol.figures import compare

    from sciagent_gym.sdk import load_image

    img = load_image(existing_file(state, path), path)
    ref_path = Path(str(reference_path))
    if not ref_path.is_absolute() or not ref_path.is_file():
        raise GetterError(f"gold render {ref_path}: not found (a host path is expected)")
    gold = load_image(ref_path, "gold render")
    return pick_key(path, compare(_rgb(img), _rgb(gold)), key)
