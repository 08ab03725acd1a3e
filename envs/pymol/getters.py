"""PyMOL-specific getters: PDB files, numbers written to text files and saved sessions.

Imported by :func:`sciagent_gym.tools.load_tool_getters` as ``sciagent_gym.envs.pymol.getters``.
Every failure on a missing or malformed file is a GetterError (a failed criterion).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sciagent_gym.evaluation import GetterError, register
from sciagent_gym.evaluation.getters._io import (
    decode_text,
    existing_file,
    looks_binary,
    pick_key,
    read_bytes,
)

if TYPE_CHECKING:
    from sciagent_gym.evaluation import FinalState

_MAX_TEXT = 64 * 1024 * 1024
WATERS = {"HOH", "WAT", "H2O", "DOD", "SOL", "TIP3"}


def parse_pdb(text: str, label: str = "pdb") -> dict[str, Any]:
    """Summary of the ATOM/HETATM records of a PDB file (first model only).

    Keys: atoms, chains (sorted, "" for blank), residues (distinct chain+resi+icode), waters
    (water atoms), hetero (HETATM atoms other than water), resn (sorted residue names),
    chain_atoms {chain: atoms}.
    """
    atoms, waters, hetero = 0, 0, 0
    chains: dict[str, int] = {}
    residues, resn = set(), set()
    for line in text.splitlines():
        if line.startswith("ENDMDL"):
            break
        if not line.startswith(("ATOM  ", "HETATM")):
            continue
        if len(line) < 27:
            raise GetterError(f"{label}: malformed atom record: {line[:40]!r}")
        name3, chain, resi = line[17:20].strip(), line[21:22].strip(), line[22:27].strip()
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
            "waters": waters, "hetero": hetero, "resn": sorted(resn), "chain_atoms": chains}


@register("pdb_summary")
def pdb_summary(state: FinalState, path: str, key: str | None = None) -> Any:
    """A saved PDB file's :func:`parse_pdb` summary, or one key of it."""
    data = read_bytes(state, path, _MAX_TEXT)
    if looks_binary(data):
        raise GetterError(f"{path}: binary data, not a PDB text file")
    return pick_key(path, parse_pdb(decode_text(data), path), key)


SESSION_CODE = """
import sys
try:
    cmd.load(sys.argv[1], format="pse")
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
    """A saved PyMOL session (``.pse``) as PyMOL reads it back (headless, outside the sandbox).

    Keys: objects (names), atoms / sticks / cartoon / lines ({object: atom count}), selections
    ({name: atoms}), background (RGB).
    """
    from sciagent_gym.envs.pymol.data import GoldError, run_headless_file

    p = existing_file(state, path)
    head = read_bytes(state, path, 512 * 1024 * 1024)[:64]
    if not head:
        raise GetterError(f"{path}: empty file")
    try:
        summary = run_headless_file(SESSION_CODE, str(p))
    except GoldError as exc:
        raise GetterError(f"{path}: PyMOL could not read it: {exc}") from None
    if not isinstance(summary, dict):
        raise GetterError(f"{path}: PyMOL gave no summary")
    if "error" in summary:
        raise GetterError(f"{path}: not a PyMOL session: {summary['error']}")
    return pick_key(path, json.loads(json.dumps(summary)), key)


@register("image_corner_rgb")
def image_corner_rgb(state: FinalState, path: str) -> list[int]:
    """The top-left pixel of a saved image as [R, G, B] (0-255): the background of a figure."""
    p = existing_file(state, path)
    try:
        from PIL import Image

        with Image.open(p) as img:
            pixel = img.convert("RGB").getpixel((0, 0))
    except Exception as exc:  # PIL raises anything on junk input
        raise GetterError(f"{path}: cannot read image: {type(exc).__name__}: {exc}") from None
    return [int(v) for v in pixel]
