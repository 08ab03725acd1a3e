"""Molecules for the XDrawChem tasks, and the gold values derived from them.

Every generator takes ``(work_dir, rng, **args)``, writes its input into the task's working
directory and returns gold values computed on the host from what it wrote.

The molecules are real small compounds (drugs, flavours, solvents, substituted benzenes) given
as SMILES. Open Babel (``obabel``, run here on the host on the generator's own trusted input)
lays each one out in 2D (``--gen2d``, atoms in SMILES order, Kekulé bonds), gives its formula,
molecular weight and canonical SMILES; the layout is scaled to a mean bond length of 1 and
moved so that XDrawChem, which places a molfile at page = (file + 11.667) * 25 / mean bond
length, draws it around a seeded point of the visible page. Each generator returns the screen
position of every atom (the GUI oracles click on atoms and bonds there, as an agent clicks on
what it sees), the canonical SMILES the saved structures are compared with, the formula, the
weight and the elemental composition in mass percent. Gold values never enter the sandbox.
Open Babel runs are ``babel.py``, the placement on the page ``page.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .babel import canonical, composition, mass_percent, props_of_molfile
from .page import BOND_PX, _bond_click, _gold, layout

#: Real small molecules: name -> SMILES (no stereo: XDrawChem draws 2D without wedges here).
MOLECULES = {
    "benzoic acid": "OC(=O)c1ccccc1",
    "aspirin": "CC(=O)Oc1ccccc1C(=O)O",
    "paracetamol": "CC(=O)Nc1ccc(O)cc1",
    "caffeine": "Cn1cnc2c1c(=O)n(C)c(=O)n2C",
    "vanillin": "COc1cc(C=O)ccc1O",
    "salicylic acid": "OC(=O)c1ccccc1O",
    "benzocaine": "CCOC(=O)c1ccc(N)cc1",
    "ibuprofen": "CC(C)Cc1ccc(cc1)C(C)C(=O)O",
    "phenacetin": "CCOc1ccc(NC(C)=O)cc1",
    "acetanilide": "CC(=O)Nc1ccccc1",
    "4-nitrotoluene": "Cc1ccc(cc1)[N+](=O)[O-]",
    "methyl salicylate": "COC(=O)c1ccccc1O",
    "nicotinamide": "NC(=O)c1cccnc1",
    "4-chlorophenol": "Oc1ccc(Cl)cc1",
    "2-bromopyridine": "Brc1ccccn1",
    "thymol": "Cc1ccc(C(C)C)c(O)c1",
    "cinnamaldehyde": "O=CC=Cc1ccccc1",
    "acetophenone": "CC(=O)c1ccccc1",
    "sulfanilamide": "Nc1ccc(cc1)S(N)(=O)=O",
    "lidocaine": "CCN(CC)CC(=O)Nc1c(C)cccc1C",
}


#: Scaffolds of a seeded compound library: real drugs and substituted benzenes as SMILES with
#: a ``{}`` after every bare aromatic CH, where :func:`derivative` may put a substituent.
SCAFFOLDS = {
    "acetanilide": "CC(=O)Nc1c{}c{}c{}c{}c1{}",
    "paracetamol": "CC(=O)Nc1c{}c{}c(O)c{}c1{}",
    "phenacetin": "CCOc1c{}c{}c(NC(C)=O)c{}c1{}",
    "benzocaine": "CCOC(=O)c1c{}c{}c(N)c{}c1{}",
    "benzamide": "NC(=O)c1c{}c{}c{}c{}c1{}",
    "nicotinamide": "NC(=O)c1c{}c{}c{}nc1{}",
    "phenylacetamide": "NC(=O)Cc1c{}c{}c{}c{}c1{}",
    "methyl benzoate": "COC(=O)c1c{}c{}c{}c{}c1{}",
    "acetophenone": "CC(=O)c1c{}c{}c{}c{}c1{}",
    "benzoic acid": "OC(=O)c1c{}c{}c{}c{}c1{}",
    "salicylic acid": "OC(=O)c1c{}c{}c{}c{}c1O",
    "vanillin": "COc1c{}c(C=O)c{}c{}c1O",
    "anisole": "COc1c{}c{}c{}c{}c1{}",
    "phenol": "Oc1c{}c{}c{}c{}c1{}",
    "toluene": "Cc1c{}c{}c{}c{}c1{}",
    "2-phenylethanol": "OCCc1c{}c{}c{}c{}c1{}",
}
#: Ring substituents of C, H, N and O only (XDrawChem's elemental analysis lists C, H, O, N).
SUBSTITUENTS_CHNO = ["C", "CC", "C(C)C", "OC", "OCC", "O", "N", "C(C)=O", "C(=O)OC", "NC(C)=O",
                     "C=O", "CO", "C(=O)O", "N(C)C", "C#N", "N(C)C(C)=O", "NC", "C(N)=O",
                     "OC(C)=O", "C(=O)N(C)C", "CC#N", "NC(N)=O"]
#: ... and with the other elements XDrawChem weighs (measured: Cl, Br, S).
SUBSTITUENTS = SUBSTITUENTS_CHNO + ["Cl", "Br", "SC"]
#: The analog workflow's lead compounds: a methylated ring (toluene or 2-methylpyrimidine,
#: atom 0 the methyl carbon, atom 3 a ring carbon ortho to the para group) ...
LEAD_RINGS = ["Cc1ccc({})cc1", "Cc1ncc({})cn1"]
#: ... and the group para to the methyl.
LEAD_GROUPS = ["O", "OC", "OCC", "OCCC", "OCCCC", "OCCCCC", "N", "NC", "N(C)C", "NCCC",
               "N(CC)CC", "NC(C)=O", "NC(=O)CC", "NC(=O)CCC", "C(C)=O", "C(=O)CCC", "C(=O)O",
               "C(=O)OC", "C(=O)OCC", "C(=O)OCCC", "CC", "CCC", "CCCC", "CCCCC", "C=O", "C#N",
               "CC#N", "C=C", "CC=C", "C(N)=O", "SC", "SCC", "SCCC", "OCCO", "NCCO", "OCCOC",
               "OCC(=O)O", "CCCCCC", "OCCCCCC", "NC(=O)OC", "NC(=O)OCC", "NC(N)=O", "C(=O)CCCC",
               "C(=O)OCCCC", "SCCCC", "OCCOCC", "OCC#N", "C#CC", "N(CC)CCC"]

# -- generators -------------------------------------------------------------------------------

def molecule(work: Path, rng: np.random.Generator, name: str = "", path: str = "molecule.mol",
             smiles: str = "", center: list[float] | None = None, element: str = "",
             library: str = "", **_: Any) -> dict[str, Any]:
    """One molecule (a name of :data:`MOLECULES`, a SMILES, or with ``library`` a seeded
    :func:`derivative`: ``"all"``, or ``"chno"`` for C, H, N and O compounds holding both N
    and O) as an MDL molfile drawn around page point ``center``; ``element``: the one whose
    mass percent a task asks for (``element_percent``, 0 when the molecule has none)."""
    if library:
        chno = library == "chno"
        name, smiles = derivative(rng, chno=chno, need="NO" if chno else "",
                                  most=4 if chno else 3)
    smiles = smiles or MOLECULES[name]
    text, info = layout(smiles, rng, tuple(center or (375, 330)))
    (work / path).write_text(text)
    gold = _gold(smiles, info)
    return {"name": name, "smiles": smiles, **gold,
            "element_percent": gold["percent"].get(element, 0.0)}


def derivative(rng: np.random.Generator, chno: bool = False, need: str = "",
               most: int = 3) -> tuple[str, str]:
    """A seeded member of the compound library: a scaffold of :data:`SCAFFOLDS` with 1 to
    ``most`` of its ring hydrogens replaced by substituents (``chno``: of C, H, N, O only;
    ``need``: elements the compound must hold). Returns (scaffold name, SMILES)."""
    subs = SUBSTITUENTS_CHNO if chno else SUBSTITUENTS
    names = sorted(SCAFFOLDS)
    for _ in range(200):
        name = names[int(rng.integers(len(names)))]
        template = SCAFFOLDS[name]
        slots = template.count("{}")
        k = int(rng.integers(1, min(most, slots) + 1))
        fill = [""] * slots
        for i in rng.choice(slots, size=k, replace=False):
            fill[int(i)] = f"({subs[int(rng.integers(len(subs)))]})"
        smiles = template.format(*fill)
        counts = composition(canonical(smiles)["formula"])
        if all(el in counts for el in need):
            return name, smiles
    raise RuntimeError(f"no library compound holds {need!r}")


def target(work: Path, rng: np.random.Generator, smiles: str, **_: Any) -> dict[str, Any]:
    """Gold of a molecule the agent must build (nothing is written)."""
    props = canonical(smiles)
    return {**props, "percent": mass_percent(props["formula"])}


def edit(work: Path, rng: np.random.Generator, smiles: str = "", atom: int = 0,
         relabel: str = "", grow: str = "", grow_atom: int = -1, atom2: int = -1,
         relabel2: str = "", path: str = "start.mol", center: list[float] | None = None,
         lead: str = "", **_: Any) -> dict[str, Any]:
    """A start molecule written as a molfile, and the product of editing it (atoms 0-based,
    SMILES order): ``relabel`` gives atom ``atom`` another element (``relabel2`` does so
    for ``atom2``), ``grow`` bonds a new atom of that element to ``grow_atom`` (``atom``
    when not given). The product's gold comes from the edited molfile; the atoms' screen
    positions and, for a new bond, the end point one bond length outward (away from the
    grown atom's neighbours) place the oracle's clicks. ``width_px``/``height_px``: the
    product's drawn extent (page px), ``start_width_px``/``start_height_px``: the start's.

    ``lead="para"``: the start molecule is seeded, a ring of :data:`LEAD_RINGS` with a group
    of :data:`LEAD_GROUPS` para to its methyl (atom 0 the methyl carbon, atom 3 a ring carbon
    ortho to the group), laid out so that the new bond's end stays clear of every atom."""
    base = grow_atom if grow_atom >= 0 else atom
    for _ in range(40):
        if lead:
            group = LEAD_GROUPS[int(rng.integers(len(LEAD_GROUPS)))]
            smiles = LEAD_RINGS[int(rng.integers(len(LEAD_RINGS)))].format(group)
        text, info = layout(smiles, rng, tuple(center or (375, 330)))
        scr = np.array(info["screen"], float)
        nbrs = [b if a == base else a for a, b in info["bonds"] if base in (a, b)]
        away = scr[base] - scr[nbrs].mean(axis=0) if nbrs else np.array([1.0, 0.0])
        away = away / (np.linalg.norm(away) or 1.0)
        end = scr[base] + BOND_PX * away
        clear = float(np.min(np.linalg.norm(np.delete(scr, base, axis=0) - end, axis=1)))
        if not (lead and grow) or clear >= 0.8 * BOND_PX:
            break
    else:
        raise RuntimeError("no lead compound leaves room for the new bond")
    (work / path).write_text(text)
    lines = text.splitlines()
    n_atoms, n_bonds = int(lines[3][0:3]), int(lines[3][3:6])
    for index, element in ((atom, relabel), (atom2, relabel2)):
        if element and index >= 0:
            ln = lines[4 + index]
            lines[4 + index] = ln[:31] + f"{element:<3}" + ln[34:]
    if grow:
        x, y = float(lines[4 + base][0:10]), float(lines[4 + base][10:20])
        new_atom = f"{x + 1:10.4f}{y:10.4f}{0.0:10.4f} {grow:<3} 0  0  0  0  0  0  0  0  0  0  0  0"
        new_bond = f"{base + 1:3d}{n_atoms + 1:3d}  1  0  0  0  0"
        lines = (lines[:3] + [f"{n_atoms + 1:3d}{n_bonds + 1:3d}" + lines[3][6:]]
                 + lines[4:4 + n_atoms] + [new_atom] + lines[4 + n_atoms:4 + n_atoms + n_bonds]
                 + [new_bond] + lines[4 + n_atoms + n_bonds:])
    start = props_of_molfile(text)
    prod = props_of_molfile("\n".join(lines) + "\n")
    click = _bond_click(info)
    page = [np.array(p) for p in info["screen"]] + ([end] if grow else [])
    span = np.max(page, axis=0) - np.min(page, axis=0)
    out = {"start_smiles": smiles, "start_can": start["can"], "start_formula": start["formula"],
           "start_mw": start["mw"], **prod, "percent": mass_percent(prod["formula"]),
           "atom_x": int(scr[atom][0]), "atom_y": int(scr[atom][1]),
           "grow_x": int(scr[base][0]), "grow_y": int(scr[base][1]),
           "end_x": int(round(end[0])), "end_y": int(round(end[1])),
           "click_x": click[0], "click_y": click[1], "width_px": round(float(span[0]), 1),
           "height_px": round(float(span[1]), 1), "start_width_px": info["width_px"],
           "start_height_px": info["height_px"]}
    if atom2 >= 0:
        out["atom2_x"], out["atom2_y"] = int(scr[atom2][0]), int(scr[atom2][1])
    return out


#: Where the plain hexagon tool, clicked at (840, 446), puts the ring's vertices on screen
#: (point-topped, 25.5 px to a vertex): 1 the top one (the substituent's), then clockwise.
HEXAGON = {1: (840, 420), 2: (862, 433), 3: (862, 459), 4: (840, 472), 5: (818, 459),
           6: (818, 433)}
#: Saturated six-membered rings by their ring heteroatoms: (position 3..5 -> element)
#: choices for each formula class (none, O, S, O+O, S+S, O+S), heteroatoms never next to the
#: substituted carbon: cyclohexane, oxane/thiane (3- or 4-yl), 1,3-dioxane, -dithiane and
#: -oxathiane (5-yl).
RING_CLASSES: list[list[dict[int, str]]] = [
    [{}], [{3: "O"}, {4: "O"}], [{3: "S"}, {4: "S"}], [{3: "O", 5: "O"}],
    [{3: "S", 5: "S"}], [{3: "O", 5: "S"}]]


#: Ring vertices that may carry a methyl group (every one but the substituted vertex 1), with
#: where the single-bond tool is dragged from the vertex to draw it outward.
METHYL_DRAG = {2: (900, 411), 3: (900, 481), 4: (840, 510), 5: (780, 481), 6: (780, 411)}


def ring_reactant(work: Path, rng: np.random.Generator, old: str, new: str,
                  path: str = "reactant.mol", center: list[float] | None = None,
                  methyls: int = 2, label: str = "", **_: Any) -> dict[str, Any]:
    """The starting material of a one-step substitution on a seeded saturated six-membered
    ring (a formula class of :data:`RING_CLASSES`, then one of its rings) carrying 0 to
    ``methyls`` methyl groups on seeded ring carbons: ``old`` (SMILES of the leaving group) on
    ring carbon 1, written as a molfile like :func:`molecule`. Adds the product's SMILES
    (``new`` in its place), ``hetero`` and ``methyl_at`` (ring positions), ``bond_steps``: the
    drags of the single-bond tool that draw the substituent's bond and the methyl groups
    outward from their vertices of a hexagon drawn with the hexagon tool at (840, 446), and
    ``label_step``, ``ring_steps`` and ``ring_end``: the Text-tool steps that type the
    substituent's ``label`` (the product's group, from the instruction) and relabel the ring
    heteroatoms shown in the starting material (the select tool when there are none);
    ``pic_width`` and ``pic_height``: the extent (screen px) of the scheme's atoms, arrow and
    reagent as the GUI oracle draws them, for the exported picture's aspect ratio."""
    options = RING_CLASSES[int(rng.integers(len(RING_CLASSES)))]
    hetero = options[int(rng.integers(len(options)))]
    carbons = [k for k in range(2, 7) if k not in hetero]
    k = int(rng.integers(0, min(methyls, len(carbons)) + 1))
    methyl_at = sorted(int(v) for v in rng.choice(carbons, size=k, replace=False)) if k else []

    def atom(pos: int) -> str:
        el = hetero.get(pos, "C") + ("1" if pos == 6 else "")
        return el + ("(C)" if pos in methyl_at else "")

    ring = "".join(atom(pos) for pos in range(2, 7))
    smiles = f"{old}C1{ring}"
    out = molecule(work, rng, smiles=smiles, path=path, center=center)
    # the product as the oracle draws it: hexagon, substituent bond end, methyls outward
    ring_c = np.array([840.0, 446.0])
    product = [np.array(HEXAGON[v], float) for v in HEXAGON] + [np.array([852.0, 398.0])]
    for v in methyl_at:
        out_dir = np.array(HEXAGON[v], float) - ring_c
        product.append(np.array(HEXAGON[v], float) + BOND_PX * out_dir / np.linalg.norm(out_dir))
    if 5 in hetero:
        # measured: the (undrawn) label of the lower-left ring vertex widens the exported
        # picture's box to the left, to about x = 330 on screen (seeds of three variants)
        product.append(np.array([330.0, HEXAGON[5][1]]))
    scheme = np.array([*out["screen"], [640, 446], [700, 446], [655, 416], *product], float)
    extent = scheme.max(axis=0) - scheme.min(axis=0)
    hetero_steps = [(f"pyautogui.moveTo({HEXAGON[v][0]}, {HEXAGON[v][1]})\n"
                     f"pyautogui.click({HEXAGON[v][0]}, {HEXAGON[v][1]})",
                     f"pyautogui.write('{el}')\npyautogui.press('enter')")
                    for v, el in sorted(hetero.items())]
    bonds = ["pyautogui.moveTo(840, 420)\npyautogui.dragTo(852, 376)"]
    bonds += [f"pyautogui.moveTo({HEXAGON[v][0]}, {HEXAGON[v][1]})\n"
              f"pyautogui.dragTo({METHYL_DRAG[v][0]}, {METHYL_DRAG[v][1]})" for v in methyl_at]
    # The Text tool stays on after a label (Enter ends it). A ring label's editor is opened by
    # a click at the end of one step, the pointer moved there first inside the drawing (a click
    # sent right after the Text tool button made a free text: the atom was not yet hovered),
    # and typed into in the next step (keys sent with the click went to XDrawChem's hot-key
    # handler once): ``label_step`` types the substituent's label and opens the first,
    # ``ring_steps`` labels the first and opens the second, ``ring_end`` labels the second.
    opens, labels = [h for h, _ in hetero_steps], [t for _, t in hetero_steps]
    ring_steps = "\n".join(labels[:1] + opens[1:2]) or "pyautogui.click(26, 108)"
    return {**out, "product_smiles": f"{new}C1{ring}",
            "hetero": {str(v): el for v, el in hetero.items()},
            "methyl_at": methyl_at, "bond_steps": "\n".join(bonds),
            "label_step": "\n".join([f"pyautogui.write('{label}')\npyautogui.press('enter')",
                                     *opens[:1]]),
            "ring_steps": ring_steps,
            "ring_end": "".join(t + "\n" for t in labels[1:2]),
            "pic_width": round(float(extent[0]), 1), "pic_height": round(float(extent[1]), 1)}


def missing(work: Path, rng: np.random.Generator, decoy: str = "benzoic acid",
            path: str = "other.mol", **_: Any) -> dict[str, Any]:
    """An infeasible task's work directory: a different molecule, never the file named."""
    smiles = MOLECULES[decoy]
    text, info = layout(smiles, rng)
    (work / path).write_text(text)
    click = _bond_click(info)
    return {"decoy_can": canonical(smiles)["can"], "click_x": click[0], "click_y": click[1]}


def note(work: Path, rng: np.random.Generator, path: str = "note.txt", text: str = "",
         **_: Any) -> dict[str, Any]:
    """A plain-text note in the work directory (a quiz question, a request), no molecule."""
    (work / path).write_text(text.rstrip("\n") + "\n")
    return {"chars": len(text)}


GENERATORS = {"molecule": molecule, "target": target, "edit": edit, "missing": missing,
              "note": note, "ring_reactant": ring_reactant}


__all__ = ["GENERATORS", "MOLECULES", "canonical", "composition", "layout", "mass_percent",
           "props_of_molfile"]
