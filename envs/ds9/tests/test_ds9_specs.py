"""Offline checks of the DS9 task specs, the FITS/WCS data generator and the DS9 getters.

No X display or DS9 needed: specs are loaded and staged into tmp_path, the numpy FITS writer is
read back by the numpy reader, the TAN pixel <-> world functions are round-tripped and checked
against hand-computed values, and the region parser is fed DS9's real output (as ``xpaget
regions`` and ``regions save`` print it) plus malformed and partial files.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sciagent_gym.evaluation import GETTERS, FinalState, GetterError, evaluate
from sciagent_gym.tasks.spec import TaskSpec, count_variants
from sciagent_gym.tasks.task import Task
from sciagent_gym.tools import load_tool_getters, load_tool_specs

load_tool_getters("ds9")

from sciagent_gym.envs.ds9 import data, fits  # noqa: E402
from sciagent_gym.envs.ds9.regions import RegionError, parse_regions  # noqa: E402
from sciagent_gym.envs.ds9.state import build_state  # noqa: E402
from sciagent_gym.envs.ds9.xpa import parse_answers, parse_script  # noqa: E402

SPECS: dict[str, TaskSpec] = load_tool_specs("ds9")
SPEC_IDS = sorted(SPECS)
SANDBOX = {"home": "/home/user", "tmp": "/tmp"}

# What DS9 8.4 printed for `xpaget NAME regions -format ds9 -system wcs -sky fk5` and the same
# regions saved with -system image (recorded from the real program).
DS9_FK5 = """# Region file format: DS9 version 4.1
global color=green dashlist=8 3 width=1 font="helvetica 10 normal roman" select=1 highlite=1 \
dash=0 fixed=0 edit=1 move=1 delete=1 include=1 source=1
fk5
circle(150.0899995,2.2050000,3.000")
circle(150.1070064,2.1724590,3.000") # color=red
circle(150.1139685,2.1860416,2.500") # text={abc}
box(150.1209179,2.1790971,5.000",10.000",30.000003)
"""
DS9_SEXAGESIMAL = """# Region file format: DS9 version 4.1
global color=green dashlist=8 3 width=1 font="helvetica 10 normal roman" select=1 highlite=1 \
dash=0 fixed=0 edit=1 move=1 delete=1 include=1 source=1
fk5
circle(10:00:21.5999,+2:12:18.000,3.000")
"""
DS9_IMAGE = """# Region file format: DS9 version 4.1
global color=green dashlist=8 3 width=1 font="helvetica 10 normal roman" select=1 highlite=1 \
dash=0 fixed=0 edit=1 move=1 delete=1 include=1 source=1
image
circle(272.45,236.5,6)
circle(150.09,2.205,6) # color=red
circle(100,100,5) # text={abc}
box(50,50,10,20,30)
"""


def make_task(spec: TaskSpec, seed: int, work: Path) -> Task:
    return Task(spec, seed, data.GENERATORS, {**SANDBOX, "work": str(work)})


# --- specs ---------------------------------------------------------------------------------


def test_all_ds9_specs_load():
    assert len(SPECS) >= 12
    for spec_id, spec in SPECS.items():
        assert spec.tool == "ds9"
        assert Path(spec.source).stem == spec.slug, spec_id
        assert (count_variants(spec) or 0) >= 2, spec_id


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
            assert task.criteria() and task.steps("oracle")
            for name in spec.negatives:
                assert task.steps(name)
            text = task.instruction
            assert "{" not in text and "$gold" not in text, text
            result = evaluate(task.criteria(), FinalState(work_dir=work, app_state=None))
            assert not result.success
        finally:
            task.cleanup()


# --- FITS and WCS ----------------------------------------------------------------------------


def test_fits_writer_blocks_cards_and_round_trip(tmp_path):
    img = np.arange(12, dtype=np.float32).reshape(3, 4) - 2.5
    raw = fits.fits_bytes(img, [("OBJECT", "it's M31"), ("EXPTIME", 120.0), ("NCOMBINE", 3)])
    assert len(raw) % 2880 == 0
    head = raw[:2880].decode("ascii")
    cards = [head[i:i + 80] for i in range(0, 2880, 80)]
    assert cards[0].startswith("SIMPLE  =                    T")
    assert cards[1].startswith("BITPIX  =                  -32")
    assert cards[3].startswith("NAXIS1  =                    4")
    assert any(c.startswith("END     ") for c in cards)
    header, arr = data.read_fits(raw)
    assert header["OBJECT"] == "it's M31" and header["EXPTIME"] == 120.0
    assert header["NCOMBINE"] == 3
    assert np.array_equal(arr, img)
    # big-endian floats right after the header block
    assert np.frombuffer(raw[2880:2880 + 48], ">f4").tolist() == img.ravel().tolist()


def test_fits_reader_rejects_junk():
    with pytest.raises(ValueError):
        data.read_fits(b"not a fits file")
    raw = fits.fits_bytes(np.zeros((10, 10), np.float32))
    with pytest.raises(ValueError, match="truncated"):
        data.read_fits(raw[:2880 + 100])


def test_field_generator_header_and_sources(tmp_path):
    gold = data.field(tmp_path, np.random.default_rng(5), target={"ra": 150.09, "dec": 2.205},
                      threshold=1000, keyword="AIRMASS")
    header, img = data.read_fits((tmp_path / "field.fits").read_bytes())
    assert img.shape == data.SHAPE and header["BITPIX"] == -32
    assert header["CTYPE1"] == "RA---TAN" and header["CTYPE2"] == "DEC--TAN"
    assert header["AIRMASS"] == gold["keyword_value"]
    wcs = data.TanWCS.from_header(header)
    assert wcs.pixel_scale_arcsec == pytest.approx(data.PIXEL_ARCSEC)
    tgt = gold["target"]
    assert wcs.pix2world(tgt["x"], tgt["y"])[0] == pytest.approx(150.09, abs=1e-9)
    assert gold["bright"]["peak"] == pytest.approx(img.max())
    assert gold["bright"]["peak"] > 1.3 * gold["second"]["peak"]
    assert img[gold["bright"]["peak_y"] - 1, gold["bright"]["peak_x"] - 1] == gold["max"]
    peaks = [s["peak"] for s in gold["stars"]]
    assert gold["n_above"] == sum(p > 1000 for p in peaks)
    assert all(abs(p - 1000) > 100 for p in peaks)
    assert 1 <= gold["n_above"] <= len(peaks) - 2


def test_field_is_reproducible(tmp_path):
    golds = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        golds.append(data.field(tmp_path / name, np.random.default_rng(3)))
    assert golds[0] == golds[1]
    assert (tmp_path / "a/field.fits").read_bytes() == (tmp_path / "b/field.fits").read_bytes()


def test_tan_round_trip_and_known_values():
    wcs = data.field_wcs(rotation_deg=17.0)
    xs, ys = np.meshgrid(np.linspace(-500, 900, 15), np.linspace(-500, 900, 15))
    ra, dec = wcs.pix2world(xs, ys)
    x2, y2 = wcs.world2pix(ra, dec)
    assert np.allclose(x2, xs, atol=1e-7) and np.allclose(y2, ys, atol=1e-7)
    # the reference pixel is the reference position
    assert wcs.pix2world(wcs.crpix1, wcs.crpix2) == pytest.approx((150.1, 2.2))
    # unrotated: one pixel left (x - 1) is 0.5 arcsec east, i.e. RA larger by 0.5"/cos(dec)
    flat = data.field_wcs()
    ra1, dec1 = flat.pix2world(flat.crpix1 - 1, flat.crpix2)
    assert (ra1 - 150.1) * 3600 * math.cos(math.radians(2.2)) == pytest.approx(0.5, rel=1e-6)
    assert dec1 == pytest.approx(2.2, abs=1e-9)
    # far from the centre the projection is not linear (gnomonic): 1 degree north
    _, yn = flat.world2pix(150.1, 3.2)
    assert yn - flat.crpix2 == pytest.approx(math.tan(math.radians(1)) * 180 / math.pi * 7200,
                                             rel=1e-9)


# --- region parser -----------------------------------------------------------------------------


def test_parse_ds9_fk5_output():
    parsed = parse_regions(DS9_FK5)
    assert parsed["format"] == "ds9" and parsed["version"] == "4.1"
    assert parsed["global"]["font"] == "helvetica 10 normal roman"
    shapes = parsed["shapes"]
    assert [s["shape"] for s in shapes] == ["circle", "circle", "circle", "box"]
    assert shapes[0]["coords"] == [[150.0899995, 2.205]]
    assert shapes[0]["sizes"] == [(3.0, "arcsec")] and shapes[0]["system"] == "fk5"
    assert shapes[1]["props"] == {"color": "red"}
    assert shapes[2]["props"] == {"text": "abc"}
    assert shapes[3]["sizes"] == [(5.0, "arcsec"), (10.0, "arcsec")]
    assert shapes[3]["angles"] == [pytest.approx(30.000003)]


def test_parse_sexagesimal_and_mixed_lines():
    [c] = parse_regions(DS9_SEXAGESIMAL)["shapes"]
    assert c["coords"][0] == [pytest.approx(150.0899996, abs=1e-6), pytest.approx(2.205)]
    text = ("image; circle(1,2,3) # text={a;b}\nfk5;-circle 150.1 -2:30:00 0.001d\n"
            "galactic\npoint(10.5,20.5) # point=x\npolygon(1,1,5,1,5,5)\n")
    shapes = parse_regions(text)["shapes"]
    assert shapes[0]["system"] == "image" and shapes[0]["props"]["text"] == "a;b"
    assert shapes[1]["exclude"] and shapes[1]["coords"][0][1] == pytest.approx(-2.5)
    assert shapes[1]["sizes"] == [(0.001, "deg")]
    assert shapes[2]["system"] == "galactic" and shapes[3]["coords"] == [[1, 1], [5, 1], [5, 5]]
    assert parse_regions("")["shapes"] == []
    assert parse_regions("# Region file format: DS9 version 4.1\n")["shapes"] == []


@pytest.mark.parametrize("text", [
    "circle(1,2)",                     # no radius
    "circle(1,2,3",                    # unbalanced
    "circle(a,b,3)",                   # not numbers
    "blob(1,2,3)",                     # unknown shape
    "circle(1,2,-3)",                  # negative size
    "image\ncircle(1:2:3,4,5)",        # sexagesimal in pixel coordinates
    "fk5\ncircle(10:99:00,2,3\")",     # minutes out of range
    "polygon(1,2,3)",                  # odd coordinate count
    "hello world",
])
def test_malformed_regions_raise(text):
    with pytest.raises(RegionError):
        parse_regions(text)


# --- getters -------------------------------------------------------------------------------


@pytest.fixture
def field_state(tmp_path):
    gold = data.field(tmp_path, np.random.default_rng(1), target={"ra": 150.09, "dec": 2.205})
    return FinalState(work_dir=tmp_path), gold


def test_region_getters_convert_sky_to_pixels(field_state):
    state, gold = field_state
    (state.work_dir / "a.reg").write_text(DS9_FK5)
    (state.work_dir / "b.reg").write_text(DS9_IMAGE)
    a = GETTERS["ds9_regions"](state, "a.reg")
    assert a["n_shapes"] == 4 and a["n_circles"] == 3
    assert a["circles"][0]["r"] == pytest.approx(6.0)  # 3" at 0.5"/px
    tx, ty = gold["target"]["x"], gold["target"]["y"]
    near = GETTERS["ds9_circle_near"](state, "a.reg", tx, ty, key=None)
    assert near["distance"] < 0.01 and near["r"] == pytest.approx(6.0)
    b = GETTERS["ds9_regions"](state, "b.reg", fits=None)
    assert b["circles"][0]["x"] == 272.45 and b["shapes"][3]["sizes"] == [10, 20]
    assert GETTERS["ds9_regions"](state, "b.reg", key="systems") == ["image"]


def test_region_getters_error_paths(field_state):
    state, _ = field_state
    (state.work_dir / "bad.reg").write_text("circle(1,2")
    (state.work_dir / "boxes.reg").write_text("image\nbox(1,2,3,4,0)\n")
    (state.work_dir / "sky.reg").write_text(DS9_FK5)
    (state.work_dir / "nowcs.fits").write_bytes(fits.fits_bytes(np.zeros((4, 4), np.float32)))
    with pytest.raises(GetterError, match="not found"):
        GETTERS["ds9_regions"](state, "missing.reg")
    with pytest.raises(GetterError, match="bad.reg"):
        GETTERS["ds9_regions"](state, "bad.reg")
    with pytest.raises(GetterError, match="no circle"):
        GETTERS["ds9_circle_near"](state, "boxes.reg", 1, 2)
    with pytest.raises(GetterError, match="WCS"):
        GETTERS["ds9_regions"](state, "sky.reg", fits="nowcs.fits")
    with pytest.raises(GetterError, match="WCS"):
        GETTERS["ds9_regions"](state, "sky.reg", fits=None)


def test_png_and_state_getters(tmp_path):

    (tmp_path / "fake.png").write_bytes(b"\x89PNG\r\n\x1a\nbroken")
    (tmp_path / "text.png").write_text("hello")
    state = FinalState(work_dir=tmp_path)
    for name in ("fake.png", "text.png", "none.png"):
        with pytest.raises(GetterError):
            GETTERS["ds9_png_content"](state, name, reference_path="/nonexistent/gold.npy")
    with pytest.raises(GetterError, match="unavailable"):
        GETTERS["ds9_sky_offset"](state, 150.0, 2.0)
    app = {"pan": {"fk5": [150.0, 2.0], "image": [10.0, 10.0]}, "crop": {"image": None}}
    state = FinalState(work_dir=tmp_path, app_state=app)
    assert GETTERS["ds9_sky_offset"](state, 150.0, 2.0 + 1 / 3600) == pytest.approx(1.0)
    assert GETTERS["ds9_pixel_offset"](state, 13.0, 14.0) == pytest.approx(5.0)
    with pytest.raises(GetterError, match="crop"):
        GETTERS["ds9_pixel_offset"](state, 1, 1, what="crop")


# --- adapter pure logic ------------------------------------------------------------------------


def test_script_and_answer_parsing():
    assert parse_script("# c\n\nscale log\n  get scale  \n") == ["scale log", "get scale"]
    answers = parse_answers("\x1e1 0\nlog\n\x1e2 1\nXPA$ERROR bad\nmore\n")
    assert answers == [(1, 0, "log"), (2, 1, "XPA$ERROR bad\nmore")]


_UNLISTED = "XPA$ERROR no 'xpaset' access points match template: sciagent"


def test_unlisted_access_point_only_when_nothing_ran():
    from sciagent_gym.envs.ds9.xpa import unlisted

    assert unlisted([(1, 1, _UNLISTED)], "stop")
    assert unlisted([(1, 1, _UNLISTED), (2, 1, _UNLISTED)], "all")
    # a command that ran, or another error, is never repeated
    assert not unlisted([(1, 1, _UNLISTED), (2, 0, "yes")], "all")
    assert not unlisted([(1, 0, "log")], "stop")
    assert not unlisted([(1, 1, "XPA$ERROR invalid command: scale foo")], "stop")
    assert not unlisted([], "stop")


def test_request_is_asked_again_while_the_access_point_is_unlisted(monkeypatch):
    """Right after a start, DS9's access point can be missing from xpans's list for a moment
    (NOTES): the adapter asks again instead of failing the script."""
    from sciagent_gym.envs.ds9 import adapter as ds9

    replies = ["\x1e1 1\n" + _UNLISTED + "\n", "\x1e1 1\n" + _UNLISTED + "\n", "\x1e1 0\n\n"]
    calls = []

    class Host:
        paths = {"tmp": "/tmp", "home": "/home/user", "work": "/home/user/work"}

        def windows(self):
            return []

    def call_client(provider, name, *, argv, timeout, error, check):
        calls.append(argv[-1])
        return replies[len(calls) - 1]

    a = ds9.Adapter.__new__(ds9.Adapter)
    monkeypatch.setattr(a, "call_client", call_client, raising=False)
    monkeypatch.setattr(a, "next_request_id", lambda: 1, raising=False)
    monkeypatch.setattr(ds9.time, "sleep", lambda s: None)
    assert a.run_script(Host(), "fits /home/user/work/field.fits") == ""
    assert calls == ["fits /home/user/work/field.fits"] * 3
    # past the retry window the error is the script's error, as before
    replies[:] = ["\x1e1 1\n" + _UNLISTED + "\n"] * 1000
    calls.clear()
    monkeypatch.setattr(ds9, "UNLISTED_RETRY", 0.0)
    with pytest.raises(ds9.DS9ScriptError, match="access points match template"):
        a.run_script(Host(), "fits /home/user/work/field.fits")
    assert len(calls) == 1


def test_build_state_tolerates_failed_queries():
    state = build_state({"file": "/w/field.fits", "scale": "log\n", "zoom": "2",
                         "regions": DS9_IMAGE, "pan_fk5": None, "crop_image": "10 10 5 5",
                         "size": "400 400", "smooth": "yes"})
    assert state["file_name"] == "field.fits" and state["scale"]["function"] == "log"
    assert state["zoom"] == 2.0 and state["pan"]["fk5"] is None
    assert state["n_regions"] == 4 and state["regions"][0]["coords"] == [[272.45, 236.5]]
    assert state["crop"]["cropped"] is True and state["smooth"]["on"] is True
    assert "levels" not in state["contour"]  # only the dialog knows them (see QUERIES)
    toggles = build_state({"colorbar": "no\n", "grid": "yes", "view_magnifier": "no"})
    assert (toggles["colorbar"], toggles["grid"]) == (False, True)
    assert toggles["view"]["magnifier"] is False and toggles["view"]["panner"] is None
    broken = build_state({"regions": "circle(1,2"})
    assert broken["regions"] == [] and "line 1" in broken["regions_error"]


def test_fresh_commands_set_back_only_what_differs():
    from sciagent_gym.envs.ds9.restore import FRESH, FRESH_ALWAYS, fresh_commands

    launch = [want for _, want, _ in FRESH]
    assert fresh_commands(launch) == FRESH_ALWAYS
    # numbers compare as numbers, words without case
    assert fresh_commands(["1.0" if a == "1" else a.upper() for a in launch]) == FRESH_ALWAYS
    changed = list(launch)
    changed[[q for q, _, _ in FRESH].index("zoom")] = "4"
    changed[[q for q, _, _ in FRESH].index("view magnifier")] = "no"
    changed[[q for q, _, _ in FRESH].index("contour smooth")] = "2"
    assert fresh_commands(changed) == ["contour smooth 4", "zoom to 1", "view magnifier yes",
                                       "contour close", *FRESH_ALWAYS]
    with pytest.raises(ValueError):
        fresh_commands(launch[:-1])  # one answer per query, or nothing is trusted


# --- rewards only for doing the task --------------------------------------------------------------

# What DS9 answers right after loading field.fits (the state a no-op episode ends in).
FRESH_RAW = {"file": "/home/user/work/field.fits", "frame": "1", "frames": "1", "scale": "linear",
             "scale_mode": "minmax", "scale_limits": "81 4061", "cmap": "grey",
             "cmap_invert": "no", "zoom": "1", "rotate": "0", "pan_image": "200.5 200.5",
             "pan_fk5": "150.1 2.2", "crosshair_image": "200.5 200.5", "mode": "none",
             "regions": "", "smooth": "no", "smooth_function": "gaussian", "smooth_radius": "3",
             "smooth_sigma": "1.5", "contour": "no", "contour_nlevels": "5",
             "contour_limits": "81 4061", "contour_scale": "linear", "contour_smooth": "4",
             "crop_image": "200.5 200.5 400 400", "size": "400 400", "block": "1",
             "tile": "no", "colorbar": "yes", "grid": "no", "view_info": "yes",
             "view_panner": "yes", "view_magnifier": "yes", "view_graph_horz": "no",
             "view_graph_vert": "no"}


def staged(spec_id: str, seed: int, work: Path) -> Task:
    task = make_task(SPECS[spec_id], seed, work)
    task.stage(work)
    return task


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_weights_give_no_credit_for_gates_existence_or_status(spec_id):
    """Gates, file-exists and agent-status criteria carry weight 0; the first one is a gate."""
    criteria = SPECS[spec_id].evaluator
    assert criteria[0].get("gate") is True, spec_id
    for c in criteria:
        getter = c["getter"] if isinstance(c["getter"], str) else c["getter"]["fn"]
        if c.get("gate") or getter in ("file_exists", "agent_status") \
                or c["check"]["op"] == "unchanged":
            assert c["weight"] == 0, (spec_id, c["name"])
    assert SPECS[spec_id].modality == "gui", spec_id


@pytest.mark.parametrize("spec_id", [s for s in SPEC_IDS if not SPECS[s].toggles
                                     and not SPECS[s].infeasible])
def test_fresh_ds9_state_scores_zero(spec_id, tmp_path):
    """DS9 as launched with field.fits (no-op episode), for every seed's parameters: 0."""
    app = build_state(FRESH_RAW)
    for seed in range(8):
        task = staged(spec_id, seed, tmp_path / f"s{seed}")
        try:
            result = evaluate(task.criteria(), FinalState(work_dir=tmp_path / f"s{seed}",
                                                          app_state=app, agent_status="done"))
            assert result.score == 0.0 and not result.success, (seed, result.to_dict())
        finally:
            task.cleanup()


def test_missing_extension_scores_only_fail():
    crit = SPECS["ds9/missing-extension"].evaluator
    assert all(c["weight"] == 0 for c in crit)


def test_no_task_parameter_equals_a_ds9_default():
    """Turning contours or smoothing on without setting them must not match a variant."""
    assert 5 not in SPECS["ds9/contour-levels"].params["nlevels"]["choice"]
    assert "linear" not in SPECS["ds9/contour-levels"].params["cscale"]["choice"]
    assert "gaussian" not in SPECS["ds9/smooth-kernel"].params["function"]["choice"]
    assert 3 not in SPECS["ds9/smooth-kernel"].params["radius"]["choice"]


def test_colormap_scale_gui_gives_half_credit_for_half_the_work(tmp_path):
    task = staged("ds9/colormap-scale-gui", 0, tmp_path)
    try:
        raw = dict(FRESH_RAW, cmap=task.params["cmap"]["name"])
        result = evaluate(task.criteria(), FinalState(work_dir=tmp_path,
                                                      app_state=build_state(raw)))
        assert result.score == pytest.approx(0.5) and not result.success
        raw["scale"] = task.params["scale"]["name"]
        result = evaluate(task.criteria(), FinalState(work_dir=tmp_path,
                                                      app_state=build_state(raw)))
        assert result.score == 1.0 and result.success
        raw["cmap_invert"] = "yes"
        result = evaluate(task.criteria(), FinalState(work_dir=tmp_path,
                                                      app_state=build_state(raw)))
        assert not result.success
    finally:
        task.cleanup()


# --- exported PNGs judged by content ------------------------------------------------------------


def test_colormaps_match_ds9_menu_icons():
    """Our curves against the colour bars DS9 draws in its Color menu (saods9's icons)."""
    from PIL import Image
    from sciagent_gym.envs.ds9 import colormaps

    icons = Path("/usr/share/saods9/icons/lut/ds9")
    if not icons.is_dir():
        pytest.skip("saods9 not installed")
    for name in colormaps.COLORMAPS:
        bar = np.asarray(Image.open(icons / f"{name}.png").convert("RGB"))[4:5, 2:-2]
        pos, dist = colormaps.invert(bar, name)
        assert dist.max() <= 8, name  # every colour of the bar lies on our curve
        assert pos[0, 0] < 0.05 and pos[0, -1] > 0.95, name  # from one end to the other
        assert np.all(np.diff(pos[0]) >= -0.02), name  # in order


def _ds9_like_export(img: np.ndarray, cmap: str) -> np.ndarray:
    """A numpy stand-in for DS9's export: linear scale with zscale-like limits, the colour map,
    top row first."""
    from sciagent_gym.envs.ds9 import colormaps

    lo, hi = np.percentile(img, [1, 99])
    return colormaps.paint(np.clip((img - lo) / (hi - lo), 0, 1), cmap)[::-1]


def _save_png(path: Path, rgb: np.ndarray) -> None:
    from PIL import Image

    Image.fromarray(np.ascontiguousarray(rgb, np.uint8)).save(path)


@pytest.mark.parametrize("seed", [0, 3])
def test_export_png_colormap_judges_the_picture(tmp_path, seed):
    """The right export passes; blank, solid-colour (the map's own colour), another field's
    export, a grey export, an upside-down one and the FITS copied to the name all fail."""
    task = staged("ds9/export-png-colormap", seed, tmp_path / "w")
    work = tmp_path / "w"
    cmap = task.params["cmap"]["name"]
    img = data.read_fits((work / "field.fits").read_bytes())[1]
    other = data.field(tmp_path, np.random.default_rng(99))
    other_img = data.read_fits((tmp_path / "field.fits").read_bytes())[1]
    assert other["nx"] == img.shape[1]
    app = build_state(dict(FRESH_RAW, cmap=cmap, scale_mode="zscale"))
    from sciagent_gym.envs.ds9 import colormaps

    solid = np.broadcast_to(colormaps.paint(np.array([1.0]), cmap)[0], img.shape + (3,))
    pictures = {
        "right": _ds9_like_export(img, cmap),
        "blank": np.zeros(img.shape + (3,), np.uint8),
        "solid-map-colour": solid,
        "other-field": _ds9_like_export(other_img, cmap),
        "grey": _ds9_like_export(img, "grey"),
        "upside-down": _ds9_like_export(img, cmap)[::-1],
    }
    try:
        for name, rgb in pictures.items():
            _save_png(work / "field.png", rgb)
            result = evaluate(task.criteria(), FinalState(work_dir=work, app_state=app))
            if name == "right":
                assert result.score == 1.0 and result.success, result.to_dict()
            elif name == "grey":
                assert not result.success and result.score < 1.0
            else:
                assert not result.success and result.score <= 0.4, (name, result.score)
        (work / "field.png").write_bytes((work / "field.fits").read_bytes())
        result = evaluate(task.criteria(), FinalState(work_dir=work, app_state=app))
        assert result.score == 0.0
        # a placeholder on the fresh state (colour map and limits untouched) earns nothing
        _save_png(work / "field.png", solid)
        result = evaluate(task.criteria(), FinalState(work_dir=work,
                                                      app_state=build_state(FRESH_RAW)))
        assert result.score == 0.0
    finally:
        task.cleanup()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_crop_galaxy_export_judges_the_cutout(tmp_path, seed):
    task = staged("ds9/crop-galaxy-export", seed, tmp_path)
    g, box = task.gold["field"]["galaxy"], task.params["box"]
    img = data.read_fits((tmp_path / "field.fits").read_bytes())[1]
    w, h = box["w"], box["h"]
    app = build_state(dict(FRESH_RAW, crop_image=f"{g['x']} {g['y']} {w} {h}"))

    def cutout(cx: float, cy: float) -> np.ndarray:
        c0, r0 = int(round(cx - w / 2 - 0.5)), int(round(cy - h / 2 - 0.5))
        return _ds9_like_export(img[r0:r0 + h, c0:c0 + w], "grey")

    cases = {"right": cutout(g["x"], g["y"]), "one-pixel-rounding": cutout(g["x"] + 1, g["y"]),
             "three-pixels-off": cutout(g["x"] + 3, g["y"]),
             "image-centre": cutout(200.5, 200.5),
             "blank": np.zeros((h, w, 3), np.uint8), "white": np.full((h, w, 3), 255, np.uint8)}
    try:
        for name, rgb in cases.items():
            _save_png(tmp_path / "galaxy.png", rgb)
            result = evaluate(task.criteria(), FinalState(work_dir=tmp_path, app_state=app))
            if name in ("right", "one-pixel-rounding"):
                assert result.score == 1.0 and result.success, (name, result.to_dict())
            else:
                assert result.score == 0.0 and not result.success, (name, result.to_dict())
        # the issue's cheat: a blank PNG of the right size with DS9's crop right scored 1.0
        assert GETTERS["ds9_png_content"](FinalState(work_dir=tmp_path), "galaxy.png",
                                          task.gold["field"]["image"], x=g["x"], y=g["y"],
                                          key="offset") is None
    finally:
        task.cleanup()


def test_gold_image_stays_host_side(tmp_path):
    task = staged("ds9/crop-galaxy-export", 0, tmp_path / "w")
    try:
        ref = Path(task.gold["field"]["image"])
        assert ref.is_file() and not ref.is_relative_to(tmp_path)
        assert sorted(p.name for p in (tmp_path / "w").iterdir()) == ["field.fits"]
    finally:
        task.cleanup()
    assert not ref.exists()


def test_png_content_getter_refuses_bad_inputs(tmp_path):
    img = np.zeros((4, 4), np.float32)
    import tifffile

    tifffile.imwrite(tmp_path / "ref.tif", img)
    (tmp_path / "x.png").write_text("not a png")
    state = FinalState(work_dir=tmp_path)
    with pytest.raises(GetterError, match="not a PNG"):
        GETTERS["ds9_png_content"](state, "x.png", str(tmp_path / "ref.tif"))
    _save_png(tmp_path / "y.png", np.zeros((4, 4, 3), np.uint8))
    with pytest.raises(GetterError, match="absolute"):
        GETTERS["ds9_png_content"](state, "y.png", "ref.tif")
    with pytest.raises(GetterError, match="colour map"):
        GETTERS["ds9_png_content"](state, "y.png", str(tmp_path / "ref.tif"), cmap="nope")


# --- values through the answer action ----------------------------------------------------------


def _answer_values(task: Task) -> dict:
    """The right value and wrong ones of the right form, by task."""
    f = task.gold["field"]
    keyword = task.params.get("keyword")
    right, other = {"header-keyword": ("keyword_value", "other_keyword_value"),
                    "count-bright-stars": ("n_above", "n_stars")}.get(task.spec.slug, (0, 0))
    if task.spec.slug == "star-peak-value":
        return {"v": f["ranked"]["peak"], "other": f["other_rank"]["peak"], "name": ""}
    return {"v": f[right], "other": f[other], "name": keyword["name"] if keyword else "",
            "more": f.get("n_above_more"), "fewer": f.get("n_above_fewer")}


def _score_answer(task: Task, work: Path, text: str | None, raw: dict | None = None):
    return evaluate(task.criteria(), FinalState(work_dir=work,
                                                app_state=build_state(raw or _marked(task)),
                                                answer=text))


def _marked(task: Task) -> dict:
    """DS9's state with what the task asks to mark on screen marked (star-peak-value: a
    circle on the star; count-bright-stars: one on each star above the threshold), else the
    fresh state."""
    if task.spec.slug == "count-bright-stars":
        f = task.gold["field"]
        lines = [f"circle({s['peak_x']},{s['peak_y']},4)" for s in f["stars"]
                 if s["peak"] > f["threshold"]]
        return dict(FRESH_RAW, regions="image\n" + "\n".join(lines))
    if task.spec.slug != "star-peak-value":
        return FRESH_RAW
    star = task.gold["field"]["ranked"]
    return dict(FRESH_RAW, regions=f"image\ncircle({star['peak_x']},{star['peak_y']},8)")


@pytest.mark.parametrize(("spec_id", "right", "wrong"), [
    ("ds9/header-keyword", "{v}", ["{other}", "{name}", "", "{v} or {other}"]),
    ("ds9/star-peak-value", "peak = {v} ADU", ["{other} ADU", "{v} or {other}"]),
    ("ds9/count-bright-stars", "{v} stars", ["{more}", "{fewer}", "{other}", "1, 2, 3, 4, 5"]),
])
def test_answer_tasks_read_the_answer(tmp_path, spec_id, right, wrong):
    """The value given with the answer action is scored; none, another value, the keyword's
    name or several values are not."""
    for seed in range(4):
        work = tmp_path / f"s{seed}"
        task = staged(spec_id, seed, work)
        fill = _answer_values(task)
        try:
            ok = _score_answer(task, work, right.format(**fill))
            assert ok.success and ok.score == 1.0, (seed, ok.to_dict())
            assert _score_answer(task, work, None, FRESH_RAW).score == 0.0
            for text in wrong:
                if fill["v"] == fill["other"] and "{other}" in text:
                    continue
                bad = _score_answer(task, work, text.format(**fill), FRESH_RAW)
                assert bad.score == 0.0 and not bad.success, (seed, text.format(**fill))
            if spec_id == "ds9/star-peak-value":  # the circle and the value score apart
                assert _score_answer(task, work, None).score == pytest.approx(1 / 3)
                right_only = _score_answer(task, work, right.format(**fill), FRESH_RAW)
                assert right_only.score == pytest.approx(2 / 3)
                other = task.gold["field"]["other_rank"]
                elsewhere = dict(FRESH_RAW, regions=f"image\ncircle({other['peak_x']},"
                                                    f"{other['peak_y']},8)")
                assert _score_answer(task, work, None, elsewhere).score == 0.0
        finally:
            task.cleanup()


# --- the shell cheats are real: gui modality is what stops them -------------------------------


def _shell_command(step: str) -> str:
    """The command of a cheat's ``run("...")`` action string."""
    import ast

    call = ast.parse(step, mode="eval").body
    assert isinstance(call, ast.Call) and getattr(call.func, "id", None) == "run", step
    return ast.literal_eval(call.args[0])


def _run_cheat(task: Task, name: str, work: Path, bin_dir: Path) -> str:
    """Run a cheat's shell commands in ``work`` (python3 = this interpreter) and return stdout."""
    import subprocess
    import sys

    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "python3"
    if not shim.exists():  # a script, not a symlink: a venv is found from the invoked path
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        shim.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(work)}
    out = []
    for step in task.steps(f"cheat:{name}"):
        if isinstance(step, str) and step.startswith("run("):
            done = subprocess.run(["bash", "-c", _shell_command(step)], cwd=work, env=env,
                                  capture_output=True, text=True, timeout=60, check=True)
            out.append(done.stdout.strip())
    return "\n".join(out)


@pytest.mark.parametrize(("spec_id", "cheat", "params"), [
    ("ds9/header-keyword", "shell-grep-header", {}),
    ("ds9/star-peak-value", "shell-numpy-max", {"which": {"rank": 1, "label": "brightest"}}),
    ("ds9/crop-galaxy-export", "shell-numpy-cutout", {}),
])
def test_shell_cheats_would_solve_the_task_without_ds9(tmp_path, spec_id, cheat, params):
    """Each of these shell one-liners earns full marks when its output is handed in (the value
    as the answer, or the PNG it writes), so only the task's gui modality, which refuses run(),
    keeps them at 0 (the e2e cheat audit plays them and checks that)."""
    assert SPECS[spec_id].modality == "gui"
    solved = 0
    for seed in range(6):
        work = tmp_path / f"s{seed}"
        task = staged(spec_id, seed, work)
        try:
            if any(task.params[k] != v for k, v in params.items()):
                continue
            g = task.gold["field"]
            app = build_state(dict(_marked(task), crop_image=f"{g['galaxy']['x']} "
                                   f"{g['galaxy']['y']} 40 40"))
            answer = _run_cheat(task, cheat, work, tmp_path / "bin")
            result = evaluate(task.criteria(), FinalState(work_dir=work, app_state=app,
                                                          answer=answer or None))
            assert result.success and result.score == 1.0, (seed, answer, result.to_dict())
            solved += 1
        finally:
            task.cleanup()
    assert solved >= 2


# --- long-horizon tasks: stage by stage -------------------------------------------------------


def _stage_score(task: Task, work: Path, app: dict | None, answer: str | None = None) -> dict:
    return evaluate(task.criteria(), FinalState(work_dir=work, app_state=app, answer=answer,
                                                agent_status="done")).to_dict()


@pytest.mark.parametrize("seed", [0, 1])
def test_star_marking_workflow_scores_each_stage(seed, tmp_path):
    """Replays the evaluator on the states the stage negatives leave: opened and displayed only
    (3 of 12), plus the regions (7 of 12), plus the answer (9 of 12); each stage counts only
    when the one before passed."""
    spec = SPECS["ds9/star-marking-workflow"]
    assert "long-horizon" in spec.tags and spec.difficulty == "hard"
    task = make_task(spec, seed, tmp_path)
    try:
        task.stage(tmp_path)
        assert 25 <= task.oracle_steps <= 60 and spec.max_steps >= 1.5 * task.oracle_steps
        gold, p = task.gold["field"], task.params
        app = {"file_name": "field.fits", "scale": {"function": p["scale"]["name"],
                                                    "mode": "zscale"},
               "cmap": {"name": p["cmap"]["name"]}}
        assert _stage_score(task, tmp_path, None)["score"] == 0
        res = _stage_score(task, tmp_path, app)
        assert res["score"] == pytest.approx(3 / 12) and res["stages_reached"] == 1
        # the regions before the file was opened prove nothing
        r = p["radius"]["pixels"]
        (tmp_path / "stars.reg").write_text(
            "image\n" + "".join(f"circle({s['x']},{s['y']},{r})\n"
                                for s in (gold["bright"], gold["second"])))
        assert _stage_score(task, tmp_path, {**app, "file_name": ""})["score"] == 0
        res = _stage_score(task, tmp_path, app)
        assert res["score"] == pytest.approx(7 / 12) and res["stages_reached"] == 2
        res = _stage_score(task, tmp_path, app, f"{gold['bright']['peak']:.2f} ADU")
        assert res["score"] == pytest.approx(9 / 12) and res["stages_reached"] == 3
        # the second star's peak is not the brightest's
        res = _stage_score(task, tmp_path, app, f"{gold['second']['peak']:.2f} ADU")
        assert res["score"] == pytest.approx(7 / 12)
    finally:
        task.cleanup()


@pytest.mark.parametrize("seed", [0, 1])
def test_galaxy_cutout_workflow_scores_each_stage(seed, tmp_path):
    """The states the stage negatives leave: opened and the header answered (2 of 9), plus the
    crop (4 of 9), plus the contours (6 of 9); a crop of the right size on the wrong source
    stops at the crop stage, and DS9's name of a cropped file still counts as opened."""
    spec = SPECS["ds9/galaxy-cutout-workflow"]
    assert "long-horizon" in spec.tags and spec.difficulty == "hard"
    task = make_task(spec, seed, tmp_path)
    try:
        task.stage(tmp_path)
        assert 25 <= task.oracle_steps <= 60 and spec.max_steps >= 1.5 * task.oracle_steps
        gold, p = task.gold["field"], task.params
        g = gold["galaxy"]
        answer = str(gold["keyword_value"])
        app = {"file_name": "field.fits", "crop": {"image": [200.5, 200.5, 400, 400]},
               "contour": {"on": False, "nlevels": 5, "limits": [100, 4000]}}
        assert _stage_score(task, tmp_path, app)["score"] == 0
        res = _stage_score(task, tmp_path, app, answer)
        assert res["score"] == pytest.approx(2 / 9) and res["stages_reached"] == 1
        cropped = {**app, "file_name": "field.fits[171:230,253:292]",
                   "crop": {"image": [g["x"], g["y"], p["box"]["w"], p["box"]["h"]]}}
        res = _stage_score(task, tmp_path, cropped, answer)
        assert res["score"] == pytest.approx(4 / 9) and res["stages_reached"] == 2
        star = gold["bright"]
        wrong = {**cropped, "crop": {"image": [star["x"], star["y"], p["box"]["w"],
                                               p["box"]["h"]]}}
        assert _stage_score(task, tmp_path, wrong, answer)["score"] == pytest.approx(2 / 9)
        contoured = {**cropped, "contour": {"on": True, "nlevels": p["nlevels"],
                                            "limits": [p["limits"]["low"],
                                                       p["limits"]["high"]]}}
        res = _stage_score(task, tmp_path, contoured, answer)
        assert res["score"] == pytest.approx(6 / 9) and res["stages_reached"] == 3
    finally:
        task.cleanup()


@pytest.mark.parametrize("seed", [0, 1])
def test_smoothed_contour_view_workflow_scores_each_stage(seed, tmp_path):
    """The states the stage negatives leave: opened and smoothed (2 of 8), plus the colour map
    and zscale, plus the contours (6 of 8), plus the view (8 of 8); the view centred on the
    target's pixel numbers read as sky coordinates does not count, nor a view set before the
    contours are."""
    spec = SPECS["ds9/smoothed-contour-view-workflow"]
    assert "long-horizon" in spec.tags and spec.difficulty == "hard"
    task = make_task(spec, seed, tmp_path)
    try:
        task.stage(tmp_path)
        assert 25 <= task.oracle_steps <= 60 and spec.max_steps >= 1.5 * task.oracle_steps
        p, t = task.params, task.gold["field"]["target"]
        fresh = build_state(FRESH_RAW)
        assert _stage_score(task, tmp_path, fresh)["score"] == 0
        smoothed = build_state(dict(FRESH_RAW, smooth="yes", smooth_function=p["function"]["name"],
                                    smooth_radius=str(p["radius"])))
        res = _stage_score(task, tmp_path, smoothed)
        assert res["score"] == pytest.approx(2 / 8) and res["stages_reached"] == 1
        raw = dict(FRESH_RAW, smooth="yes", smooth_function=p["function"]["name"],
                   smooth_radius=str(p["radius"]), cmap=p["cmap"]["name"], scale_mode="zscale",
                   contour="yes", contour_nlevels=str(p["nlevels"]),
                   contour_limits=f"{p['limits']['low']} {p['limits']['high']}")
        res = _stage_score(task, tmp_path, build_state(raw))
        assert res["score"] == pytest.approx(6 / 8) and res["stages_reached"] == 3
        viewed = dict(raw, zoom=str(p["zoom"]), pan_fk5=f"{t['ra']} {t['dec']}")
        res = _stage_score(task, tmp_path, build_state(viewed))
        assert res["score"] == 1 and res["success"]
        wrong = dict(viewed, pan_fk5=f"{t['x']} {t['y']}")
        assert _stage_score(task, tmp_path, build_state(wrong))["score"] == pytest.approx(7 / 8)
        no_contours = dict(viewed, contour="no")
        assert _stage_score(task, tmp_path, build_state(no_contours))["score"] == pytest.approx(
            4 / 8)
    finally:
        task.cleanup()


def test_count_bright_stars_circles_exactly_the_stars_above(tmp_path):
    """The circles criterion passes with one circle on each star above the threshold and
    fails with one missing, one on a fainter star, or one doubled; the count is separate."""
    work = tmp_path / "w"
    task = staged("ds9/count-bright-stars", 0, work)
    try:
        f = task.gold["field"]
        above = [s for s in f["stars"] if s["peak"] > f["threshold"]]
        below = [s for s in f["stars"] if s["peak"] <= f["threshold"]]
        assert above and below

        def score(stars, answer):
            text = "image\n" + "\n".join(f"circle({s['peak_x'] + 0.7},{s['peak_y']},5)"
                                         for s in stars)
            return _score_answer(task, work, answer, dict(FRESH_RAW, regions=text)).score

        n = str(f["n_above"])
        assert score(above, n) == 1.0
        assert 0 < score(above, None) < 1  # no answer: the marks alone
        assert 0 < score(above, f"{f['n_above_more']}") < 1
        assert 0 < score(above[1:], n) < 1
        assert 0 < score(above + below[:1], n) < 1
        assert 0 < score(above + above[:1], n) < 1
        assert score([], "0") == 0.0
    finally:
        task.cleanup()
