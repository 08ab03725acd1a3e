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
GetterError, which the evaluator turns into a failed criterion.
"""

from __future__ import annotations

import hashlib
import html
import re
import secrets
import tempfile
import xml.etree.ElementTree as ET
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sciagent_gym.sdk import (
    GetterError,
    decode_text,
    existing_file,
    looks_binary,
    pick_key,
    read_bytes,
    register,
)

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState

MAX_BYTES = 4 * 1024 * 1024
MAX_ATOMS = 2000
MAX_MOLECULES = 50
MAX_ARROWS = 50
INSIDE_MOL = "/home/user/in/structure.sdf"
ZERO_XYZ = f"{0.0:10.4f}" * 3

ELEMENTS = set("H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Ti V Cr Mn Fe Co Ni Cu Zn "
               "Ga Ge As Se Br Kr Rb Sr Ag Sn Sb Te I Xe Cs Ba Pt Au Hg Pb Bi".split())
#: A label as chemists write it on a drawing: an element with its hydrogens on either side
#: and an optional charge ("OH", "NH2", "H2N", "CH3", "Cl", "N+", "O-").
_LABEL = re.compile(r"^(?:H\d*)?([A-Z][a-z]?)(?:H\d*)?([+-])?$")


@dataclass
class Mol:
    """One molecule: elements, formal charges, bonds (0-based atom pairs with order) and the
    centre of its atoms on the page (x, y; for drawings)."""

    elements: list[str] = field(default_factory=list)
    charges: list[int] = field(default_factory=list)
    bonds: list[tuple[int, int, int]] = field(default_factory=list)
    xy: list[tuple[float, float]] = field(default_factory=list)

    def center(self) -> tuple[float, float]:
        if not self.xy:
            return (0.0, 0.0)
        return (sum(p[0] for p in self.xy) / len(self.xy),
                sum(p[1] for p in self.xy) / len(self.xy))


@dataclass
class Drawing:
    """What a saved file holds: its molecules and (drawings only) arrows [x1, y1, x2, y2]
    and free texts (plain text of each text object)."""

    molecules: list[Mol]
    arrows: list[list[float]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)


def _element(label: str, where: str) -> tuple[str, int]:
    m = _LABEL.match(label.strip())
    if not m or m.group(1) not in ELEMENTS:
        raise GetterError(f"{where}: atom label {label.strip()[:20]!r} is not an element")
    charge = {"+": 1, "-": -1}.get(m.group(2) or "", 0)
    return m.group(1), charge


def _order(value: str, where: str) -> int:
    try:
        order = int(float(value))
    except ValueError:
        raise GetterError(f"{where}: bond order {value[:10]!r} is not a number") from None
    if order not in (1, 2, 3):
        # XDrawChem writes stereo and dashed bonds as 5/7 and aromatic as 4: count them single
        order = {4: 1, 5: 1, 7: 1}.get(order, 0)
        if not order:
            raise GetterError(f"{where}: unknown bond order {value[:10]!r}")
    return order


def _check_size(mol: Mol, where: str) -> Mol:
    n = len(mol.elements)
    if n > MAX_ATOMS:
        raise GetterError(f"{where}: more than {MAX_ATOMS} atoms")
    for a, b, _ in mol.bonds:
        if not (0 <= a < n and 0 <= b < n) or a == b:
            raise GetterError(f"{where}: a bond joins atoms that are not there")
    return mol


# -- MDL molfile ------------------------------------------------------------------------------

_CHG = {1: 3, 2: 2, 3: 1, 5: -1, 6: -2, 7: -3}


def parse_molfile(text: str, where: str) -> Drawing:
    """Every record of a V2000 molfile/SD file."""
    records = [r for r in re.split(r"^\$\$\$\$\s*$", text, flags=re.M) if r.strip()]
    if not records:
        raise GetterError(f"{where}: empty molfile")
    if len(records) > MAX_MOLECULES:
        raise GetterError(f"{where}: more than {MAX_MOLECULES} records")
    mols = []
    for rec in records:
        lines = rec.strip("\n").splitlines()
        # the counts line is the 4th of a record; SD records may start with a blank title
        idx = next((i for i, ln in enumerate(lines[:6]) if "V2000" in ln), None)
        if idx is None:
            raise GetterError(f"{where}: not a V2000 molfile (no counts line)")
        try:
            n_atoms, n_bonds = int(lines[idx][0:3]), int(lines[idx][3:6])
        except ValueError:
            raise GetterError(f"{where}: malformed counts line") from None
        if not 0 <= n_atoms <= MAX_ATOMS or not 0 <= n_bonds <= 4 * MAX_ATOMS:
            raise GetterError(f"{where}: atom/bond counts out of range")
        if len(lines) < idx + 1 + n_atoms + n_bonds:
            raise GetterError(f"{where}: fewer lines than the counts say")
        mol = Mol()
        for ln in lines[idx + 1:idx + 1 + n_atoms]:
            try:
                x, y = float(ln[0:10]), float(ln[10:20])
                sym = ln[31:34].strip()
                chg = _CHG.get(int(ln[36:39] or 0), 0)
            except ValueError:
                raise GetterError(f"{where}: malformed atom line") from None
            if sym not in ELEMENTS:
                raise GetterError(f"{where}: {sym[:5]!r} is not an element")
            mol.elements.append(sym)
            mol.charges.append(chg)
            mol.xy.append((x, y))
        for ln in lines[idx + 1 + n_atoms:idx + 1 + n_atoms + n_bonds]:
            try:
                a, b = int(ln[0:3]) - 1, int(ln[3:6]) - 1
            except ValueError:
                raise GetterError(f"{where}: malformed bond line") from None
            mol.bonds.append((a, b, _order(ln[6:9].strip() or "0", where)))
        for ln in lines[idx + 1 + n_atoms + n_bonds:]:
            if ln.startswith("M  CHG"):
                parts = ln.split()[3:]
                for i in range(0, len(parts) - 1, 2):
                    try:
                        atom, chg = int(parts[i]) - 1, int(parts[i + 1])
                    except ValueError:
                        raise GetterError(f"{where}: malformed M  CHG line") from None
                    if 0 <= atom < len(mol.charges):
                        mol.charges[atom] = chg
        mols.append(_check_size(mol, where))
    return Drawing(mols)


# -- CML --------------------------------------------------------------------------------------

def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def parse_cml(text: str, where: str) -> Drawing:
    if re.search(r"<!DOCTYPE|<!ENTITY", text, re.I):
        raise GetterError(f"{where}: CML with a DTD or entities is refused")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise GetterError(f"{where}: not well-formed XML: {exc}") from None
    mols = []
    for node in root.iter():
        if _local(node.tag) != "molecule":
            continue
        mol, ids = Mol(), {}
        for atom in node.iter():
            if _local(atom.tag) != "atom":
                continue
            sym = atom.get("elementType", "")
            if sym not in ELEMENTS:
                raise GetterError(f"{where}: elementType {sym[:5]!r} is not an element")
            ids[atom.get("id", "")] = len(mol.elements)
            mol.elements.append(sym)
            try:
                mol.charges.append(int(atom.get("formalCharge", "0")))
                mol.xy.append((float(atom.get("x2", "0")), float(atom.get("y2", "0"))))
            except ValueError:
                raise GetterError(f"{where}: malformed atom attributes") from None
            if len(mol.elements) > MAX_ATOMS:
                raise GetterError(f"{where}: more than {MAX_ATOMS} atoms")
        for bond in node.iter():
            if _local(bond.tag) != "bond":
                continue
            refs = bond.get("atomRefs2", "").split()
            if len(refs) != 2 or refs[0] not in ids or refs[1] not in ids:
                raise GetterError(f"{where}: a bond refers to atoms that are not there")
            order = {"S": "1", "D": "2", "T": "3", "A": "4"}.get(bond.get("order", "1"),
                                                               bond.get("order", "1"))
            mol.bonds.append((ids[refs[0]], ids[refs[1]], _order(order, where)))
        if mol.elements:
            mols.append(_check_size(mol, where))
    if not mols:
        raise GetterError(f"{where}: no molecule with atoms in the CML file")
    return Drawing(mols[:MAX_MOLECULES])


# -- XDrawChem drawing (.xdc) -------------------------------------------------------------------

_TAG = r"<{0}>(.*?)</{0}>"


def _field(block: str, tag: str, where: str) -> str:
    m = re.search(_TAG.format(tag), block, re.S)
    if m is None:
        raise GetterError(f"{where}: an object without <{tag}>")
    return m.group(1)


def _plain(label: str) -> str:
    """The text of a label, which the Text tool stores as a rich-text HTML document."""
    if "<" not in label:
        return html.unescape(label)
    body = re.sub(r"<(style|head)[^>]*>.*?</\1>", "", label, flags=re.S | re.I)
    body = re.sub(r"<!DOCTYPE[^>]*>", "", body, flags=re.I)
    return html.unescape(re.sub(r"<[^>]+>", "", body)).strip()


def _numbers(text: str, n: int, where: str) -> list[float]:
    try:
        values = [float(v) for v in text.split()]
    except ValueError:
        raise GetterError(f"{where}: coordinates are not numbers") from None
    if len(values) != n:
        raise GetterError(f"{where}: expected {n} coordinates")
    return values


def parse_xdc(text: str, where: str) -> Drawing:
    if "<xdrawchem" not in text[:1000]:
        raise GetterError(f"{where}: not an XDrawChem drawing (no <xdrawchem> element)")
    mols, arrows = [], []
    for m in re.finditer(r"<(molecule|arrow)\b[^>]*>(.*?)</\1>", text, re.S):
        kind, block = m.group(1), m.group(2)
        if kind == "arrow":
            if len(arrows) >= MAX_ARROWS:
                raise GetterError(f"{where}: more than {MAX_ARROWS} arrows")
            arrows.append(_numbers(_field(block, "Start", where), 2, where)
                          + _numbers(_field(block, "End", where), 2, where))
            continue
        if len(mols) >= MAX_MOLECULES:
            raise GetterError(f"{where}: more than {MAX_MOLECULES} molecules")
        mol, ids = Mol(), {}
        for a in re.finditer(r'<atom id="([^"]{1,40})">(.*?)</atom>', block, re.S):
            sym, chg = _element(_plain(_field(a.group(2), "element", where)), where)
            x, y = _numbers(_field(a.group(2), "coordinate2", where), 2, where)
            ids[a.group(1)] = len(mol.elements)
            mol.elements.append(sym)
            mol.charges.append(chg)
            mol.xy.append((x, y))
            if len(mol.elements) > MAX_ATOMS:
                raise GetterError(f"{where}: more than {MAX_ATOMS} atoms")
        for b in re.finditer(r"<bond\b[^>]*>(.*?)</bond>", block, re.S):
            s, e = _field(b.group(1), "Start", where), _field(b.group(1), "End", where)
            if s not in ids or e not in ids:
                raise GetterError(f"{where}: a bond refers to atoms that are not there")
            mol.bonds.append((ids[s], ids[e], _order(_field(b.group(1), "order", where),
                                                     where)))
        if mol.elements:
            mols.append(_check_size(mol, where))
    texts = [_plain(t.group(1))[:200] for t in
             re.finditer(r"<textstring>(.*?)</textstring>", text, re.S)][:MAX_MOLECULES]
    if not mols and not arrows:
        raise GetterError(f"{where}: the drawing holds no molecule and no arrow")
    return Drawing(mols, arrows, texts)


# -- reading a saved file -----------------------------------------------------------------------

def read_drawing(state: FinalState, path: str) -> Drawing:
    data = read_bytes(state, path, MAX_BYTES)
    if not data.strip():
        raise GetterError(f"{path}: empty file")
    if looks_binary(data):
        raise GetterError(f"{path}: binary data, not a structure file")
    text = decode_text(data)
    suffix = Path(path).suffix.lower()
    if suffix in (".mol", ".sdf", ".mdl", ".sd"):
        return parse_molfile(text, path)
    if suffix == ".cml":
        return parse_cml(text, path)
    if suffix == ".xdc":
        return parse_xdc(text, path)
    raise GetterError(f"{path}: unknown structure format {suffix!r}")


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
