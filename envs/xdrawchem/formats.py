"""The structure files XDrawChem saves, parsed in pure Python with size limits: MDL molfiles
(``.mol``, V2000), Chemical Markup Language (``.cml``) and XDrawChem's own drawings (``.xdc``,
which also hold reaction arrows), into atoms (element, charge), bonds (order) and, for a
drawing, its molecules and arrows (:func:`read_drawing`).

XDrawChem writes valences into its molfiles that turn every CH into a radical for other
readers, and stores a label typed with its Text tool as a rich-text (HTML) fragment inside
``.xdc`` (not well-formed XML): so the parsers keep only what a structure means (elements,
charges, bond orders). A missing, oversized or malformed file raises GetterError.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sciagent_gym.sdk import GetterError, decode_text, looks_binary, read_bytes

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState

MAX_BYTES = 4 * 1024 * 1024
MAX_ATOMS = 2000
MAX_MOLECULES = 50
MAX_ARROWS = 50

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
