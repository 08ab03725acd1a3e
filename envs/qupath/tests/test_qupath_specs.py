"""Offline checks of the QuPath tool: specs, generators, getters, evaluator proofs, discovery
and the install recipe. QuPath itself is not needed (nor installed on CI, see
envs/qupath/INSTALL.md).

Evaluator proofs: for every task, the final state its oracle would leave (files in QuPath's
GeoJSON and measurement-table formats, the hierarchy dump of state_dump.groovy and the answer
action's text) is built from the gold values with writers that follow QuPath v0.5.1's own
(tests/fixtures/ here); it must score 1.0 and each negative's state must fail. The start state
QuPath would show (staged image type, default stains, staged annotations), placeholders, the
audit's generic cheats and each spec's own cheats, all played on that start state, score 0.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sciagent_gym.errors import MissingProgramError
from sciagent_gym.evaluation import GETTERS, FinalState, GetterError, evaluate
from sciagent_gym.tasks.spec import TaskSpec
from sciagent_gym.tasks.task import Task, sample_params
from sciagent_gym.tools import load_adapter, load_tool_getters, load_tool_specs

load_tool_getters("qupath")

from sciagent_gym.envs.qupath import adapter as qadapter  # noqa: E402
from sciagent_gym.envs.qupath import data  # noqa: E402
from sciagent_gym.envs.qupath.geojson import parse_geojson  # noqa: E402
from sciagent_gym.envs.qupath.tables import normalize_column  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
FIX = Path(__file__).resolve().parent / "fixtures"
INSTALL = ROOT / "envs" / "qupath" / "install.sh"
SPECS: dict[str, TaskSpec] = load_tool_specs("qupath")
SPEC_IDS = sorted(SPECS)
SANDBOX = {"home": "/home/user", "tmp": "/tmp"}


def make_task(spec: TaskSpec, seed: int, work: Path) -> Task:
    return Task(spec, seed, data.GENERATORS, {**SANDBOX, "work": str(work)})


# --- QuPath-format writers (see tests/fixtures/README.md) ----------------------------


def fmt_number(v: float) -> str:
    """ObservableMeasurementTableData.NumericMeasurementBuilder.getStringValue (dp by size)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "NaN"
    dp = 1 if v > 1000 else 2 if v > 10 else 3 if v > 1 else 4
    return f"{v:.{dp}f}".rstrip("0").rstrip(".") if "." in f"{v:.{dp}f}" else f"{v:.{dp}f}"


def write_table(path: Path, rows: list[dict[str, Any]], columns: list[str]) -> None:
    """SummaryMeasurementTableCommand.getTableModelStrings with the default tab delimiter."""
    lines = ["\t".join(columns)]
    for r in rows:
        cells = []
        for c in columns:
            v = r.get(c)
            cells.append("" if v is None else fmt_number(v) if isinstance(v, (int, float))
                         else str(v))
        lines.append("\t".join(cells))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def annotation_rows(image: str, anns: list[dict[str, Any]], px: float,
                    detections: bool) -> tuple[list[dict[str, Any]], list[str]]:
    cols = ["Image", "Object ID", "Object type", "Name", "Classification", "Parent", "ROI",
            "Centroid X µm", "Centroid Y µm"]
    if detections:
        cols += ["Num Detections", "Num Negative", "Num Positive", "Positive %"]
    cols += ["Area µm^2", "Perimeter µm"]
    rows = []
    for i, a in enumerate(anns):
        x, y, w, h = a["bounds"]
        rows.append({"Image": image, "Object ID": f"00000000-0000-4000-8000-00000000000{i}",
                     "Object type": "Annotation", "Name": a["name"],
                     "Classification": a.get("class"), "Parent": "Image", "ROI": "Rectangle",
                     "Centroid X µm": (x + w / 2) * px, "Centroid Y µm": (y + h / 2) * px,
                     "Num Detections": a.get("num_detections", 0),
                     "Num Negative": a.get("num_negative", 0),
                     "Num Positive": a.get("num_positive", 0),
                     "Positive %": a.get("positive_percent", math.nan),
                     "Area µm^2": w * h * px * px, "Perimeter µm": 2 * (w + h) * px})
    return rows, cols


def feature(a: dict[str, Any], i: int) -> dict[str, Any]:
    """PathObjectTypeAdapter.write for an annotation with a rectangle ROI."""
    x, y, w, h = a["bounds"]
    ring = [[round(x, 2), round(y, 2)], [round(x + w, 2), round(y, 2)],
            [round(x + w, 2), round(y + h, 2)], [round(x, 2), round(y + h, 2)],
            [round(x, 2), round(y, 2)]]
    props: dict[str, Any] = {"objectType": "annotation"}
    if a.get("name") is not None:
        props["name"] = a["name"]
    if a.get("class"):
        props["classification"] = {"name": a["class"], "color": [200, 0, 0]}
    return {"type": "Feature", "id": f"7d9c0273-6584-4f4a-97ff-6a27dc8164e{i}",
            "geometry": {"type": "Polygon", "coordinates": [ring]}, "properties": props}


def write_geojson(path: Path, anns: list[dict[str, Any]], collection: bool) -> None:
    """PathIO.exportObjectsAsGeoJSON: FeatureCollection, a single Feature, or an array."""
    feats = [feature(a, i) for i, a in enumerate(anns)]
    if collection:
        doc: Any = {"type": "FeatureCollection", "features": feats}
    elif len(feats) == 1:
        doc = feats[0]
    else:
        doc = feats
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")


def dump(image: str, w: int, h: int, px: float, image_type: str = "BRIGHTFIELD_H_DAB",
         h_vec: Any = data.QUPATH_DEFAULT_H, dab_vec: Any = data.QUPATH_DEFAULT_DAB,
         anns: list[dict[str, Any]] | None = None, n_det: int = 0, pos: int = 0,
         neg: int = 0) -> dict[str, Any]:
    """What state_dump.groovy returns (its header documents every key)."""
    brightfield = image_type.startswith("BRIGHTFIELD")
    second = "DAB" if image_type == "BRIGHTFIELD_H_DAB" else "Eosin"
    full = []
    for i, a in enumerate(anns or []):
        x, y, ww, hh = a["bounds"]
        full.append({"id": str(i), "name": a.get("name"), "class": a.get("class"),
                     "roi_type": a.get("roi_type", "Rectangle"), "area_px": ww * hh,
                     "area_um2": ww * hh * px * px, "perimeter_px": 2 * (ww + hh),
                     "bounds": [x, y, ww, hh], "centroid": [x + ww / 2, y + hh / 2],
                     "n_vertices": 4, "locked": False, "parent": None, "measurements": {},
                     "num_detections": a.get("num_detections", 0),
                     "num_positive": a.get("num_positive", 0),
                     "num_negative": a.get("num_negative", 0),
                     "positive_percent": a.get("positive_percent")})
    return {
        "qupath_version": "0.5.1", "project": "/home/user/work/project/project.qpproj",
        "image": {"name": image, "width": w, "height": h, "pixel_width_um": px,
                  "pixel_height_um": px, "n_channels": 3, "rgb": True},
        "image_type": image_type, "image_type_name": image_type,
        "stains": None if not brightfield else {
            "name": "H-DAB default",
            "stain1": {"name": "Hematoxylin", "vector": list(data.unit(h_vec)), "residual": False},
            "stain2": {"name": second, "vector": list(data.unit(dab_vec)), "residual": False},
            "stain3": {"name": "Residual", "vector": [0.6, 0.4, 0.7], "residual": True},
            "background": [255, 255, 255]},
        "annotations": full, "n_annotations": len(full),
        "detections": {"count": n_det, "cells": n_det, "by_class": {}, "positive": pos,
                       "negative": neg,
                       "positive_percent": 100 * pos / (pos + neg) if pos + neg else None},
        "n_detections": n_det, "selected": [], "tma": None}


# QuPath's default stains per image type (ImageData.initializeStainMap, v0.5.1): brightfield
# "other" starts with the H-DAB defaults; other types have none.
DEFAULT_STAINS = {"BRIGHTFIELD_H_DAB": (data.QUPATH_DEFAULT_H, data.QUPATH_DEFAULT_DAB, "DAB"),
                  "BRIGHTFIELD_OTHER": (data.QUPATH_DEFAULT_H, data.QUPATH_DEFAULT_DAB, "DAB"),
                  "BRIGHTFIELD_H_E": ((0.651, 0.701, 0.29), (0.216, 0.801, 0.558), "Eosin")}


def start_dump(task: Task) -> dict[str, Any]:
    """The dump state_dump.groovy returns right after staging: the staged image, image type,
    stains (the stage's own, else QuPath's defaults for the type) and annotations, nothing
    detected. The no-op is scored against this, not against a missing state."""
    g = task.gold["slide"]
    stage = g["qupath_stage"]
    kind = stage["image_type"]
    anns = [{"name": a["name"], "class": a["class"],
             "bounds": [a["roi"][k] for k in ("x", "y", "w", "h")]}
            for a in stage["annotations"]]
    app = dump(stage["image"], g["width"], g["height"], g["pixel_size"], image_type=kind,
               anns=anns)
    if kind in DEFAULT_STAINS:
        h_vec, second_vec, second = DEFAULT_STAINS[kind]
        if stage.get("stains"):
            parsed = json.loads(stage["stains"])
            h_vec = [float(v) for v in parsed["Values 1"].split()]
            second_vec = [float(v) for v in parsed["Values 2"].split()]
        app["stains"]["stain1"]["vector"] = list(data.unit(h_vec))
        app["stains"]["stain2"].update(name=second, vector=list(data.unit(second_vec)))
    else:
        app["stains"] = None
    return app


def output_paths(task: Task) -> list[str]:
    """Files the criteria read that the setup did not write: the task's outputs."""
    paths = {c.getter_params["path"] for c in task.criteria() if "path" in c.getter_params}
    return sorted(p for p in paths if p not in task.spec.protect)


def placeholders(task: Task) -> dict[str, Any]:
    """Outputs made without the work, each a ``make(case_dir, work_dir)``: empty files, "0", a
    header-only measurement table, an empty FeatureCollection, "{}" and the input copied."""
    header = "\t".join(annotation_rows("x", [], 0.5, detections=True)[1]) + "\n"
    contents = {"empty": b"", "zero": b"0\n", "header-only": header.encode(),
                "empty-collection": b'{"type": "FeatureCollection", "features": []}',
                "empty-object": b"{}"}
    out: dict[str, Any] = {}
    for name in output_paths(task):
        for label, content in contents.items():
            out[f"{label} {name}"] = lambda d, w, n=name, c=content: (d / n).write_bytes(c)
        for src in task.spec.protect:
            out[f"{src} as {name}"] = (lambda d, w, n=name, s=src:
                                       (d / n).write_bytes((w / s).read_bytes()))
    return out


# --- per-task final states -------------------------------------------------------------------

def _regions(gold: dict[str, Any], names: list[str]) -> list[dict[str, Any]]:
    return [{"name": n, **gold["annotations"][n]} for n in names]


#: The answer action's text a case gave, by its work directory (set by final_state).
ANSWERS: dict[Path, str] = {}


def final_state(task: Task, case: str, work: Path) -> tuple[dict | None, str]:
    """(app_state, agent_status) the oracle or a negative would leave; files go into work and
    the answer it gave (if any) into ANSWERS[work]."""
    slug, p = task.spec.slug, task.params
    g = task.gold["slide"]
    img = g["qupath_stage"]["image"]
    W, H, px = g["width"], g["height"], g["pixel_size"]
    base = {"image": img, "w": W, "h": H, "px": px}
    if slug == "set-image-type":
        t = {"oracle": "BRIGHTFIELD_H_DAB", "set-h-and-e": "BRIGHTFIELD_H_E",
             "set-fluorescence": "FLUORESCENCE"}[case]
        return dump(**base, image_type=t), "done"
    if slug == "set-stain-vectors":
        given = [float(v) for v in p["h"].split()], [float(v) for v in p["dab"].split()]
        hv, dv = {"oracle": given, "swapped": given[::-1],
                  "defaults-kept": (data.QUPATH_DEFAULT_H, data.QUPATH_DEFAULT_DAB)}[case]
        return dump(**base, h_vec=hv, dab_vec=dv), "done"
    if slug == "estimate-stain-vectors":
        eh, ed = g["estimated_h"], g["estimated_dab"]
        hv, dv = {"oracle": (eh, ed), "swapped": (ed, eh),
                  "defaults-kept": (data.QUPATH_DEFAULT_H, data.QUPATH_DEFAULT_DAB)}[case]
        return dump(**base, h_vec=hv, dab_vec=dv), "done"
    if slug == "draw-rectangle-annotation":
        b = [p["x"], p["y"], p["w"], p["h"]]
        ann = {"oracle": {"name": p["name"], "bounds": b},
               "wrong-place": {"name": p["name"], "bounds": [b[0] + 40, b[1] + 30, b[2], b[3]]},
               "unnamed": {"name": None, "bounds": b},
               "ellipse": {"name": p["name"], "bounds": b, "roi_type": "Ellipse"}}[case]
        return dump(**base, anns=[ann]), "done"
    if slug == "positive-cell-detection":
        n, k = g["n_nuclei"], g["n_positive"]
        full = {"name": None, "bounds": [0, 0, W, H], "num_detections": n}
        if case in ("oracle", "fraction-not-percent"):
            ANSWERS[work] = (f"{100 * k / n:.2f} %" if case == "oracle" else f"{k / n:.4f}")
            return dump(**base, anns=[full], n_det=n, pos=k, neg=n - k), "done"
        if case == "no-classification":
            return dump(**base, anns=[full], n_det=n), "done"
        ANSWERS[work] = "0.00 %"
        return dump(**base, anns=[full], n_det=n, pos=0, neg=n), "done"
    if slug == "count-detections-in-annotation":
        anns = _regions(g, ["Region A", "Region B"])
        tgt = g["target"]["n_nuclei"]
        for a in anns:
            a["num_detections"] = a["n_nuclei"] if (a["name"] == p["target"] or
                                                    case == "both-regions") else 0
        total = sum(a["num_detections"] for a in anns)
        if case != "detected-but-no-answer":
            ANSWERS[work] = str(tgt if case != "wrong-count" else total * 2 + 5)
        return dump(**base, anns=anns, n_det=total), "done"
    if slug == "classify-annotation":
        anns = _regions(g, ["Region 1", "Region 2", "Region 3"])
        for a in anns:
            hit = {"oracle": a["name"] == p["target"], "wrong-annotation":
                   a["name"] == next(x["name"] for x in anns if x["name"] != p["target"]),
                   "all-classified": True}[case]
            a["class"] = p["cls"] if hit else None
        return dump(**base, anns=anns), "done"
    if slug == "export-annotation-measurements":
        anns = _regions(g, ["Region 1", "Region 2", "Region 3"])
        rows, cols = annotation_rows(img, anns, px, detections=False)
        if case == "names-only":
            cols = ["Name"]
        if case == "detections-exported":
            rows, cols = [], ["Image", "Object ID", "Object type", "Name", "Classification",
                              "Parent", "ROI", "Centroid X µm", "Centroid Y µm"]
        write_table(work / "annotations.tsv", rows, cols)
        return dump(**base, anns=anns), "done"
    if slug == "export-annotations-geojson":
        anns = _regions(g, ["Region 1", "Region 2", "Region 3"])
        if case == "one-annotation":
            anns = anns[:1]
        write_geojson(work / "annotations.geojson", anns, collection=case != "plain-array")
        return dump(**base, anns=anns), "done"
    if slug == "region-positive-percent":
        anns = _regions(g, ["Region A", "Region B"])
        scored = p["target"] if case != "other-region-scored" else next(
            a["name"] for a in anns if a["name"] != p["target"])
        for a in anns:
            if a["name"] == p["target"] and case != "not-classified":
                a["class"] = "Tumor"
            if a["name"] == scored:
                a.update(num_detections=a["n_nuclei"], num_positive=a["n_positive"],
                         num_negative=a["n_negative"], positive_percent=a["positive_percent"])
            else:
                a.update(num_detections=0, positive_percent=math.nan)
        rows, cols = annotation_rows(img, anns, px, detections=True)
        write_table(work / "tumor.tsv", rows, cols)
        return dump(**base, anns=anns), "done"
    if slug == "z-slice-detection":
        if case == "oracle":
            return dump(**base), "fail"
        if case != "claims-done":
            write_table(work / "slice.tsv", *annotation_rows(
                img, [{"name": None, "bounds": [0, 0, W, H]}], px, detections=False))
        return dump(**base), "fail" if case == "exported-then-failed" else "done"
    raise AssertionError(f"no final-state model for {slug}")


# --- specs -----------------------------------------------------------------------------------


def test_specs_load_and_are_spread():
    assert len(SPECS) >= 10
    assert {s.difficulty for s in SPECS.values()} == {"easy", "medium", "hard"}
    assert sum(s.infeasible for s in SPECS.values()) >= 1
    for spec_id, spec in SPECS.items():
        assert spec.tool == "qupath" and Path(spec.source).stem == spec.slug, spec_id


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_spec_shape(spec_id):
    spec = SPECS[spec_id]
    assert len(spec.negatives) >= 2
    assert spec.oracle[-1] in ("DONE", "FAIL")
    assert spec.evaluator[0].get("gate") is True
    assert spec.hints.strip()
    sampled = [sample_params(spec, seed) for seed in range(20)]
    assert sampled == [sample_params(spec, seed) for seed in range(20)]
    assert len({repr(sorted(p.items())) for p in sampled}) > 1, "params never vary"


def _balanced(code: str) -> bool:
    depth = {"(": 0, "[": 0, "{": 0}
    pairs = {")": "(", "]": "[", "}": "{"}
    quote = None
    for ch in code:
        if quote:
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in depth:
            depth[ch] += 1
        elif ch in pairs:
            depth[pairs[ch]] -= 1
            if depth[pairs[ch]] < 0:
                return False
    return quote is None and not any(depth.values())


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_every_variant_stages_and_every_proof_holds(spec_id, tmp_path):
    spec = SPECS[spec_id]
    for seed in (0, 1, 2):
        work = tmp_path / f"s{seed}"
        task = make_task(spec, seed, work)
        try:
            task.stage(work)
            for name in spec.protect:
                assert (work / name).is_file(), name
            assert data.stage_of(task.gold)["image"] in spec.protect
            g = task.gold["slide"]
            for key in ("estimated_h", "estimated_dab"):
                assert abs(np.linalg.norm(g[key]) - 1) < 1e-6
            if "n_nuclei" in g:
                assert g["n_nuclei"] > 10 and 0 <= g["positive_percent"] <= 100
            text = task.instruction
            assert "{" not in text and "$" not in text, text
            for case in ("oracle", *spec.negatives):
                for step in task.steps(case):
                    if isinstance(step, dict) and "script" in step:
                        assert _balanced(step["script"]), (case, step["script"])
            # nothing done, with the app state QuPath shows at the start (and with none): 0
            for app in (start_dump(task), None):
                for status in ("done", "fail"):
                    empty = evaluate(task.criteria(), FinalState(
                        work_dir=work, app_state=app, agent_status=status))
                    if not (spec.infeasible and status == "fail"):
                        assert empty.score == 0 and not empty.success, (app, status, empty)
            for label, make in placeholders(task).items():
                case_work = tmp_path / f"s{seed}-placeholder-{label.replace(' ', '_')}"
                case_work.mkdir()
                make(case_work, work)
                for status in ("done", "fail"):
                    result = evaluate(task.criteria(), FinalState(
                        work_dir=case_work, app_state=start_dump(task), agent_status=status))
                    assert result.score == 0 and not result.success, (label, status, result)
            for case in ("oracle", *sorted(spec.negatives)):
                case_work = tmp_path / f"s{seed}-{case}"
                case_work.mkdir()
                for name in spec.protect:
                    (case_work / name).write_bytes((work / name).read_bytes())
                app, status = final_state(task, case, case_work)
                result = evaluate(task.criteria(), FinalState(
                    work_dir=case_work, app_state=app, agent_status=status,
                    answer=ANSWERS.pop(case_work, None)))
                if case == "oracle":
                    assert result.score == 1.0 and result.success, result
                else:
                    assert not result.success, (case, result)
        finally:
            task.cleanup()


def test_staging_is_reproducible(tmp_path):
    spec = SPECS["qupath/positive-cell-detection"]
    a, b = make_task(spec, 4, tmp_path / "a"), make_task(spec, 4, tmp_path / "b")
    a.stage(tmp_path / "a")
    b.stage(tmp_path / "b")
    assert a.input_hashes == b.input_hashes
    assert a.gold["slide"]["n_positive"] == b.gold["slide"]["n_positive"]


# --- generators ------------------------------------------------------------------------------


def test_tile_counts_and_stain_estimate(tmp_path):
    ann = [{"name": "A", "x": 20, "y": 20, "w": 280, "h": 420}]
    g = data.tile(tmp_path, np.random.default_rng(5), n_nuclei=70, positive_fraction=0.3,
                  h_vector=(0.55, 0.75, 0.37), dab_vector=(0.3, 0.6, 0.74), annotations=ann,
                  region_fractions={"A": 0.75}, target="A")
    assert g["n_positive"] == sum(n["positive"] for n in g["nuclei"])
    inside = [n for n in g["nuclei"] if 20 <= n["x"] < 300 and 20 <= n["y"] < 440]
    assert g["target"]["n_nuclei"] == len(inside)
    assert g["target"]["positive_percent"] == pytest.approx(
        100 * round(0.75 * len(inside)) / len(inside))
    assert g["annotations"]["A"]["area_um2"] == pytest.approx(280 * 420 * 0.25)
    # QuPath's estimator (ported) recovers the rendering vectors closely
    assert data.angle_deg(g["estimated_h"], g["true_h"]) < 3
    assert data.angle_deg(g["estimated_dab"], g["true_dab"]) < 3
    import tifffile

    rgb = tifffile.imread(tmp_path / "tile.tif")
    assert rgb.shape == (480, 640, 3) and rgb.dtype == np.uint8


def test_region_counts_place_the_drawn_numbers(tmp_path):
    """``region_counts``: each annotation holds the seeded number of nuclei drawn from its
    range, the other region at least a quarter of the target's, the rest outside both."""
    anns = [{"name": "A", "x": 20, "y": 20, "w": 480, "h": 680},
            {"name": "B", "x": 540, "y": 20, "w": 480, "h": 680}]
    seen = set()
    for seed in range(8):
        g = data.tile(tmp_path, np.random.default_rng(seed), width=1040, height=720,
                      n_nuclei=8, annotations=anns, target="A", min_axis_ratio=0.95,
                      region_counts={"A": [20, 220], "B": [20, 220]})
        a, b = g["annotations"]["A"]["n_nuclei"], g["annotations"]["B"]["n_nuclei"]
        assert 20 <= a <= 220 and 20 <= b <= 220 and b >= a / 4, (a, b)
        assert g["target"]["n_nuclei"] == a and g["n_nuclei"] == a + b + 8
        in_a = [n for n in g["nuclei"] if 20 <= n["x"] < 500 and 20 <= n["y"] < 700]
        in_b = [n for n in g["nuclei"] if 540 <= n["x"] < 1020 and 20 <= n["y"] < 700]
        assert (len(in_a), len(in_b)) == (a, b)
        seen.add(a)
    assert len(seen) >= 6
    with pytest.raises(ValueError, match="names no annotation"):
        data.tile(tmp_path, np.random.default_rng(0), annotations=anns,
                  region_counts={"C": [1, 2]})


def _hdab_od(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hematoxylin and DAB optical densities by colour deconvolution with QuPath's default
    H-DAB stains (white background; the third stain their cross product)."""
    od = -np.log10(np.maximum(rgb.astype(float), 1.0) / 255.0)
    h, dab = data.unit(data.QUPATH_DEFAULT_H), data.unit(data.QUPATH_DEFAULT_DAB)
    conc = od.reshape(-1, 3) @ np.linalg.inv(np.stack([h, dab, data.unit(np.cross(h, dab))]))
    return conc[:, 0].reshape(rgb.shape[:2]), conc[:, 1].reshape(rgb.shape[:2])


@pytest.mark.parametrize("spec_id", ["qupath/count-detections-in-annotation",
                                     "qupath/positive-cell-detection"])
def test_counted_nuclei_are_apart_round_and_clearly_stained(spec_id, tmp_path):
    """What the two answer tolerances (one cell; half a point) rest on, measured on the drawn
    image (QuPath's own detection is not run here): above the detection threshold (0.1
    hematoxylin OD) every drawn nucleus is one blob of its own, none touching another and none
    elongated (minor/major axis >= 0.85), and its DAB OD is far from the 0.2 positivity
    threshold, on the side it was drawn."""
    import tifffile
    from scipy import ndimage
    from skimage.measure import regionprops

    for seed in range(3):
        work = tmp_path / str(seed)
        task = make_task(SPECS[spec_id], seed, work)
        try:
            task.stage(work)
            g = task.gold["slide"]
            h_od, dab_od = _hdab_od(tifffile.imread(work / "tile.tif"))
            labels, _ = ndimage.label(h_od > 0.1)
            blobs = [p for p in regionprops(labels) if p.area >= 40]  # 10 µm² at 0.5 µm
            assert len(blobs) == g["n_nuclei"]
            owner = {labels[int(round(n["y"])), int(round(n["x"]))] for n in g["nuclei"]}
            assert len(owner) == g["n_nuclei"] and 0 not in owner
            assert min(p.axis_minor_length / p.axis_major_length for p in blobs) >= 0.85
            yy, xx = np.mgrid[-4:5, -4:5]
            disk = yy ** 2 + xx ** 2 <= 16
            for n in g["nuclei"]:
                y, x = int(round(n["y"])), int(round(n["x"]))
                mean = float(dab_od[y - 4:y + 5, x - 4:x + 5][disk].mean())
                assert (mean > 0.4) if n["positive"] else (mean < 0.05), (n, mean)
        finally:
            task.cleanup()


def test_ihc_estimate_differs_from_defaults(tmp_path):
    g = data.ihc(tmp_path, np.random.default_rng(0))
    assert (g["width"], g["height"]) == (512, 512)
    assert g["default_angle_dab"] > 3 and g["default_angle_h"] > 3


def test_stains_arg_format():
    text = data.stains_arg("x", (1, 0, 0), (0, 1, 0))
    assert text.startswith('{"Name" : "x", "Stain 1" : "Hematoxylin", "Values 1" : "1.000 0.000')
    assert text.endswith('"Background" : " 255.0 255.0 255.0"}')


# --- GeoJSON getter -------------------------------------------------------------------------


def test_geojson_fixtures_from_qupath_source(tmp_path):
    geom = parse_geojson((FIX / "polygon.geojson").read_bytes(), "polygon.geojson")
    assert geom["kind"] == "geometry" and geom["features"][0]["geometry_type"] == "MultiPolygon"
    assert geom["features"][0]["area"] > 0
    special = parse_geojson((FIX / "feature-special-values.geojson").read_bytes())
    f = special["features"][0]
    assert special["kind"] == "Feature" and f["object_type"] == "annotation"
    m = f["measurements"]
    assert math.isnan(m["Not a number"]) and math.isnan(m["Not a number string"])
    assert m["Big"] == math.inf == m["Big string"] and m["Negative string"] == -math.inf
    assert m["Fine string"] == 2.5 and f["bounds"] == [60333, 50744, 394, 334]
    assert f["area"] == pytest.approx(394 * 334)
    for name, expected in (("derived-class.json", "First: Second: Third: Fourth"),
                           ("derived-class-legacy.json",
                            "First-legacy: Second-legacy: Third-legacy: Fourth-legacy")):
        cls = json.loads((FIX / name).read_text())
        doc = {"type": "Feature", "geometry": {"type": "Point", "coordinates": [1, 2]},
               "properties": {"classification": cls}}
        assert parse_geojson(json.dumps(doc))["classifications"] == [expected]


def test_geojson_collection_array_and_legacy(tmp_path):
    anns = [{"name": "a", "bounds": [1, 2, 3, 4], "class": "Tumor"},
            {"name": "b", "bounds": [10, 20, 30, 40]}]
    write_geojson(tmp_path / "c.geojson", anns, collection=True)
    write_geojson(tmp_path / "a.geojson", anns, collection=False)
    write_geojson(tmp_path / "one.geojson", anns[:1], collection=False)
    state = FinalState(work_dir=tmp_path)
    get = GETTERS["qupath_geojson"]
    assert get(state, "c.geojson", key="kind") == "FeatureCollection"
    assert get(state, "a.geojson", key="kind") == "array"
    assert get(state, "one.geojson", key="kind") == "Feature"
    assert get(state, "c.geojson", name="b", key="bounds") == [10, 20, 30, 40]
    assert get(state, "c.geojson", name="a", key="classification") == "Tumor"
    assert get(state, "c.geojson", object_type="detection", key="n_features") == 0
    legacy = [{"type": "Feature", "id": "PathAnnotationObject",
               "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [2, 0], [2, 2], [0, 0]]]},
               "properties": {"classification": {"name": "Stroma", "colorRGB": -1},
                              "measurements": [{"name": "Area", "value": 2.0}]}}]
    (tmp_path / "v02.geojson").write_text(json.dumps(legacy))
    f = get(state, "v02.geojson", key="features.0")
    assert f["object_type"] == "annotation" and f["measurements"] == {"Area": 2.0}
    assert f["classification"] == "Stroma" and f["area"] == 2.0
    with pytest.raises(GetterError, match="no feature named"):
        get(state, "c.geojson", name="zz")


@pytest.mark.parametrize(("content", "message"), [
    (b"", "empty"),
    (b"   \n", "empty"),
    (b"\x00\x01\x02GEOJSON", "binary"),
    (b'{"type": "FeatureCollection", "features": [{"type": "Feature", "geom', "truncated"),
    (b'{"type": "FeatureCollection"}', "features"),
    (b'{"hello": 1}', "not GeoJSON"),
    (b'{"type": "Feature", "properties": {}}', "without geometry"),
    (b'{"type": "Feature", "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1]]]}}',
     "bad coordinate"),
    (b'{"type": "Feature", "geometry": {"type": "Blob", "coordinates": []}}', "unknown geometry"),
    (b'[{"type": "Feature", "geometry": {"type": "Point", "coordinates": [0, 0]}, '
     b'"properties": {"measurements": {"a": "abc"}}}]', "not a number"),
])
def test_geojson_malformed_files_fail_cleanly(tmp_path, content, message):
    (tmp_path / "bad.geojson").write_bytes(content)
    with pytest.raises(GetterError, match=message):
        GETTERS["qupath_geojson"](FinalState(work_dir=tmp_path), "bad.geojson")


# --- measurement-table getter ----------------------------------------------------------------


def test_table_as_qupath_writes_it(tmp_path):
    anns = [{"name": "R1", "bounds": [0, 0, 100, 50], "class": "Tumor", "num_detections": 12,
             "num_positive": 3, "num_negative": 9, "positive_percent": 25.0},
            {"name": "R2", "bounds": [10, 10, 20, 20]}]
    rows, cols = annotation_rows("ihc.tif", anns, 0.5, detections=True)
    write_table(tmp_path / "t.tsv", rows, cols)
    text = (tmp_path / "t.tsv").read_text()
    assert text.splitlines()[0].startswith("Image\tObject ID\tObject type\tName\tClassification")
    assert "\tNaN\t" in text  # R2's Positive %
    state = FinalState(work_dir=tmp_path)
    get = GETTERS["qupath_table"]
    assert get(state, "t.tsv", key="n_rows") == 2
    assert get(state, "t.tsv", name="R1", column="Area um^2") == pytest.approx(1250)
    assert get(state, "t.tsv", name="R1", column="Positive %") == 25
    assert math.isnan(get(state, "t.tsv", name="R2", column="Positive %"))
    assert get(state, "t.tsv", name="R2", column="Classification") == ""
    assert get(state, "t.tsv", column="Name") == ["R1", "R2"]
    assert get(state, "t.tsv", object_type="annotation", key="n_rows") == 2
    with pytest.raises(GetterError, match="no column"):
        get(state, "t.tsv", column="H-score")
    with pytest.raises(GetterError, match="0 rows named"):
        get(state, "t.tsv", name="R9")


def test_table_old_class_column_latin1_and_quoted_fields(tmp_path):
    old = ("Image\tName\tClass\tParent\tROI\tCentroid X \xb5m\tCentroid Y \xb5m\t"
           "Num Detections\tArea \xb5m^2\n"
           "slide.svs\tRegion\tTumor\tImage\tPolygon\t12.5\t7.25\t4\t1234.5\n")
    (tmp_path / "old.txt").write_bytes(old.encode("latin-1"))
    state = FinalState(work_dir=tmp_path)
    assert GETTERS["qupath_table"](state, "old.txt", name="Region",
                                   column="Classification") == "Tumor"
    assert GETTERS["qupath_table"](state, "old.txt", name="Region", column="Area µm^2") == 1234.5
    csv = 'Image,Name,Classification\nimg.tif,"a, b",Tumor\n'
    (tmp_path / "c.csv").write_text(csv)
    assert GETTERS["qupath_table"](state, "c.csv", key="names") == ["a, b"]
    assert normalize_column("Area μm^2") == normalize_column("area um^2") == "area µm^2"


@pytest.mark.parametrize(("content", "message"), [
    (b"", "empty"),
    (b"\n\n", "empty"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "binary"),
    (b"a\tb\tc\n1\t2\t3\n", "not a QuPath measurement table"),
    (b"Image\tName\tArea px^2\nimg\tR1\t12\nimg\tR2\n", "truncated"),
    (b"Image\tName\tName\nimg\tR\tR\n", "duplicate"),
    (b'Image\tName\nimg\t"open\n', "unbalanced"),
])
def test_table_malformed_files_fail_cleanly(tmp_path, content, message):
    (tmp_path / "bad.tsv").write_bytes(content)
    with pytest.raises(GetterError, match=message):
        GETTERS["qupath_table"](FinalState(work_dir=tmp_path), "bad.tsv")


def test_dump_getters(tmp_path):
    app = dump("tile.tif", 10, 10, 0.5, anns=[{"name": "A", "bounds": [1, 2, 3, 4]}])
    state = FinalState(work_dir=tmp_path, app_state=app)
    assert GETTERS["qupath_annotation"](state, "A", key="area_px") == 12
    assert GETTERS["qupath_stain_angle"](state, 2, list(data.QUPATH_DEFAULT_DAB)) < 1e-6
    with pytest.raises(GetterError, match="no annotation named"):
        GETTERS["qupath_annotation"](state, "B")
    with pytest.raises(GetterError, match="unavailable"):
        GETTERS["qupath_annotation"](FinalState(work_dir=tmp_path), "A")
    with pytest.raises(GetterError, match="not a QuPath hierarchy dump"):
        GETTERS["qupath_annotation"](FinalState(work_dir=tmp_path, app_state={"x": 1}), "A")
    fluo = FinalState(work_dir=tmp_path, app_state=dump("t", 1, 1, 1, image_type="FLUORESCENCE"))
    with pytest.raises(GetterError, match="no colour deconvolution"):
        GETTERS["qupath_stain_angle"](fluo, 1, [1, 0, 0])


# --- adapter: discovery, launch command, groovy sources --------------------------------------


@pytest.fixture
def no_qupath(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SCIAGENT_QUPATH_HOME", str(tmp_path / "nowhere"))
    monkeypatch.delenv("QUPATH_EXE", raising=False)
    if any(p.exists() for p in qadapter.install_locations()):
        pytest.skip("QuPath is installed system-wide here")


def test_missing_qupath_names_the_install_command(no_qupath, monkeypatch, tmp_path):
    adapter = load_adapter("qupath")
    assert qadapter.find_qupath() is None
    with pytest.raises(MissingProgramError, match="sciagent-gym install qupath"):
        adapter.check_installed()
    monkeypatch.setenv("QUPATH_EXE", str(tmp_path / "no" / "QuPath"))
    with pytest.raises(MissingProgramError, match="QUPATH_EXE=.*not an executable"):
        adapter.check_installed()
    req = adapter.info.requires[0]
    assert req.install == "sciagent-gym install qupath" and "official release" in req.package


def test_gym_make_without_qupath_says_how_to_install(no_qupath):
    import gymnasium as gym

    import sciagent_gym  # noqa: F401

    with pytest.raises(MissingProgramError, match="sciagent-gym install qupath"):
        gym.make("SciGUI-QuPath-v0", task="qupath/set-image-type")


def test_find_qupath_order(no_qupath, monkeypatch, tmp_path):
    fake = tmp_path / "nowhere" / "bin" / "QuPath"
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\n")  # a fake launcher: discovery only
    fake.chmod(0o755)
    assert qadapter.find_qupath() == fake
    assert qadapter.app_dir(fake) == tmp_path / "nowhere"
    other = tmp_path / "elsewhere" / "QuPath"
    other.parent.mkdir()
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    monkeypatch.setenv("QUPATH_EXE", str(other))
    assert qadapter.find_qupath() == other


def test_launch_command_and_env(no_qupath, monkeypatch, tmp_path):
    fake = tmp_path / "nowhere" / "bin" / "QuPath"
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    adapter = load_adapter("qupath")
    assert adapter.info.env_id == "SciGUI-QuPath-v0"
    assert adapter.sandbox_ro_binds() == [str(tmp_path / "nowhere")]

    class P:
        paths = {"home": "/home/user", "work": "/home/user/work", "tmp": "/tmp"}

    task = make_task(SPECS["qupath/classify-annotation"], 0, tmp_path / "w")
    task.stage(tmp_path / "w")
    argv = adapter.launch_argv(P(), task)
    assert argv[:2] == ["sh", "-c"] and argv[4] == str(fake)
    stage = json.loads(argv[6])
    assert stage["image"] == "ihc.tif" and len(stage["annotations"]) == 3
    assert "answer" not in argv[6] and "positive_percent" not in argv[6]
    subprocess.run(["sh", "-n", "-c", argv[2]], check=True)
    env = adapter.launch_env(P())["JAVA_TOOL_OPTIONS"]
    assert "-Duser.home=/home/user" in env and "-Dqupath.prefs.name=sciagent-gym" in env
    assert "-Dqupath.startup.script=/tmp/sciagent-qupath/channel.groovy" in env
    from sciagent_gym.controller.windows import WindowInfo

    def win(title):
        return WindowInfo(id=1, title=title, wm_class="QuPath", x=0, y=0, width=800,
                          height=600, active=True, modal=False)

    assert adapter.is_ready([win("QuPath (0.5.1) - ihc.tif")], task)
    assert not adapter.is_ready([win("QuPath (0.5.1)")], task)
    assert adapter.is_ready([win("QuPath (0.5.1)")], None)
    assert not adapter.is_ready([win("Set image type")], None)
    task.cleanup()


def test_groovy_sources_and_prefs():
    here = ROOT / "envs" / "qupath"
    for name in ("channel.groovy", "make_project.groovy", "state_dump.groovy"):
        code = (here / "inside" / name).read_text()
        assert _balanced(code.replace("'s", "s")), name
    assert "// @ARGS" in qadapter.MAKE_PROJECT
    prefs = (here / "snapshot/home/.java/.userPrefs/sciagent-gym/prefs.xml").read_text()
    for key in ("imageTypeSetting", "showStartupMessage", "autoUpdateCheck"):
        assert f'key="{key}"' in prefs


# --- install recipe --------------------------------------------------------------------------


def _run_install(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(INSTALL), *args], capture_output=True, text=True,
                           timeout=60, env={**os.environ, **(env or {})})


def test_install_script_offline_paths(tmp_path):
    subprocess.run(["bash", "-n", str(INSTALL)], check=True)
    res = _run_install("--help")
    assert res.returncode == 0 and "--prefix" in res.stdout
    res = _run_install("--bogus")
    assert res.returncode != 0 and "unknown option" in res.stderr
    # a local fake release (named a fake: it only carries a bin/QuPath stub)
    tree = tmp_path / "QuPath-v0.5.1-Linux" / "QuPath" / "bin"
    tree.mkdir(parents=True)
    (tree / "QuPath").write_text("#!/bin/sh\necho sciagent-qupath-ok\n")
    (tree / "QuPath").chmod(0o755)
    archive = tmp_path / "fake.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        tar.add(tmp_path / "QuPath-v0.5.1-Linux", arcname="QuPath-v0.5.1-Linux")
    prefix = tmp_path / "prefix"
    res = _run_install("--prefix", str(prefix), env={"QUPATH_URL": archive.as_uri()})
    assert res.returncode != 0 and "checksum mismatch" in res.stderr
    assert not (prefix / "bin" / "QuPath").exists()
    import hashlib

    digest = hashlib.sha512(archive.read_bytes()).hexdigest()
    env = {"QUPATH_URL": archive.as_uri(), "QUPATH_SHA512": digest}
    res = _run_install("--prefix", str(prefix), env=env)
    assert res.returncode == 0, res.stderr
    assert (prefix / "bin" / "QuPath").resolve() == \
        (prefix / "QuPath-v0.5.1" / "bin" / "QuPath").resolve()
    again = _run_install("--prefix", str(prefix), env=env)
    assert again.returncode == 0 and "already installed" in again.stdout


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_every_seed_gives_other_data(spec_id, tmp_path):
    """Every seed stages another image (seeded crops of the IHC image, seeded tiles), so no
    held-out episode repeats a training one."""
    hashes = set()
    for seed in range(5):
        task = make_task(SPECS[spec_id], seed, tmp_path / str(seed))
        try:
            task.stage(tmp_path / str(seed))
            hashes.add(repr(sorted(task.input_hashes.items())))
        finally:
            task.cleanup()
    assert len(hashes) == 5


def test_ihc_variants_keep_annotations_inside(tmp_path):
    regions = [{"name": "A", "x": 0, "y": 400, "w": 150, "h": 120}]
    bounds = []
    for seed in range(4):
        g = data.ihc(tmp_path, np.random.default_rng(seed), crop=448, jitter=16,
                     intensity=0.15, annotations=regions)
        x, y, w, h = g["annotations"]["A"]["bounds"]
        assert (g["width"], g["height"]) == (448, 448)
        assert 0 <= x and y + h <= 448 and (w, h) == (150, 120)
        bounds.append((x, y))
    assert len(set(bounds)) > 1
    with pytest.raises(ValueError, match="does not fit"):
        data.ihc(tmp_path, np.random.default_rng(0), crop=600)


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_modality_and_cheats(spec_id, tmp_path):
    """Every QuPath task is ``gui`` (run() refused) and names its own cheats; each cheat, played
    on the start state QuPath shows (its answer kept, its run() refused), scores 0. Answers
    alone, even the gold value, earn nothing: the work in QuPath gates them."""
    from sciagent_gym.actions.parse import parse_action
    from sciagent_gym.actions.types import Answer, Done, Fail, Run

    spec = SPECS[spec_id]
    assert spec.modality == "gui" and not spec.allow_cli and spec.cheats
    for seed in (0, 1):
        work = tmp_path / f"s{seed}"
        task = make_task(spec, seed, work)
        try:
            task.stage(work)
            for name in spec.cheats:
                answer, status = None, "done"
                for step in task.steps(f"cheat:{name}"):
                    for action in parse_action(step, (1280, 800)):
                        if isinstance(action, Answer):
                            answer = action.text
                        elif isinstance(action, Fail):
                            status = "fail"
                        else:  # refused under gui, or the end of the episode
                            assert isinstance(action, (Run, Done)), (name, action)
                result = evaluate(task.criteria(), FinalState(
                    work_dir=work, app_state=start_dump(task), agent_status=status,
                    answer=answer))
                assert result.score == 0 and not result.success, (name, result)
        finally:
            task.cleanup()


def test_answer_criteria_read_the_program_given_value():
    """The two count tasks take their value through the answer action, and their oracles read
    it from QuPath ({script, answer} steps), never echo the gold."""
    for spec_id in ("qupath/count-detections-in-annotation", "qupath/positive-cell-detection"):
        spec = SPECS[spec_id]
        assert any(c["getter"]["fn"] == "answer_number" for c in spec.evaluator)
        answer_steps = [s for s in spec.oracle if isinstance(s, dict) and "answer" in s]
        assert answer_steps and all("gold" not in s["answer"] for s in answer_steps)
        assert "write" not in spec.instruction and "answer action" in spec.instruction


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_generic_cheats_on_the_start_state(spec_id, tmp_path):
    """The audit's generic cheats (sciagent_gym.runs.cheats), played here on the start state QuPath
    would show, since the audit cannot run QuPath on machines without it: placeholders score at
    most the limit without success, every other cheat 0 (ours score 0 throughout)."""
    from sciagent_gym.runs.cheats import generic_cheats, play_offline

    spec = SPECS[spec_id]
    for seed in (0, 1):
        work = tmp_path / f"s{seed}"
        task = make_task(spec, seed, work)
        try:
            task.stage(work)
            criteria = task.criteria()
            start = FinalState(work_dir=work, app_state=start_dump(task), agent_status="done")
            for cheat in generic_cheats(criteria, work):
                result = play_offline(cheat, criteria, start, tmp_path / "scratch")
                assert result.score == 0 and not result.success, (cheat.name, result)
        finally:
            task.cleanup()


def test_every_given_stain_vector_is_away_from_the_defaults():
    """set-stain-vectors' no-op keeps QuPath's defaults: every vector a seed can ask for must
    lie well beyond the 1-degree tolerance from them (and from the other stain's default)."""
    params = SPECS["qupath/set-stain-vectors"].params
    for key, default in (("h", data.QUPATH_DEFAULT_H), ("dab", data.QUPATH_DEFAULT_DAB)):
        for text in params[key]["choice"]:
            vec = [float(v) for v in text.split()]
            assert data.angle_deg(vec, default) > 2, (key, text)
    for h in params["h"]["choice"]:
        for dab in params["dab"]["choice"]:
            assert data.angle_deg([float(v) for v in h.split()],
                                  [float(v) for v in dab.split()]) > 10  # swapped is wrong
