"""Atomic-scale FigureQA items: projected 2D lattices (which Bravais lattice, described in a
sentence, its lattice parameter) and HRTEM-like lattice images (fringe spacing, symmetry).
Generators as in :mod:`.data`: ``(work_dir, rng, item, path)`` -> gold, the figure fixed by
family and item alone.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from . import figures_atomic as atomic
from .common import balanced_slot, image_figure, item_rng, mc_gold, options, save, spread

#: Scale-bar values (nm) for the atomic figures: the one whose bar is 90-330 px long is drawn.
BAR_VALUES_NM = (0.5, 1, 2, 5, 10)


def _bar_nm(px_per_nm: float) -> tuple[float, int]:
    """(value in nm, length in px) of the scale bar: the first of :data:`BAR_VALUES_NM` whose
    bar is 90-330 px long."""
    value = next(v for v in BAR_VALUES_NM if 90 <= v * px_per_nm <= 330)
    return value, int(round(value * px_per_nm))


def _lattice_type_draw(item: int) -> tuple[np.random.Generator, dict[str, Any]]:
    rng = item_rng("lattice-type", item)
    kind = atomic.LATTICES[balanced_slot("lattice-type", item, 4, "kind")]
    ratio = float(rng.uniform(1.4, 1.7) if kind == "rectangular" else rng.uniform(2.2, 2.6))
    a_px = float(rng.uniform(46, 70))
    angle = float(rng.uniform(0, math.pi))
    others = [k for k in atomic.LATTICES if k != kind]
    opts = options(rng, kind, others, lambda k: f"a {k} lattice",
                   balanced_slot("lattice-type", item, 4))
    return rng, {"kind": kind, "ratio": ratio, "a_px": a_px, "angle": angle, **opts}


def lattice_type(work: Path, rng: Any, item: int, path: str = "figure.png") -> dict[str, Any]:
    """A projected 2D lattice; MC: which Bravais lattice (the options differ in it alone)."""
    r, p = _lattice_type_draw(item)
    pts = atomic.lattice_points(p["kind"], p["a_px"], p["ratio"], p["angle"], r)
    content = atomic.render_atoms(pts, atomic.atom_radius(p["kind"], p["a_px"], p["ratio"]), r)
    save(image_figure(content, None, "", f"FQ-LT-{item:02d}"), work, path)
    wrong = next(k for k in p["options"] if k != p["letter"])
    return {**mc_gold(p), "wrong_letter": wrong, "scale": "atomic"}


#: What each lattice looks like, in the words the open item's reference answer uses.
DESCRIPTIONS = {
    "square": "a square lattice: every atom has four nearest neighbours at 90 degrees to "
              "each other",
    "hexagonal": "a hexagonal lattice: every atom has six nearest neighbours at 60 degrees to "
                 "each other",
    "rectangular": "a rectangular lattice: every atom has two nearest neighbours along the "
                   "short side and two more along the long side, at 90 degrees",
    "centred rectangular": "a centred rectangular lattice: a rectangular cell with an extra "
                           "atom at its centre",
}


def lattice_pattern(kind: str) -> str:
    """A regex an answer must match: it names ``kind`` and no other of the four lattices."""
    names = {"square": r"square", "hexagonal": r"hexagonal",
             "rectangular": r"(?<!centred )(?<!centered )rectangular",
             "centred rectangular": r"cent(?:red|ered) rectangular"}
    # a centred rectangular lattice has a rectangular cell: the plain word may stay
    others = "|".join(v for k, v in names.items()
                      if k != kind and not (kind == "centred rectangular" and k == "rectangular"))
    return rf"(?is)^(?!.*\b(?:{others})\b).*\b{names[kind]}\b"


def lattice_description(work: Path, rng: Any, item: int, path: str = "figure.png"
                        ) -> dict[str, Any]:
    """A projected 2D lattice; open sentence: which lattice it is (scored by STS against a
    reference description, gated on naming the right lattice and no other)."""
    r = item_rng("lattice-description", item)
    kind = atomic.LATTICES[balanced_slot("lattice-description", item, 4, "kind")]
    ratio = float(r.uniform(1.4, 1.7) if kind == "rectangular" else r.uniform(2.2, 2.6))
    a_px = float(r.uniform(46, 70))
    pts = atomic.lattice_points(kind, a_px, ratio, float(r.uniform(0, math.pi)), r)
    content = atomic.render_atoms(pts, atomic.atom_radius(kind, a_px, ratio), r)
    save(image_figure(content, None, "", f"FQ-LD-{item:02d}"), work, path)
    wrong = atomic.LATTICES[(atomic.LATTICES.index(kind) + 1) % 4]
    return {"kind": kind, "reference": DESCRIPTIONS[kind], "pattern": lattice_pattern(kind),
            "wrong": DESCRIPTIONS[wrong], "scale": "atomic"}


def lattice_parameter(work: Path, rng: Any, item: int, path: str = "figure.png"
                      ) -> dict[str, Any]:
    """A square or hexagonal 2D lattice with a scale bar; open: a in angstroms. a is spread
    log-evenly over 2-20 Å (close-packed metals to large-cell compounds), the bar's value
    (0.5-10 nm) follows the magnification."""
    r = item_rng("lattice-parameter", item)
    kind = ("square", "hexagonal")[item % 2]
    a_ang = round(spread("lattice-parameter", item, 2.0, 20.0, log=True), 2)
    a_px = float(r.uniform(46, 88))
    bar_nm, bar_px = _bar_nm(a_px / (a_ang / 10))
    a_px = bar_px / bar_nm * a_ang / 10  # the drawn bar is whole pixels: keep a exact to it
    pts = atomic.lattice_points(kind, a_px, 1.0, float(r.uniform(0, math.pi)), r)
    content = atomic.render_atoms(pts, atomic.atom_radius(kind, a_px, 1.0), r)
    save(image_figure(content, (bar_nm, bar_px), "nm", f"FQ-LP-{item:02d}"), work, path)
    return {"value": a_ang, "kind": kind, "pixels": round(a_px, 1),
            "wrong": round(a_ang * (math.sqrt(3) if kind == "hexagonal" else math.sqrt(2)), 2),
            "scale": "atomic"}


def hrtem_spacing(work: Path, rng: Any, item: int, path: str = "figure.png") -> dict[str, Any]:
    """An HRTEM-like lattice image with a scale bar; open: the fringe spacing in nm, spread
    log-evenly over 0.12-1.2 nm (metal planes to layered silicates), the bar's value (0.5-10
    nm) following the magnification."""
    r = item_rng("hrtem-spacing", item)
    kind = ("square", "hexagonal")[item % 2]
    d_nm = round(spread("hrtem-spacing", item, 0.12, 1.2, log=True), 3)
    d_px = float(r.uniform(13, 28))
    bar_nm, bar_px = _bar_nm(d_px / d_nm)
    d_px = bar_px / bar_nm * d_nm
    content = atomic.hrtem(kind, d_px, float(r.uniform(0, math.pi)), r)
    save(image_figure(content, (bar_nm, bar_px), "nm", f"FQ-HR-{item:02d}"), work, path)
    return {"value": d_nm, "kind": kind, "pixels": round(d_px, 2),
            "wrong": round(d_nm * 2, 3), "scale": "atomic"}


#: The symmetry of each HRTEM pattern kind, as the options name it.
SYMMETRIES = {"rectangular": "a twofold (rectangular) spot pattern",
              "trigonal": "a threefold (trigonal) spot pattern",
              "square": "a fourfold (square) spot pattern",
              "hexagonal": "a sixfold (hexagonal) spot pattern"}


def _hrtem_symmetry_draw(item: int) -> dict[str, Any]:
    r = item_rng("hrtem-symmetry", item)
    kind = ("rectangular", "square", "hexagonal")[balanced_slot("hrtem-symmetry", item, 3,
                                                                  "kind")]
    opts = options(r, kind, [k for k in SYMMETRIES if k != kind], SYMMETRIES.get,
                   balanced_slot("hrtem-symmetry", item, 4))
    return {"rng": r, "kind": kind, **opts}


def hrtem_symmetry(work: Path, rng: Any, item: int, path: str = "figure.png"
                   ) -> dict[str, Any]:
    """An HRTEM-like lattice image; MC: the rotational symmetry of its spot pattern (the
    options differ in it alone; threefold is never the truth here, a distractor only)."""
    p = _hrtem_symmetry_draw(item)
    r = p["rng"]
    d_nm = float(r.uniform(0.18, 0.40))
    d_px = float(r.uniform(14, 26))
    bar_px = int(round(2 * d_px / d_nm))
    ratio = float(r.uniform(1.35, 1.7))
    content = atomic.hrtem(p["kind"], d_px, float(r.uniform(0, math.pi)), r, ratio=ratio)
    save(image_figure(content, (2, bar_px), "nm", f"FQ-HS-{item:02d}"), work, path)
    nearest = {"rectangular": "square", "square": "rectangular", "hexagonal": "trigonal"}
    wrong = next(k for k, v in p["options"].items() if v == SYMMETRIES[nearest[p["kind"]]])
    return {**mc_gold(p), "wrong_letter": wrong, "scale": "atomic"}
