"""GRASS GIS tasks offline: the terrain generator's gold against GRASS itself (batch mode on the
host), the GeoTIFF getter, the contradictory-share generator, and each task's criteria on the
mapset states and files an oracle and a wrong attempt would leave (the long-horizon tasks'
stages replayed: stopping after one or two stages scores strictly between 0 and 1).

The mapset states are the JSON the state channel (``envs/grass/inside/state_dump.py``) returns,
built here from the gold values; the end-to-end audit plays the real program.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from sciagent_gym.evaluation import FinalState, GetterError, evaluate
from sciagent_gym.tasks.task import Task
from sciagent_gym.tools import load_adapter, load_tool_getters, load_tool_specs

load_tool_getters("grass")

from sciagent_gym.envs.grass import data  # noqa: E402
from sciagent_gym.envs.grass.getters import grass_geotiff, read_geotiff  # noqa: E402

SPECS = load_tool_specs("grass")
HAVE_GRASS = shutil.which("grass", path="/usr/bin:/bin") is not None


def _stage(task_id: str, tmp_path: Path, seed: int = 0) -> tuple[Task, Path]:
    work = tmp_path / "work"
    task = Task(SPECS[task_id], seed, load_adapter("grass").generators,
                {"work": str(work), "home": "/h", "tmp": "/t"})
    task.stage(work)
    return task, work


def _score(task: Task, work: Path, app_state=None, answer=None, status="done"):
    return evaluate(task.criteria(), FinalState(work_dir=work, app_state=app_state,
                                                agent_status=status, answer=answer))


def _raster(**values) -> dict:
    out = {"datatype": "FCELL", "rows": 200, "cols": 200, "n": 40000.0}
    out.update(values)
    return out


def _cell(classes: dict) -> dict:
    return _raster(datatype="CELL", n=float(sum(classes.values())),
                   classes={str(k): v for k, v in classes.items()})


def _state(**rasters) -> dict:
    return {"rasters": rasters, "vectors": {}, "errors": []}


def _write(path: Path, array: np.ndarray) -> None:
    arr = np.asarray(array, np.float32)
    data.write_geotiff(path, np.where(np.isfinite(arr), arr, -9999.0), nodata=-9999.0)


# -- data and gold ------------------------------------------------------------------------------


def test_dem_has_one_clear_peak_and_gold_is_what_the_geotiff_holds(tmp_path):
    gold = data.terrain(tmp_path, np.random.default_rng(3), hills=4, threshold=450)
    z = read_geotiff(tmp_path / "dem.tif", "dem.tif")
    assert z.shape == (data.ROWS, data.COLS)
    assert gold["max_m"] == pytest.approx(float(z.max()), abs=1e-3)
    assert gold["cells_above"] + gold["cells_below"] == z.size
    assert gold["cells_above"] == int((z >= 450).sum())
    assert gold["slope_cells"] == (data.ROWS - 2) * (data.COLS - 2)
    assert 2 < gold["slope_mean_deg"] < gold["slope_max_deg"] < 80


@pytest.mark.skipif(not HAVE_GRASS, reason="GRASS GIS (grass-core) is not installed")
def test_gold_slope_and_class_areas_match_grass_itself(tmp_path):
    gold = data.terrain(tmp_path, np.random.default_rng(5), hills=3,
                        landcover_path="landcover.tif", target_class=3)
    out = data.grass_batch(
        "r.slope.aspect elevation=dem slope=slope --quiet\nr.univar -g slope\n"
        "r.stats -cn landcover\n",
        {"dem": tmp_path / "dem.tif", "landcover": tmp_path / "landcover.tif"})
    values = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    assert float(values["mean"]) == pytest.approx(gold["slope_mean_deg"], abs=1e-4)
    assert float(values["max"]) == pytest.approx(gold["slope_max_deg"], abs=1e-4)
    assert int(values["n"]) == gold["slope_cells"]
    counts = dict(line.split() for line in out.splitlines() if len(line.split()) == 2
                  and "=" not in line)
    assert {k: int(v) for k, v in counts.items()} == gold["class_cells"]


def test_contradictory_share_is_far_from_the_real_one(tmp_path):
    for seed, share in enumerate((5, 10, 15, 85, 90, 95)):
        gold = data.terrain(tmp_path, np.random.default_rng(seed), hills=3, threshold=450,
                            contradict_share=share)
        assert abs(gold["fraction_above_pct"] - share) >= 25, (share, gold["fraction_above_pct"])


def test_corrupt_geotiff_cannot_be_read(tmp_path):
    data.corrupt_geotiff(tmp_path, np.random.default_rng(0), path="bad.tif")
    with pytest.raises(GetterError):
        read_geotiff(tmp_path / "bad.tif", "bad.tif")


# -- the GeoTIFF getter ------------------------------------------------------------------------


def test_geotiff_getter_compares_content_and_nulls(tmp_path):
    gold = data.terrain(tmp_path, np.random.default_rng(1), hills=3)
    ref = tmp_path / "ref.tif"
    import tifffile

    tifffile.imwrite(ref, gold["slope"])
    _write(tmp_path / "slope.tif", gold["slope"])
    state = FinalState(work_dir=tmp_path)
    assert grass_geotiff(state, "slope.tif", "rms_diff", str(ref)) < 1e-3
    assert grass_geotiff(state, "slope.tif", "null_mismatch", str(ref)) == 0
    assert grass_geotiff(state, "dem.tif", "rms_diff", str(ref)) > 100
    assert grass_geotiff(state, "dem.tif", "null_mismatch", str(ref)) > 0
    (tmp_path / "junk.tif").write_bytes(b"II*\x00" + b"\xff" * 50)
    with pytest.raises(GetterError):
        grass_geotiff(state, "junk.tif", "shape")
    with pytest.raises(GetterError):
        grass_geotiff(state, "missing.tif", "shape")


# -- the tasks' criteria -------------------------------------------------------------------------


def test_peak_elevation_takes_the_maximum_only(tmp_path):
    task, work = _stage("grass/peak-elevation", tmp_path)
    g = task.gold["dem"]
    assert _score(task, work, answer=f"{g['max_m']:.2f} m").score == 1.0
    assert _score(task, work, answer=f"{g['mean_m']:.2f} m").score == 0.0
    assert _score(task, work, answer=f"{g['max_m'] / 1000:.5f} m").score == 0.0
    assert _score(task, work).score == 0.0


def test_import_checks_the_imported_content(tmp_path):
    task, work = _stage("grass/import-survey-dem", tmp_path)
    g = task.gold["dem"]
    good = _state(survey=_raster(max=g["max_m"], mean=g["mean_m"]))
    assert _score(task, work, good).score == 1.0
    decoy = _state(survey=_raster(max=g["decoy_max_m"], mean=g["mean_m"] + 30))
    assert _score(task, work, decoy).score < 1.0
    assert _score(task, work, _state(dem2023=good["rasters"]["survey"])).score == 0.0
    assert _score(task, work, _state()).score == 0.0


def test_slope_map_needs_degrees_and_null_edges(tmp_path):
    task, work = _stage("grass/slope-map", tmp_path)
    g = task.gold["dem"]
    dem = _raster(max=g["max_m"])
    good = _raster(mean=g["slope_mean_deg"], max=g["slope_max_deg"], n=g["slope_cells"])
    steep = _cell({1: g["steep_cells"], 0: g["slope_flat_cells"]})
    assert g["steep_cells"] + g["slope_flat_cells"] == g["slope_cells"]
    count = f"{g['steep_fraction']:.6f}"
    assert _score(task, work, _state(dem=dem, slope=good, steep=steep), answer=count).score == 1.0
    assert _score(task, work, _state(dem=dem, slope=good, steep=steep)).score == pytest.approx(0.8)
    # the slope map without its classification: partial credit only
    assert _score(task, work, _state(dem=dem, slope=good)).score == pytest.approx(0.55)
    wrong = f"{1 - g['steep_fraction']:.6f}"
    assert not _score(task, work, _state(dem=dem, slope=good, steep=steep), answer=wrong).success
    swapped = _cell({0: g["steep_cells"], 1: g["slope_flat_cells"]})
    assert not _score(task, work, _state(dem=dem, slope=good, steep=swapped)).success
    pct = _raster(mean=g["slope_pct_mean"], max=200.0, n=g["slope_cells"])
    assert not _score(task, work, _state(dem=dem, slope=pct, steep=steep)).success
    assert _score(task, work, _state(dem=dem)).score == 0.0


def test_export_compares_the_written_slope(tmp_path):
    task, work = _stage("grass/export-slope-geotiff", tmp_path)
    slope = task.gold["dem"]["slope"]
    import tifffile

    _write(work / "slope_deg.tif", tifffile.imread(slope))
    mean = f"{task.gold['dem']['slope_mean_deg']:.2f} deg"
    assert _score(task, work, answer=mean).score == 1.0
    assert _score(task, work).score == pytest.approx(0.7)  # exported, its mean not given
    _write(work / "slope_deg.tif", read_geotiff(work / "dem.tif", "dem"))
    assert _score(task, work).score == 0.0
    assert _score(task, work, answer=mean).score == pytest.approx(0.3)  # the DEM exported


def test_highland_counts_both_classes(tmp_path):
    task, work = _stage("grass/highland-mapcalc", tmp_path)
    g = task.gold["dem"]
    good = _cell({0: g["cells_below"], 1: g["cells_above"]})
    assert _score(task, work, _state(highland=good)).score == 1.0
    low = _cell({0: 40000 - g["cells_above_shifted"], 1: g["cells_above_shifted"]})
    assert _score(task, work, _state(highland=low)).score == 0.0
    no_zero = _cell({1: g["cells_above"]})
    assert not _score(task, work, _state(highland=no_zero)).success


def test_infeasible_tasks_pay_only_for_fail(tmp_path):
    for task_id in ("grass/corrupt-survey-infeasible", "grass/contradictory-upland-share"):
        task, work = _stage(task_id, tmp_path / task_id.split("/")[1])
        assert _score(task, work, status="fail").score == 1.0
        assert _score(task, work, answer="700 m", status="done").score == 0.0
        assert _score(task, work, status="done").score == 0.0


def _steep_states(task):
    g = task.gold["land"]
    opened = {"dem": _raster(max=g["max_m"]), "landcover": _cell(
        {int(k): v for k, v in g["class_cells"].items()})}
    slope = {**opened, "slope": _raster(mean=g["slope_mean_deg"])}
    overlay = {**slope, "steep_forest": _cell({0: 1000, 1: g["steep_target_cells"]})}
    return g, opened, slope, overlay


def test_steep_forest_stages_give_partial_credit(tmp_path):
    import tifffile

    task, work = _stage("grass/steep-forest-workflow", tmp_path)
    g, opened, slope, overlay = _steep_states(task)
    s1 = _score(task, work, _state(**opened)).score
    s2 = _score(task, work, _state(**slope)).score
    s3 = _score(task, work, _state(**overlay)).score
    _write(work / "steep_forest.tif", tifffile.imread(g["steep_target"]))
    full = _score(task, work, _state(**overlay), answer=f"{g['steep_target_ha']:.2f} ha")
    assert 0 < s1 < s2 < s3 < 1.0
    assert full.score == 1.0
    wrong = _score(task, work, _state(**overlay), answer=f"{g['steep_any_ha']:.2f} ha").score
    assert wrong < 1.0
    assert _score(task, work, _state()).score == 0.0


def test_highland_workflow_stages_give_partial_credit(tmp_path):
    import tifffile

    task, work = _stage("grass/highland-class-workflow", tmp_path)
    g = task.gold["land"]
    opened = {"dem": _raster(max=g["max_m"]), "landcover": _cell(
        {int(k): v for k, v in g["class_cells"].items()})}
    classified = {**opened, "highland": _cell({0: g["cells_below"], 1: g["cells_above"]})}
    overlay = {**classified, "high_class": _cell({0: 40000 - g["high_target_cells"],
                                                  1: g["high_target_cells"]})}
    s1 = _score(task, work, _state(**opened)).score
    s2 = _score(task, work, _state(**classified)).score
    _write(work / "highland.tif", tifffile.imread(g["highland"]))
    full = _score(task, work, _state(**overlay), answer=f"{g['high_target_ha']:.2f} ha")
    assert 0 < s1 < s2 < 1.0 and full.score == 1.0
    assert _score(task, work, _state(**overlay),
                  answer=f"{g['target_area_ha']:.2f} ha").score < 1.0


@pytest.mark.skipif(not HAVE_GRASS, reason="GRASS GIS (grass-core) is not installed")
@pytest.mark.parametrize("cut", [400, 600, 900])
def test_the_cut_off_survey_does_not_import_into_grass(tmp_path, cut):
    data.corrupt_geotiff(tmp_path, np.random.default_rng(0), path="bad.tif", keep_bytes=cut)
    with pytest.raises(RuntimeError):
        data.grass_batch("r.univar -g map=bad\n", {"bad": tmp_path / "bad.tif"})


@pytest.mark.skipif(not HAVE_GRASS, reason="GRASS GIS (grass-core) is not installed")
def test_state_dump_reads_user1_from_a_temporary_mapset(tmp_path):
    """The channel's own code, run as the adapter runs it (``python3 -I grass --tmp-mapset ...
    --exec python3 -I -c``, its JSON on stdout after a marker) on a copy of the snapshot's
    database with two rasters in user1."""
    import json
    import os
    import subprocess

    from sciagent_gym.envs.grass.adapter import _STATE_MARK, STATE_CODE

    gold = data.terrain(tmp_path, np.random.default_rng(2), hills=3,
                        landcover_path="landcover.tif", target_class=2)
    db = tmp_path / "grassdata"
    shutil.copytree(load_adapter("grass").snapshot_dir / "grassdata", db)
    env = {**os.environ, "HOME": str(tmp_path), "LANG": "C", "LC_ALL": "C",
           "PATH": "/usr/bin:/bin", "GRASS_PYTHON": "/usr/bin/python3"}
    imports = (f"r.in.gdal -o --quiet input={tmp_path}/dem.tif output=dem && "
               f"r.in.gdal -o --quiet input={tmp_path}/landcover.tif output=landcover")
    subprocess.run(["grass", str(db / "sci" / "user1"), "--exec", "sh", "-c", imports],
                   env=env, check=True, capture_output=True, timeout=120)
    run = subprocess.run(["/usr/bin/python3", "-I", "/usr/bin/grass", "--tmp-mapset",
                          str(db / "sci"), "--exec", "/usr/bin/python3", "-I", "-c", STATE_CODE],
                         env=env, check=True, capture_output=True, text=True, timeout=120)
    marked = [line for line in run.stdout.splitlines() if line.startswith(_STATE_MARK)]
    state = json.loads(marked[-1][len(_STATE_MARK):])
    assert state["errors"] == []
    assert state["rasters"]["dem"]["max"] == pytest.approx(gold["max_m"], abs=1e-3)
    assert state["rasters"]["dem"]["n"] == 40000
    assert state["rasters"]["landcover"]["datatype"] == "CELL"
    assert state["rasters"]["landcover"]["classes"] == gold["class_cells"]
    assert state["region"]["rows"] == 200 and state["region"]["nsres"] == 10
    assert sorted(p.name for p in (db / "sci").iterdir()) == ["PERMANENT", "user1"]


# -- wells, drainage, MrSID export ---------------------------------------------------------------


@pytest.mark.skipif(not HAVE_GRASS, reason="GRASS GIS (grass-core) is not installed")
def test_well_heights_are_what_v_what_rast_writes(tmp_path):
    gold = data.wells(tmp_path, np.random.default_rng(4), count=9)
    lines = (tmp_path / "wells.csv").read_text().splitlines()
    assert lines[0] == "x,y,id,depth_m" and len(lines) == 10
    out = data.grass_batch(
        f"v.in.ascii --quiet input={tmp_path}/wells.csv output=wells separator=comma skip=1 "
        "x=1 y=2 cat=3\nv.what.rast --quiet map=wells raster=dem column=elev\n"
        "v.db.univar -g map=wells column=elev\n", {"dem": tmp_path / "dem.tif"})
    values = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    assert int(values["n"]) == gold["wells"] == 9
    assert float(values["mean"]) == pytest.approx(gold["elev_mean"], abs=1e-3)
    assert float(values["max"]) == pytest.approx(gold["elev_max"], abs=1e-3)


@pytest.mark.skipif(not HAVE_GRASS, reason="GRASS GIS (grass-core) is not installed")
def test_drainage_gold_separates_the_wrong_runs(tmp_path):
    gold = data.drainage(tmp_path, np.random.default_rng(1), hills=3, threshold=200)
    assert gold["big_threshold"] == 800
    assert gold["stream_cells"] > gold["big_stream_cells"] > 0
    assert gold["sfd_stream_cells"] != gold["stream_cells"]
    assert abs(gold["sfd_accum_mean"] - gold["accum_mean"]) > 0.01
    again = data.drainage(tmp_path, np.random.default_rng(1), hills=3, threshold=200)
    assert again["accum_mean"] == gold["accum_mean"]
    assert again["stream_cells"] == gold["stream_cells"]


def test_wells_need_the_sampled_column(tmp_path):
    task, work = _stage("grass/sample-dem-at-wells", tmp_path)
    g = task.gold["wells"]
    topo = {"points": g["wells"], "primitives": g["wells"]}
    elev = {"n": g["wells"], "min": g["elev_min"], "max": g["elev_max"],
            "mean": g["elev_mean"]}
    good = {"rasters": {}, "vectors": {"wells": {**topo, "columns": {"elev": elev}}},
            "errors": []}
    assert _score(task, work, good).score == 1.0
    bare = {"rasters": {}, "vectors": {"wells": {**topo, "columns": {}}}, "errors": []}
    assert _score(task, work, bare).score == 0.0
    dem_mean = {**elev, "mean": g["dem_mean_m"], "max": g["max_m"]}
    wrong = {"rasters": {}, "vectors": {"wells": {**topo, "columns": {"elev": dem_mean}}},
             "errors": []}
    assert not _score(task, work, wrong).success
    assert _score(task, work, _state()).score == 0.0


def test_watershed_needs_the_requested_threshold_and_routing(tmp_path):
    task, work = _stage("grass/watershed-streams", tmp_path)
    g = task.gold["shed"]

    def run(prefix):
        return _state(accum=_raster(datatype="DCELL", mean=g[f"{prefix}accum_mean"],
                                    max=g[f"{prefix}accum_max"]),
                      streams=_raster(datatype="CELL", n=float(g[f"{prefix}stream_cells"])))

    assert _score(task, work, run("")).score == 1.0
    assert not _score(task, work, run("big_")).success
    assert _score(task, work, run("sfd_")).score == 0.0
    only = _state(accum=run("")["rasters"]["accum"])
    assert _score(task, work, only).score == 0.0


def test_mrsid_export_pays_only_for_fail(tmp_path):
    task, work = _stage("grass/export-mrsid-infeasible", tmp_path)
    assert _score(task, work, status="fail").score == 1.0
    (work / "dem.sid").write_bytes(b"II*\x00")
    assert _score(task, work, status="done").score == 0.0
