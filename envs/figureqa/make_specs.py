"""Writes task_specs/figureqa/*.json: one task family per figure kind, each a pool of
:data:`POOL` fixed items (ST-Bench-style query pools, so splits are stable by item id; the
generators balance each split's letters and spread its values, see :mod:`.common`).

Run ``python -m sciagent_gym.envs.figureqa.make_specs`` after changing a family and commit the
output with it (envs/figureqa/tests/test_figureqa_specs.py fails on a stale file).
Multiple-choice items carry their options in the query's params (``options`` for the
instruction, ``option_list`` for the ``choice`` check and the GUI oracle's perceiver); the
right letter stays in the gold. Every task's GUI oracle reads its answer off the viewer's
pixels with a perceiver (:mod:`.perceive`); the scripted oracle answers from the gold.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sciagent_gym.sdk import load_adapter, spec_interface

from .common import POOL, query_id
from .data import CHOICES
from .figures_macro import LIMITS

OUT = Path(__file__).resolve().parents[2] / "task_specs" / "figureqa"
WINDOW = "^FigureQA viewer: "
VIEW = ("feh, an image viewer, shows figure.png (from the work folder) at 100 %: zoom with "
        "Up/Down or the keypad's +/-, * for 100 % and / to fit the window; drag with the left "
        "mouse button to pan.")
FAIL_NOTE = " If the figure cannot answer the question, end the episode with FAIL instead."
_LIM = {k: {"xlim": list(v["x"]), "ylim": list(v["y"])} for k, v in LIMITS.items()}

# slug: (generator, scale, difficulty, title, figure, question, perceiver, args, answer spec)
# answer spec: {"kind": "mc"} or {"kind": "open", "unit", "rel_tol" | "abs_tol", "say"}
FAMILIES: dict[str, dict[str, Any]] = {
    "lattice-type": dict(
        fn="lattice_type", scale="atomic", difficulty="easy", figure="a projected 2D lattice",
        title="Which Bravais lattice is projected", kind="mc",
        question="Which 2D Bravais lattice do the atoms form?",
        perceive=("lattice_type", {}),
        hints="Count each atom's nearest neighbours (6: hexagonal, 4: square, 2: rectangular) "
              "and look at the second shell for a centring atom."),
    "lattice-description": dict(
        fn="lattice_description", scale="atomic", difficulty="easy",
        figure="a projected 2D lattice", title="Describe the projected lattice (open, STS)",
        kind="sentence",
        question="In one sentence, say which 2D Bravais lattice (square, hexagonal, "
                 "rectangular or centred rectangular) the atoms form and what shows it (the "
                 "nearest neighbours or the cell).",
        perceive=("lattice_sentence", {}),
        hints="Count each atom's nearest neighbours and look for an atom at the centre of "
              "the rectangular cell."),
    "lattice-parameter": dict(
        fn="lattice_parameter", scale="atomic", difficulty="medium",
        figure="a projected 2D lattice of atoms with a scale bar",
        title="Lattice parameter from a projected lattice", kind="open", unit="Å",
        rel_tol=0.05, say="in ångström, e.g. answer(\"3.1 Å\")",
        question="What is the lattice parameter a (the nearest-neighbour distance)?",
        perceive=("nn_spacing", {"bar_unit": "nm", "unit": "Å"}),
        hints="Measure several atom-to-atom distances in pixels (zoom in for precision), "
              "divide by the scale bar's length in pixels and multiply by its value "
              "(1 nm = 10 Å)."),
    "hrtem-spacing": dict(
        fn="hrtem_spacing", scale="atomic", difficulty="hard",
        figure="a simulated HRTEM lattice image with a scale bar",
        title="Lattice-fringe spacing in an HRTEM image", kind="open", unit="nm",
        rel_tol=0.05, say="in nanometres, e.g. answer(\"0.25 nm\")",
        question="What is the spacing of the lattice fringes (the distance between adjacent "
                 "rows of bright spots along a fringe normal)?",
        perceive=("fringe_spacing", {"bar_unit": "nm", "unit": "nm"}),
        hints="Count many fringe periods along a line normal to the fringes, divide the "
              "distance by their number, and convert with the scale bar (its value is "
              "printed next to it)."),
    "hrtem-symmetry": dict(
        fn="hrtem_symmetry", scale="atomic", difficulty="medium",
        figure="a simulated HRTEM lattice image with a 2 nm scale bar",
        title="Symmetry of an HRTEM spot pattern", kind="mc",
        question="What rotational symmetry does the lattice image's spot pattern have?",
        perceive=("fringe_symmetry", {}),
        hints="Follow the rows of bright spots: are the spacings equal in every row direction, "
              "and are the rows at 60° or at 90° to each other?"),
    "phase-fraction": dict(
        fn="phase_fraction", scale="micro", difficulty="easy",
        figure="a two-phase micrograph (a dark phase in a bright matrix)",
        title="Area fraction of the dark phase", kind="mc",
        question="About what area fraction of the micrograph is the dark phase?",
        perceive=("dark_fraction", {"below": 138}),
        hints="Compare the dark area with the whole field; the options are 10 points apart."),
    "grain-size": dict(
        fn="grain_size", scale="micro", difficulty="medium",
        figure="an etched single-phase grain micrograph with a scale bar",
        title="Mean grain size of a micrograph", kind="open", unit="µm", rel_tol=0.10,
        say="in micrometres, e.g. answer(\"42 µm\")",
        question="What is the mean grain size, taken as the equivalent-circle diameter of the "
                 "mean grain area (field area divided by the number of grains, edge grains "
                 "counted as whole grains)?",
        perceive=("grain_size", {"bar_unit": "µm", "unit": "µm"}),
        hints="Count the grains (all of them, including those cut by the frame), divide the "
              "field's area (860 x 600 px) by the count, convert with the scale bar, and take "
              "d = sqrt(4 A / pi)."),
    "grain-size-no-scale": dict(
        fn="grain_size_no_scale", scale="micro", difficulty="medium",
        figure="an etched single-phase grain micrograph",
        title="Mean grain size of a micrograph without a scale", kind="infeasible",
        question="What is the mean grain size in micrometres (the equivalent-circle diameter "
                 "of the mean grain area)?",
        hints="A length in micrometres needs a scale bar or a stated magnification."),
    "porosity": dict(
        fn="porosity", scale="meso", difficulty="easy",
        figure="a polished cross-section of a porous ceramic (pores are black)",
        title="Porosity of a cross-section", kind="open", unit="%", abs_tol=2.0,
        say="in percent of the area, e.g. answer(\"17 %\")",
        question="What is the porosity, the black pores' share of the section's area?",
        perceive=("dark_fraction", {"below": 90}),
        hints="Estimate the black area against the whole image box (a point count on a grid "
              "works: zoom in and count the grid points that fall on pores)."),
    "fibre-orientation": dict(
        fn="fibre_orientation", scale="meso", difficulty="medium",
        figure="a longitudinal section of a fibre-reinforced composite (fibres are bright)",
        title="Fibre orientation in a composite", kind="mc",
        question="In which direction are the fibres aligned (angle counter-clockwise from the "
                 "horizontal)?",
        perceive=("fibre_angle", {}),
        hints="A fibre rising to the right is at 0-90°, one falling to the right at 90-180°."),
    "particle-count": dict(
        fn="particle_count", scale="meso", difficulty="medium", heldout=True,
        figure="a particle-reinforced composite's section (particles are dark)",
        title="Count the reinforcing particles", kind="open", unit=None, abs_tol=0,
        say="as a whole number, e.g. answer(\"27\")",
        question="How many particles does the field show?",
        perceive=("count_particles", {}),
        hints="Zoom in and count row by row; no two particles touch and none is cut by the "
              "frame."),
    "uts": dict(
        fn="uts", scale="macro", difficulty="easy",
        figure="an engineering stress-strain curve", title="Ultimate tensile strength",
        kind="open", unit="MPa", rel_tol=0.03, say="in MPa, e.g. answer(\"512 MPa\")",
        question="What is the material's ultimate tensile strength?",
        perceive=("curve_max", {"colour": "blue", "unit": "MPa"}),
        hints="The UTS is the curve's maximum stress; read it against the stress axis's "
              "ticks (the axes are scaled to the curve)."),
    "ductile-curve": dict(
        fn="ductile_curve", scale="macro", difficulty="medium",
        figure="engineering stress-strain curves of four alloys",
        title="Which alloy is the most ductile", kind="mc",
        question="Which alloy is the most ductile (the largest elongation at fracture)?",
        perceive=("most_ductile", _LIM["stress"]),
        hints="Ductility is the strain where a curve ends (fracture), not its strength."),
    "eutectic-composition": dict(
        fn="eutectic", scale="macro", difficulty="hard",
        figure="a binary eutectic phase diagram of a model system A-B",
        title="Eutectic composition",
        kind="open", unit=None, abs_tol=3.0,
        say="in wt% of the second element, e.g. answer(\"38 wt%\")",
        question="What is the composition of the eutectic point?",
        perceive=("eutectic_point", {**_LIM["eutectic"], "unit": "wt%"}),
        hints="The eutectic point is where the two liquidus lines meet the horizontal "
              "eutectic isotherm; read its composition on the x axis."),
    "arrhenius-activation-energy": dict(
        fn="arrhenius", scale="macro", difficulty="hard", heldout=True,
        figure="an Arrhenius plot of diffusion coefficients with a least-squares line (red)",
        title="Activation energy from an Arrhenius plot", kind="open", unit=None,
        rel_tol=0.05, say="in kJ/mol, e.g. answer(\"150 kJ/mol\")",
        question="What activation energy does the red line give (D = D0 exp(-Ea/RT), "
                 "R = 8.314 J/(mol K))?",
        perceive=("arrhenius_energy", {}),
        hints="Read two points far apart on the red line against the axes' ticks (the axes "
              "are scaled to the data); the slope of ln D against 1000/T is -Ea / (1000 R), "
              "so Ea in kJ/mol = -slope x 8.314."),
}


def _queries(slug: str, f: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for i in range(POOL):
        params: dict[str, Any] = {"item": i}
        if f["kind"] == "mc":
            opts = CHOICES[f["fn"]](i)["options"]
            params["option_list"] = [opts[k] for k in sorted(opts)]
            params["options"] = CHOICES[f["fn"]](i)["options_text"]
        out.append({"id": query_id(slug, i), "scope": f"pool item {i:02d}", "params": params})
    return out


def _criteria(f: dict[str, Any]) -> list[dict[str, Any]]:
    if f["kind"] == "infeasible":
        return [{"name": "reported that the figure cannot answer", "weight": 0, "gate": True,
                 "description": "the micrograph has no scale bar or magnification: no length "
                                "in micrometres can be read off it",
                 "getter": "agent_status", "check": {"op": "equals", "expected": "fail"}},
                {"name": "no grain size invented", "weight": 0, "getter": "answer_given",
                 "check": "is_false"}]
    gate = {"name": "an answer was given", "weight": 0, "gate": True,
            "getter": "answer_given", "check": {"op": "is_true"}}
    if f["kind"] == "sentence":
        return [gate, {"name": "names the right lattice and no other", "weight": 0,
                       "gate": True, "getter": "answer_text",
                       "check": {"op": "regex", "pattern": "$gold.q.pattern"}},
                {"name": "STS against the reference description (graded from 0.5, full "
                         "at 0.7)", "weight": 1,
                 "getter": "answer_text",
                 "description": "CSMBench's STS (cosine of all-MiniLM-L6-v2 vectors), scored "
                                "continuously: (STS - 0.5) / 0.2 of the weight, all of it and "
                                "success from 0.7 (a bare lattice name scores about 0.63)",
                 "check": {"op": "sts_at_least", "reference": "$gold.q.reference",
                           "min": 0.7, "floor": 0.5}}]
    if f["kind"] == "mc":
        return [gate, {"name": "the right option", "weight": 1, "getter": "answer_text",
                       "description": "exactly one option, named by its letter or text",
                       "check": {"op": "choice", "options": "$option_list",
                                 "expected": "$gold.q.letter"}}]
    getter: dict[str, Any] = {"fn": "answer_number"}
    if f.get("unit"):
        getter["unit"] = f["unit"]
    check = {"op": "numeric", "expected": "$gold.q.value"}
    tol = f"± {f['abs_tol']:g}" if "abs_tol" in f else f"± {f['rel_tol'] * 100:g} %"
    check.update({"abs_tol": f["abs_tol"]} if "abs_tol" in f else {"rel_tol": f["rel_tol"]})
    return [gate, {"name": f"the answered value ({tol})", "weight": 1, "getter": getter,
                   "check": check}]


def spec(slug: str, f: dict[str, Any]) -> dict[str, Any]:
    kind = f["kind"]
    if kind == "mc":
        ask = (f"{f['question']} Options: {{options}}. Give the letter of the one right "
               "option with the answer action, e.g. answer(\"B\").")
    elif kind == "sentence":
        ask = f"{f['question']} Give it with the answer action."
    elif kind == "open":
        ask = f"{f['question']} Give it with the answer action, {f['say']}."
    else:
        ask = f"{f['question']} Give it with the answer action, e.g. answer(\"40 µm\")."
    instruction = f"{VIEW} The figure ({{scope}}) is {f['figure']}. {ask}{FAIL_NOTE}"
    wait = {"await_window": WINDOW, "focused": True}
    tags = ["csmbench", f"scale:{f['scale']}", "item:" + ("mc" if kind == "mc" else "open"),
            "figure", "perception", *(["sts"] if kind == "sentence" else [])]
    out: dict[str, Any] = {
        "id": f"figureqa/{slug}", "tool": "figureqa", "title": f["title"],
        "instruction": instruction, "hints": f["hints"], "difficulty": f["difficulty"],
        "modality": "gui", "tags": tags, "max_steps": 15,
        "setup": {"generate": [{"fn": f["fn"], "as": "q", "args": {"item": "$item"}}],
                  "open": ["figure.png"], "protect": ["figure.png"]},
        "evaluator": {"criteria": _criteria(f)},
    }
    if f.get("heldout"):
        out["heldout"] = True
    if kind == "infeasible":
        out["infeasible"] = True
        out["oracle"] = [wait, "FAIL"]
        out["negatives"] = {"answer-in-pixels": [wait, "answer(\"{gold.q.pixels} µm\")", "DONE"],
                            "a-typical-guess": [wait, "answer(\"50 µm\")", "DONE"]}
    else:
        fn, args = f["perceive"]
        args = {**args, "options": "$option_list"} if kind == "mc" else args
        said = {"mc": "{gold.q.letter}", "sentence": "{gold.q.reference}"}
        out["oracle"] = [wait, f"answer(\"{said[kind]}\")" if kind in said else
                         "answer(\"{gold.q.value}" + (f" {f['unit']}" if f.get("unit") else "")
                         + "\")", "DONE"]
        out["gui_oracle"] = [wait, {"perceive": {"fn": fn, "window": WINDOW, "args": args},
                                    "answer": "{output}"}, "DONE"]
        if kind == "mc":
            out["negatives"] = {
                "option-off-in-one-attribute": [wait, "answer(\"{gold.q.wrong_letter}\")",
                                                "DONE"],
                "two-letters-hedged": [wait, "answer(\"{gold.q.letter}, "
                                             "{gold.q.wrong_letter}\")", "DONE"],
                "gives-up": [wait, "FAIL"]}
        elif kind == "sentence":
            out["negatives"] = {
                "wrong-lattice-described": [wait, "answer(\"{gold.q.wrong}\")", "DONE"],
                "every-lattice-named": [wait, "answer(\"a square, hexagonal, rectangular or "
                                              "centred rectangular lattice\")", "DONE"],
                "gives-up": [wait, "FAIL"]}
        else:
            unit = f" {f['unit']}" if f.get("unit") else ""
            out["negatives"] = {"wrong-number": [wait, f"answer(\"{{gold.q.wrong}}{unit}\")",
                                                 "DONE"],
                                "gives-up": [wait, "FAIL"]}
    out["queries"] = _queries(slug, f)
    out["oracle_interface"] = spec_interface(
        out, load_adapter("figureqa", getters=False).console_language)
    return out


def write_all() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for slug, f in FAMILIES.items():
        (OUT / f"{slug}.json").write_text(json.dumps(spec(slug, f), indent=1,
                                                     ensure_ascii=False) + "\n")


if __name__ == "__main__":
    write_all()
