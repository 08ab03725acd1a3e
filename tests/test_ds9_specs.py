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
from sciagent_gym.tasks.spec import TaskSpec, count_variants, load_specs
from sciagent_gym.tasks.task import Task
from sciagent_gym.tools import load_tool_getters, task_specs_root

load_tool_getters("ds9")

from sciagent_gym.envs.ds9 import data  # noqa: E402
from sciagent_gym.envs.ds9.adapter import build_state, parse_answers, parse_script  # noqa: E402
from sciagent_gym.envs.ds9.regions import RegionError, parse_regions  # noqa: E402

SPECS: dict[str, TaskSpec] = load_specs(task_specs_root(), "ds9")
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
    raw = data.fits_bytes(img, [("OBJECT", "it's M31"), ("EXPTIME", 120.0), ("NCOMBINE", 3)])
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
    raw = data.fits_bytes(np.zeros((10, 10), np.float32))
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
    (state.work_dir / "nowcs.fits").write_bytes(data.fits_bytes(np.zeros((4, 4), np.float32)))
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
    from PIL import Image

    rgb = np.zeros((30, 40, 3), np.uint8)
    rgb[..., 0] = 200
    Image.fromarray(rgb).save(tmp_path / "red.png")
    Image.fromarray(np.full((5, 5), 90, np.uint8)).save(tmp_path / "grey.png")
    (tmp_path / "fake.png").write_bytes(b"\x89PNG\r\n\x1a\nbroken")
    (tmp_path / "text.png").write_text("hello")
    state = FinalState(work_dir=tmp_path)
    info = GETTERS["png_colour"](state, "red.png")
    assert (info["width"], info["height"], info["dominant"]) == (40, 30, "red")
    assert GETTERS["png_colour"](state, "grey.png", key="dominant") == "none"
    for name in ("fake.png", "text.png", "none.png"):
        with pytest.raises(GetterError):
            GETTERS["png_colour"](state, name)
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


def test_build_state_tolerates_failed_queries():
    state = build_state({"file": "/w/field.fits", "scale": "log\n", "zoom": "2",
                         "regions": DS9_IMAGE, "pan_fk5": None, "crop_image": "10 10 5 5",
                         "size": "400 400", "smooth": "yes"})
    assert state["file_name"] == "field.fits" and state["scale"]["function"] == "log"
    assert state["zoom"] == 2.0 and state["pan"]["fk5"] is None
    assert state["n_regions"] == 4 and state["regions"][0]["coords"] == [[272.45, 236.5]]
    assert state["crop"]["cropped"] is True and state["smooth"]["on"] is True
    assert "levels" not in state["contour"]  # only the dialog knows them (see _QUERIES)
    toggles = build_state({"colorbar": "no\n", "grid": "yes", "view_magnifier": "no"})
    assert (toggles["colorbar"], toggles["grid"]) == (False, True)
    assert toggles["view"]["magnifier"] is False and toggles["view"]["panner"] is None
    broken = build_state({"regions": "circle(1,2"})
    assert broken["regions"] == [] and "line 1" in broken["regions_error"]


def test_fresh_commands_set_back_only_what_differs():
    from sciagent_gym.envs.ds9.adapter import _FRESH, _FRESH_ALWAYS, fresh_commands

    launch = [want for _, want, _ in _FRESH]
    assert fresh_commands(launch) == _FRESH_ALWAYS
    # numbers compare as numbers, words without case
    assert fresh_commands(["1.0" if a == "1" else a.upper() for a in launch]) == _FRESH_ALWAYS
    changed = list(launch)
    changed[[q for q, _, _ in _FRESH].index("zoom")] = "4"
    changed[[q for q, _, _ in _FRESH].index("view magnifier")] = "no"
    changed[[q for q, _, _ in _FRESH].index("contour smooth")] = "2"
    assert fresh_commands(changed) == ["contour smooth 4", "zoom to 1", "view magnifier yes",
                                       "contour close", *_FRESH_ALWAYS]
    with pytest.raises(ValueError):
        fresh_commands(launch[:-1])  # one answer per query, or nothing is trusted
