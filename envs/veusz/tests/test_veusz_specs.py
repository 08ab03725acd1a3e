"""Offline checks of the Veusz task specs, their data generators and the Veusz getters.

No X display needed: specs are staged into tmp_path, the generators' gold values are checked
against the physics they were built from (Ramberg-Osgood yield strength, Arrhenius activation
energy, Bragg's law, hydrate stoichiometry), the getters get dumps written here (missing and
malformed parts must become failed criteria, not exceptions), and saved documents are read by
headless Veusz in its sandbox, which must refuse a document with unsafe commands.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from helpers import check_answer_units, requires

from sciagent_gym.evaluation import Criterion, FinalState, evaluate
from sciagent_gym.tasks.spec import TaskSpec
from sciagent_gym.tasks.task import Task
from sciagent_gym.tools import load_adapter, load_tool_getters, load_tool_specs

pytestmark = requires(tool="veusz")

load_tool_getters("veusz")

from sciagent_gym.envs.veusz import data  # noqa: E402
from sciagent_gym.envs.veusz.getters import load_document, matches  # noqa: E402

SPECS: dict[str, TaskSpec] = load_tool_specs("veusz")
SANDBOX = {"home": "/home/user", "tmp": "/tmp"}


def make_task(spec: TaskSpec, seed: int, work: Path) -> Task:
    return Task(spec, seed, data.GENERATORS, {**SANDBOX, "work": str(work)})


def test_specs_cover_the_required_kinds_of_task():
    assert len(SPECS) >= 12
    assert {s.difficulty for s in SPECS.values()} == {"easy", "medium", "hard"}
    assert sum(s.infeasible for s in SPECS.values()) == 1
    console = [s for s in SPECS.values() if "scripting" in s.tags]
    assert len(console) >= 2 and all(s.modality == "gui" for s in console)
    assert all(s.gui_oracle is not None for s in SPECS.values())
    assert load_adapter("veusz").generators == data.GENERATORS


@pytest.mark.parametrize("spec_id", sorted(SPECS))
def test_every_variant_stages(spec_id, tmp_path):
    spec = SPECS[spec_id]
    for seed in range(2):
        work = tmp_path / f"seed{seed}"
        task = make_task(spec, seed, work)
        try:
            task.stage(work)
            assert task.criteria()
            assert any(work.glob("*.csv"))
        finally:
            task.cleanup()


@pytest.mark.parametrize("alloy", sorted(data.ALLOYS))
def test_tensile_gold_is_the_ramberg_osgood_material(alloy, tmp_path):
    g = data.tensile(tmp_path, np.random.default_rng(7), alloy)
    assert g["yield_offset"] == pytest.approx(g["Sy_nominal"], rel=0.01)  # 0.2 % offset = Sy
    assert g["E"] == pytest.approx(g["E_nominal"], rel=0.03)
    assert g["E_slope"] == pytest.approx(g["E"] * 10)
    assert g["fit_points"] >= 10 and g["uts"] > g["yield_offset"]
    assert g["true_stress_at_uts"] == pytest.approx(g["uts"] * (1 + g["strain_at_uts"] / 100))
    lines = (tmp_path / "tensile.csv").read_text().splitlines()
    assert lines[0] == "strain,stress" and len(lines) == g["points"] + 1


@pytest.mark.parametrize("base", sorted(data.ALLOY_BASES))
def test_experimental_alloy_modulus_comes_from_the_test(base, tmp_path):
    """An experimental alloy's E is drawn over its base metal's range (not one handbook value):
    the fitted slope recovers it, the fit range stays elastic and the yield strength holds."""
    spec = data.ALLOY_BASES[base]
    limit = {"magnesium": 0.15, "aluminium": 0.15, "zirconium": 0.15, "titanium": 0.2}.get(
        base, 0.06)
    moduli = []
    for seed in range(6):
        g = data.tensile(tmp_path, np.random.default_rng(seed), base=base, limit=limit)
        assert spec["E"][0] <= g["E_nominal"] <= spec["E"][1]
        assert g["E"] == pytest.approx(g["E_nominal"], rel=0.03)
        assert g["yield_offset"] == pytest.approx(g["Sy_nominal"], rel=0.01)
        assert g["Sy_nominal"] >= 2.2 * g["E_nominal"] * 1000 * limit / 100 - 0.1
        assert g["fit_points"] >= 4 and g["uts"] > g["yield_offset"]
        moduli.append(g["E"])
    # one base metal's tests spread far beyond the answer's 1.5 % tolerance
    assert max(moduli) / min(moduli) > 1.05


def test_arrhenius_gold_recovers_the_activation_energy(tmp_path):
    energies = {}
    for seed in range(5):
        g = data.arrhenius(tmp_path, np.random.default_rng(seed))
        lo, hi = data.ELECTROLYTES[g["material"]][0]
        assert lo <= g["Ea_nominal"] <= hi
        energies.setdefault(g["material"], []).append(g["Ea"])
        assert g["Ea"] == pytest.approx(g["Ea_nominal"], rel=0.03)
        assert abs(g["Ea_celsius_mistake"] - g["Ea"]) > 0.05 * g["Ea"]
        assert g["slope"] == pytest.approx(-g["Ea"] / (1000 * data.K_B))
    assert (tmp_path / "conductivity.csv").read_text().startswith("T,sigma\n")
    # one composition's pellets differ by more than the answer's 1 % tolerance
    ysz = [data.arrhenius(tmp_path, np.random.default_rng(s), sorted(data.ELECTROLYTES)[0])["Ea"]
           for s in range(4)]
    assert max(ysz) / min(ysz) > 1.05


def test_xrd_gold_is_braggs_law_of_the_strongest_reflection(tmp_path):
    g = data.xrd(tmp_path, np.random.default_rng(2), "NaCl")
    assert g["hkl"] == "200" and g["d"] == pytest.approx(g["d_pymatgen"], abs=1e-4)
    assert g["d"] == pytest.approx(g["a"] / 2, abs=1e-3)  # d(200) = a/2 in a cubic cell
    assert g["clearance"] > 2 * 0.6  # no other reflection inside the fit window
    x = np.loadtxt(tmp_path / "pattern.csv", delimiter=",", skiprows=1)
    top = x[np.argmax(x[:, 1]), 0]
    assert top == pytest.approx(g["peak"], abs=0.1)


def test_peak_widths_follow_williamson_hall(tmp_path):
    g = data.peak_widths(tmp_path, np.random.default_rng(4), "CeO2")
    table = np.loadtxt(tmp_path / "peaks.csv", delimiter=",", skiprows=1)
    assert len(table) == g["peaks"] >= 5
    theta = np.radians(table[:, 0] / 2)
    beta = np.radians(table[:, 1])
    slope, icpt = np.polyfit(4 * np.sin(theta), beta * np.cos(theta), 1,
                             w=1 / np.radians(table[:, 2]))
    assert 0.9 * data.CU_KA / icpt / 10 == pytest.approx(g["size_nm"], rel=0.5)
    assert (table[:, 2] > 0).all()


def test_hydrate_mass_loss_is_its_water(tmp_path):
    g = data.tga_dsc(tmp_path, np.random.default_rng(0), "CuSO4.5H2O")
    assert g["loss"] == pytest.approx(36.07, abs=0.02)  # 5 H2O of CuSO4.5H2O
    assert g["mass_col"]["last"] == pytest.approx(100 - g["loss"], abs=0.2)


# -- getters on dumps written here ---------------------------------------------------------------

COL = {"n": 3, "mean": 2.0, "min": 1.0, "max": 3.0}


def _dump(xy_y=None, serr=None):
    y = {"n": 3, "mean": 20.0, "min": 10.0, "max": 30.0, "serr": serr}
    return {"filename": "", "modified": True, "datasets": {
        "a": {**COL, "kind": "Dataset"}, "b": {**(xy_y or y), "kind": "Dataset"}},
        "widgets": {
            "/": {"type": "document", "settings": {}, "data": {}},
            "/page1": {"type": "page", "settings": {}, "data": {}},
            "/page1/graph1": {"type": "graph", "settings": {}, "data": {}},
            "/page1/graph1/x": {"type": "axis", "settings": {"label": "X (%)", "log": False}},
            "/page1/graph1/y": {"type": "axis", "settings": {"label": "Y", "log": True,
                                                             "direction": "vertical"}},
            "/page1/graph1/y2": {"type": "axis", "settings": {"label": "Y2",
                                                              "otherPosition": 1.0}},
            "/page1/graph1/xy1": {"type": "xy", "name": "xy1",
                                  "settings": {"xAxis": "x", "yAxis": "y2"},
                                  "data": {"xData": COL, "yData": xy_y or y}},
            "/page1/graph1/fit1": {"type": "fit", "name": "fit1",
                                   "settings": {"values": {"a": 1, "b": 2}},
                                   "data": {"xData": COL, "yData": y},
                                   "curve": {"slope": 2.0, "argmax": 3.0}},
        }}


def _score(tmp_path, app_state, getter, check):
    crit = Criterion.from_dict({"name": "c", "getter": getter, "check": check})
    state = FinalState(work_dir=tmp_path, app_state=app_state)
    return evaluate([crit], state).criteria[0]


def test_matches_needs_the_same_length_and_values():
    assert matches({"n": 3, "mean": 2.0, "min": 1.0, "max": 3.0}, COL)
    assert not matches({"n": 4, "mean": 2.0, "min": 1.0, "max": 3.0}, COL)
    assert not matches({"n": 3, "mean": 2.1, "min": 1.0, "max": 3.0}, COL)
    assert matches({"n": 3, "mean": 2.01, "min": 1.0, "max": 3.0}, COL, rel_tol=0.01)
    assert not matches(None, COL) and not matches({"n": 3, "mean": "x"}, COL)


def test_plot_getters_follow_data_and_axes(tmp_path):
    y = {"n": 3, "mean": 20.0, "min": 10.0, "max": 30.0}
    dump = _dump()
    got = _score(tmp_path, dump, {"fn": "veusz_plot", "x": COL, "y": y, "key": "yaxis.label"},
                 {"op": "text", "expected": "Y2"})
    assert got.passed  # the xy is drawn on the axis it names, not on 'y'
    assert _score(tmp_path, dump, {"fn": "veusz_plot", "x": COL, "y": y, "key": "xaxis.label"},
                  {"op": "text", "expected": "X (%)"}).passed
    assert _score(tmp_path, dump, {"fn": "veusz_plot", "kind": "fit", "x": COL, "y": y,
                                   "key": "curve.slope"}, {"op": "numeric", "expected": 2}).passed
    assert not _score(tmp_path, dump, {"fn": "veusz_plot", "x": y, "y": COL, "key": "name"},
                      {"op": "text", "expected": "xy1"}).passed  # swapped axes: no such plot
    assert _score(tmp_path, dump, {"fn": "veusz_widgets", "type": "axis"},
                  {"op": "equals", "expected": 3}).passed
    assert _score(tmp_path, dump, {"fn": "veusz_dataset", "like": y, "key": "name"},
                  {"op": "text", "expected": "b"}).passed
    missing = _score(tmp_path, None, {"fn": "veusz_plot", "x": COL, "key": "count"},
                     {"op": "equals", "expected": 0})
    assert not missing.passed and "unavailable" in missing.detail
    broken = _score(tmp_path, {"widgets": "nonsense"}, {"fn": "veusz_plot", "key": "count"},
                    {"op": "equals", "expected": 0})
    assert not broken.passed


# -- saved documents, read by Veusz in its sandbox ---------------------------------------------

def test_a_saved_document_is_read_back_by_veusz(tmp_path):
    g = data.arrhenius(tmp_path, np.random.default_rng(3))
    data.plot_document(tmp_path, None, "conductivity.csv", "T", "sigma", "doc.vsz",
                       xlabel="T (degC)", ylog=True)
    out = load_document(tmp_path / "doc.vsz", [tmp_path / "conductivity.csv"])
    xy = out["widgets"]["/page1/graph1/data"]
    assert matches(xy["data"]["xData"], g["T_col"]) and matches(xy["data"]["yData"],
                                                                 g["sigma_col"])
    assert out["widgets"]["/page1/graph1/x"]["settings"]["label"] == "T (degC)"
    assert out["widgets"]["/page1/graph1/y"]["settings"]["log"] is True


def test_unsafe_documents_are_refused_and_get_no_credit(tmp_path):
    (tmp_path / "evil.vsz").write_text(
        "import os\nos.system('touch /home/user/work/pwned')\n"
        "Add('page', name='page1')\n")
    res = _score(tmp_path, None, {"fn": "veusz_document", "source": "evil.vsz",
                                  "key": "widgets"}, {"op": "is_true"})
    assert not res.passed and "cannot load" in res.detail
    assert not (tmp_path / "pwned").exists()
    (tmp_path / "empty.vsz").write_text("")
    assert not _score(tmp_path, None, {"fn": "veusz_document", "source": "empty.vsz"},
                      {"op": "is_true"}).passed
    (tmp_path / "not-vsz.txt").write_text("Add('page')\n")
    assert not _score(tmp_path, None, {"fn": "veusz_document", "source": "not-vsz.txt"},
                      {"op": "is_true"}).passed


def test_bragg_helper_constant_is_pymatgens_cu_ka():
    from pymatgen.analysis.diffraction.xrd import WAVELENGTHS

    assert WAVELENGTHS["CuKa"] == pytest.approx(data.CU_KA, abs=1e-5)
    assert math.isclose(data.K_B, 8.617333262e-5)


# -- answers carry units: an equivalent unit passes, a bare number of another unit's size fails --

UNIT_ANSWERS = {
    # task: (gold key, unit, [(factor, equivalent unit)], factor of a bare wrong-unit number)
    "veusz/youngs-modulus": ("t.E", "GPa", [(1000, "MPa"), (1e9, "Pa")], 1000),
    "veusz/offset-yield-strength": ("t.yield_offset", "MPa", [(1e-3, "GPa")], 1e-3),
    "veusz/true-stress-curve": ("t.true_stress_at_uts", "MPa", [(1e-3, "GPa")], 1e-3),
    "veusz/alloy-comparison-console": ("m.best_uts", "MPa", [(1e-3, "GPa"), (1e6, "Pa")], 1e-3),
    "veusz/arrhenius-activation-energy": ("a.Ea", "eV", [(1000, "meV")], 1000),
    "veusz/xrd-peak-gaussian": ("p.d", "Å", [(0.1, "nm")], 0.1),
}


def test_every_answered_quantity_declares_its_unit():
    for spec in SPECS.values():
        for c in spec.evaluator:
            getter = c["getter"]
            if isinstance(getter, dict) and getter["fn"] == "answer_number":
                assert getter.get("unit"), (spec.id, c["name"])
    assert all(any(isinstance(c["getter"], dict) and c["getter"].get("unit") == unit
                   for c in SPECS[task_id].evaluator)
               for task_id, (_, unit, _, _) in UNIT_ANSWERS.items())


@pytest.mark.parametrize("task_id", sorted(UNIT_ANSWERS))
def test_answer_units_convert_and_bare_numbers_mean_the_stated_unit(task_id, tmp_path):
    key, unit, equivalents, wrong = UNIT_ANSWERS[task_id]
    task = make_task(SPECS[task_id], 0, tmp_path)
    try:
        task.stage(tmp_path)
        check_answer_units(task, tmp_path, key, unit, equivalents, wrong)
    finally:
        task.cleanup()


# -- the long-horizon Arrhenius workflow: partial credit by stage (live-document dumps) ---------

def _workflow_dump(gold: dict, stage: str) -> dict:
    """The live document after ``stage`` of veusz/arrhenius-report-workflow."""
    sets = {"T": {**gold["T_col"], "kind": "Dataset"}, "sigma": {**gold["sigma_col"],
                                                               "kind": "Dataset"}}
    widgets = {"/": {"type": "document", "settings": {}, "data": {}},
               "/page1": {"type": "page", "settings": {}, "data": {}},
               "/page1/graph1": {"type": "graph", "settings": {}, "data": {}},
               "/page1/graph1/x": {"type": "axis", "settings": {"label": ""}},
               "/page1/graph1/y": {"type": "axis", "settings": {"label": "",
                                                                "direction": "vertical"}}}
    if stage != "import":
        sets["invT"] = {**gold["invT_col"], "kind": "DatasetExpression"}
        sets["lnsigma"] = {**gold["ln_col"], "kind": "DatasetExpression"}
    if stage == "plot-fit":
        data_ = {"xData": gold["invT_col"], "yData": gold["ln_col"]}
        widgets["/page1/graph1/x"]["settings"]["label"] = "1000/T (1/K)"
        widgets["/page1/graph1/y"]["settings"]["label"] = "ln(sigma)"
        widgets["/page1/graph1/arrhenius"] = {"type": "xy", "name": "arrhenius",
                                              "settings": {}, "data": data_}
        widgets["/page1/graph1/line"] = {"type": "fit", "name": "line", "settings": {},
                                         "data": data_, "curve": {"slope": gold["slope"]}}
        widgets["/page1/graph1/legend"] = {"type": "key", "settings": {}, "data": {}}
    return {"filename": "", "modified": True, "datasets": sets, "widgets": widgets}


@pytest.mark.parametrize("stage, answered, expected", [
    ("import", False, 1 / 12), ("transform", False, 3 / 12), ("plot-fit", True, 7 / 12)])
def test_arrhenius_workflow_stages_give_partial_credit(stage, answered, expected, tmp_path):
    """stops-after-import, stops-after-transform and stops-before-saving (the fit done and the
    answer given, nothing saved or exported: the report stage waits for the export)."""
    task = make_task(SPECS["veusz/arrhenius-report-workflow"], 0, tmp_path)
    try:
        task.stage(tmp_path)
        gold = task.gold["a"]
        answer = f"{gold['Ea']:.4f} eV" if answered else None
        state = FinalState(work_dir=tmp_path, app_state=_workflow_dump(gold, stage),
                           agent_status="done", answer=answer)
        result = evaluate(task.criteria(), state)
        assert result.score == pytest.approx(expected), result
        assert not result.success
    finally:
        task.cleanup()


@pytest.mark.parametrize("transformed, expected", [(False, 1 / 12), (True, 3 / 12)])
def test_tensile_workflow_stage_negatives_give_partial_credit(transformed, expected, tmp_path):
    """stops-after-import and stops-after-transform of veusz/tensile-report-workflow."""
    task = make_task(SPECS["veusz/tensile-report-workflow"], 0, tmp_path)
    try:
        task.stage(tmp_path)
        gold = task.gold["t"]
        sets = {"strain": {**gold["strain_col"], "kind": "Dataset"},
                "stress": {**gold["stress_col"], "kind": "Dataset"}}
        if transformed:
            sets["true_strain"] = {**gold["true_strain_pct_col"], "kind": "DatasetExpression"}
            sets["true_stress"] = {**gold["true_stress_col"], "kind": "DatasetExpression"}
        dump = {"filename": "", "modified": True, "datasets": sets,
                "widgets": {"/": {"type": "document", "settings": {}, "data": {}}}}
        result = evaluate(task.criteria(), FinalState(work_dir=tmp_path, app_state=dump,
                                                      agent_status="done"))
        assert result.score == pytest.approx(expected), result
        assert not result.success
    finally:
        task.cleanup()


_BUILD_AND_SERIALIZE = r"""
import json, os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from veusz import qtall as qt
app = qt.QApplication(["veusz"])
from veusz import document, setting, widgets, dataimport
doc = document.Document()
ci = document.CommandInterface(doc)
nan, inf = float("nan"), float("inf")
ci.SetData("x", [0.1, 1.0 / 3.0, 2.5e-12, nan, inf, 7.0], symerr=[0.01] * 6)
ci.SetDataText("labels", ["a", "b'c", 'd"e'])
ci.SetDataExpression("y", "x * 2", linked=True)
ci.To(ci.Add("page"))
ci.To(ci.Add("graph"))
ci.Add("xy", name="line", xData="x", yData="y")
ci.Set("/page1/graph1/y/log", True)
ns = {"doc": doc}
exec(sys.argv[1], ns)
state = dict(doc=doc)
exec(sys.argv[2], state)
print(json.dumps({"serialized": ns["__out__"], "state": state["__out__"]}))
"""


def test_the_live_document_serialized_reads_back_the_same(tmp_path):
    """inside/serialize.py: what the live Veusz hands over (every dataset inline, exact
    numbers, NaN and infinity, text with quotes) reads back in the sandboxed headless Veusz
    as the same document summary the state dump gives on the original."""
    import json
    import subprocess

    from sciagent_gym.envs.veusz.adapter import INSIDE, SERIALIZE_CODE

    res = subprocess.run(["/usr/bin/python3", "-I", "-c", _BUILD_AND_SERIALIZE, SERIALIZE_CODE,
                          (INSIDE / "state_dump.py").read_text()],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path,
                         env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                              "XDG_RUNTIME_DIR": str(tmp_path)})
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    serialized, original = out["serialized"], out["state"]
    assert serialized["meta"]["y"]["kind"] == "DatasetExpression"
    doc = tmp_path / "document.vsz"
    doc.write_text(serialized["vsz"])
    fresh = load_document(doc, [])
    assert fresh["widgets"] == original["widgets"]
    for name, summary in original["datasets"].items():
        assert {k: v for k, v in fresh["datasets"][name].items()
                if k not in ("kind", "linked", "expr")} == \
            {k: v for k, v in summary.items() if k not in ("kind", "linked", "expr")}, name
    assert fresh["datasets"]["x"]["n"] == 6 and fresh["datasets"]["x"]["finite"] == 4


@pytest.mark.parametrize("plotted, expected", [(False, 3 / 5), (True, 3.5 / 5)])
def test_youngs_modulus_scores_the_plot_before_the_fit(plotted, expected, tmp_path):
    """The work has parts: the tensile curve plotted (0.5), the elastic fit and its E, and the
    saved document and exported page (1.5). A fit with no xy of the test (the fit-without-plot
    negative) keeps the fit's credit only; nothing saved keeps the live work's credit only."""
    task = make_task(SPECS["veusz/youngs-modulus"], 0, tmp_path)
    try:
        task.stage(tmp_path)
        gold = task.gold["t"]
        data_ = {"xData": gold["strain_col"], "yData": gold["stress_col"]}
        widgets = {"/": {"type": "document", "settings": {}, "data": {}},
                   "/page1/graph1/fit1": {"type": "fit", "name": "fit1", "settings": {},
                                          "data": data_,
                                          "curve": {"slope": gold["E_slope"]}}}
        if plotted:
            widgets["/page1/graph1/xy1"] = {"type": "xy", "name": "xy1", "settings": {},
                                            "data": data_}
        dump = {"filename": "", "modified": True, "widgets": widgets,
                "datasets": {"strain": {**gold["strain_col"], "kind": "Dataset"},
                             "stress": {**gold["stress_col"], "kind": "Dataset"}}}
        state = FinalState(work_dir=tmp_path, app_state=dump, agent_status="done",
                           answer=f"{gold['E']:.2f} GPa")
        result = evaluate(task.criteria(), state)
        assert result.score == pytest.approx(expected), result
        assert result.success is False
    finally:
        task.cleanup()
