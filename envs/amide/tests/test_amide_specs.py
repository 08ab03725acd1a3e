"""AMIDE's tasks offline: the head-volume generator's gold, the XIF study reader (flat files and
directories), the ROI statistics and view-image getters, and criteria on the files an oracle and
a wrong attempt would leave.

AMIDE itself is not needed here: studies are written by the generator's own flat-XIF writer
(the layout AMIDE 1.0.6's "Save Study As" writes, checked against the program by opening them
in it) and statistics files are copied from what the program exported.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sciagent_gym.errors import GetterError
from sciagent_gym.evaluation import FinalState, evaluate
from sciagent_gym.tasks.task import Task
from sciagent_gym.tools import load_adapter, load_tool_getters, load_tool_specs

load_tool_getters("amide")

from sciagent_gym.envs.amide import data, getters, roi_stats, xif  # noqa: E402

SPECS = load_tool_specs("amide")

#: What AMIDE 1.0.6 wrote for "Save As" in its ROI statistics window (one ellipsoid ROI).
STATS = (
    "# amide: ROI Analysis File - generated on Sat Dec  5 18:52:41 2026\n#\n"
    "# Study:\tUnknown\n#\n# ROI:\tlesion\tType:\tellipsoid\n"
    "#   Calculation done with all voxels in ROI\n"
    "#   Data Set:\thead16\tScaling Factor:\t1\n"
    "#   Frame\tDuration (s)\t   Midpt (s)\t        Gate\tGate Time (s)\t      Median\t"
    "        Mean\t         Var\t     Std Dev\t         Min\t         Max\t Size (mm^3)\t"
    "Frac. Voxels\t      Voxels\n"
    "        0\t       1.000\t       0.500\t           0\t       0.000\t         799\t"
    "     800.377\t     396.463\t     19.9114\t         743\t         865\t         901\t"
    "      112.62\t         160\n")


def _stage(task_id: str, tmp_path: Path, seed: int = 0) -> tuple[Task, Path]:
    work = tmp_path / "work"
    task = Task(SPECS[task_id], seed, load_adapter("amide").generators,
                {"work": str(work), "home": "/h", "tmp": "/t"})
    task.stage(work)
    return task, work


def _score(task: Task, work: Path, answer: str | None = None, status: str = "done"):
    return evaluate(task.criteria(), FinalState(work_dir=work, app_state=None,
                                                agent_status=status, answer=answer))


def _state(work: Path) -> FinalState:
    return FinalState(work_dir=work, app_state=None, agent_status="done", answer=None)


# -- the generator ------------------------------------------------------------------------------


def test_lesion_centres_are_where_the_gold_says_in_amides_frame(tmp_path):
    import nibabel as nib

    gold = data.head(tmp_path, np.random.default_rng(3), path="scan.nii", lesions=3)
    vol = np.asanyarray(nib.load(str(tmp_path / "scan.nii")).dataobj)
    assert vol.shape == data.SHAPE
    for lesion in gold["lesions"]:
        i, j, k = data.voxel_of(lesion["centre"])
        x, y, z = data.world_axes()
        assert (x[i], y[j], z[k]) == tuple(lesion["centre"])
        assert abs(vol[i, j, k] - lesion["level"]) < 6 * gold["noise"]
        assert lesion["voxel_volume"] == pytest.approx(lesion["volume"], rel=0.15)
    # lesion 0 is the largest and off the midline (the NIfTI-frame negative must differ)
    assert gold["lesion"]["volume"] == max(o["volume"] for o in gold["lesions"])
    assert abs(gold["lesion"]["x"]) >= 8


def test_the_isocontour_volume_is_the_lesion_when_the_threshold_separates(tmp_path):
    gold = data.head(tmp_path, np.random.default_rng(5), path="scan.nii", lesions=2)
    assert data.CORTEX + 4 * gold["noise"] < gold["threshold"] < gold["lesion"]["level"]
    assert gold["iso_volume"] == pytest.approx(gold["lesion"]["voxel_volume"], rel=0.02)


def test_a_study_reads_back_with_its_rois(tmp_path):
    gold = data.head(tmp_path, np.random.default_rng(7), path="s.xif", lesions=2,
                     rois=["lesion", "reference"], roi_shrink=0.7)
    study = xif.read_study(_state(tmp_path), "s.xif")
    assert study["n_data_sets"] == 1 and study["roi_names"] == ["lesion", "reference"]
    ds = study["data_set"]
    assert ds["dims"] == list(data.SHAPE) and ds["voxel_size"] == [2.0, 2.0, 2.0]
    assert ds["threshold_max"] == gold["max"]
    lesion = getters.amide_roi(_state(tmp_path), "s.xif", gold["lesion"]["centre"], "lesion")
    assert lesion["distance"] < 1e-6
    assert lesion["radii"] == pytest.approx([0.7 * a for a in gold["lesion"]["axes"]])
    # the raw data behind the header is the volume, in AMIDE's order (y flipped)
    blob = (tmp_path / "s.xif").read_bytes()
    raw = np.frombuffer(blob[0x50:0x50 + 2 * int(np.prod(data.SHAPE))], "<i2")
    vol = raw.reshape(data.SHAPE[::-1]).transpose(2, 1, 0)[:, ::-1, :]
    i, j, k = data.voxel_of(gold["lesion"]["centre"])
    assert abs(vol[i, j, k] - gold["lesion"]["level"]) < 6 * gold["noise"]


def test_a_xif_directory_reads_like_a_flat_file(tmp_path):
    d = tmp_path / "dir.xif"
    d.mkdir()
    (d / "study_S.xml").write_text(
        '<?xml version="1.0"?>\n<amide_data_file_version>2.0<study>S<children>'
        "<object_file>roi_r.xml</object_file></children><zoom>2.0</zoom></study>"
        "</amide_data_file_version>")
    (d / "roi_r.xml").write_text(
        '<?xml version="1.0"?>\n<amide_data_file_version>2.0<roi>r'
        "<coordinate_space_offset>-35\t-21\t-1</coordinate_space_offset>"
        "<coordinate_space_x>1\t0\t0</coordinate_space_x>"
        "<coordinate_space_y>0\t1\t0</coordinate_space_y>"
        "<coordinate_space_z>0\t0\t1</coordinate_space_z>"
        "<corner>20\t20\t2</corner><type>ellipsoid</type></roi></amide_data_file_version>")
    study = xif.read_study(_state(tmp_path), "dir.xif")
    [roi] = study["rois"]
    assert roi["centre"] == [-25.0, -11.0, 0.0] and roi["radii"] == [10.0, 10.0, 1.0]
    assert roi["volume"] == pytest.approx(4 / 3 * math.pi * 100)


@pytest.mark.parametrize("junk", [b"", b"AMIDE XML Image Format Flat File", b"not a study",
                                  b"AMIDE XML Image Format Flat File" + b"\0" * 32
                                  + np.array([10**12, 5], "<u8").tobytes()])
def test_junk_studies_are_refused(tmp_path, junk):
    (tmp_path / "j.xif").write_bytes(junk)
    with pytest.raises(GetterError):
        xif.read_study(_state(tmp_path), "j.xif")


def test_entities_are_refused(tmp_path):
    gold = data.head(tmp_path, np.random.default_rng(1), path="s.xif", lesions=1)
    assert gold["count"] == 1
    blob = bytearray((tmp_path / "s.xif").read_bytes())
    loc, size = np.frombuffer(bytes(blob[0x40:0x50]), "<u8").tolist()
    evil = b'<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>'
    blob[0x40:0x50] = np.array([len(blob), len(evil)], "<u8").tobytes()
    (tmp_path / "s.xif").write_bytes(bytes(blob) + evil)
    with pytest.raises(GetterError, match="DTD"):
        xif.read_study(_state(tmp_path), "s.xif")


def test_roi_statistics_as_amide_writes_them(tmp_path):
    (tmp_path / "stats.tsv").write_text(STATS)
    row = roi_stats.amide_stats(_state(tmp_path), "stats.tsv", roi="lesion")
    assert row["mean"] == pytest.approx(800.377) and row["size"] == 901 and row["voxels"] == 160
    assert roi_stats.amide_stats(_state(tmp_path), "stats.tsv", key="rois") == ["lesion"]
    (tmp_path / "bad.tsv").write_text("lesion 1 2 3\n")
    with pytest.raises(GetterError):
        roi_stats.amide_stats(_state(tmp_path), "bad.tsv")


# -- criteria on files an oracle and a wrong attempt would leave --------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_roi_mean_task_pays_for_the_mean_under_the_saved_roi_only(tmp_path, seed):
    task, work = _stage("amide/lesion-roi-mean", tmp_path, seed=seed)
    gold = task.gold["vol"]
    lesion = gold["lesion"]
    # the oracle's study: the input with an ROI inside the lesion, as its drag draws it
    r = float(int(0.55 * min(lesion["axes"][:2])))
    data.write_xif(work / "lesion_roi.xif", np.zeros(data.SHAPE, np.int16), "patient",
                   [("lesion", lesion["centre"], [r, r, 4.0])])
    mean = roi_stats.amide_roi_mean(_state(work), "lesion_roi.xif", gold["array"], "lesion",
                                  key="mean")
    assert _score(task, work, answer=f"{mean:.1f}").score == 1.0
    # ring enhancement: the whole lesion and its centre give other means than this ROI
    for wrong in (lesion["mean"], lesion["centre_mean"]):
        assert abs(wrong - mean) / mean > 0.03
        assert _score(task, work, answer=f"{wrong:.1f}").score == 0.5
    # a smaller ROI at the same place has another mean: the answer follows the saved ROI
    (work / "lesion_roi.xif").unlink()
    data.write_xif(work / "lesion_roi.xif", np.zeros(data.SHAPE, np.int16), "patient",
                   [("lesion", lesion["centre"], [r / 2, r / 2, 2.0])])
    assert _score(task, work, answer=f"{mean:.1f}").score == 0.5
    # an ROI on normal brain: the centre criterion fails
    (work / "lesion_roi.xif").unlink()
    data.write_xif(work / "lesion_roi.xif", np.zeros(data.SHAPE, np.int16), "patient",
                   [("lesion", gold["reference"]["centre"], [4.0] * 3)])
    assert _score(task, work, answer=f"{lesion['mean']:.1f}").score < 1.0


@pytest.mark.parametrize(("radius", "frac"), [(8.0, 269.625), (5.95, 110.75), (6.754, 158.5),
                                              (6.033, 115.625)])
def test_roi_weights_match_amide_partial_voxels(tmp_path, radius, frac):
    """AMIDE 1.0.6's "Frac. Voxels" of spheres centred on a voxel centre (measured on the
    studies of roi-stats-export, 2026-12-07): 4^3 sub-samples a voxel give the same sums."""
    data.write_xif(tmp_path / "s.xif", np.zeros(data.SHAPE, np.int16), "s",
                   [("lesion", (-41.0, -7.0, 11.0), [radius] * 3)])
    study = xif.read_study(_state(tmp_path), "s.xif")
    _, w = roi_stats.roi_weights(study["rois"][0], study["data_set"], data.SHAPE)
    assert float(w.sum()) == pytest.approx(frac, abs=1e-9)


def test_rim_option_leaves_other_tasks_data_alone(tmp_path):
    plain = data.head(tmp_path, np.random.default_rng(5), path="a.nii")
    rim = data.head(tmp_path, np.random.default_rng(5), path="b.nii", rim=[0.4, 0.5])
    assert "array" not in plain and "core" not in plain["lesion"]
    assert rim["lesion"]["core"] < rim["lesion"]["level"]
    assert rim["lesion"]["centre_mean"] < rim["lesion"]["mean"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_move_roi_pays_only_for_the_same_roi_moved_onto_the_lesion(tmp_path, seed):
    task, work = _stage("amide/move-roi", tmp_path, seed=seed)
    gold = task.gold["vol"]
    axes = gold["lesion_roi"]["axes"]
    zeros = np.zeros(data.SHAPE, np.int16)
    # the ROI starts mirrored onto normal brain, far from the lesion
    assert math.dist(gold["misplaced"], gold["lesion"]["centre"]) >= 32

    def saved(rois):
        (work / "moved_roi.xif").unlink(missing_ok=True)
        data.write_xif(work / "moved_roi.xif", zeros, "followup", rois)
        return _score(task, work).score

    assert saved([("lesion", gold["lesion"]["centre"], axes)]) == 1.0
    # within the tolerance: a centre picked 2 mm off on one axis
    near = [gold["lesion"]["x"] + 2, gold["lesion"]["y"], gold["lesion"]["z"]]
    assert saved([("lesion", near, axes)]) == 1.0
    # left where it was (saved-unmoved), or enlarged to the lesion (the size gate)
    assert saved([("lesion", gold["misplaced"], axes)]) == 0.0
    assert saved([("lesion", gold["lesion"]["centre"], [gold["lesion"]["rmax"]] * 3)]) == 0.0
    # a second ROI drawn on the lesion while the misplaced one stays: partial credit only
    both = saved([("lesion", gold["misplaced"], axes), ("lesion", gold["lesion"]["centre"], axes)])
    assert 0.0 < both < 1.0
    # the right place under another name does not count
    assert saved([("tumour", gold["lesion"]["centre"], axes)]) == 0.0


def test_export_slice_reads_the_lesion_position_from_the_image(tmp_path):
    from PIL import Image

    task, work = _stage("amide/export-lesion-slice", tmp_path, seed=1)
    frac = task.gold["vol"]["slice_fraction"]
    img = np.full((224, 192, 3), 90, np.uint8)
    cy, cx = int(frac["y"] * 224), int(frac["x"] * 192)
    yy, xx = np.mgrid[0:224, 0:192]
    img[(yy - cy) ** 2 + (xx - cx) ** 2 < 64] = 230
    img[10:14, 10:14] = (255, 255, 0)  # a small bright mark elsewhere: the largest region wins
    Image.fromarray(img).save(work / "lesion_slice.png")
    assert _score(task, work).score == 1.0
    Image.fromarray(np.full((224, 192, 3), 90, np.uint8)).save(work / "lesion_slice.png")
    assert _score(task, work).score == 0.0


# -- the long-horizon tasks' stages -------------------------------------------------------------


def _stats_file(path: Path, rows: dict[str, float]) -> None:
    head, _, tail = STATS.partition("# ROI:")
    text = head
    for name, mean in rows.items():
        block = "# ROI:" + tail.replace("lesion", name, 1)
        text += block.replace("800.377", f"{mean:.3f}").replace("865", "999", 1)
    path.write_text(text)


def test_lesion_workup_scores_each_stage(tmp_path):
    task, work = _stage("amide/lesion-workup", tmp_path, seed=1)
    gold, p = task.gold["vol"], task.params
    vol = np.zeros(data.SHAPE, np.int16)
    lesion = ("lesion", gold["lesion"]["centre"], [0.5 * gold["lesion"]["rmin"]] * 3)
    reference = ("reference", gold["reference"]["centre"], [5.0] * 3)

    def study(window, rois):
        (work / "workup.xif").unlink(missing_ok=True)
        data.write_xif(work / "workup.xif", vol, "Unknown", rois, window=window)

    assert _score(task, work).score == 0.0
    study(None, [])  # stopped after the import
    after_import = _score(task, work).score
    study((p["lo"], p["hi"]), [])  # stopped after windowing
    after_window = _score(task, work).score
    study((p["lo"], p["hi"]), [lesion, reference])
    no_stats = _score(task, work).score
    _stats_file(work / "workup_stats.tsv", {"lesion": gold["lesion"]["mean"],
                                            "reference": gold["brain_mean"]})
    full = _score(task, work).score
    assert 0 < after_import < after_window < no_stats < full == 1.0


def test_segment_report_scores_each_stage(tmp_path):
    task, work = _stage("amide/segment-report", tmp_path, seed=2)
    gold = task.gold["vol"]
    data.write_xif(work / "segmented.xif", np.zeros(data.SHAPE, np.int16), "Unknown", [])
    after_import = _score(task, work).score
    assert 0 < after_import < 0.5
    # a study whose lesion_seg is an ellipsoid of the lesion's volume: the segment stage's
    # centre passes, its type-blind volume check too, but the statistics are missing
    (work / "segmented.xif").unlink()
    r = (gold["iso_volume"] * 3 / (4 * math.pi)) ** (1 / 3)
    data.write_xif(work / "segmented.xif", np.zeros(data.SHAPE, np.int16), "Unknown",
                   [("lesion_seg", gold["lesion"]["centre"], [r] * 3)])
    after_segment = _score(task, work).score
    assert after_import < after_segment < 1.0
