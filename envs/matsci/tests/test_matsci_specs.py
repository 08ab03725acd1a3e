"""Offline checks of the materials workstation (Jmol + Fityk + Veusz + the OPTIMADE terminal):
the specs are cross-tool diagnostics whose parameter lists still fit the structure database
(pristine entries they name, kept by every variant; ids the variant fills with an entry of a
kind), the data generators' gold values, the cross-program getters on hand-made states and the
adapter's composition of the three single-tool adapters. No X display needed.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from helpers import requires

from sciagent_gym.evaluation import FinalState, GetterError
from sciagent_gym.runs.reports import CROSS_TOOL_TAG
from sciagent_gym.tasks.task import sample_params
from sciagent_gym.tools import load_adapter, load_tool_getters, load_tool_specs

pytestmark = requires(tool="matsci")

load_tool_getters("matsci")

from sciagent_gym.envs.materials import db, variant  # noqa: E402
from sciagent_gym.envs.materials.adapter import DB_RELPATH  # noqa: E402
from sciagent_gym.envs.matsci import adapter as matsci  # noqa: E402
from sciagent_gym.envs.matsci import data, getters  # noqa: E402

SPECS = load_tool_specs("matsci")


def _values(spec, name):
    p = spec.params[name]
    return p["choice"] if isinstance(p, dict) and "choice" in p else [p]


def _staged(work):
    """The entries staged into ``work`` (what the server serves), by id."""
    return {e["id"]: e for e in json.loads((work / DB_RELPATH).read_text())["entries"]}


def _task(spec_id, seed, work):
    from sciagent_gym.tasks.task import Task

    sandbox = {"home": "/home/user", "tmp": "/tmp", "work": str(work)}
    task = Task(SPECS[spec_id], seed, load_adapter("matsci").generators, sandbox)
    task.stage(work)
    return task


# -- the specs ---------------------------------------------------------------------------------

def test_every_task_is_a_cross_tool_diagnostic():
    assert len(SPECS) >= 8
    for spec in SPECS.values():
        assert CROSS_TOOL_TAG in spec.tags, spec.id
    assert sum(s.infeasible for s in SPECS.values()) == 1


def test_tasks_cross_at_least_two_programs():
    """Each feasible task's criteria read two places: two programs, or a program and the
    answer or the database."""
    for spec in SPECS.values():
        if spec.infeasible:
            continue
        text = json.dumps(spec.evaluator)
        programs = {p for p in ("jmol", "fityk", "veusz") if f'"{p}"' in text}
        programs |= {"jmol"} if "matsci_jmol_cell" in text else set()
        programs |= {"fityk", "veusz"} if "fityk_peaks_in_veusz" in text else set()
        assert programs, spec.id
        crosses = len(programs) >= 2 or "$gold" in text
        assert crosses, spec.id


def test_entry_parameters_fit_the_database():
    for spec in SPECS.values():
        if "e" not in spec.params:
            continue
        for e in _values(spec, "e"):
            entry = data.entry(e["id"])
            assert entry["chemical_formula_descriptive"] == e["formula"], (spec.id, e)
            assert entry["_sag_structure_type"] in data.CUBIC_TYPES, (spec.id, e)


@pytest.mark.parametrize("seed", range(6))
def test_named_ids_hold_an_entry_of_their_kind(seed, tmp_path):
    """db-cif-cell-volume, db-cif-nearest-neighbour and db-supercell-in-jmol name an id alone:
    the variant puts a seeded entry of the task's kind there, and the gold is that entry's."""
    from sciagent_gym.envs.materials.data import structure_facts

    task = _task("matsci/db-cif-cell-volume", seed, tmp_path)
    e = _staged(tmp_path)[f"sag-{task.params['n']}"]
    g = task.gold["s"]
    assert e["_sag_structure_type"] in data.CUBIC_TYPES and g["formula"] == e[
        "chemical_formula_descriptive"]
    assert g["volume"] == pytest.approx(db.structure_of(e).volume, abs=1e-3)
    assert g["other"] in _staged(tmp_path) and g["other"] != e["id"]
    task = _task("matsci/db-cif-nearest-neighbour", seed, tmp_path)
    e = _staged(tmp_path)[f"sag-{task.params['n']}"]
    g = task.gold["s"]
    assert e["nelements"] == 2 and e["_sag_space_group_number"] is not None
    assert sorted([g["cation"], g["anion"]]) == e["elements"]
    assert re.findall(r"[A-Z][a-z]?", e["chemical_formula_descriptive"])[0] == g["cation"]
    assert g["nn"] == pytest.approx(structure_facts(e)["nearest_neighbour"], abs=1e-4)
    task = _task("matsci/db-supercell-in-jmol", seed, tmp_path)
    e = _staged(tmp_path)[f"sag-{task.params['n']}"]
    g = task.gold["s"]
    assert e["_sag_structure_type"] in data.CUBIC_TYPES and g["nsites"] in (2, 5, 8, 12)
    assert g["block_sites"] == e["nsites"] * task.params["v"]["cells"]


@pytest.mark.parametrize("seed", range(4))
def test_energy_volume_plot_has_an_unanalysed_polymorph(seed, tmp_path):
    """Its negative plots the analysed entries only: that must not be all of them."""
    task = _task("matsci/polymorph-energy-volume-plot", seed, tmp_path)
    mine = [e for e in _staged(tmp_path).values()
            if e["chemical_formula_descriptive"] == task.params["formula"]]
    assert len(mine) == task.gold["ev"]["n"] >= 2
    assert any(e["_sag_space_group_number"] is None for e in mine)


def test_block_shapes_have_distinct_cell_counts():
    shapes = _values(SPECS["matsci/db-supercell-in-jmol"], "v")
    cells = [v["cells"] for v in shapes]
    assert len(set(cells)) == len(cells) >= 30
    for v in shapes:
        assert v["lattice"] == " ".join(map(str, v["n"])) and v["cells"] == np.prod(v["n"])


@pytest.mark.parametrize("spec_id", ["matsci/lattice-strain-vs-database",
                                     "matsci/strained-film-report-workflow"])
def test_lattice_strain_is_expansion_or_compression(spec_id, tmp_path):
    got = [_task(spec_id, seed, tmp_path).gold["p"]["strain_pct"] for seed in range(12)]
    assert any(p < 0 for p in got) and any(p > 0 for p in got)
    assert all(0.4 <= abs(p) <= 2.0 for p in got)


def test_pinned_entries_are_the_pristine_ones(tmp_path):
    task = _task("matsci/fityk-peaks-to-veusz", 2, tmp_path)
    e = task.params["e"]
    staged = _staged(tmp_path)[e["id"]]
    assert staged["chemical_formula_descriptive"] == e["formula"]
    assert staged["cartesian_site_positions"] == db.by_id()[e["id"]]["cartesian_site_positions"]
    assert task.gold["p"]["entry"]["lengths"] == sorted(
        round(float(x), 5) for x in db.structure_of(staged).lattice.abc)


def test_strain_task_names_the_strongest_reflection():
    spec = SPECS["matsci/lattice-strain-vs-database"]
    for e in _values(spec, "e")[:8]:
        peaks = data.pattern_peaks(e["id"])
        top = max(peaks, key=lambda q: q.intensity)
        assert e["hkl"] == "(" + "".join(str(abs(v)) for v in top.hkl) + ")"
        assert e["n"] == sum(v * v for v in top.hkl)


def test_absent_formulas_are_absent():
    for formula in _values(SPECS["matsci/absent-compound-to-jmol"], "formula"):
        assert formula not in variant.compounds()


# -- generators ----------------------------------------------------------------------------------

def test_entry_structure_gold(tmp_path):
    g = data.entry_structure(tmp_path, np.random.default_rng(0), "sag-3", "Sr", "O", cells=4)
    assert (tmp_path / ".optimade" / "structures.json").is_file()
    assert g["formula"] == "SrO" and g["nsites"] == 8 and g["block_sites"] == 32
    a = g["lengths"][0]
    assert g["lengths"] == [a, a, a] and abs(g["volume"] - a**3) < 1e-3
    assert abs(g["nn"] - a / 2) < 1e-3  # rock salt: cation-anion = a / 2


def test_strained_pattern_moves_the_peaks(tmp_path):
    rng = np.random.default_rng(3)
    g = data.entry_pattern(tmp_path, rng, "sag-3", n=1, strain=[1.0, 1.5])
    assert 1.0 <= g["strain_pct"] <= 1.5
    top = g["top"][0]
    a = top["d"] * np.sqrt(top["h2k2l2"])
    assert abs(100 * (a - g["a_ref"]) / g["a_ref"] - g["strain_pct"]) < 1e-3
    text = (tmp_path / "pattern.xy").read_text().splitlines()
    assert text[0].startswith("# ") and len(text) > 4000


def test_polymorph_pattern_is_one_of_its_polymorphs(tmp_path):
    formula = _values(SPECS["matsci/xrd-phase-identification"], "formula")[0]
    g = data.polymorph_pattern(tmp_path, np.random.default_rng(1), formula)
    assert g["id"] in g["polymorphs"] and len(g["centers"]) == 3


# -- getters -------------------------------------------------------------------------------------

def _state(tmp_path, app):
    return FinalState(work_dir=tmp_path, app_state=app)


def _peak(center, height, fwhm):
    return {"name": "_1", "type": "PseudoVoigt", "center": center, "height": height,
            "area": height * fwhm, "fwhm": fwhm, "params": []}


def _summary(values, serr=None):
    out = {"n": len(values), "mean": float(np.mean(values)), "min": min(values),
           "max": max(values)}
    out["serr"] = _summary(serr) if serr else None
    return out


def test_in_program_runs_a_tools_getter_on_its_part(tmp_path):
    app = {"jmol": {"measurements": [{"type": "distance", "value": 2.8,
                                      "elements": ["Sr", "O"]}]},
           "fityk": None, "veusz": None, "errors": {"fityk": "replay failed"}}
    st = _state(tmp_path, app)
    assert getters.in_program(st, "jmol", "jmol_distance", a="O", b="Sr") == 2.8
    with pytest.raises(GetterError, match="replay failed"):
        getters.in_program(st, "fityk", "fityk_peak_count")
    with pytest.raises(GetterError):
        getters.in_program(st, "pymol", "app_state")


def test_jmol_cell_volume_and_lengths(tmp_path):
    cell = {"a": 4.0, "b": 4.0, "c": 5.0, "alpha": 90, "beta": 90, "gamma": 120}
    st = _state(tmp_path, {"jmol": {"cell": cell, "atoms": 4, "file": "/w/x.cif",
                                    "counts": {"Zn": 2, "O": 2}}})
    assert getters.matsci_jmol_cell(st) == [4.0, 4.0, 5.0]
    assert abs(getters.matsci_jmol_cell(st, "volume") - 16 * 5 * np.sqrt(3) / 2) < 1e-9
    assert getters.matsci_jmol_cell(st, "file") == "x.cif"
    with pytest.raises(GetterError):
        getters.matsci_jmol_cell(_state(tmp_path, {"jmol": {"cell": None}}))


def test_fityk_peaks_in_veusz_compares_both_programs(tmp_path):
    peaks = [_peak(30.0, 1000, 0.2), _peak(35.0, 2000, 0.22), _peak(50.0, 800, 0.24)]
    fityk = {"datasets": [{"index": 0, "peaks": peaks}]}
    xs, ys, hw = [30.0, 35.0, 50.0], [1000, 2000, 800], [0.1, 0.11, 0.12]

    def veusz(x, y, e):
        return {"widgets": {"/page1/graph1/xy1": {"type": "xy", "data": {
            "xData": _summary(x, e), "yData": _summary(y)}}}}

    good = _state(tmp_path, {"fityk": fityk, "veusz": veusz(xs, ys, hw)})
    assert getters.fityk_peaks_in_veusz(good, y="height", xerr="fwhm", xerr_scale=0.5,
                                        min_peaks=3) is True
    full = _state(tmp_path, {"fityk": fityk, "veusz": veusz(xs, ys, [0.2, 0.22, 0.24])})
    out = getters.fityk_peaks_in_veusz(full, y="height", xerr="fwhm", xerr_scale=0.5,
                                       key=None)
    assert out["x"] and out["y"] and not out["xerr"] and not out["ok"]
    shifted = _state(tmp_path, {"fityk": fityk, "veusz": veusz([x + 0.5 for x in xs], ys, hw)})
    assert getters.fityk_peaks_in_veusz(shifted, key="x") is False
    few = _state(tmp_path, {"fityk": {"datasets": [{"index": 0, "peaks": peaks[:1]}]},
                            "veusz": veusz(xs[:1], ys[:1], hw[:1])})
    assert getters.fityk_peaks_in_veusz(few, min_peaks=2) is False


# -- the adapter ---------------------------------------------------------------------------------

class _Host:
    paths = {"home": "/home/user", "work": "/home/user/work", "tmp": "/tmp"}
    ready_scale = 1.0


def test_launcher_starts_the_three_programs_with_their_own_adapters_argv():
    adapter = load_adapter("matsci")
    argv = adapter.launch_argv(_Host(), None)
    assert argv[:4] == ["/usr/bin/python3", "-I", "-S", "-c"]
    programs = json.loads(argv[5])
    assert [p["name"] for p in programs] == ["jmol", "fityk", "veusz"]
    jmol = programs[0]["argv"]
    assert jmol[jmol.index("-g") + 1] == matsci.JMOL_GEOMETRY
    assert "sync -30000" in jmol and programs[1]["argv"][0] == "fityk"
    assert json.loads(argv[6]) == {"fityk": [640, 0]}


def test_launcher_gives_each_program_its_view_of_a_task(tmp_path):
    """A real task (not None) goes through every program's own adapter: each sees its inputs
    and the spec's tags (Jmol's adapter reads them)."""
    adapter = load_adapter("matsci")
    task = _task("matsci/fityk-peaks-to-veusz", 0, tmp_path)
    programs = json.loads(adapter.launch_argv(_Host(), task)[5])
    argv = {p["name"]: " ".join(p["argv"]) for p in programs}
    assert "pattern.xy" in argv["fityk"] and "pattern.xy" not in argv["jmol"]
    assert "showUnitCellInfo" not in argv["jmol"]
    view = matsci._view(task, "jmol")
    assert view.spec.open == () and view.spec.tags == tuple(task.spec.tags)


def test_inputs_are_routed_by_type():
    assert [matsci._route(n) for n in ("a.cif", "b.vsz", "pattern.xy")] == \
        ["jmol", "veusz", "fityk"]


def test_terminal_is_the_materials_xterm_in_its_region():
    argv = matsci._terminal_argv("/w/.optimade/structures.json")
    assert argv[0] == "/usr/bin/env" and "xterm" in argv
    assert argv[argv.index("-geometry") + 1] == matsci.TERMINAL_GEOMETRY
    assert any(a.startswith("PROMPT_COMMAND=") for a in argv)


def test_scripts_name_their_program():
    adapter = load_adapter("matsci")
    with pytest.raises(matsci.ScriptTargetError):
        adapter.run_script(_Host(), "pymol:\nload x")


def test_params_vary_per_seed():
    for spec in SPECS.values():
        assert len({json.dumps(sample_params(spec, s), sort_keys=True) for s in range(10)}) > 1


# -- the long-horizon strained-film report: partial credit by stage -----------------------------

def test_film_report_names_the_strongest_reflection_and_its_pair():
    spec = SPECS["matsci/strained-film-report-workflow"]
    assert "long-horizon" in spec.tags and spec.difficulty == "hard"
    for e in _values(spec, "e"):
        peaks = data.pattern_peaks(e["id"])
        top = max(peaks, key=lambda q: q.intensity)
        assert e["hkl"] == "(" + "".join(str(abs(v)) for v in top.hkl) + ")"
        assert e["n"] == sum(v * v for v in top.hkl)
        assert re.findall(r"[A-Z][a-z]?", e["formula"]) == [e["cation"], e["anion"]]
        assert data._isolated_top(peaks, 3), e


def _film_state(work, gold, entry_id, cation, anion, measured):
    """The workstation after the reference is open in Jmol (``measured``: as a 3x3x3 block with
    the shortest bond measured); Fityk and Veusz untouched."""
    from sciagent_gym.envs.jmol.adapter import summarise

    s = db.structure_of(data.entry(entry_id))
    reps = range(3) if measured else range(1)
    fxyz = [[float(q[0] + i), float(q[1] + j), float(q[2] + k)] for q in s.frac_coords
            for i in reps for j in reps for k in reps]
    a = gold["a_ref"]
    meas = ([{"type": "distance", "value": gold["nn"], "elements": f"{cation} {anion} "}]
            if measured else "")
    jmol = summarise({"atoms": len(fxyz), "models": 1, "counts": {}, "styles": "",
                      "fxyz": fxyz, "cell": [a, a, a, 90, 90, 90],
                      "file": f"file:{work}/reference.cif", "measurements": meas,
                      "polyhedra": ""})
    (work / "reference.cif").write_text("data_reference\n")
    return {"jmol": jmol, "fityk": {"datasets": [{"index": 0, "peaks": []}]},
            "veusz": {"datasets": {}, "widgets": {}}, "errors": {}}


@pytest.mark.parametrize(("measured", "expected"), [(False, 1 / 8.75), (True, 2.5 / 8.75)])
def test_film_report_stage_negatives_give_partial_credit(measured, expected, tmp_path):
    """stops-after-reference and stops-after-measure of matsci/strained-film-report-workflow."""
    from sciagent_gym.evaluation import evaluate
    from sciagent_gym.tasks.task import Task

    spec = SPECS["matsci/strained-film-report-workflow"]
    sandbox = {"home": "/home/user", "tmp": "/tmp", "work": str(tmp_path)}
    task = Task(spec, 0, load_adapter("matsci").generators, sandbox)
    try:
        task.stage(tmp_path)
        assert 25 <= task.oracle_steps <= 60 and spec.max_steps >= 1.5 * task.oracle_steps
        e = task.params["e"]
        app = _film_state(tmp_path, task.gold["p"], e["id"], e["cation"], e["anion"], measured)
        result = evaluate(task.criteria(), FinalState(work_dir=tmp_path, app_state=app,
                                                      agent_status="done"))
        assert result.score == pytest.approx(expected), result
        assert not result.success
    finally:
        task.cleanup()


def test_polymorph_survey_stops_after_the_survey_with_partial_credit(tmp_path):
    """stops-after-survey of matsci/polymorph-survey-workflow: the CSV right, nothing else."""
    from sciagent_gym.evaluation import evaluate
    from sciagent_gym.tasks.task import Task

    spec = SPECS["matsci/polymorph-survey-workflow"]
    assert "long-horizon" in spec.tags and spec.difficulty == "hard"
    for f in _values(spec, "f"):
        assert re.findall(r"[A-Z][a-z]?", f["formula"]) == [f["cation"], f["anion"]]
        assert variant.compounds().get(f["formula"]) is True
        assert sum(e["chemical_formula_descriptive"] == f["formula"] for e in db.entries()) >= 2
    sandbox = {"home": "/home/user", "tmp": "/tmp", "work": str(tmp_path)}
    task = Task(spec, 0, load_adapter("matsci").generators, sandbox)
    try:
        task.stage(tmp_path)
        assert 25 <= task.oracle_steps <= 60 and spec.max_steps >= 1.5 * task.oracle_steps
        rows = ["id,volume_per_atom,energy"]
        for e in sorted((x for x in _staged(tmp_path).values()
                         if x["chemical_formula_descriptive"] == task.params["f"]["formula"]),
                        key=lambda x: x["_sag_formation_energy_per_atom"]):
            s = db.structure_of(e)
            rows.append(f"{e['id']},{s.volume / len(s):.6f},"
                        f"{e['_sag_formation_energy_per_atom']:.6f}")
        (tmp_path / "ev.csv").write_text("\n".join(rows) + "\n")
        app = {"jmol": None, "fityk": None, "veusz": {"datasets": {}, "widgets": {}},
               "errors": {"jmol": "not asked", "fityk": "not asked"}}
        result = evaluate(task.criteria(), FinalState(work_dir=tmp_path, app_state=app,
                                                      agent_status="done",
                                                      answer=task.gold["ev"]["lowest"]))
        assert result.score == pytest.approx(1.5 / 6.75), result
        assert not result.success
    finally:
        task.cleanup()
