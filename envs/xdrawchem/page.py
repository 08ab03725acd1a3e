"""Molecules placed on XDrawChem's page: Open Babel's 2D layout of a SMILES, scaled to a mean
bond length of 1 and moved so that XDrawChem, which places a molfile at page = (file + 11.667)
* 25 / mean bond length, draws it around a seeded point of the visible page; the screen
position of every atom (where the GUI oracles click) and the gold of a drawn molecule.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .babel import _obabel, canonical, mass_percent

#: Page origin on screen and XDrawChem's molfile placement (measured, see the adapter).
PAGE_X, PAGE_Y = 317, 116
OFFSET, BOND_PX = 11.6667, 25.0


def _parse_v2000(text: str) -> tuple[list[str], list[str], np.ndarray, list[tuple[int, int]]]:
    lines = text.splitlines()
    n_atoms, n_bonds = int(lines[3][0:3]), int(lines[3][3:6])
    atom_lines = lines[4:4 + n_atoms]
    bond_lines = lines[4 + n_atoms:4 + n_atoms + n_bonds]
    xy = np.array([[float(ln[0:10]), float(ln[10:20])] for ln in atom_lines])
    elements = [ln[31:34].strip() for ln in atom_lines]
    bonds = [(int(ln[0:3]) - 1, int(ln[3:6]) - 1) for ln in bond_lines]
    return lines, elements, xy, bonds


def layout(smiles: str, rng: np.random.Generator, center: tuple[float, float] = (375, 330),
           jitter: float = 40.0) -> tuple[str, dict[str, Any]]:
    """A molfile of ``smiles`` placed for XDrawChem around page ``center`` (+- jitter px),
    and where its atoms land on screen."""
    raw = _obabel([f"-:{smiles}", "-omol", "--gen2d"])
    lines, elements, xy, bonds = _parse_v2000(raw)
    if bonds:
        mean = float(np.mean([np.linalg.norm(xy[a] - xy[b]) for a, b in bonds]))
        xy = xy / mean
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    cx = center[0] + float(rng.uniform(-jitter, jitter))
    cy = center[1] + float(rng.uniform(-jitter, jitter))
    target = np.array([cx / BOND_PX - OFFSET, cy / BOND_PX - OFFSET])
    xy = np.round(xy - (lo + hi) / 2 + target, 4)
    out = lines[:4]
    for i, ln in enumerate(lines[4:4 + len(elements)]):
        out.append(f"{xy[i, 0]:10.4f}{xy[i, 1]:10.4f}" + ln[20:])
    out += lines[4 + len(elements):]
    text = "\n".join(out) + "\n"
    # where XDrawChem draws each atom (mean bond length of the rounded coordinates, as it reads)
    mean = float(np.mean([np.linalg.norm(xy[a] - xy[b]) for a, b in bonds])) if bonds else 1.0
    page = (xy + OFFSET) * BOND_PX / mean
    screen = [[int(round(PAGE_X + x)), int(round(PAGE_Y + y))] for x, y in page]
    extent = page.max(axis=0) - page.min(axis=0)
    return text, {"elements": elements, "screen": screen, "bonds": bonds,
                  "width_px": round(float(extent[0]), 1), "height_px": round(float(extent[1]), 1),
                  "center": [float(page[:, 0].mean()) + PAGE_X,
                             float(page[:, 1].mean()) + PAGE_Y]}


def _bond_click(info: dict[str, Any]) -> list[int]:
    """A point on the middle of a bond between two unlabelled carbons (nothing but the line
    is drawn there), for clicks that must land on the molecule."""
    els, scr = info["elements"], info["screen"]
    for a, b in info["bonds"]:
        if els[a] == "C" and els[b] == "C":
            return [(scr[a][0] + scr[b][0]) // 2, (scr[a][1] + scr[b][1]) // 2]
    a, b = info["bonds"][0]
    return [(scr[a][0] + scr[b][0]) // 2, (scr[a][1] + scr[b][1]) // 2]


def _gold(smiles: str, info: dict[str, Any]) -> dict[str, Any]:
    props = canonical(smiles)
    click = _bond_click(info)
    return {**props, "percent": mass_percent(props["formula"]), "click_x": click[0],
            "click_y": click[1], "screen": info["screen"], "width_px": info["width_px"],
            "height_px": info["height_px"]}
