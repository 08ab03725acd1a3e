"""Offline checks of the QGIS task specs, their data generators and the QGIS getters.

No X display and no QGIS needed: specs are loaded and staged into tmp_path (the generators use
numpy only), gold values are checked against independent computations, and the getters are fed
files in the formats QGIS writes (GeoJSON through OGR with a GeoJSON-2008 ``crs`` member, .qgz
zips and .qgs XML) plus malformed, truncated and partial ones.
"""

from __future__ import annotations

import json
import math
import zipfile
from pathlib import Path

import numpy as np
import pytest
import tifffile

from sciagent_gym.evaluation import GETTERS, FinalState, GetterError, evaluate
from sciagent_gym.tasks.spec import TaskSpec, count_variants
from sciagent_gym.tasks.task import Task
from sciagent_gym.tools import load_tool_getters, load_tool_specs

load_tool_getters("qgis")

from sciagent_gym.envs.qgis import data  # noqa: E402
from sciagent_gym.envs.qgis.getters import (  # noqa: E402
    normalize_crs,
    parse_geojson,
    parse_project,
    source_file,
)

SPECS: dict[str, TaskSpec] = load_tool_specs("qgis")
SPEC_IDS = sorted(SPECS)
SANDBOX = {"home": "/home/user", "tmp": "/tmp"}


def make_task(spec: TaskSpec, seed: int, work: Path) -> Task:
    return Task(spec, seed, data.GENERATORS, {**SANDBOX, "work": str(work)})


# --- specs ---------------------------------------------------------------------------------


def test_all_qgis_specs_load():
    assert len(SPECS) >= 12
    for spec_id, spec in SPECS.items():
        assert spec.tool == "qgis"
        assert Path(spec.source).stem == spec.slug, spec_id
        assert (count_variants(spec) or 0) >= 4, spec_id


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_stage_writes_inputs_and_gold(spec_id, tmp_path):
    spec = SPECS[spec_id]
    for seed in (0, 1):
        work = tmp_path / f"seed{seed}"
        task = make_task(spec, seed, work)
        try:
            task.stage(work)
            for name in (*spec.open, *spec.protect):
                assert (work / name).is_file(), name
            for gen, values in task.gold.items():
                for key, value in values.items():
                    if isinstance(value, float):
                        assert math.isfinite(value), (gen, key)
            assert task.criteria() and task.steps("oracle")
            for name in spec.negatives:
                assert task.steps(name)
            text = task.instruction
            assert "{" not in text and "$gold" not in text, text
            result = evaluate(task.criteria(), FinalState(work_dir=work, app_state=None))
            assert not result.success
        finally:
            task.cleanup()


def test_staging_is_reproducible(tmp_path):
    spec = SPECS["qgis/zonal-stats"]
    a, b = make_task(spec, 3, tmp_path / "a"), make_task(spec, 3, tmp_path / "b")
    a.stage(tmp_path / "a")
    b.stage(tmp_path / "b")
    assert a.input_hashes == b.input_hashes
    assert a.gold == b.gold


# --- generators and gold values ---------------------------------------------------------------


def test_towns_gold_matches_the_file(tmp_path):
    gold = data.towns(tmp_path, np.random.default_rng(1), n=20, threshold=15000,
                      category="village")
    doc = json.loads((tmp_path / "towns.geojson").read_text())
    props = [f["properties"] for f in doc["features"]]
    assert len(props) == 20 and "crs" not in doc  # CRS84: OGR reads EPSG:4326
    assert gold["names_gt"] == sorted(p["name"] for p in props if p["population"] > 15000)
    assert gold["count_ge"] == gold["count_gt"] + 1  # the threshold itself occurs once
    assert gold["names_in_category"] == sorted(p["name"] for p in props
                                               if p["category"] == "village")
    assert gold["values"] == sorted({p["category"] for p in props})


def test_counting_towns_draw_the_count_not_the_threshold(tmp_path):
    """select-by-attribute and town-census-workflow (issue 33): the count above the threshold
    is drawn over a wide range, so no constant count pays; the threshold still occurs once."""
    counts = set()
    for seed, (above, below) in enumerate([(6, 40), (60, 6), (23, 17)]):
        gold = data.towns(tmp_path, np.random.default_rng(seed), threshold=25000, above=above,
                          below=below)
        doc = json.loads((tmp_path / "towns.geojson").read_text())
        pops = [f["properties"]["population"] for f in doc["features"]]
        assert len(pops) == gold["n"] == above + below + 1
        assert gold["count_gt"] == above == sum(p > 25000 for p in pops)
        assert gold["count_ge"] == above + 1 and min(pops) >= 25000 / 31
        counts.add(gold["count_gt"])
    assert len(counts) == 3
    for spec_id in ("qgis/select-by-attribute", "qgis/town-census-workflow"):
        assert SPECS[spec_id].params["above"] == {"int": [6, 60]}


def test_utm_and_web_mercator_formulas():
    # reference values from PROJ (through QGIS 3.22's QgsCoordinateTransform)
    e, n = data.utm_forward(np.array([15.0, 14.0]), np.array([46.0, 46.5]))
    assert e[0] == pytest.approx(500000.0, abs=1e-6)
    assert n[0] == pytest.approx(5094047.49208, abs=0.001)
    assert e[1] == pytest.approx(423268.31003, abs=0.001)  # west of the central meridian
    assert n[1] == pytest.approx(5150089.10396, abs=0.001)
    x, y = data.web_mercator(np.array([15.0]), np.array([46.0]))
    assert x[0] == pytest.approx(1669792.3618, abs=0.01)
    assert y[0] == pytest.approx(5780349.2208, abs=0.01)


def test_terrain_dem_and_districts(tmp_path):
    gold = data.terrain(tmp_path, np.random.default_rng(2), unit="km2",
                        probe_x=463250, probe_y=5097650)
    z = tifffile.imread(tmp_path / "dem.tif").astype(np.float64)
    assert z.shape == (100, 120)
    assert gold["max"] == pytest.approx(z.max())
    assert gold["probe_value"] == pytest.approx(z[int((5100000 - 5097650) // 100), 32])
    doc = json.loads((tmp_path / "districts.geojson").read_text())
    assert doc["crs"]["properties"]["name"].endswith("32633")
    total = sum(data.shoelace(f["geometry"]["coordinates"][0]) for f in doc["features"])
    assert total == pytest.approx(120 * 100 * 100 * 100)  # the districts tile the DEM
    assert sum(r["area"] for r in gold["area_rows"]) == pytest.approx(120.0)  # km2
    # the zonal mean of all districts weighted by area is the DEM mean
    mean = sum(r["mean"] * r["area_m2"] for r in gold["districts"]) / total
    assert mean == pytest.approx(z.mean())
    with tifffile.TiffFile(tmp_path / "dem.tif") as tif:
        keys = tif.pages[0].tags["GeoKeyDirectoryTag"].value
    assert 32633 in list(keys)


def test_sites_csv(tmp_path):
    gold = data.sites_csv(tmp_path, np.random.default_rng(3), n=10, kind="utm")
    lines = (tmp_path / "sites.csv").read_text().splitlines()
    assert lines[0] == "id,name,easting,northing,ph" and len(lines) == 11
    xs = [float(line.split(",")[2]) for line in lines[1:]]
    assert gold["bbox"][0] == min(xs) and gold["crs"] == "EPSG:32633"


# --- getters on QGIS-style files ----------------------------------------------------------


QGIS_GEOJSON = """{
"type": "FeatureCollection",
"name": "zonal",
"crs": { "type": "name", "properties": { "name": "urn:ogc:def:crs:EPSG::32633" } },
"features": [
{ "type": "Feature", "properties": { "name": "Ashford", "code": "D1", "elev_mean": 412.5 },
  "geometry": { "type": "Polygon", "coordinates": [ [ [ 0.0, 0.0 ], [ 100.0, 0.0 ],
  [ 100.0, 50.0 ], [ 0.0, 50.0 ], [ 0.0, 0.0 ] ] ] } },
{ "type": "Feature", "properties": { "name": "Cobham", "code": "D2", "elev_mean": null },
  "geometry": null }
]
}
"""


def _state(tmp_path: Path, files: dict[str, str | bytes]) -> FinalState:
    for name, content in files.items():
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return FinalState(work_dir=tmp_path)


def test_geojson_as_qgis_writes_it(tmp_path):
    s = parse_geojson(QGIS_GEOJSON)
    assert s["crs"] == "EPSG:32633" and s["n_features"] == 2
    assert s["fields"] == ["name", "code", "elev_mean"]
    assert s["rows"][0]["area"] == 5000.0 and s["geometry_types"] == ["Polygon"]
    assert s["columns"]["code"] == ["D1", "D2"]
    state = _state(tmp_path, {"zonal.geojson": QGIS_GEOJSON})
    dev = GETTERS["qgis_geojson_deviation"]
    with pytest.raises(GetterError, match="unexpected"):  # rows matched on name
        dev(state, "zonal.geojson", [{"name": "Ashford", "mean": 412.0}], ["elev_mean"],
            ["mean"])
    doc = json.loads(QGIS_GEOJSON)
    doc["features"] = doc["features"][:1]
    state = _state(tmp_path, {"one.geojson": json.dumps(doc)})
    assert dev(state, "one.geojson", [{"name": "Ashford", "mean": 412.0}], ["elev_mean"],
               ["mean"]) == 0.5
    assert dev(state, "one.geojson", [{"name": "Ashford", "mean": 500.0}], ["elev_mean"],
               ["mean"], relative=True) == pytest.approx(0.175)
    with pytest.raises(GetterError, match="no feature"):
        dev(state, "one.geojson", [{"name": "Ashford", "m": 1}, {"name": "Dunmore", "m": 1}],
            ["elev_mean"], ["m"])
    state = _state(tmp_path, {"zonal.geojson": QGIS_GEOJSON})
    with pytest.raises(GetterError, match="not a number"):
        dev(state, "zonal.geojson", [{"name": "Ashford", "m": 1}, {"name": "Cobham", "m": 1}],
            ["elev_mean"], ["m"])
    assert GETTERS["qgis_geojson"](state, "zonal.geojson", "names") == ["Ashford", "Cobham"]


@pytest.mark.parametrize("name,expected", [
    ("urn:ogc:def:crs:EPSG::3857", "EPSG:3857"), ("urn:ogc:def:crs:OGC:1.3:CRS84", "EPSG:4326"),
    (None, "EPSG:4326"), ("EPSG:32633", "EPSG:32633")])
def test_crs_names(name, expected):
    assert normalize_crs(name) == expected


@pytest.mark.parametrize("content,match", [
    (QGIS_GEOJSON[:200], "not valid JSON"),
    ('{"type": "Feature"}', "FeatureCollection"),
    ('{"type": "FeatureCollection"}', "features"),
    ('{"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {}, '
     '"geometry": {"type": "Point", "coordinates": ["a", 1]}}]}', "coordinates"),
    ('{"type": "FeatureCollection", "features": [3]}', "not a Feature"),
    (b"\x00\x01binary", "not valid JSON"),
])
def test_malformed_geojson(tmp_path, content, match):
    state = _state(tmp_path, {"bad.geojson": content})
    with pytest.raises(GetterError, match=match):
        GETTERS["qgis_geojson"](state, "bad.geojson")


QGS = """<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>
<qgis projectname="Field survey" version="3.22.16-Białowieża">
  <homePath path=""/>
  <title>Field survey</title>
  <projectCrs><spatialrefsys><authid>EPSG:4326</authid></spatialrefsys></projectCrs>
  <layer-tree-group>
    <layer-tree-layer name="towns" checked="Qt::Checked" id="towns_1"/>
    <layer-tree-layer name="districts" checked="Qt::Unchecked" id="districts_2"/>
  </layer-tree-group>
  <projectlayers>
    <maplayer type="vector"><id>towns_1</id><datasource>./towns.geojson</datasource>
      <layername>towns</layername><srs><spatialrefsys><authid>EPSG:4326</authid></spatialrefsys>
      </srs><provider encoding="UTF-8">ogr</provider></maplayer>
    <maplayer type="vector"><id>districts_2</id><datasource>./districts.geojson</datasource>
      <layername>districts</layername><srs><spatialrefsys><authid>EPSG:32633</authid>
      </spatialrefsys></srs><provider>ogr</provider></maplayer>
  </projectlayers>
</qgis>
"""


def _qgz(qgs: str) -> bytes:
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("survey.qgs", qgs)
        zf.writestr("survey.qgd", b"")
    return buf.getvalue()


def test_project_qgz_and_qgs(tmp_path):
    for name, content in (("survey.qgz", _qgz(QGS)), ("survey.qgs", QGS)):
        state = _state(tmp_path, {name: content})
        p = GETTERS["qgis_project"](state, name)
        assert p["title"] == "Field survey" and p["crs"] == "EPSG:4326"
        assert p["layer_names"] == ["towns", "districts"]
        assert p["layers"][1]["crs"] == "EPSG:32633" and p["layers"][0]["provider"] == "ogr"
        assert p["visible_layers"] == ["towns"]
        assert p["sources"] == ["districts.geojson", "towns.geojson"]


@pytest.mark.parametrize("source,expected", [
    ("./towns.geojson", "towns.geojson"), ("./towns.geojson|layername=towns", "towns.geojson"),
    ("/w/dem.tif", "dem.tif"),
    ("file:///w/sites.csv?type=csv&delimiter=,&xField=lon", "sites.csv")])
def test_project_layer_source_file(source, expected):
    assert source_file(source) == expected


@pytest.mark.parametrize("name,content,match", [
    ("p.qgz", b"PK\x03\x04broken", "broken .qgz"),
    ("p.qgs", QGS[:300].encode(), "not valid project XML"),
    ("p.qgs", b"<html></html>", "not a QGIS project"),
    ("p.qgz", QGS.encode(), "not a zip archive"),  # XML under a .qgz name: not from QGIS
])
def test_malformed_projects(tmp_path, name, content, match):
    state = _state(tmp_path, {name: content})
    with pytest.raises(GetterError, match=match):
        GETTERS["qgis_project"](state, name)
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("notes.txt", "no project")
    with pytest.raises(GetterError, match="without a .qgs"):
        parse_project(buf.getvalue())


# --- scoring rules: no credit for the start state, an existence check or "changed nothing" ---


ZERO_WEIGHT_GETTERS = {"file_exists", "agent_status"}


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_gates_and_penalties_carry_no_weight(spec_id):
    """Rule of issue 15: the first criterion is a gate; gates, existence checks and "changed
    nothing" checks weigh 0; a feasible task gives credit for something."""
    spec = SPECS[spec_id]
    crits = spec.evaluator
    assert crits[0].get("gate"), "the first criterion must be a gate"
    for c in crits:
        getter = c["getter"] if isinstance(c["getter"], str) else c["getter"]["fn"]
        if c.get("gate") or getter in ZERO_WEIGHT_GETTERS or c["check"]["op"] == "unchanged":
            assert c["weight"] == 0, (spec_id, c["name"])
    if not spec.infeasible:
        assert any(c["weight"] > 0 for c in crits), spec_id
        # credit comes after every gate, so a failed penalty gate zeroes the score
        last_gate = max(i for i, c in enumerate(crits) if c.get("gate"))
        assert all(c["weight"] > 0 for c in crits[last_gate + 1:]), spec_id


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_modality_is_gui(spec_id):
    """Every QGIS task is GUI work: the shell would bypass QGIS (ogr2ogr, gdallocationinfo,
    qgis_process), and QGIS's own Python console is reached through its GUI."""
    assert SPECS[spec_id].modality == "gui"
    assert not SPECS[spec_id].allow_cli


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_seeds_give_different_inputs(spec_id, tmp_path):
    """No two seeds stage the same input files (so a test-split episode never repeats a
    train one)."""
    seen = set()
    for seed in range(8):
        task = make_task(SPECS[spec_id], seed, tmp_path / str(seed))
        task.stage(tmp_path / str(seed))
        seen.add(tuple(sorted(task.input_hashes.items())))
    assert len(seen) == 8


# --- content checks, proven on generated data --------------------------------------------------


def _staged(spec_id: str, seed: int, work: Path) -> Task:
    task = make_task(SPECS[spec_id], seed, work)
    task.stage(work)
    return task


def _score(task: Task, work: Path, app_state: dict | None = None,
           answer: str | None = None) -> tuple[float, bool]:
    kwargs = {"answer": answer} if answer is not None else {}
    result = evaluate(task.criteria(), FinalState(work_dir=work, app_state=app_state, **kwargs))
    return result.score, result.success


def _feature_collection(name: str, feats: list[dict], epsg: int | None = None) -> str:
    """A FeatureCollection as QGIS's OGR GeoJSON driver writes it."""
    doc: dict = {"type": "FeatureCollection", "name": name}
    if epsg is not None:
        doc["crs"] = {"type": "name", "properties": {"name": f"urn:ogc:def:crs:EPSG::{epsg}"}}
    doc["features"] = feats
    return json.dumps(doc)


def _features(work: Path, name: str) -> list[dict]:
    return json.loads((work / name).read_text())["features"]


def test_filter_export_checks_the_features_content(tmp_path):
    task = _staged("qgis/filter-export-geojson", 0, tmp_path)
    out, cat = task.params["out"], task.params["category"]
    keep = [f for f in _features(tmp_path, "towns.geojson")
            if f["properties"]["category"] == cat]
    (tmp_path / out).write_text(_feature_collection(Path(out).stem, keep))
    assert _score(task, tmp_path) == (1.0, True)
    # every town moved by 0.01 degrees: names and attributes right, positions wrong
    moved = json.loads(json.dumps(keep))
    for f in moved:
        f["geometry"]["coordinates"][0] += 0.01
    (tmp_path / out).write_text(_feature_collection("x", moved))
    assert not _score(task, tmp_path)[1]
    names_only = [{**f, "properties": {"name": f["properties"]["name"]}} for f in keep]
    (tmp_path / out).write_text(_feature_collection("x", names_only))
    assert not _score(task, tmp_path)[1]
    for placeholder in (_feature_collection("x", []), (tmp_path / "towns.geojson").read_text()):
        (tmp_path / out).write_text(placeholder)
        assert _score(task, tmp_path) == (0.0, False)


def test_reproject_export_checks_coordinates_and_attributes(tmp_path):
    task = _staged("qgis/reproject-export", 1, tmp_path)
    code = task.params["target"]["code"]
    epsg = int(code.split(":")[1])
    feats = _features(tmp_path, "towns.geojson")
    lon = np.array([f["geometry"]["coordinates"][0] for f in feats])
    lat = np.array([f["geometry"]["coordinates"][1] for f in feats])
    x, y = data.project_points(lon, lat, code)
    projected = [{**f, "geometry": {"type": "Point", "coordinates": [float(x[i]), float(y[i])]}}
                 for i, f in enumerate(feats)]
    out = tmp_path / "towns_projected.geojson"
    out.write_text(_feature_collection("towns_projected", projected, epsg))
    assert _score(task, tmp_path) == (1.0, True)
    out.write_text(_feature_collection("towns_projected", feats, epsg))  # CRS only assigned
    assert not _score(task, tmp_path)[1]
    for placeholder in (_feature_collection("x", [], epsg),
                        (tmp_path / "towns.geojson").read_text()):
        out.write_text(placeholder)
        assert _score(task, tmp_path) == (0.0, False)


def _with_area_field(work: Path, field: str, factor: float, scale: float = 1.0) -> str:
    doc = json.loads((work / "districts.geojson").read_text())
    for f in doc["features"]:
        ring = [[x * scale, y * scale] for x, y in f["geometry"]["coordinates"][0]]
        f["geometry"]["coordinates"] = [ring]
        f["properties"][field] = data.shoelace(ring) * factor
    return json.dumps(doc)


def test_field_calculator_area_checks_values_and_geometries(tmp_path):
    task = _staged("qgis/field-calculator-area", 2, tmp_path)
    unit = task.params["unit"]
    field = f"{task.params['stem']}_{unit['unit']}"
    saved = {"layers_by_name": {"districts": {"modified": False}}}
    start = (tmp_path / "districts.geojson").read_text()
    assert _score(task, tmp_path, saved) == (0.0, False)  # the start state
    path = tmp_path / "districts.geojson"
    path.write_text(_with_area_field(tmp_path, field, unit["factor"]))
    assert _score(task, tmp_path, saved) == (1.0, True)
    assert _score(task, tmp_path, {"layers_by_name": {"districts": {"modified": True}}}) \
        == (0.0, False)  # more edits left unsaved
    path.write_text(_with_area_field(tmp_path, field, unit["wrong"]))
    assert _score(task, tmp_path, saved) == (0.3, False)  # the field made, its values wrong
    # geometries shrunk, areas consistent with them: the districts are no longer the input's
    path.write_text(start)
    path.write_text(_with_area_field(tmp_path, field, unit["factor"], scale=0.5))
    assert _score(task, tmp_path, saved) == (0.0, False)
    path.write_text(_feature_collection("districts", [], 32633))
    assert _score(task, tmp_path, saved) == (0.0, False)


def _zonal_means(work: Path) -> dict[str, float]:
    """Mean of the DEM cells whose centres lie in each (rectangular) district: computed here
    from the files alone, independently of the generator's gold."""
    z = tifffile.imread(work / "dem.tif").astype(np.float64)
    ny, nx = z.shape
    xc = 460000.0 + (np.arange(nx) + 0.5) * 100.0
    yc = 5090000.0 + ny * 100.0 - (np.arange(ny) + 0.5) * 100.0
    out = {}
    for f in _features(work, "districts.geojson"):
        ring = np.array(f["geometry"]["coordinates"][0])
        cols = (xc > ring[:, 0].min()) & (xc < ring[:, 0].max())
        rows = (yc > ring[:, 1].min()) & (yc < ring[:, 1].max())
        out[f["properties"]["name"]] = float(z[np.ix_(rows, cols)].mean())
    return out


def test_zonal_stats_checks_the_means(tmp_path):
    task = _staged("qgis/zonal-stats", 3, tmp_path)
    out, field = task.params["out"], f"{task.params['prefix']}mean"
    means = _zonal_means(tmp_path)
    feats = _features(tmp_path, "districts.geojson")
    for f in feats:
        f["properties"][field] = means[f["properties"]["name"]]
    (tmp_path / out).write_text(_feature_collection(Path(out).stem, feats, 32633))
    assert _score(task, tmp_path) == (1.0, True)
    for f in feats:
        f["properties"][field] = task.gold["terrain"]["mean"]  # the whole DEM's mean
    (tmp_path / out).write_text(_feature_collection(Path(out).stem, feats, 32633))
    assert _score(task, tmp_path) == (0.3, False)  # the zonal layer written, its means wrong
    for f in feats:  # right means, on districts moved 1 km east
        f["properties"][field] = means[f["properties"]["name"]]
        f["geometry"]["coordinates"] = [[[x + 1000, y] for x, y in
                                         f["geometry"]["coordinates"][0][:-1]]]
    (tmp_path / out).write_text(_feature_collection(Path(out).stem, feats[1:], 32633))
    assert _score(task, tmp_path) == (0.0, False)
    for placeholder in (_feature_collection("x", [], 32633),
                        (tmp_path / "districts.geojson").read_text()):
        (tmp_path / out).write_text(placeholder)
        assert _score(task, tmp_path) == (0.0, False)


def _project(title: str, layers: list[tuple[str, str]]) -> str:
    maplayers = "".join(
        f"<maplayer type=\"vector\"><datasource>./{src}</datasource>"
        f"<layername>{name}</layername><provider>ogr</provider></maplayer>"
        for name, src in layers)
    return (f"<qgis projectname=\"\" version=\"3.22.16\"><title>{title}</title>"
            f"<projectlayers>{maplayers}</projectlayers></qgis>")


def test_save_project_checks_title_and_layers(tmp_path):
    task = _staged("qgis/save-project", 0, tmp_path)
    path = tmp_path / f"{task.params['fname']}.qgz"
    title = task.params["title"]
    both = [("towns", "towns.geojson"), ("districts", "districts.geojson")]
    path.write_bytes(_qgz(_project(title, both)))
    assert _score(task, tmp_path) == (1.0, True)
    path.write_bytes(_qgz(_project("", both)))
    assert not _score(task, tmp_path)[1]
    for bad in (_qgz(_project(title, [("towns", "a.geojson"), ("districts", "b.geojson")])),
                _qgz(_project(title, [])), _project(title, both).encode(), b""):
        path.write_bytes(bad)
        assert _score(task, tmp_path) == (0.0, False)


# --- long-horizon workflows: stages replayed on hand-made final states ------------------------


def _styled_project(layers: list[tuple[str, str, str]]) -> bytes:
    """A .qgz as QGIS 3.22 writes it, each layer (name, file, extra XML inside <maplayer>)."""
    maplayers = "".join(
        f"<maplayer type=\"vector\" labelsEnabled=\"{int('text-style' in extra)}\">"
        f"<datasource>./{src}</datasource><layername>{name}</layername>"
        f"<provider>ogr</provider>{extra}</maplayer>" for name, src, extra in layers)
    return _qgz(f"<qgis projectname=\"\" version=\"3.22.16\"><title></title>"
                f"<projectlayers>{maplayers}</projectlayers></qgis>")


def _categorized(attr: str, values: list[str]) -> str:
    cats = "".join(f"<category label=\"{v}\" render=\"true\" symbol=\"{i}\" value=\"{v}\"/>"
                   for i, v in enumerate(values))
    return (f"<renderer-v2 attr=\"{attr}\" type=\"categorizedSymbol\"><categories>{cats}"
            "<category label=\"\" render=\"true\" symbol=\"9\" value=\"\"/></categories>"
            "</renderer-v2>")


def _labelled(field: str) -> str:
    return (f"<renderer-v2 type=\"singleSymbol\"/><labeling type=\"simple\"><settings>"
            f"<text-style fieldName=\"{field}\" isExpression=\"0\" fontSize=\"10\"/>"
            "</settings></labeling>")


def test_saved_project_renderer_and_labels(tmp_path):
    qgz = _styled_project([("towns", "towns.geojson", _categorized("category", ["b", "a"])),
                           ("stats", "stats.geojson", _labelled("elev_mean"))])
    p = parse_project(qgz)
    towns, stats = p["layers_by_name"]["towns"], p["layers_by_name"]["stats"]
    assert towns["renderer"] == {"type": "categorizedSymbol", "attribute": "category",
                                 "categories": ["a", "b"]}
    assert towns["labels"] == {"enabled": False, "field": None, "is_expression": False}
    assert stats["renderer"]["type"] == "singleSymbol"
    assert stats["labels"] == {"enabled": True, "field": "elev_mean", "is_expression": False}


def _workflow_score(task: Task, work: Path, app_state: dict, answer: str | None = None) -> float:
    return _score(task, work, app_state, answer)[0]


def test_town_census_workflow_stages_give_partial_credit(tmp_path):
    task = _staged("qgis/town-census-workflow", 1, tmp_path)
    g, p = task.gold["towns"], task.params
    code, threshold = p["target"]["code"], p["threshold"]
    feats = _features(tmp_path, "towns.geojson")
    big = [f for f in feats if f["properties"]["population"] > threshold]
    names = sorted(f["properties"]["name"] for f in big)
    layer = {"type": "vector", "feature_count": len(feats), "crs": "EPSG:4326",
             "selected_names": [], "renderer": {"type": "singleSymbol"}}
    project = {"file_name": "", "dirty": True}

    def state(**changes) -> dict:
        return {"layers_by_name": {"towns": {**layer, **changes}}, "project": project}

    assert _workflow_score(task, tmp_path, {"layers_by_name": {}, "project": project}) == 0
    s1 = _workflow_score(task, tmp_path, state())
    assert s1 == pytest.approx(0.1)
    s2 = _workflow_score(task, tmp_path, state(selected_names=names), str(len(big)))
    assert s2 == pytest.approx(0.35)
    # the count "at least": the town at the threshold itself is in, the stage fails
    assert _workflow_score(task, tmp_path, state(selected_names=g["names_ge"]),
                           str(g["count_ge"])) == pytest.approx(0.1)

    def export(rows: list[dict], crs: str) -> None:
        lon = np.array([f["geometry"]["coordinates"][0] for f in rows])
        lat = np.array([f["geometry"]["coordinates"][1] for f in rows])
        x, y = data.project_points(lon, lat, crs) if crs != "EPSG:4326" else (lon, lat)
        out = [{**f, "geometry": {"type": "Point", "coordinates": [float(x[i]), float(y[i])]}}
               for i, f in enumerate(rows)]
        epsg = int(crs.split(":")[1])
        (tmp_path / p["out"]).write_text(_feature_collection("x", out, epsg))

    export(big, code)
    s3 = _workflow_score(task, tmp_path, state(selected_names=names), str(len(big)))
    assert s3 == pytest.approx(0.65)
    styled = state(selected_names=names, renderer={
        "type": "categorizedSymbol", "attribute": "category", "categories": g["values"]})
    styled["project"] = {"file_name": f"/home/user/work/{p['proj']}.qgz", "dirty": False}
    qgz = tmp_path / f"{p['proj']}.qgz"
    qgz.write_bytes(_styled_project([("towns", "towns.geojson",
                                      _categorized("category", g["values"]))]))
    assert _score(task, tmp_path, styled, str(len(big))) == (1.0, True)
    # saved before styling: the file holds the plain renderer
    qgz.write_bytes(_styled_project([("towns", "towns.geojson", "<renderer-v2 "
                                      "type=\"singleSymbol\"/>")]))
    assert _workflow_score(task, tmp_path, styled, str(len(big))) == pytest.approx(0.8)
    qgz.unlink()
    assert _workflow_score(task, tmp_path, styled, str(len(big))) == pytest.approx(0.75)
    # every town exported, or the selection not reprojected: the export stage fails
    for rows, crs in ((feats, code), (big, "EPSG:4326"), (big, p["target"]["other"])):
        export(rows, crs)
        assert _workflow_score(task, tmp_path, styled, str(len(big))) == pytest.approx(0.35)


def test_district_elevation_workflow_stages_give_partial_credit(tmp_path):
    task = _staged("qgis/district-elevation-workflow", 2, tmp_path)
    p = task.params
    out, mean_field, area_field = p["out"], f"{p['prefix']}mean", p["area_field"]
    opened = {"dem": {"type": "raster", "extent": [460000.0, 5090000.0, 472000.0, 5100000.0]},
              "districts": {"type": "vector", "feature_count": 6}}
    project = {"file_name": "", "dirty": True}
    start = {"layers_by_name": opened, "project": project}
    assert _workflow_score(task, tmp_path, {"layers_by_name": {}, "project": project}) == 0
    assert _workflow_score(task, tmp_path, start) == pytest.approx(0.1)
    means = _zonal_means(tmp_path)
    feats = _features(tmp_path, "districts.geojson")
    for f in feats:
        f["properties"].update({f"{p['prefix']}count": 1, mean_field:
                                means[f["properties"]["name"]]})
    path = tmp_path / f"{out}.geojson"
    path.write_text(_feature_collection(out, feats, 32633))
    saved = {"type": "vector", "modified": False, "labels": {"enabled": False}}
    zonal = {"layers_by_name": {**opened, out: saved}, "project": project}
    assert _workflow_score(task, tmp_path, zonal) == pytest.approx(0.45)

    def with_area(factor: float) -> None:
        for f in feats:
            f["properties"][area_field] = data.shoelace(f["geometry"]["coordinates"][0]) * factor
        path.write_text(_feature_collection(out, feats, 32633))

    with_area(1e-4)
    assert _workflow_score(task, tmp_path, zonal) == pytest.approx(0.65)
    unsaved = {"layers_by_name": {**opened, out: {**saved, "modified": True}},
               "project": project}
    assert _workflow_score(task, tmp_path, unsaved) == pytest.approx(0.45)
    labels = {"enabled": True, "field": mean_field, "is_expression": False}
    final = {"layers_by_name": {**opened, out: {**saved, "labels": labels}},
             "project": {"file_name": f"/home/user/work/{p['proj']}.qgz", "dirty": False}}
    qgz = tmp_path / f"{p['proj']}.qgz"
    layers = [(out, f"{out}.geojson", _labelled(mean_field)), ("districts",
              "districts.geojson", ""), ("dem", "dem.tif", "")]
    qgz.write_bytes(_styled_project(layers))
    assert _score(task, tmp_path, final) == (1.0, True)
    layers[0] = (out, f"{out}.geojson", _labelled("name"))  # saved before the labelling
    qgz.write_bytes(_styled_project(layers))
    assert _workflow_score(task, tmp_path, final) == pytest.approx(0.85)
    with_area(1.0)  # square metres
    assert _workflow_score(task, tmp_path, final) == pytest.approx(0.45)
    for f in feats:  # the maximum in the mean's field
        f["properties"][mean_field] = max(means.values()) + 50
    path.write_text(_feature_collection(out, feats, 32633))
    assert _workflow_score(task, tmp_path, final) == pytest.approx(0.1)
