"""Gwyddion's tasks offline: the ``.gwy`` reader and writer, the height-map generator's gold,
and each file task's criteria on the files an oracle and a wrong attempt would leave.

Gwyddion itself is not needed here: the files are made with numpy from the gold arrays (what
Plane Level, Align Rows, Crop and Arithmetic compute), the way the end-to-end audit's GUI
oracles make them with the real program. Agent-written files may be anything, so the reader is
fed junk too: it must refuse it with GwyFormatError, quickly and without deep recursion.
"""

from __future__ import annotations

import struct
import time
from pathlib import Path

import numpy as np
import pytest
import tifffile

from sciagent_gym.evaluation import FinalState, evaluate
from sciagent_gym.tasks.task import Task
from sciagent_gym.tools import load_adapter, load_tool_getters, load_tool_specs

load_tool_getters("gwyddion")

from sciagent_gym.envs.gwyddion import data, gwyfmt  # noqa: E402
from sciagent_gym.envs.gwyddion.gwyfmt import (  # noqa: E402
    GwyFormatError,
    GwyObject,
    parse_gwy,
    write_gwy,
)

SPECS = load_tool_specs("gwyddion")
NM = 1e-9


def _stage(task_id: str, tmp_path: Path, seed: int = 0) -> tuple[Task, Path]:
    work = tmp_path / "work"
    task = Task(SPECS[task_id], seed, load_adapter("gwyddion").generators,
                {"work": str(work), "home": "/h", "tmp": "/t"})
    task.stage(work)
    return task, work


def _score(task: Task, work: Path, answer: str | None = None, status: str = "done"):
    return evaluate(task.criteria(), FinalState(work_dir=work, app_state=None,
                                                agent_status=status, answer=answer))


def _input(work: Path) -> tuple[np.ndarray, float]:
    [channel] = gwyfmt.read_channels(work / "sample.gwy")
    return channel.data, channel.xreal / channel.data.shape[1]


# -- the file format ----------------------------------------------------------------------------


def test_written_files_read_back_with_units_and_sizes(tmp_path):
    z = np.random.default_rng(1).normal(0, 1e-9, (40, 60))
    write_gwy(tmp_path / "a.gwy", [("Height", z), ("Phase", -z)], 5e-9, palette="Gray")
    before, after = gwyfmt.read_channels(tmp_path / "a.gwy")
    assert before.title == "Height" and after.title == "Phase"
    assert np.array_equal(before.data, z) and np.array_equal(after.data, -z)
    assert before.xreal == pytest.approx(60 * 5e-9) and before.yreal == pytest.approx(40 * 5e-9)
    assert (before.unit_xy, before.unit_z, before.palette) == ("m", "m", "Gray")
    assert before.log == [] and not before.has_mask


def test_a_saved_processing_log_and_mask_are_read(tmp_path):
    z = np.zeros((8, 8))
    items = {"/0/data": gwyfmt.datafield(z, 1e-9), "/0/data/title": "Height",
             "/0/data/log": GwyObject("GwyStringList", {"strings": ["proc::level()@now"]}),
             "/0/mask": gwyfmt.datafield(np.eye(8), 1e-9, unit_z="")}
    (tmp_path / "m.gwy").write_bytes(b"GWYP" + gwyfmt._object(GwyObject("GwyContainer", items)))
    [channel] = gwyfmt.read_channels(tmp_path / "m.gwy")
    assert channel.log == ["proc::level()@now"] and channel.has_mask


def _nested(depth: int) -> bytes:
    body = b""
    for _ in range(depth):
        inner = b"GwyContainer\0" + struct.pack("<I", len(body)) + body
        body = b"x\0o" + inner
    return b"GWYP" + b"GwyContainer\0" + struct.pack("<I", len(body)) + body


@pytest.mark.parametrize("junk", [
    b"", b"GWYO" + b"\0" * 20, b"PNG\x89 not a gwy file", b"GWYPGwyContainer",
    b"GWYPGwyContainer\0" + struct.pack("<I", 1000) + b"short",
    b"GWYPGwyContainer\0" + struct.pack("<I", 9) + b"k\0D" + struct.pack("<I", 10**9) + b"..",
    b"GWYPGwyContainer\0" + struct.pack("<I", 4) + b"k\0Z\0",
    b"GWYPGwyDataField\0" + struct.pack("<I", 0),
    _nested(200),
], ids=["empty", "gwyddion-1", "other", "no-size", "truncated", "huge-array", "bad-type",
        "not-a-container", "deep-nesting"])
def test_junk_is_refused(junk):
    with pytest.raises(GwyFormatError):
        parse_gwy(junk)


def test_many_tiny_components_are_capped_quickly():
    body = b"".join(b"%d\0b\x01" % i for i in range(gwyfmt.MAX_COMPONENTS + 10))
    blob = b"GWYPGwyContainer\0" + struct.pack("<I", len(body)) + body
    start = time.monotonic()
    with pytest.raises(GwyFormatError, match="components"):
        parse_gwy(blob)
    assert time.monotonic() - start < 10


def test_a_data_field_whose_size_does_not_match_its_resolution_is_refused(tmp_path):
    bad = gwyfmt.datafield(np.zeros((4, 4)), 1e-9)
    bad.items["xres"] = 100
    items = {"/0/data": bad}
    blob = b"GWYP" + gwyfmt._object(GwyObject("GwyContainer", items))
    with pytest.raises(GwyFormatError, match="does not hold"):
        gwyfmt.channels(parse_gwy(blob))


# -- the generator -------------------------------------------------------------------------------


def test_surface_gold_matches_its_data(tmp_path):
    rng = np.random.default_rng(3)
    gold = data.surface(tmp_path, rng, tilt_nm=40, step_nm=[4, 6], particles=5,
                        roughness_nm=[1, 2], region=[10, 20, 30, 40],
                        reference=["input", "levelled", "crop"])
    z = tifffile.imread(gold["input"]) if isinstance(gold["input"], str) else gold["input"]
    read, pixel = _input(tmp_path)
    assert np.array_equal(read, z) and pixel == pytest.approx(gold["pixel_nm"] * NM)
    assert 4 <= gold["step_nm"] <= 6 and gold["n_particles"] == 5
    levelled = gold["levelled"]
    assert levelled.mean() == pytest.approx(z.mean())  # Plane Level keeps the mean
    assert np.abs(data.plane_fit(levelled) - levelled.mean()).max() < 1e-15
    assert gold["sq_nm"] == pytest.approx(levelled.std() / NM)
    assert gold["sq_raw_nm"] > 1.5 * gold["sq_nm"]  # the tilt would inflate Sq
    assert gold["crop"].shape == (40, 30) and np.array_equal(gold["crop"], z[20:60, 10:40])


def test_particles_stand_apart_and_above_the_substrate(tmp_path):
    gold = data.surface(tmp_path, np.random.default_rng(5), particles=[8, 16],
                        particle_height_nm=[15, 25], noise_nm=0.3)
    z, _ = _input(tmp_path)
    for p in gold["particles"]:
        assert z[int(p["y"]), int(p["x"])] - np.median(z) > 10 * NM
    for i, a in enumerate(gold["particles"]):
        for b in gold["particles"][i + 1:]:
            assert np.hypot(a["x"] - b["x"], a["y"] - b["y"]) > a["r_px"] + b["r_px"]


# -- each file task's criteria on right and wrong files -------------------------------------------

#: task -> (output file, how the oracle's file is made from the staged input and gold)
FILE_TASKS = {
    "gwyddion/level-plane-save": ("levelled.gwy", lambda z, g, p: [
        ("Height", data.plane_level(z))]),
    "gwyddion/align-rows-save": ("aligned.gwy", lambda z, g, p: [
        ("Height", z - np.median(z, axis=1, keepdims=True))]),
    "gwyddion/crop-save": ("roi.gwy", lambda z, g, p: [
        ("Height", z), ("Height", z[p["box"]["y"]:p["box"]["y"] + p["box"]["h"],
                                    p["box"]["x"]:p["box"]["x"] + p["box"]["w"]])]),
    "gwyddion/remove-bow-poly": ("flattened.gwy", lambda z, g, p: [
        ("Height", z - data.poly_fit(z, 2))]),
    "gwyddion/recalibrate-z-arithmetic": ("calibrated.gwy", lambda z, g, p: [
        ("Height", z), ("Calculated 1", z * p["k"])]),
}


@pytest.mark.parametrize("task_id", sorted(FILE_TASKS))
@pytest.mark.parametrize("seed", [0, 1])
def test_file_task_passes_the_right_file_and_fails_the_input(task_id, seed, tmp_path):
    task, work = _stage(task_id, tmp_path, seed)
    try:
        name, make = FILE_TASKS[task_id]
        z, pixel = _input(work)
        assert _score(task, work).score == 0  # nothing saved
        write_gwy(work / name, make(z, task.gold["scan"], task.params), pixel)
        answer = None
        if task_id == "gwyddion/recalibrate-z-arithmetic":  # and the corrected channel's Sq
            answer = f"{task.gold['scan']['sq_scaled_nm']:.4g} nm"
            assert _score(task, work).score == pytest.approx(2 / 3)  # saved, not measured
            assert _score(task, work, f"{task.gold['scan']['sq_raw_nm']:.4g} nm").score == \
                pytest.approx(2 / 3)  # the recorded channel's Sq
        right = _score(task, work, answer)
        assert right.success, right
        write_gwy(work / name, [("Height", z)], pixel)  # the input saved unchanged
        assert _score(task, work).score == 0
        write_gwy(work / name, [("Height", z * 0.0)], pixel)  # a flat field: no surface
        assert _score(task, work).score == 0
        if task_id == "gwyddion/remove-bow-poly":
            # the dialog's default degree 3: tilt and bow gone, but more than asked removed
            write_gwy(work / name, [("Height", z - data.poly_fit(z, 3))], pixel)
            assert _score(task, work).score == 0.5
            # Plane Level: the tilt gone, the bow left
            write_gwy(work / name, [("Height", data.plane_level(z))], pixel)
            assert _score(task, work).score == 0.25
        if task_id == "gwyddion/level-plane-save":  # a degree-2 polynomial: tilt gone, more lost
            write_gwy(work / name, [("Height", z - data.poly_fit(z, 2))], pixel)
            assert _score(task, work).score == pytest.approx(1 / 3)
        if task_id == "gwyddion/align-rows-save":  # rows aligned by their means, not medians
            write_gwy(work / name, [("Height", z - z.mean(axis=1, keepdims=True))], pixel)
            assert _score(task, work).score == 0
        (work / name).write_bytes(b"GWYP")  # a placeholder
        assert _score(task, work).score == 0
    finally:
        task.cleanup()


def test_subtract_known_tilt_needs_the_given_plane_not_a_fit(tmp_path):
    task, work = _stage("gwyddion/subtract-known-tilt", tmp_path)
    try:
        z, pixel = _input(work)
        sx, sy = task.params["slope"]["sx"], task.params["slope"]["sy"]
        n = z.shape[0]
        y, x = (np.mgrid[0:n, 0:n] + 0.5) * pixel
        right = z - (sx * x + sy * y) * 1e-3
        write_gwy(work / "untilted.gwy", [("Height", z), ("Calculated 1", right)], pixel)
        assert _score(task, work).success
        write_gwy(work / "untilted.gwy", [("Height", data.plane_level(z))], pixel)
        fitted = _score(task, work)  # the step along x skews the fit's x slope only
        assert not fitted.success and fitted.score <= 0.25
        write_gwy(work / "untilted.gwy", [("Height", z - sx * x * 1e-3)], pixel)
        assert _score(task, work).score == 0.25  # only the x slope subtracted
        write_gwy(work / "untilted.gwy", [("Calculated 1", z - (sy * x + sx * y) * 1e-3)], pixel)
        assert _score(task, work).score == 0
    finally:
        task.cleanup()


def _mask_file(path: Path, z: np.ndarray, mask: np.ndarray, pixel: float) -> None:
    items = {"/0/data": gwyfmt.datafield(z, pixel), "/0/data/title": "Height",
             "/0/mask": gwyfmt.datafield(mask.astype(float), pixel, unit_z="")}
    path.write_bytes(b"GWYP" + gwyfmt._object(GwyObject("GwyContainer", items)))


def test_mark_grains_scores_the_mask_against_the_particles(tmp_path):
    task, work = _stage("gwyddion/mark-grains-save", tmp_path)
    try:
        z, pixel = _input(work)
        particles = task.gold["scan"]["particles"]
        yy, xx = np.mgrid[0:z.shape[0], 0:z.shape[1]]
        discs = np.zeros(z.shape, bool)
        for p in particles:
            discs |= np.hypot(xx - p["x"], yy - p["y"]) < 0.6 * p["r_px"]
        _mask_file(work / "particles.gwy", z, discs, pixel)
        assert _score(task, work).success
        _mask_file(work / "particles.gwy", z, ~discs, pixel)  # the substrate marked
        assert _score(task, work).score == 0
        merged = discs.copy()  # two particles joined into one grain
        a, b = particles[0], particles[1]
        for t in np.linspace(0, 1, 400):
            merged[int(a["y"] + t * (b["y"] - a["y"])), int(a["x"] + t * (b["x"] - a["x"]))] = True
        _mask_file(work / "particles.gwy", z, merged, pixel)
        assert not _score(task, work).success
        stray = discs.copy()  # a grain on bare substrate
        stray[2:5, 2:5] = True
        _mask_file(work / "particles.gwy", z, stray, pixel)
        assert not _score(task, work).success
        write_gwy(work / "particles.gwy", [("Height", z)], pixel)  # no mask at all
        assert _score(task, work).score == 0
    finally:
        task.cleanup()


def test_grain_count_scores_the_mask_and_the_count(tmp_path):
    task, work = _stage("gwyddion/grain-count", tmp_path)
    try:
        n = task.gold["scan"]["n_particles"]
        assert _score(task, work, str(n + 1)).score == 0
        assert _score(task, work, str(n)).score == 0.4  # the count alone: 2 of 5
        z, pixel = _input(work)
        levelled = data.plane_level(z)
        _mask_file(work / "grains.gwy", levelled,
                   levelled > levelled.min() + 0.5 * np.ptp(levelled), pixel)
        assert _score(task, work, str(n)).success
        assert _score(task, work).score == 0.6
        _mask_file(work / "grains.gwy", levelled, levelled < levelled.min() + 0.5 *
                   np.ptp(levelled), pixel)  # the substrate marked
        assert _score(task, work).score == 0.2  # only the levelling
    finally:
        task.cleanup()


# -- answer tasks: the gold in honest forms passes, the usual mistakes fail ----------------------

ANSWERS = {"gwyddion/roughness-sq": "sq_nm", "gwyddion/roughness-sa-region": "region.sa_nm"}


@pytest.mark.parametrize("task_id", sorted(ANSWERS))
def test_answer_forms(task_id, tmp_path):
    task, work = _stage(task_id, tmp_path)
    try:
        value = task.gold["scan"]
        for key in ANSWERS[task_id].split("."):
            value = value[key]
        for text in (f"{value * 1.1:.4g} nm", f"{value:.4g} um", f"{value:.3g} or {value * 2:.3g}"):
            assert _score(task, work, text).score == 0, text
        assert _score(task, work, f"{value:.4g} nm").score == 0.5  # measured, nothing saved
        z, pixel = _input(work)
        write_gwy(work / "levelled.gwy", [("Height", data.plane_level(z))], pixel)
        for text in (f"{value:.4g} nm", f"{value:.4g}", f"{value * 10:.5g} Å",
                     f"{value * 1e-9:.4e} m"):
            assert _score(task, work, text).success, text
        assert _score(task, work).score == 0.5  # levelled and saved, nothing measured
        write_gwy(work / "levelled.gwy", [("Height", z)], pixel)  # saved unlevelled
        assert _score(task, work, f"{value * 1.1:.4g} nm").score == 0
    finally:
        task.cleanup()


def test_the_infeasible_task_rewards_only_fail(tmp_path):
    task, work = _stage("gwyddion/phase-lag-missing", tmp_path)
    try:
        assert _score(task, work, status="fail").success
        assert _score(task, work, status="done").score == 0
        assert not _score(task, work, answer="12 deg", status="fail").success
        [channel] = gwyfmt.read_channels(work / "sample.gwy")  # really no phase channel
        assert channel.title == "Height"
    finally:
        task.cleanup()


def test_particle_mean_area_reads_areas_in_any_unit_and_not_lengths(tmp_path):
    task, work = _stage("gwyddion/particle-mean-area", tmp_path)
    try:
        grains = task.gold["scan"]["grains"]
        area = grains["mean_area_nm2"]
        assert grains["n"] == task.gold["scan"]["n_particles"]  # the threshold splits them all
        for text in (f"{area * 1e-6:.6f}", f"{grains['mean_size_nm']:.2f} nm",
                     f"{grains['total_area_nm2']:.0f} nm²",
                     f"{task.gold['scan']['grains_default']['mean_area_nm2']:.0f} nm²"):
            assert _score(task, work, text).score == 0, text
        assert _score(task, work, f"{area:.0f} nm²").score == 0.4  # the answer alone: 2 of 5
        z, pixel = _input(work)
        levelled = data.plane_level(z)
        at = levelled > levelled.min() + task.params["threshold"] / 100.0 * np.ptp(levelled)
        _mask_file(work / "particles.gwy", levelled, at, pixel)
        for text in (f"{area:.0f} nm²", f"{area:.0f} nm^2", f"{area:.0f}",
                     f"{area * 1e-6:.6f} µm²", f"{area * 1e-6:.6f} um2"):
            assert _score(task, work, text).success, text
        assert _score(task, work).score == 0.6  # the mask saved, nothing answered
        half = levelled > levelled.min() + 0.5 * np.ptp(levelled)  # the default threshold
        _mask_file(work / "particles.gwy", levelled, half, pixel)
        assert _score(task, work).score == 0.4  # one grain a particle on the levelled scan
        unlevelled = z > z.min() + task.params["threshold"] / 100.0 * np.ptp(z)
        _mask_file(work / "particles.gwy", z, unlevelled, pixel)  # marked on the tilt
        assert _score(task, work).score < 0.4
    finally:
        task.cleanup()


def test_grain_summary_gold_follows_the_threshold(tmp_path):
    rng = np.random.default_rng(3)
    gold = data.surface(tmp_path, rng, tilt_nm=50, particles=10, noise_nm=0.3,
                        particle_radius_px=(4.0, 8.0), particle_height_nm=(15.0, 25.0),
                        grain_threshold=25)
    low, high = gold["grains"], gold["grains_default"]
    assert low["n"] == high["n"] == 10
    assert low["mean_area_nm2"] > 1.3 * high["mean_area_nm2"]  # a lower cut, wider grains
    assert low["total_area_nm2"] == pytest.approx(low["n"] * low["mean_area_nm2"])
    assert gold["grains_unlevelled"]["n"] != 10 or (
        abs(gold["grains_unlevelled"]["mean_area_nm2"] / low["mean_area_nm2"] - 1) > 0.1)


def test_hexagonal_monolayer_has_the_drawn_lattice_constant(tmp_path):
    rng = np.random.default_rng(5)
    gold = data.surface(tmp_path, rng, pixel_nm=6.0, lattice_nm=[120, 120], noise_nm=0.1)
    assert gold["lattice_nm"] == 120.0
    [channel] = gwyfmt.read_channels(tmp_path / "sample.gwy")
    z = channel.data - channel.data.mean()
    # the power spectrum's strongest peaks lie at 2/(a*sqrt(3)) (the reciprocal lattice)
    power = np.abs(np.fft.fftshift(np.fft.fft2(z))) ** 2
    n = z.shape[0]
    c = n // 2
    power[c - 3:c + 4, c - 3:c + 4] = 0
    ky, kx = np.unravel_index(np.argmax(power), power.shape)
    k = np.hypot(kx - c, ky - c) / (n * 6.0)  # cycles per nm
    assert 2 / (np.sqrt(3) * k) == pytest.approx(120.0, rel=0.05)


def test_lattice_constant_answer_forms(tmp_path):
    task, work = _stage("gwyddion/lattice-constant", tmp_path)
    try:
        scan = task.gold["scan"]
        a = scan["lattice_nm"]
        assert _score(task, work, f"{a:.1f} nm").score == 0.5  # measured, nothing saved
        z, pixel = _input(work)
        write_gwy(work / "levelled.gwy", [("Height", data.plane_level(z))], pixel)
        for text in (f"{a:.1f} nm", f"{a:.1f}", f"{a / 1000:.5f} µm", f"{a * 10:.0f} Å"):
            assert _score(task, work, text).success, text
        write_gwy(work / "levelled.gwy", [("Height", z)], pixel)  # saved unlevelled
        for text in (f"{a / 1000:.5f}", f"{scan['lattice_rows_nm']:.1f} nm",
                     f"{scan['lattice_px']:.2f}", f"{a:.1f} µm"):
            assert _score(task, work, text).score == 0, text
    finally:
        task.cleanup()


# -- the long-horizon workflow: each stage negative scores its share, the oracle 1 ---------------

#: weights per stage: open-level 2, grains 4, statistics 2, size-distribution 3, report 2 (of 13)
WORKFLOW_PARTIAL = {"stops-after-levelling": 2 / 13, "stops-after-grains": 6 / 13,
                    "no-size-export": 10 / 13, "radius-only-export": 12 / 13,
                    "stops-before-report": 11 / 13, "oracle": 1.0, "not-levelled": 0.0}


def _grain_summary_text(n: int, mean_nm2: float, total_nm2: float) -> str:
    """Gwyddion 2.62's Grain Summary as its save button writes it (colon format)."""
    return ("Grain Summary\nFile:                            /home/user/work/sample.gwy\n"
            "Image:                           Height\n\n"
            f"Number of grains:                {n}\nDensity:                         2.8 µm⁻²\n"
            f"Total projected area (abs.):     {total_nm2:.1f} nm²\n"
            "Total projected area (rel.):     1.979 %\n"
            f"Mean grain area:                 {mean_nm2:.2f} nm²\n"
            "Mean grain size:                 83.0689 nm\n")


def _workflow_case(task: Task, work: Path, case: str) -> str | None:
    """Write what the workflow leaves when it stops where ``case`` says; returns the answer."""
    z, pixel = _input(work)
    levelled = z if case == "not-levelled" else data.plane_level(z)
    write_gwy(work / "levelled.gwy", [("Height", levelled)], pixel)
    if case == "stops-after-levelling":
        return None
    threshold = task.params["threshold"]
    mask = levelled > levelled.min() + threshold / 100.0 * np.ptp(levelled)
    _mask_file(work / "particles.gwy", levelled, mask, pixel)
    if case == "stops-after-grains":
        return None
    g = data.grain_summary(levelled, pixel, threshold)
    (work / "grain_summary.txt").write_text(_grain_summary_text(
        g["n"], g["mean_area_nm2"], g["total_area_nm2"]))
    if case != "no-size-export":
        (work / "grain_sizes.txt").write_text(_grain_sizes_text(
            g["areas_nm2"], radius_only=case == "radius-only-export"))
    if case == "stops-before-report":
        return None
    return f"{g['mean_area_nm2']:.1f} nm²"


def _grain_sizes_text(areas_nm2: list[float], radius_only: bool = False,
                      header: bool = False) -> str:
    """Grain Distributions' raw export (2.62) of Projected area and Equivalent disc radius, one
    row per grain in SI units, tab-separated, %g; with the default selection only the radius."""
    rows = ["#\tr_eq" if radius_only else "#\tA_0\tr_eq"] if header else []
    for a in areas_nm2:
        area = a * NM * NM
        radius = f"{np.sqrt(area / np.pi):g}"
        rows.append(radius if radius_only else f"{area:g}\t{radius}")
    return "\n".join(rows) + "\n"


@pytest.mark.parametrize("case", sorted(WORKFLOW_PARTIAL))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_particle_workflow_stages_give_partial_credit(case, seed, tmp_path):
    task, work = _stage("gwyddion/particle-workflow-report", tmp_path, seed)
    try:
        assert case == "oracle" or case in task.spec.negatives
        answer = _workflow_case(task, work, case)
        result = _score(task, work, answer)
        assert result.score == pytest.approx(WORKFLOW_PARTIAL[case]), result
        assert result.success == (case == "oracle")
    finally:
        task.cleanup()


def test_particle_workflow_start_and_copied_inputs_score_zero(tmp_path):
    task, work = _stage("gwyddion/particle-workflow-report", tmp_path)
    try:
        assert _score(task, work).score == 0
        for name in ("levelled.gwy", "particles.gwy"):
            (work / name).write_bytes((work / "sample.gwy").read_bytes())
        assert _score(task, work, "5000 nm²").score == 0
    finally:
        task.cleanup()


def test_particle_workflow_size_table_is_read_by_content(tmp_path):
    """The raw grain export scores by its values: any row order, with or without its header,
    extra columns allowed; another threshold's grains, areas in nm², a row short or junk fail."""
    task, work = _stage("gwyddion/particle-workflow-report", tmp_path, 1)
    try:
        z, pixel = _input(work)
        levelled = data.plane_level(z)
        threshold = task.params["threshold"]
        _workflow_case(task, work, "oracle")
        names = ("one row per grain", "each grain's projected area",
                 "each grain's equivalent disc radius")

        def scored(text: str) -> list[bool]:
            (work / "grain_sizes.txt").write_text(text)
            result = _score(task, work, "1 nm²")
            by_name = {c.name: c.passed for c in result.criteria}
            return [by_name[n] for n in names]

        areas = data.grain_summary(levelled, pixel, threshold)["areas_nm2"]
        assert scored(_grain_sizes_text(areas)) == [True, True, True]
        assert scored(_grain_sizes_text(areas[::-1], header=True)) == [True, True, True]
        swapped = "\n".join("\t".join(reversed(line.split("\t")))
                            for line in _grain_sizes_text(areas).splitlines())
        assert scored(swapped + "\n") == [True, True, True]
        assert scored(_grain_sizes_text(areas, radius_only=True)) == [True, False, True]
        assert scored(_grain_sizes_text(areas[1:])) == [False, False, False]
        other = data.grain_summary(levelled, pixel, 50.0)["areas_nm2"]
        assert other != areas and scored(_grain_sizes_text(other))[1:] == [False, False]
        in_nm2 = "".join(f"{a:g}\t{np.sqrt(a / np.pi):g}\n" for a in areas)
        assert scored(in_nm2)[1:] == [False, False]
        assert scored("Grain sizes\n" + _grain_sizes_text(areas)) == [False, False, False]
        assert scored("") == [False, False, False]
    finally:
        task.cleanup()


# -- the coating workflow: flatten, window Sa, cut-out; the stage negatives score their share ----

#: weights per stage: open-flatten 2, roughness 2, roi 3 (of 7)
COATING_PARTIAL = {"stops-after-flattening": 2 / 7, "stops-after-roughness": 4 / 7,
                   "oracle": 1.0, "plane-level-instead": 0.0, "sq-not-sa": 5 / 7,
                   "roi-of-the-raw-scan": 5 / 7}


def _coating_case(task: Task, work: Path, case: str) -> str | None:
    """Write what the coating workflow leaves when it goes as ``case`` says; returns the
    answer."""
    z, pixel = _input(work)
    flat = data.plane_level(z) if case == "plane-level-instead" else z - data.poly_fit(z, 2)
    write_gwy(work / "flattened.gwy", [("Height", flat)], pixel)
    if case == "stops-after-flattening":
        return None
    r = task.params["region"]
    window = flat[r["y"]:r["y"] + r["h"], r["x"]:r["x"] + r["w"]]
    measure = data.sq if case == "sq-not-sa" else data.sa
    answer = f"{measure(window) / NM:.3f} nm"
    if case == "stops-after-roughness":
        return answer
    source = z if case == "roi-of-the-raw-scan" else flat
    cut = source[r["y"]:r["y"] + r["h"], r["x"]:r["x"] + r["w"]]
    write_gwy(work / "roi.gwy", [("Height", flat), ("Height", cut)], pixel)
    return answer


@pytest.mark.parametrize("case", sorted(COATING_PARTIAL))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_coating_workflow_stages_give_partial_credit(case, seed, tmp_path):
    task, work = _stage("gwyddion/coating-flatten-roughness-report", tmp_path, seed)
    try:
        assert case in {"oracle", "sq-not-sa", "roi-of-the-raw-scan"} or case in task.spec.negatives
        result = _score(task, work, _coating_case(task, work, case))
        assert result.score == pytest.approx(COATING_PARTIAL[case]), result
        assert result.success == (case == "oracle")
    finally:
        task.cleanup()


def test_coating_workflow_start_and_copied_inputs_score_zero(tmp_path):
    task, work = _stage("gwyddion/coating-flatten-roughness-report", tmp_path)
    try:
        assert _score(task, work).score == 0
        for name in ("flattened.gwy", "roi.gwy"):
            (work / name).write_bytes((work / "sample.gwy").read_bytes())
        assert _score(task, work, "2.0 nm").score == 0
    finally:
        task.cleanup()


# -- the line-noise workflow: rows aligned, then levelled; each product scores its share ----------

#: weights: correct 3 (line offsets, tilt, row shifts), grains 4, report 2, answer 2
LINE_NOISE_PARTIAL = {"oracle": 1.0, "stops-after-correcting": 3 / 11,
                      "all-but-the-answer": 9 / 11, "levelled-without-aligning": 1 / 11,
                      "aligned-not-levelled": 2 / 11, "input-saved": 0.0}


def _line_noise_case(task: Task, work: Path, case: str) -> str | None:
    z, pixel = _input(work)
    aligned = z - np.median(z, axis=1, keepdims=True)
    corrected = {"levelled-without-aligning": data.plane_level(z), "input-saved": z,
                 "aligned-not-levelled": aligned}.get(case, data.plane_level(aligned))
    write_gwy(work / "corrected.gwy", [("Height", corrected)], pixel)
    if case in ("stops-after-correcting", "input-saved"):
        return None
    threshold = task.params["threshold"]
    mask = corrected > corrected.min() + threshold / 100.0 * np.ptp(corrected)
    _mask_file(work / "particles.gwy", corrected, mask, pixel)
    g = data.grain_summary(corrected, pixel, threshold)
    (work / "grain_summary.txt").write_text(_grain_summary_text(
        g["n"], g["mean_area_nm2"], g["total_area_nm2"]))
    return None if case == "all-but-the-answer" else str(g["n"])


@pytest.mark.parametrize("case", sorted(LINE_NOISE_PARTIAL))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_line_noise_workflow_stages_give_partial_credit(case, seed, tmp_path):
    task, work = _stage("gwyddion/line-noise-particle-workflow", tmp_path, seed)
    try:
        scan = task.gold["scan"]
        assert scan["grains"]["n"] == scan["n_particles"]  # one grain a particle
        assert scan["grains_unaligned"]["n"] != scan["n_particles"]  # the streaks are marked
        result = _score(task, work, _line_noise_case(task, work, case))
        if case == "aligned-not-levelled":  # aligning rows removes a tilt along y by itself
            assert LINE_NOISE_PARTIAL[case] - 1e-9 <= result.score < 1, result
        else:
            assert result.score == pytest.approx(LINE_NOISE_PARTIAL[case]), result
        assert result.success == (case == "oracle")
    finally:
        task.cleanup()
