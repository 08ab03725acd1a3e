"""Offline checks of the ImageJ task specs, their data generators and the ImageJ getters.

No X display or ImageJ needed: specs are loaded and staged into tmp_path; the .roi decoder is
fed headers built here byte by byte after ImageJ's ij/io/RoiDecoder.java layout.
"""

from __future__ import annotations

import math
import struct
from pathlib import Path

import numpy as np
import pytest
import tifffile

from sciagent_gym.evaluation import GETTERS, FinalState, GetterError, resolve
from sciagent_gym.tasks.spec import TaskSpec, load_specs
from sciagent_gym.tasks.task import Task, sample_params
from sciagent_gym.tools import load_adapter, load_tool_getters, task_specs_root

load_tool_getters("imagej")  # registers imagej_roi etc. under their canonical module name

from sciagent_gym.envs.imagej import data  # noqa: E402
from sciagent_gym.envs.imagej.getters import decode_roi  # noqa: E402

SPECS: dict[str, TaskSpec] = load_specs(task_specs_root(), "imagej")
SPEC_IDS = sorted(SPECS)
SEEDS = range(5)
SANDBOX = {"home": "/home/user", "tmp": "/tmp/sandbox"}


def make_task(spec: TaskSpec, seed: int, work: Path) -> Task:
    return Task(spec, seed, data.GENERATORS, {**SANDBOX, "work": str(work)})


# --- specs ---------------------------------------------------------------------------------


def test_all_imagej_specs_load():
    assert len(SPECS) >= 6
    for spec_id, spec in SPECS.items():
        assert spec.tool == "imagej"
        assert Path(spec.source).stem == spec.slug, spec_id


def test_difficulties_are_spread():
    levels = {spec.difficulty for spec in SPECS.values()}
    assert levels == {"easy", "medium", "hard"}


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_spec_has_two_negatives_and_a_gate(spec_id):
    spec = SPECS[spec_id]
    assert len(spec.negatives) >= 2
    assert spec.oracle[-1] in ("DONE", "FAIL")
    # the first criterion gates the rest, so the no-op ("DONE" alone) scores 0
    assert spec.evaluator[0].get("gate") is True


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_params_are_deterministic_per_seed(spec_id):
    spec = SPECS[spec_id]
    for seed in range(20):
        assert sample_params(spec, seed) == sample_params(spec, seed)
    sampled = [sample_params(spec, seed) for seed in range(20)]
    if any(isinstance(p, dict) for p in spec.params.values()):
        assert len({repr(sorted(p.items())) for p in sampled}) > 1, "params never vary"


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_stage_writes_inputs_and_gold(spec_id, tmp_path):
    spec = SPECS[spec_id]
    for seed in SEEDS:
        work = tmp_path / f"seed{seed}"
        task = make_task(spec, seed, work)
        try:
            task.stage(work)
            for name in spec.protect:
                assert (work / name).is_file(), name
                assert name in task.input_hashes
            for name in spec.open:
                assert (work / name).is_file(), name
            assert set(task.gold) == {g.name for g in spec.generate}
            for gen, values in task.gold.items():
                for key, value in values.items():
                    if isinstance(value, float):
                        assert math.isfinite(value), (gen, key)
                    if isinstance(value, str) and value.endswith(".tif"):
                        # arrays live in the host-side gold dir, never in the sandbox's work dir
                        assert Path(value).is_file()
                        assert not Path(value).is_relative_to(work)
            # every reference in criteria, oracle and negatives resolves for this variant
            assert task.criteria()
            assert task.steps("oracle")
            for name in spec.negatives:
                assert task.steps(name)
            assert "$gold" not in task.instruction and "{" not in task.instruction
        finally:
            task.cleanup()


HINT_PATHS = {"work": "/home/user/work", "home": "/home/user", "tmp": "/tmp"}
# words that name ImageJ menus, dialogs or tools: workflow hints belong in ``hints`` only
MENU_WORDS = ("Analyze >", "Image >", "Process >", "File >", "Edit >", "Set Measurements",
              "Analyze Particles", "Set Scale", "Specify", "Save As", "selection tool",
              "Display results", "Z Project")


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_hints_are_kept_out_of_the_plain_instruction(spec_id):
    spec = SPECS[spec_id]
    assert spec.hints.strip(), "every ImageJ spec carries workflow hints"
    generators = load_adapter("imagej").generators
    for seed in SEEDS:
        plain = Task(spec, seed, generators, HINT_PATHS, hints=False).instruction
        hinted = Task(spec, seed, generators, HINT_PATHS, hints=True).instruction
        for text in (plain, hinted):
            assert "{" not in text and "}" not in text and "$gold" not in text, text
        assert ">" not in plain and "Hint:" not in plain, plain
        for word in MENU_WORDS:
            assert word.lower() not in plain.lower(), (word, plain)
        hints = resolve(spec.hints, {**sample_params(spec, seed), **HINT_PATHS})
        assert ">" in hints and "{" not in hints and "$gold" not in hints, hints
        assert hinted == plain + "\nHint: " + hints
        assert hinted.endswith(hints)


def test_staging_is_reproducible(tmp_path):
    spec = SPECS["imagej/convert-crop"]
    a, b = make_task(spec, 3, tmp_path / "a"), make_task(spec, 3, tmp_path / "b")
    try:
        a.stage(tmp_path / "a")
        b.stage(tmp_path / "b")
        assert a.input_hashes == b.input_hashes
        assert a.params == b.params
    finally:
        a.cleanup()
        b.cleanup()


# --- generators ----------------------------------------------------------------------------


def test_ihc_gray_gold_is_the_region_mean(tmp_path):
    gold = data.ihc_gray(tmp_path, np.random.default_rng(0), "ihc.tif", x=30, y=40, w=64, h=50)
    grey = tifffile.imread(tmp_path / "ihc.tif")
    assert grey.dtype == np.uint8
    assert gold["mean"] == pytest.approx(grey[40:90, 30:94].mean())
    assert gold["area"] == 64 * 50


def test_boxes_outside_the_image_are_rejected(tmp_path):
    with pytest.raises(ValueError):
        data.ihc_gray(tmp_path, np.random.default_rng(0), "ihc.tif", x=500, y=10, w=64, h=50)
    with pytest.raises(ValueError):
        data.moon16(tmp_path, np.random.default_rng(0), "m.tif", x=10, y=400, w=200, h=150)


def test_moon16_crop_uses_imagej_rounding(tmp_path):
    gold = data.moon16(tmp_path, np.random.default_rng(1), "m.tif", x=20, y=30, w=160, h=120)
    arr = tifffile.imread(tmp_path / "m.tif").astype(float)
    lo, hi = arr.min(), arr.max()
    expected = np.minimum(np.floor((arr - lo) * 256 / (hi - lo + 1) + 0.5), 255)[30:150, 20:180]
    assert np.array_equal(gold["crop8"], expected.astype(np.uint8))
    assert gold["crop8"].shape == (120, 160)


def test_round_cell_gold_matches_the_drawn_cell(tmp_path):
    gold = data.round_cell(tmp_path, np.random.default_rng(2), "f.tif", n_small=6)
    img = tifffile.imread(tmp_path / "f.tif")
    ys, xs = np.nonzero(img > 150)
    assert xs.min() <= gold["x"] + 2 and xs.max() + 1 >= gold["x"] + gold["d"] - 2
    assert (xs.min() + xs.max() + 1) / 2 == pytest.approx(gold["cx"], abs=1.5)
    assert (ys.min() + ys.max() + 1) / 2 == pytest.approx(gold["cy"], abs=1.5)


def test_nuclei_calibrated_separates_unit_mistakes(tmp_path):
    gold = data.nuclei_calibrated(tmp_path, np.random.default_rng(0), "n.tif", n=20,
                                  px_um=0.65, min_um2=25)
    assert gold["count"] == 20
    # reading the µm² limit as pixels keeps the micronuclei: a different count
    assert gold["count_px_limit"] > gold["count"]
    assert gold["mean_area_um2"] == pytest.approx(gold["mean_area"] * 0.65**2)


# --- imagej_roi ----------------------------------------------------------------------------


def roi_bytes(type_code: int, top: int, left: int, bottom: int, right: int, *,
              version: int = 228, n_coords: int = 0, options: int = 0, subtype: int = 0,
              floats: tuple[float, float, float, float] | None = None,
              shape_size: int = 0, tail: bytes = b"") -> bytes:
    header = bytearray(64)
    header[0:4] = b"Iout"
    struct.pack_into(">h", header, 4, version)
    header[6] = type_code
    struct.pack_into(">hhhhH", header, 8, top, left, bottom, right, n_coords)
    if floats is not None:
        struct.pack_into(">ffff", header, 18, *floats)
    struct.pack_into(">i", header, 36, shape_size)
    struct.pack_into(">hh", header, 48, subtype, options)
    return bytes(header) + tail


def roi_state(tmp_path: Path, content: bytes, name: str = "sel.roi") -> FinalState:
    (tmp_path / name).write_bytes(content)
    return FinalState(work_dir=tmp_path)


def test_roi_rectangle(tmp_path):
    state = roi_state(tmp_path, roi_bytes(1, top=20, left=10, bottom=70, right=110))
    roi = GETTERS["imagej_roi"](state, "sel.roi")
    assert roi["type"] == "rectangle"
    assert (roi["x"], roi["y"], roi["width"], roi["height"]) == (10, 20, 100, 50)
    assert (roi["cx"], roi["cy"]) == (60, 45)
    assert roi["version"] == 228


def test_roi_oval_and_key(tmp_path):
    state = roi_state(tmp_path, roi_bytes(2, top=100, left=200, bottom=161, right=261))
    assert GETTERS["imagej_roi"](state, "sel.roi", key="type") == "oval"
    assert GETTERS["imagej_roi"](state, "sel.roi", key="width") == 61
    assert GETTERS["imagej_roi"](state, "sel.roi", key="cx") == pytest.approx(230.5)
    with pytest.raises(GetterError, match="nope"):
        GETTERS["imagej_roi"](state, "sel.roi", key="nope")


def test_roi_subpixel_oval_uses_float_bounds(tmp_path):
    content = roi_bytes(2, top=10, left=10, bottom=96, right=96, options=128,
                        floats=(10.3, 10.3, 85.4, 85.4))
    roi = decode_roi(content)
    assert roi["type"] == "oval"
    assert roi["width"] == pytest.approx(85.4, abs=1e-4)
    assert roi["cx"] == pytest.approx(10.3 + 42.7, abs=1e-4)


def test_roi_polygon_and_composite(tmp_path):
    coords = struct.pack(">hhh", 0, 10, 0) + struct.pack(">hhh", 0, 0, 10)
    poly = decode_roi(roi_bytes(0, top=5, left=5, bottom=15, right=15, n_coords=3, tail=coords))
    assert poly["type"] == "polygon" and poly["n_coordinates"] == 3
    composite = roi_bytes(1, top=0, left=0, bottom=9, right=9, shape_size=2,
                          tail=struct.pack(">ff", 0.0, 1.0))
    assert decode_roi(composite)["type"] == "composite"
    ellipse = decode_roi(roi_bytes(7, top=0, left=0, bottom=9, right=9, subtype=3, n_coords=0))
    assert (ellipse["type"], ellipse["subtype"]) == ("freehand", "ellipse")


def test_roi_truncated_file(tmp_path):
    whole = roi_bytes(2, top=1, left=2, bottom=3, right=4)
    state = roi_state(tmp_path, whole[:40])
    with pytest.raises(GetterError, match="truncated"):
        GETTERS["imagej_roi"](state, "sel.roi")
    coords_missing = roi_bytes(0, top=0, left=0, bottom=9, right=9, n_coords=5)
    with pytest.raises(GetterError, match="truncated"):
        decode_roi(coords_missing)


def test_roi_wrong_magic(tmp_path):
    bad = b"Oops" + roi_bytes(2, top=1, left=2, bottom=3, right=4)[4:]
    state = roi_state(tmp_path, bad)
    with pytest.raises(GetterError, match="not an ImageJ .roi"):
        GETTERS["imagej_roi"](state, "sel.roi")
    zip_state = roi_state(tmp_path, b"PK\x03\x04" + bytes(80), "RoiSet.roi")
    with pytest.raises(GetterError, match="not an ImageJ .roi"):
        GETTERS["imagej_roi"](zip_state, "RoiSet.roi")


def test_roi_malformed_values(tmp_path):
    with pytest.raises(GetterError, match="unknown roi type"):
        decode_roi(roi_bytes(42, top=0, left=0, bottom=1, right=1))
    with pytest.raises(GetterError, match="malformed bounds"):
        decode_roi(roi_bytes(1, top=50, left=0, bottom=10, right=10))
    with pytest.raises(GetterError, match="not found"):
        GETTERS["imagej_roi"](FinalState(work_dir=tmp_path), "missing.roi")


# --- imagej_tiff_calibration ---------------------------------------------------------------


def test_tiff_calibration_as_imagej_writes_it(tmp_path):
    path = tmp_path / "cal.tif"
    tifffile.imwrite(path, np.zeros((8, 8), np.uint8), resolution=(1 / 0.1234, 1 / 0.1234),
                     description="ImageJ=1.53t\nunit=\\u00B5m\n", metadata=None)
    cal = GETTERS["imagej_tiff_calibration"](FinalState(work_dir=tmp_path), "cal.tif")
    assert cal["unit"] == "µm"
    assert cal["pixel_width"] == pytest.approx(0.1234, rel=1e-5)
    assert cal["calibrated"] is True


def test_tiff_calibration_uncalibrated(tmp_path):
    tifffile.imwrite(tmp_path / "raw.tif", np.zeros((8, 8), np.uint8), imagej=True)
    state = FinalState(work_dir=tmp_path)
    assert GETTERS["imagej_tiff_calibration"](state, "raw.tif", key="unit") == "pixel"
    assert GETTERS["imagej_tiff_calibration"](state, "raw.tif", key="pixel_width") == 1.0
    (tmp_path / "junk.tif").write_bytes(b"not a tiff at all")
    with pytest.raises(GetterError, match="cannot read TIFF"):
        GETTERS["imagej_tiff_calibration"](state, "junk.tif")


def test_help_menu_check_sees_only_a_complete_menu_bar():
    """The reset re-lays out ImageJ's menu bar until the right-aligned Help label is drawn."""
    from sciagent_gym.envs.imagej.adapter import _help_menu_drawn

    from sciagent_gym.controller.windows import WindowInfo

    window = WindowInfo(id=1, title="ImageJ", wm_class="ij-ImageJ", x=41, y=40, width=609,
                        height=76, active=False, modal=False)
    frame = np.full((800, 1280, 3), 238, np.uint8)
    frame[47:60, 52:80] = 0  # only "File"
    assert not _help_menu_drawn(frame, window)
    frame[47:60, 460:480] = 0  # Help laid out next to Window instead of at the right edge
    assert not _help_menu_drawn(frame, window)
    frame[47:60, 610:635] = 0  # Help at the right edge
    assert _help_menu_drawn(frame, window)
    assert not _help_menu_drawn(frame, WindowInfo(**{**window.to_dict(), "x": 1400}))
