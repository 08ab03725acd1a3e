"""XDrawChem getters: the structures and pictures the agent saved, read back on the host.

Imported by :func:`sciagent_gym.tools.load_tool_getters` as
``sciagent_gym.envs.xdrawchem.getters``. XDrawChem has no state channel (see the adapter), so
tasks are judged on the files the agent saves: MDL molfiles (``.mol``, V2000), Chemical Markup
Language (``.cml``) and XDrawChem's own drawings (``.xdc``, which also hold reaction arrows).

Each file is parsed here in pure Python with size limits into atoms (element, charge), bonds
(order) and, for a drawing, its molecules and arrows. XDrawChem writes valences into its
molfiles that turn every CH into a radical for other readers, and stores a label typed with
its Text tool as a rich-text (HTML) fragment inside ``.xdc`` (not well-formed XML): so the
parsers keep only what a structure means (elements, charges, bond orders) and the implicit
hydrogens are recomputed. The cleaned structure is written as a plain molfile and handed to
Open Babel (``obabel``) in a throwaway sandbox (:func:`sciagent_gym.evaluation.isolated.
run_sandboxed`: no network, an unprivileged uid, the file shown read-only), which gives its
canonical SMILES, formula and weight. A missing, oversized or malformed file raises
GetterError, which the evaluator turns into a failed criterion. The parsers are
``formats.py``.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from sciagent_gym.envs.xdrawchem.formats import ELEMENTS, Mol, read_drawing

from sciagent_gym.sdk import GetterError, existing_file, pick_key, register

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState

INSIDE_MOL = "/home/user/in/structure.sdf"
ZERO_XYZ = f"{0.0:10.4f}" * 3


def clean_molfile(mol: Mol) -> str:
    """A plain V2000 record of ``mol``: elements, charges and bond orders only, so the reader
    recomputes the implicit hydrogens. Coordinates are left out (all zero): a drawing's
    geometry would make Open Babel read cis/trans stereo into double bonds that the tasks
    do not ask about (and agent-written numbers could break the fixed columns)."""
    lines = ["", "  sciagent", "",
             f"{len(mol.elements):3d}{len(mol.bonds):3d}  0  0  0  0  0  0  0  0999 V2000"]
    for el in mol.elements:
        lines.append(f"{ZERO_XYZ} {el:<3} 0  0  0  0  0  0  0  0  0  0  0  0")
    for a, b, order in mol.bonds:
        lines.append(f"{a + 1:3d}{b + 1:3d}{order:3d}  0  0  0  0")
    charged = [(i + 1, c) for i, c in enumerate(mol.charges) if c]
    for k in range(0, len(charged), 8):
        chunk = charged[k:k + 8]
        lines.append(f"M  CHG{len(chunk):3d}" + "".join(f"{i:4d}{c:4d}" for i, c in chunk))
    lines.append("M  END")
    return "\n".join(lines) + "\n"


_CACHE: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()


def babel_props(mols: list[Mol], label: str, timeout: float = 60.0) -> list[dict[str, Any]]:
    """Canonical SMILES, formula and weight of each molecule, by Open Babel in a sandbox."""
    from sciagent_gym.sdk import SandboxError, run_sandboxed

    if not mols:
        return []
    sdf = "$$$$\n".join(clean_molfile(m) for m in mols) + "$$$$\n"
    key = hashlib.sha256(sdf.encode()).hexdigest()
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    marker = secrets.token_hex(8)
    with tempfile.TemporaryDirectory(prefix="sciagent-xdc-") as tmp:
        src = Path(tmp) / "structure.sdf"
        src.write_text(sdf)
        try:
            res = run_sandboxed(["obabel", "-isdf", INSIDE_MOL, "-ocan", "--append",
                                 "formula MW", "--title", marker], files={INSIDE_MOL: src},
                                timeout=timeout, max_output=1 << 20)
        except (SandboxError, OSError) as exc:
            raise GetterError(f"{label}: Open Babel did not run: {exc}") from None
    if res.timed_out:
        raise GetterError(f"{label}: Open Babel did not finish within {timeout:g} s")
    out = []
    for line in res.output.splitlines():
        smiles, sep, rest = line.partition("\t")
        parts = rest.split()
        if not sep or len(parts) < 3 or parts[0] != marker:
            continue
        try:
            mw = round(float(parts[2]), 3)
        except ValueError:
            continue
        out.append({"can": smiles.strip(), "formula": parts[1], "mw": mw})
    if len(out) != len(mols):
        raise GetterError(f"{label}: Open Babel read {len(out)} of {len(mols)} molecules "
                          f"(exit {res.returncode})")
    _CACHE[key] = out
    while len(_CACHE) > 64:
        _CACHE.popitem(last=False)
    return out


def _merged(mols: list[Mol]) -> Mol:
    """All molecules of a file as one (a molfile of two fragments is one record)."""
    out = Mol()
    for m in mols:
        base = len(out.elements)
        out.elements += m.elements
        out.charges += m.charges
        out.xy += m.xy
        out.bonds += [(a + base, b + base, o) for a, b, o in m.bonds]
    return out


@register("xdc_structure")
def xdc_structure(state: FinalState, path: str, key: str | None = None) -> Any:
    """A saved structure file (.mol/.sdf, .cml, .xdc) as Open Babel reads its cleaned atoms
    and bonds: ``can`` (canonical SMILES of everything in the file, fragments joined by
    "."), ``formula`` (Hill), ``mw``, ``n_atoms`` (heavy atoms as drawn), ``n_molecules``,
    ``n_arrows``."""
    existing_file(state, path)
    drawing = read_drawing(state, path)
    whole = _merged(drawing.molecules)
    n_atoms = sum(1 for el in whole.elements if el != "H")
    if not whole.elements:
        value = {"can": "", "formula": "", "mw": 0.0, "n_atoms": 0, "n_molecules": 0,
                 "n_arrows": len(drawing.arrows)}
    else:
        props = babel_props([whole], path)[0]
        value = {**props, "n_atoms": n_atoms, "n_molecules": len(drawing.molecules),
                 "n_arrows": len(drawing.arrows)}
    return pick_key(path, value, key)


@register("xdc_scheme")
def xdc_scheme(state: FinalState, path: str, key: str | None = None) -> Any:
    """A reaction scheme in an XDrawChem drawing: its molecules ordered left to right
    (``molecules``: canonical SMILES), its arrows, and ``reactants``/``products``: the
    canonical SMILES of the molecules left and right of the first arrow (by atom centre, on
    the arrow's side of its start and end), each list sorted; ``arrow_points_right`` says the
    arrow runs left to right; ``texts``: the drawing's free texts, blanks removed."""
    existing_file(state, path)
    drawing = read_drawing(state, path)
    if not drawing.molecules:
        raise GetterError(f"{path}: the drawing holds no molecule")
    props = babel_props(drawing.molecules, path)
    order = sorted(range(len(drawing.molecules)), key=lambda i: drawing.molecules[i].center())
    value: dict[str, Any] = {"molecules": [props[i]["can"] for i in order],
                             "n_molecules": len(order), "n_arrows": len(drawing.arrows),
                             "reactants": [], "products": [], "arrow_points_right": False,
                             "texts": [re.sub(r"\s+", "", t) for t in drawing.texts]}
    if drawing.arrows:
        x1, _, x2, _ = drawing.arrows[0]
        lo, hi = min(x1, x2), max(x1, x2)
        value["arrow_points_right"] = x2 > x1
        for i in order:
            cx = drawing.molecules[i].center()[0]
            if cx < lo:
                value["reactants"].append(props[i]["can"])
            elif cx > hi:
                value["products"].append(props[i]["can"])
        value["reactants"].sort()
        value["products"].sort()
    return pick_key(path, value, key)


_FORMULA = re.compile(r"^(?:[A-Z][a-z]?\d*)+$")


@register("xdc_answer_formula")
def answer_formula(state: FinalState) -> str:
    """The molecular formula the answer states, in Hill order (C, H, then the others
    alphabetically), whatever order it was written in ("C6H5OBr" -> "C6H5BrO")."""
    text = (state.answer or "").strip()
    found = [t for t in re.findall(r"[A-Za-z0-9]+", text) if _FORMULA.match(t)
             and re.search(r"\d|[A-Z].*[A-Z]", t)]
    if len(found) != 1:
        raise GetterError(f"the answer does not state one molecular formula: {text[:60]!r}")
    counts: dict[str, int] = {}
    for el, n in re.findall(r"([A-Z][a-z]?)(\d*)", found[0]):
        if el not in ELEMENTS:
            raise GetterError(f"{el!r} in the answer is not an element")
        counts[el] = counts.get(el, 0) + (int(n) if n else 1)
    keys = (["C", "H"] if "C" in counts else []) + sorted(
        k for k in counts if not ("C" in counts and k in ("C", "H")))
    return "".join(f"{k}{counts[k] if counts[k] != 1 else ''}" for k in keys)


@register("xdc_screen_number")
def screen_number(state: FinalState, pattern: str, region: list[int] | None = None,
                  psm: int = 6, scale: float = 2) -> float:
    """The number that ``pattern``'s first group captures in the OCR text of the final
    screenshot (e.g. ``MW = ([0-9.]+)`` on XDrawChem's Molecule Info window); a decimal
    comma reads as a point."""
    from sciagent_gym.sdk import screen_text

    if not isinstance(pattern, str) or not pattern or len(pattern) > 200:
        raise GetterError("pattern must be a regular expression of at most 200 characters")
    text = screen_text(state, region=region, psm=psm, scale=scale)
    m = re.search(pattern, text)
    if m is None:
        raise GetterError(f"the screen shows no text matching {pattern!r}")
    try:
        return float((m.group(1) if m.groups() else m.group(0)).replace(",", "."))
    except ValueError:
        raise GetterError(f"{m.group(0)[:30]!r} on screen is not a number") from None


@register("xdc_picture")
def xdc_picture(state: FinalState, path: str, ref_width: float, ref_height: float,
                labels: list[str] | None = None) -> float:
    """How well a PNG exported with File > Save picture... fits the expected drawing, 0..1.

    XDrawChem crops the picture to the drawing: white paper, dark line work and labels, about
    18 x 15 px wider and taller than the atoms' extent (``ref_width`` x ``ref_height`` page
    px). The score is 1 minus the relative error of the width/height ratio, and 0 when the
    image is smaller than 40 x 40 px, not mostly white, without line work (under 0.3 % dark
    pixels) or over 25 % dark. ``labels``: texts whose count of dark blobs must be seen (not
    used yet; OCR of 9 px labels is unreliable)."""
    from sciagent_gym.sdk import load_image

    img = load_image(existing_file(state, path), path).array
    if img.ndim == 3 and img.shape[-1] in (3, 4):
        gray = img[..., :3].astype(float).mean(axis=-1)
    elif img.ndim == 2:
        gray = img.astype(float)
    else:
        raise GetterError(f"{path}: not a single RGB or grey picture")
    if img.dtype != np.uint8:
        gray = 255.0 * gray / max(float(gray.max()), 1.0)
    h, w = gray.shape
    if w < 40 or h < 40:
        return 0.0
    dark = float((gray < 128).mean())
    if float((gray > 200).mean()) < 0.6 or not 0.003 <= dark <= 0.25:
        return 0.0
    expected = (float(ref_width) + 18.0) / (float(ref_height) + 15.0)
    return max(0.0, 1.0 - abs(w / h - expected) / expected)
