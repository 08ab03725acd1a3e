"""Offline checks of the ImageJ task specs, their data generators and the ImageJ getters.

No X display or ImageJ needed: specs are loaded and staged into tmp_path; the .roi decoder is
fed headers built here byte by byte after ImageJ's ij/io/RoiDecoder.java layout. Evaluator
proofs write what ImageJ would (TIFFs, Results tables, .roi files, the state dump) for the
oracle and each negative, and score the start state, placeholders and cheats (all 0).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import tifffile

from sciagent_gym.evaluation import GETTERS, FinalState, GetterError, evaluate
from sciagent_gym.tasks.spec import TaskSpec
from sciagent_gym.tasks.task import Task, sample_params
from sciagent_gym.tasks.templating import resolve
from sciagent_gym.tools import load_adapter, load_tool_getters, load_tool_specs

load_tool_getters("imagej")  # registers imagej_roi etc. under their canonical module name

from sciagent_gym.envs.imagej import data  # noqa: E402
from sciagent_gym.envs.imagej.getters import decode_roi  # noqa: E402

SPECS: dict[str, TaskSpec] = load_tool_specs("imagej")
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


def test_bleach_timecourse_gold_is_the_offset_corrected_box_mean(tmp_path):
    gold = data.bleach_timecourse(tmp_path, np.random.default_rng(3), "b.tif", frames=14,
                                  offset=200, x=60, y=50)
    raw = tifffile.imread(tmp_path / "b.tif")
    with tifffile.TiffFile(tmp_path / "b.tif") as tif:
        assert tif.imagej_metadata["frames"] == 14  # a time-lapse, not a z-stack
    assert raw.shape == (14, 224, 256) and raw.dtype == np.uint16
    assert raw.min() > 200  # nothing clips at 0 once the offset is gone
    box = raw[:, 50:90, 60:100].astype(float) - 200
    assert gold["profile"] == pytest.approx(list(box.mean(axis=(1, 2))))
    assert gold["raw_last"] - gold["last"] == pytest.approx(200)
    # the cell in the box bleaches: its mean falls frame after frame
    assert all(a > b for a, b in zip(gold["profile"], gold["profile"][1:], strict=False))
    assert 0.1 < gold["fraction_left"] < 0.8


def test_plot_curve_reads_a_decay_and_its_markers(tmp_path):
    get = GETTERS["imagej_plot_curve"]
    state = FinalState(work_dir=tmp_path)
    write_plot_png(tmp_path / "decay.png", [1000 * 0.9 ** t for t in range(15)])
    curve = get(state, "decay.png")
    assert curve["start"] > 0.9 and curve["end"] < 0.1 and curve["drop"] > 0.8
    assert curve["markers"] == 13
    write_plot_png(tmp_path / "rise.png", [100 + 5 * t for t in range(10)])
    assert get(state, "rise.png", key="drop") < -0.8
    Image = pytest.importorskip("PIL.Image")
    Image.new("RGB", (300, 200), "white").save(tmp_path / "blank.png")
    with pytest.raises(GetterError, match="no plot frame"):
        get(state, "blank.png")
    tifffile.imwrite(tmp_path / "stack.tif", np.zeros((4, 50, 50), np.uint8), imagej=True)
    with pytest.raises(GetterError, match="one image"):
        get(state, "stack.tif")


@pytest.mark.parametrize("spec_id", [s for s in SPEC_IDS if "long-horizon" in SPECS[s].tags])
def test_long_horizon_tasks_are_staged_workflows(spec_id):
    """Issue 19: 25-60 GUI steps on every variant, a step budget of at least 1.5x that, at least
    three stages chained by blocks_from, and the input opened through the file dialog."""
    spec = SPECS[spec_id]
    assert spec.difficulty == "hard" and not spec.open
    counts = []
    for seed in SEEDS:
        task = make_task(spec, seed, Path("/nonexistent"))
        counts.append(task.oracle_steps)
        assert 25 <= task.oracle_steps <= 60 and spec.max_steps >= 1.5 * task.oracle_steps
    stages = [c.get("stage") for c in spec.evaluator]
    assert len(dict.fromkeys(stages)) >= 3
    assert all(c.get("blocks_from") for c in spec.evaluator if c.get("stage") != stages[0])
    gui = spec.gui_oracle
    assert not any(isinstance(st, dict) and ("script" in st or "run" in st) for st in gui)
    assert any(isinstance(st, dict) and st.get("read", {}).get("number") for st in gui)


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


# --- evaluator proofs on the states the oracle, the negatives and placeholders leave ----------
#
# ImageJ is not needed: each case writes the files ImageJ would write (TIFFs through tifffile
# with ImageJ's metadata, Results tables in ImageJ's CSV layout, .roi headers after
# RoiDecoder.java) and the state dump state.ijm would return. The oracle must score 1.0; the
# start state, each modelled negative and every placeholder must not succeed, and the start
# state and placeholders must score 0.


def write_results(path: Path, columns: list[str], rows: list[list[float]]) -> None:
    """A Results table as ImageJ's saveAs("Results", ...) writes a .csv: a blank-named first
    column with 1-based row numbers."""
    lines = [" ," + ",".join(columns)]
    lines += [f"{i}," + ",".join(f"{v:.3f}" for v in row) for i, row in enumerate(rows, 1)]
    path.write_text("\n".join(lines) + "\n")


def write_calibrated_tiff(path: Path, array: np.ndarray, px: float | None, unit: str) -> None:
    """A TIFF as ImageJ saves a calibrated image: resolution tags and unit= in its description."""
    if px is None:
        tifffile.imwrite(path, array, imagej=True)
        return
    escaped = "".join(c if ord(c) < 128 else f"\\u{ord(c):04X}" for c in unit)  # as Java does
    tifffile.imwrite(path, array, resolution=(1 / px, 1 / px), metadata=None,
                     description=f"ImageJ=1.52i\nunit={escaped}\n")


def app_dump(task: Task, work: Path, px: float = 1.0, unit: str = "pixel") -> dict:
    """What state.ijm returns with the task's last opened image active (start state: px 1).
    Tasks that start with nothing open are modelled with their input opened uncalibrated."""
    name = (task.spec.open or task.spec.protect)[-1]
    arr = tifffile.imread(work / name)
    active = {"title": name, "bit_depth": arr.dtype.itemsize * 8, "width": arr.shape[1],
              "height": arr.shape[0], "slices": 1, "pixel_width": px, "pixel_height": px,
              "unit": unit, "changes": False, "selection_type": -1, "selection": None}
    return {"n_images": 1, "image_titles": [name], "window_titles": [], "active": active,
            "results": {"count": 0, "headings": [], "columns": {}}, "roi_manager_count": 0,
            "log": ""}


def start_dump(task: Task, work: Path) -> dict:
    """The state dump of the start state: the task's inputs open, or nothing but ImageJ for
    the tasks that begin with opening the input through the file dialog."""
    if task.spec.open:
        return app_dump(task, work)
    return {"n_images": 0, "image_titles": [], "window_titles": [], "active": None,
            "results": {"count": 0, "headings": [], "columns": {}}, "roi_manager_count": 0,
            "log": ""}


def _gold_image(task: Task, gen: str, key: str) -> np.ndarray:
    return tifffile.imread(task.gold[gen][key])


def _scaled8(arr16: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """ImageJ's 16 -> 8-bit conversion for the display range lo..hi."""
    v = np.floor((arr16.astype(float) - lo) * 256 / (hi - lo + 1) + 0.5)
    return np.clip(v, 0, 255).astype(np.uint8)


def _convert_crop(task: Task, case: str, work: Path) -> str:
    p, g = task.params, task.gold["moon"]
    arr = tifffile.imread(work / "moon16.tif")
    x, y, w, h = p["x"], p["y"], p["w"], p["h"]
    full = _scaled8(arr, g["min16"], g["max16"])
    if case == "not-converted":
        out = arr[y:y + h, x:x + w]
    elif case == "auto-contrast-before-converting":
        lo, hi = np.percentile(arr, [0.175, 99.825])
        out = _scaled8(arr, lo, hi)[y:y + h, x:x + w]
    elif case == "not-cropped":
        out = full
    else:
        dx = {"oracle": 0, "box-10px-off": 10}.get(case)
        x0, y0 = (x + dx, y + dx) if dx is not None else (x - w // 2, y - h // 2)
        out = full[max(y0, 0):y0 + h, max(x0, 0):x0 + w]
    tifffile.imwrite(work / "crop.tif", out, imagej=True)
    return "done"


def _count_nuclei(task: Task, case: str, work: Path) -> str:
    arr = tifffile.imread(work / "nuclei.tif")
    min_size = {"no-size-filter": 0}.get(case, task.params["min_size"])
    areas, _ = data._particle_gold(arr if case != "background-as-foreground" else 255 - arr,
                                   min_size)
    name = "Results.csv" if case == "saved-under-wrong-name" else "nuclei_results.csv"
    write_results(work / name, ["Area", "Mean"], [[a, 150.0] for a in areas])
    return "done"


def _nuclei_um2(task: Task, case: str, work: Path) -> tuple[str, dict]:
    arr = tifffile.imread(work / "nuclei.tif")
    scope = task.params["scope"]
    px = {"not-calibrated": 1.0, "inverse-scale": 1 / scope["px_um"]}.get(case, scope["px_um"])
    limit_px = scope["min_um2"] / px ** 2
    if case == "size-limit-in-pixels":
        limit_px = scope["min_um2"]
    if case == "no-size-filter":
        limit_px = 0
    areas, _ = data._particle_gold(arr, limit_px)
    write_results(work / "nuclei_areas.csv", ["Area", "Mean"], [[a * px * px, 150.0]
                                                                 for a in areas])
    unit = "pixel" if case == "not-calibrated" else "µm"
    return "done", app_dump(task, work, px, unit)


def _draw_roi(task: Task, case: str, work: Path) -> str:
    g = task.gold["cell"]
    x, y, d = int(g["x"]), int(g["y"]), int(g["d"])
    if case in ("oracle", "rectangle-instead-of-oval"):
        content = roi_bytes(2 if case == "oracle" else 1, top=y, left=x, bottom=y + d,
                            right=x + d)
    elif case == "small-cell-outlined":
        sd = int(g["small_d"])
        sx, sy = int(g["small_cx"] - sd / 2), int(g["small_cy"] - sd / 2)
        content = roi_bytes(2, top=sy, left=sx, bottom=sy + sd, right=sx + sd)
    elif case == "loose-oval":
        r = int(g["d"] * 0.7)
        cx, cy = int(g["cx"]), int(g["cy"])
        content = roi_bytes(2, top=cy - r, left=cx - r, bottom=cy + r, right=cx + r)
    else:  # whole-image-selection
        content = roi_bytes(1, top=0, left=0, bottom=400, right=500)
    (work / "cell.roi").write_bytes(content)
    return "done"


def _gaussian(task: Task, case: str, work: Path) -> str:
    from scipy import ndimage as ndi

    arr = tifffile.imread(work / "cell.tif").astype(float)
    sigma = task.params["sigma"]
    factor = {"sigma-three-times-too-large": 3.0, "sigma-halved": 0.5}.get(case, 1.0)
    out = np.round(ndi.gaussian_filter(arr, sigma * factor, mode="nearest"))
    if case == "not-blurred":
        out = arr
    if case == "only-a-region-blurred":
        h, w = arr.shape
        part = arr.copy()
        part[:h // 2, :w // 2] = out[:h // 2, :w // 2]
        out = part
    tifffile.imwrite(work / "blurred.tif", np.clip(out, 0, 255).astype(np.uint8), imagej=True)
    return "done"


def _measure_region(task: Task, case: str, work: Path) -> str:
    p = task.params
    grey = tifffile.imread(work / "ihc.tif").astype(float)
    x, y, w, h = p["x"], p["y"], p["w"], p["h"]
    if case == "whole-image":
        x, y, (h, w) = 0, 0, grey.shape
    if case == "shifted-box":
        x, y = x + w // 2, y + h // 2
    region = grey[y:y + h, x:x + w]
    name = "Results.csv" if case == "saved-under-wrong-name" else "region.csv"
    write_results(work / name, ["Area", "Mean", "Min", "Max", "BX", "BY", "Width", "Height"],
                  [[region.size, region.mean(), region.min(), region.max(), x, y,
                    region.shape[1], region.shape[0]]])
    return "done"


def _set_scale(task: Task, case: str, work: Path) -> tuple[str, dict]:
    px = task.params["px_um"]
    arr = tifffile.imread(work / "cells.tif")
    cal = {"oracle": (px, "µm"), "inverted-scale": (1 / px, "µm"),
           "saved-uncalibrated": (None, "pixel"), "calibrated-not-saved": (px, "µm"),
           "scale-in-nanometres": (px, "nm")}[case]
    if case != "calibrated-not-saved":
        write_calibrated_tiff(work / "calibrated.tif", arr, *cal)
    return "done", app_dump(task, work, cal[0] or 1.0, cal[1])


def _project_missing(task: Task, case: str, work: Path) -> str:
    if case != "oracle" and case != "claims-done":
        name = f"{task.params['sample']}{task.params['index']}_z_MAX.tif"
        (work / name).write_bytes((work / "cells_t01.tif").read_bytes())
    return {"oracle": "fail", "fabricated-then-failed": "fail"}.get(case, "done")


def _morphometry(task: Task, case: str, work: Path) -> tuple[str, dict, str | None]:
    """The long-horizon workflow: each stage negative stops where its name says; the others
    make one mistake (a unit, a skipped filter, measurements left unset, a wrong count)."""
    from skimage import filters, measure

    scope = task.params["scope"]
    arr = tifffile.imread(work / "nuclei.tif")
    px = 1.0 if case == "not-calibrated" else scope["px_um"]
    unit = "pixel" if case == "not-calibrated" else "µm"
    app = app_dump(task, work, px, unit)
    if case == "stops-after-calibration":
        return "done", app, None
    limit_px = {"size-limit-in-pixels": scope["min_um2"], "unfiltered-mask": 0,
                "not-calibrated": 0}.get(case, scope["min_um2"] / px ** 2)
    labels = measure.label(arr > filters.threshold_otsu(arr))
    kept = [r for r in measure.regionprops(labels) if r.area >= limit_px]
    if case == "measurements-not-set":  # Set Measurements left at Area only
        write_results(work / "nuclei_morphometry.csv", ["Area"],
                      [[r.area * px * px] for r in kept])
    else:
        write_results(work / "nuclei_morphometry.csv", ["Area", "Mean", "Min", "Max", "X", "Y"],
                      [[r.area * px * px, arr[labels == r.label].mean(), 0, 255,
                        (r.centroid[1] + 0.5) * px, (r.centroid[0] + 0.5) * px] for r in kept])
    if case == "stops-after-measuring":
        return "done", app, None
    mask = np.zeros(arr.shape, np.uint8)
    for r in kept:
        mask[labels == r.label] = 255
    write_calibrated_tiff(work / "nuclei_mask.tif", mask, None if px == 1.0 else px, unit)
    total = sum(r.area for r in kept) * px * px
    (work / "nuclei_summary.csv").write_text(
        "Slice,Count,Total Area,Average Size,%Area,Mean\n"
        f"nuclei.tif,{len(kept)},{total:.3f},{total / max(len(kept), 1):.3f},2.0,160.0\n")
    if case == "stops-before-report":
        return "done", app, None
    count = len(kept) + (1 if case == "wrong-count-reported" else 0)
    return "done", app, f"{count} nuclei"


def write_plot_png(path: Path, values: list[float]) -> None:
    """A profile plot as ImageJ saves one (696x405 RGB PNG): white, a black axis frame at
    x 75..675 and y 17..357, the y range fitted to the data, a black data line and a red circle
    on every point but the two at the frame's edges."""
    from PIL import Image, ImageDraw

    im = Image.new("RGB", (696, 405), "white")
    draw = ImageDraw.Draw(im)
    draw.rectangle((75, 17, 675, 357), outline="black")
    lo, hi = min(values), max(values)
    pts = [(75 + 600 * i / (len(values) - 1), 357 - 340 * (v - lo) / ((hi - lo) or 1))
           for i, v in enumerate(values)]
    for px, py in pts[1:-1]:
        draw.ellipse((px - 3, py - 3, px + 3, py + 3), outline=(220, 0, 0))
    draw.line(pts, fill="black")
    for x in range(76, 83):  # tick marks drawn inward from the frame
        draw.point([(x, 100), (x, 200), (x, 300), (675 - (x - 75), 150)], fill="black")
    im.save(path, format="PNG")


def _bleach(task: Task, case: str, work: Path) -> tuple[str, dict, str | None]:
    """The time-course workflow: each stage negative stops where its name says; the others make
    one mistake (measuring before correcting, correcting one frame only, the wrong box)."""
    p, g = task.params, task.gold["bleach"]
    raw = tifffile.imread(work / "bleach.tif").astype(np.int64)
    corrected = np.clip(raw - p["offset"], 0, 65535)
    if case == "first-frame-only-corrected":
        corrected = raw.copy()
        corrected[0] = np.clip(raw[0] - p["offset"], 0, 65535)
    tifffile.imwrite(work / "bleach_corrected.tif", corrected.astype(np.uint16), imagej=True,
                     metadata={"axes": "TYX"})
    app = app_dump(task, work)
    if case == "stops-after-correcting":
        return "done", app, None
    measured = raw if case == "measured-before-correcting" else corrected
    x = p["x"] + 40 if case == "wrong-cell" else p["x"]
    box = measured[:, p["y"]:p["y"] + 40, x:x + 40]
    means = [float(f.mean()) for f in box]
    write_results(work / "bleach_profile.csv", ["Area", "Mean", "Min", "Max", "Slice"],
                  [[f.size, m, f.min(), f.max(), i + 1]
                   for i, (f, m) in enumerate(zip(box, means, strict=True))])
    if case == "stops-after-measuring":
        return "done", app, None
    if case != "no-plot":
        write_plot_png(work / "bleach_profile.png", means)
    assert case != "oracle" or means[0] == pytest.approx(g["first"])
    return "done", app, f"{means[0]:.3f}"


#: Expected scores of the staged tasks' negatives, by task (the stages' weights in comments).
PARTIAL = {
    # 2, 5, 5, 1 of 13
    "nuclei-morphometry-report": {
        "stops-after-calibration": 2 / 13, "stops-after-measuring": 7 / 13,
        "stops-before-report": 12 / 13, "wrong-count-reported": 12 / 13},
    # open-correct 3, measure 4, plot 2, report 1 of 10
    "bleach-timecourse-report": {
        "stops-after-correcting": 3 / 10, "stops-after-measuring": 7 / 10, "no-plot": 8 / 10,
        "measured-before-correcting": 4 / 10, "wrong-cell": 4 / 10,
        "first-frame-only-corrected": 0.0},
}


CASE_WRITERS = {"convert-crop": _convert_crop, "nuclei-morphometry-report": _morphometry,
                "bleach-timecourse-report": _bleach,
                "count-nuclei": _count_nuclei,
                "nuclei-area-um2": _nuclei_um2, "draw-save-roi": _draw_roi,
                "gaussian-blur-save": _gaussian, "measure-region-mean": _measure_region,
                "set-scale": _set_scale, "project-missing-stack": _project_missing}


def case_state(task: Task, case: str, work: Path) -> FinalState:
    """The final state ``case`` ("oracle" or a negative's name) would leave in ``work``."""
    out = CASE_WRITERS[task.spec.slug](task, case, work)
    status, app, *answer = out if isinstance(out, tuple) else (out, app_dump(task, work))
    return FinalState(work_dir=work, app_state=app, agent_status=status,
                      answer=answer[0] if answer else None)


def output_paths(task: Task) -> list[str]:
    """Files the criteria read that the setup did not write: the task's outputs."""
    paths = {c.getter_params["path"] for c in task.criteria() if "path" in c.getter_params}
    return sorted(p for p in paths if p not in task.spec.protect)


def placeholders(task: Task, work: Path) -> dict[str, Callable[[Path], None]]:
    """Outputs an agent can make without the work: empty files, "0", a header-only table, blank
    and uniform images (of the input's size and of the size the task asks for, at mid grey and
    at the gold image's own mean), and the input copied to each output name."""
    src = work / (task.spec.open or task.spec.protect)[-1]
    arr = tifffile.imread(src)
    sizes = {arr.shape[:2]}
    if "w" in task.params and "h" in task.params:
        sizes.add((task.params["h"], task.params["w"]))
    levels = [0, 128, 255]
    for gen in task.gold.values():
        for value in gen.values():
            if isinstance(value, str) and value.endswith(".tif") and Path(value).is_file():
                levels.append(int(round(float(tifffile.imread(value).mean()))))
    out: dict[str, Callable[[Path], None]] = {}
    for name in output_paths(task):
        out[f"empty {name}"] = lambda d, n=name: (d / n).write_bytes(b"")
        out[f"'0' in {name}"] = lambda d, n=name: (d / n).write_text("0\n")
        out[f"header-only {name}"] = lambda d, n=name: (d / n).write_text(" ,Area,Mean\n")
        out[f"input as {name}"] = lambda d, n=name: (d / n).write_bytes(src.read_bytes())
        for h, w in sizes:
            for level in levels:
                out[f"uniform {level} {w}x{h} {name}"] = (
                    lambda d, n=name, s=(h, w), v=level:
                    tifffile.imwrite(d / n, np.full(s, v, np.uint8), imagej=True))
    return out


def _fresh_dirs(root: Path, work: Path, inputs: tuple[str, ...]) -> Callable[[str], Path]:
    """A maker of case directories under ``root``, each holding a copy of the task's inputs."""
    def fresh(label: str) -> Path:
        case_work = root / label.replace(" ", "_")
        case_work.mkdir(parents=True)
        for name in inputs:
            (case_work / name).write_bytes((work / name).read_bytes())
        return case_work
    return fresh


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_oracle_negatives_start_and_placeholders(spec_id, tmp_path):
    spec = SPECS[spec_id]
    for seed in (0, 1, 2):
        work = tmp_path / f"s{seed}"
        task = make_task(spec, seed, work)
        try:
            task.stage(work)
            criteria = task.criteria()
            fresh = _fresh_dirs(tmp_path / f"s{seed}-cases", work, spec.protect)

            start = evaluate(criteria, FinalState(work_dir=work, app_state=start_dump(task, work),
                                                  agent_status="done"))
            assert start.score == 0 and not start.success, start
            for case in ("oracle", *sorted(spec.negatives)):
                result = evaluate(criteria, case_state(task, case, fresh(case)))
                if case == "oracle":
                    assert result.score == 1.0 and result.success, (case, result)
                else:
                    assert not result.success, (case, result)
                if case in PARTIAL.get(spec.slug, {}):
                    assert result.score == pytest.approx(PARTIAL[spec.slug][case]), (case,
                                                                                     result)
            for label, make in placeholders(task, work).items():
                case_work = fresh(label)
                make(case_work)
                for status in ("done", "fail"):
                    state = FinalState(work_dir=case_work, app_state=app_dump(task, work),
                                       agent_status=status)
                    result = evaluate(criteria, state)
                    assert not result.success and result.score == 0, (label, status, result)
        finally:
            task.cleanup()


def test_gaussian_blur_check_refuses_what_ssim_alone_forgives(tmp_path):
    """A uniform image at the gold blur's mean reaches SSIM 0.86-0.92 on this low-contrast
    micrograph; the criterion's 0.99 threshold keeps it (and the unblurred input) out."""
    spec = SPECS["imagej/gaussian-blur-save"]
    task = make_task(spec, 0, tmp_path / "w")
    try:
        task.stage(tmp_path / "w")
        ref = tifffile.imread(task.gold["blur"]["array"])
        tifffile.imwrite(tmp_path / "u.tif", np.full_like(ref, int(ref.mean())))
        state = FinalState(work_dir=tmp_path)
        ssim = GETTERS["image_ssim"](state, "u.tif", task.gold["blur"]["array"])
        assert 0.8 < ssim < 0.99
        assert GETTERS["image_ssim"](state, "w/cell.tif", task.gold["blur"]["array"]) < 0.99
    finally:
        task.cleanup()


def test_image_mae_separates_scaling_and_position(tmp_path):
    ref = (np.arange(64 * 64).reshape(64, 64) % 251).astype(np.uint8)
    tifffile.imwrite(tmp_path / "ref.tif", ref)
    tifffile.imwrite(tmp_path / "same.tif", ref)
    tifffile.imwrite(tmp_path / "shifted.tif", np.roll(ref, 3, axis=1))
    tifffile.imwrite(tmp_path / "small.tif", ref[:32])
    state = FinalState(work_dir=tmp_path)
    mae = GETTERS["imagej_image_mae"]
    assert mae(state, "same.tif", str(tmp_path / "ref.tif")) == 0
    assert mae(state, "shifted.tif", str(tmp_path / "ref.tif")) > 1
    with pytest.raises(GetterError, match="reference is"):
        mae(state, "small.tif", str(tmp_path / "ref.tif"))
    with pytest.raises(GetterError, match="absolute"):
        mae(state, "same.tif", "ref.tif")


def test_roi_iou(tmp_path):
    get = GETTERS["imagej_roi_iou"]
    state = roi_state(tmp_path, roi_bytes(2, top=100, left=200, bottom=160, right=260))
    assert get(state, "sel.roi", 200, 100, 60, 60) == pytest.approx(1.0, abs=0.01)
    assert get(state, "sel.roi", 230, 100, 60, 60) < 0.5
    assert get(state, "sel.roi", 0, 0, 60, 60) == 0
    # a circle twice as wide around the same centre covers a quarter of its area
    assert get(state, "sel.roi", 170, 70, 120, 120) == pytest.approx(0.25, abs=0.01)
    rect = roi_state(tmp_path, roi_bytes(1, top=0, left=0, bottom=10, right=10), "r.roi")
    assert get(rect, "r.roi", 0, 0, 10, 10) == pytest.approx(np.pi / 4, abs=0.02)
    line = roi_state(tmp_path, roi_bytes(3, top=0, left=0, bottom=10, right=10), "l.roi")
    with pytest.raises(GetterError, match="oval and rectangle"):
        get(line, "l.roi", 0, 0, 10, 10)


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_every_seed_gives_other_data_or_params(spec_id, tmp_path):
    """No held-out episode repeats a training one: each seed's (params, input files) differ."""
    seen = set()
    for seed in range(6):
        task = make_task(SPECS[spec_id], seed, tmp_path / str(seed))
        try:
            task.stage(tmp_path / str(seed))
            seen.add((repr(sorted(task.params.items())), repr(sorted(task.input_hashes.items()))))
        finally:
            task.cleanup()
    assert len(seen) == 6


# --- task-specific cheats ------------------------------------------------------------------


def _play_offline(task: Task, name: str, work: Path, allow_shell: bool) -> FinalState:
    """The final state a spec cheat leaves: answers kept, DONE/FAIL as status, run() commands
    executed only with ``allow_shell`` (with this interpreter standing in for python3)."""
    import subprocess
    import sys

    from sciagent_gym.actions.parse import parse_action
    from sciagent_gym.actions.types import Answer, Fail, Run

    answer, status = None, "done"
    for step in task.steps(f"cheat:{name}"):
        for action in parse_action(step, (1280, 800)):
            if isinstance(action, Run) and allow_shell:
                command = action.command.replace("python3 ", f"{sys.executable} ", 1)
                subprocess.run(command, shell=True, check=True, capture_output=True, timeout=120)
            elif isinstance(action, Answer):
                answer = action.text
            elif isinstance(action, Fail):
                status = "fail"
    return FinalState(work_dir=work, app_state=app_dump(task, work), agent_status=status,
                      answer=answer)


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_cheats_are_real_threats_that_the_gui_modality_refuses(spec_id, tmp_path):
    """Every ImageJ task is ``gui``: run() is refused, so a cheat leaves the start state (plus
    its answer) and scores 0. Played with the shell allowed, each shell cheat does solve the
    task (or most of it): the modality is what keeps it out, and the test says so."""
    spec = SPECS[spec_id]
    assert spec.modality == "gui" and not spec.allow_cli
    assert spec.cheats, "every task names its task-specific cheats"
    with_shell = []
    for name, steps in spec.cheats.items():
        shell = any(str(s).startswith("run(") for s in steps)
        for allow_shell in (False, True) if shell else (False,):
            work = tmp_path / f"{name}-{allow_shell}"
            task = make_task(spec, 0, work)
            try:
                task.stage(work)
                result = evaluate(task.criteria(), _play_offline(task, name, work, allow_shell))
                if allow_shell:
                    with_shell.append(result.score)
                else:
                    assert result.score == 0 and not result.success, (name, result)
            finally:
                task.cleanup()
    # the best shell cheat would earn most of the reward were run() allowed; a long workflow
    # whose first stage is the program's own state (an image opened and calibrated) stays at 0
    if with_shell and "long-horizon" not in spec.tags:
        assert max(with_shell) > 0.5, with_shell


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_generic_cheats_on_the_start_state(spec_id, tmp_path):
    """The audit's generic cheats (sciagent_gym.runs.cheats) on the start state ImageJ shows: all
    score 0 (the audit's limit lets placeholders reach 0.1; ours do not)."""
    from sciagent_gym.runs.cheats import generic_cheats, play_offline

    spec = SPECS[spec_id]
    for seed in (0, 1):
        work = tmp_path / f"s{seed}"
        task = make_task(spec, seed, work)
        try:
            task.stage(work)
            criteria = task.criteria()
            start = FinalState(work_dir=work, app_state=app_dump(task, work), agent_status="done")
            for cheat in generic_cheats(criteria, work):
                result = play_offline(cheat, criteria, start, tmp_path / "scratch")
                assert result.score == 0 and not result.success, (cheat.name, result)
        finally:
            task.cleanup()


def test_gaussian_blur_partial_credit_separates_smoothing_from_the_sigma(tmp_path):
    """The whole image smoothed with another sigma earns the smoothing part only; the noisy
    input, a quarter blurred or a uniform image earn nothing; the asked sigma earns all."""
    from scipy import ndimage as ndi

    spec = SPECS["imagej/gaussian-blur-save"]
    work = tmp_path / "w"
    task = make_task(spec, 0, work)
    try:
        task.stage(work)
        sigma = float(task.params["sigma"])
        arr = tifffile.imread(work / "cell.tif").astype(float)

        def score(img: np.ndarray) -> float:
            tifffile.imwrite(work / "blurred.tif",
                             np.clip(np.round(img), 0, 255).astype(np.uint8), imagej=True)
            return evaluate(task.criteria(), FinalState(work_dir=work)).score

        def blur(s: float) -> np.ndarray:
            return ndi.gaussian_filter(arr, s, mode="nearest")

        assert score(blur(sigma)) == 1.0
        assert 0 < score(blur(sigma / 2)) < 1
        assert 0 < score(blur(3 * sigma)) < 1
        quarter = arr.copy()
        h, w = arr.shape
        quarter[:h // 2, :w // 2] = blur(sigma)[:h // 2, :w // 2]
        assert score(quarter) == 0.0
        assert score(arr) == 0.0
        assert score(np.full_like(arr, blur(sigma).mean())) == 0.0
    finally:
        task.cleanup()
