"""Offline tests of the screen, window and command getters (OCR runs the real tesseract)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import requires
from PIL import Image, ImageDraw, ImageFont

from sciagent_gym.controller.windows import WindowInfo
from sciagent_gym.evaluation import (
    CHEAP_GETTERS,
    GETTERS,
    LIVE_GETTERS,
    Criterion,
    FinalState,
    GetterError,
    SpecError,
    commands_needed,
    evaluate,
    is_cheap,
)
from sciagent_gym.evaluation.getters import ocr
from sciagent_gym.evaluation.getters.commands import command_output
from sciagent_gym.evaluation.getters.ocr import normalize_ocr, screen_contains, screen_text
from sciagent_gym.evaluation.getters.pixels import (
    pixel_color,
    region_fraction,
    region_mean_color,
    screen_ssim,
)
from sciagent_gym.evaluation.getters.windows import (
    focused_window,
    modal_dialog,
    window_count,
    window_exists,
    window_titles,
)
from sciagent_gym.transfer.command import CommandResult

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
LIGHT = ((0, 0, 0), (214, 214, 214))  # black on ImageJ/Swing light grey
DARK = ((255, 255, 255), (43, 43, 48))  # white on a dark dialog
needs_tesseract = requires("tesseract")

# Fake desktop: menu bar, a dark "Macro Error" dialog, a status line. Regions are [x, y, w, h].
MENU = [0, 0, 640, 22]
DIALOG = [180, 120, 300, 90]
STATUS = [0, 370, 640, 30]


def font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(FONT, size)


def text_image(text: str, size: int, fg: tuple, bg: tuple, pad: int = 6) -> np.ndarray:
    f = font(size)
    right = f.getbbox(text)[2]
    im = Image.new("RGB", (right + 2 * pad, size + 2 * pad + 4), bg)
    ImageDraw.Draw(im).text((pad, pad), text, font=f, fill=fg)
    return np.asarray(im).copy()


def desktop() -> np.ndarray:
    im = Image.new("RGB", (640, 400), (214, 214, 214))
    d = ImageDraw.Draw(im)
    d.rectangle([0, 0, 639, 21], fill=(238, 238, 238))
    d.text((6, 4), "File  Edit  Image  Process  Analyze  Plugins  Window  Help", font=font(12),
           fill=(0, 0, 0))
    x, y, w, h = DIALOG
    d.rectangle([x, y, x + w - 1, y + h - 1], fill=(43, 43, 48))
    d.text((x + 16, y + 14), "Macro Error", font=font(14), fill=(255, 255, 255))
    d.text((x + 16, y + 44), "Results saved to nuclei_results.csv", font=font(12),
           fill=(230, 230, 230))
    d.text((8, 378), "Threshold: 128", font=font(11), fill=(0, 0, 0))
    return np.asarray(im).copy()


WINDOWS = [
    WindowInfo(1, "ImageJ", "ImageJ", 0, 0, 600, 100, False, False).to_dict(),
    WindowInfo(2, "blobs.gif (inverting LUT)", "ImageJ", 10, 120, 256, 254, False, False).to_dict(),
    WindowInfo(3, "Macro Error", "ImageJ", 200, 200, 300, 90, True, True).to_dict(),
    WindowInfo(4, "Results", "ImageJ", 620, 0, 400, 300, False, False).to_dict(),
]
COMMANDS = {
    "wc -l < results.csv": {"returncode": 0, "output": "  42\n", "timed_out": False},
    "false": {"returncode": 1, "output": "", "timed_out": False},
    "sleep 99": {"returncode": None, "output": "partial", "timed_out": True},
}


@pytest.fixture(autouse=True)
def fresh_ocr_cache() -> None:
    ocr.clear_ocr_cache()


@pytest.fixture()
def work(tmp_path: Path) -> Path:
    w = tmp_path / "work"
    w.mkdir()
    (w / "results.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    return w


def make_state(work: Path, screenshot: np.ndarray | None = None, **kw: Any) -> FinalState:
    return FinalState(work_dir=work, screenshot=screenshot, agent_status="done", **kw)


def crit(name: str, getter: str, check: str, g: dict | None = None, c: dict | None = None,
         **extra: Any) -> dict[str, Any]:
    return {"name": name, "getter": {"fn": getter, **(g or {})},
            "check": {"op": check, **(c or {})}, **extra}


# --- OCR -----------------------------------------------------------------------------------


@needs_tesseract
@pytest.mark.parametrize("size", [11, 12, 13, 14])
@pytest.mark.parametrize("colors", [LIGHT, DARK], ids=["dark-on-light", "light-on-dark"])
@pytest.mark.parametrize(
    "text", ["Macro Error", "Threshold: 128", "Results saved to nuclei_results.csv"]
)
def test_ocr_reads_ui_text(work: Path, text: str, size: int, colors: tuple) -> None:
    st = make_state(work, text_image(text, size, *colors))
    got = screen_text(st)
    assert normalize_ocr(got) == normalize_ocr(text), got
    assert screen_contains(st, text.upper())


@needs_tesseract
def test_ocr_regions_of_a_desktop(work: Path) -> None:
    st = make_state(work, desktop())
    assert normalize_ocr(screen_text(st, region=STATUS)) == "threshold: 128"
    dialog = screen_text(st, region=DIALOG)
    assert dialog.splitlines() == ["Macro Error", "Results saved to nuclei_results.csv"]
    assert "Plugins" in screen_text(st, region=MENU)
    assert screen_contains(st, "macro\n  ERROR", region=DIALOG)
    assert not screen_contains(st, "Macro Error", region=STATUS)
    full = screen_text(st)  # mixed polarity: light desktop with a dark dialog
    for part in ("Macro Error", "nuclei_results.csv", "Threshold: 128", "Analyze"):
        assert screen_contains(st, part), full
    assert not screen_contains(st, "Segmentation fault")


@needs_tesseract
def test_ocr_runs_once_per_region(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[float] = []
    real = ocr._run_tesseract

    def timed(*args: Any, **kwargs: Any) -> str:
        t0 = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            calls.append(time.perf_counter() - t0)

    monkeypatch.setattr(ocr, "_run_tesseract", timed)
    st = make_state(work, desktop())
    criteria = [
        crit("title", "screen_contains", "is_true", {"text": "Macro Error", "region": DIALOG}),
        crit("body", "screen_text", "regex", {"region": DIALOG}, {"pattern": r"nuclei_\w+\.csv"}),
        crit("no crash", "screen_contains", "is_false", {"text": "Exception", "region": DIALOG}),
        crit("status", "screen_text", "text", {"region": STATUS}, {"expected": "Threshold: 128"}),
        crit("threshold", "screen_contains", "is_true", {"text": "128", "region": STATUS}),
    ]
    res = evaluate(criteria, st)
    assert res.success, res.to_dict()
    assert len(calls) == 2  # DIALOG and STATUS
    evaluate(criteria, st)
    assert len(calls) == 2
    # a copy of the screenshot (e.g. the state loaded back) hits the cache too
    evaluate(criteria, make_state(work, desktop()))
    assert len(calls) == 2
    assert all(t < 30 for t in calls)


@needs_tesseract
def test_ocr_is_deterministic(work: Path) -> None:
    st = make_state(work, desktop())
    criteria = [
        crit("dialog", "screen_text", "text", {"region": DIALOG},
             {"expected": "Macro Error Results saved to nuclei_results.csv"}),
        crit("menu", "screen_contains", "is_true", {"text": "Analyze", "region": MENU}),
        crit("status", "screen_text", "regex", {"region": STATUS}, {"pattern": "Threshold"}),
    ]
    first = evaluate(criteria, st).to_dict()
    assert first["success"], first
    for i in range(20):
        if i % 7 == 0:
            ocr.clear_ocr_cache()  # rerun tesseract itself now and then
        assert evaluate(criteria, st).to_dict() == first


def test_ocr_blank_region_skips_tesseract(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ocr, "_run_tesseract", lambda *a, **k: pytest.fail("ran tesseract"))
    st = make_state(work, desktop())
    assert screen_text(st, region=[300, 300, 50, 40]) == ""
    assert screen_contains(st, "anything", region=[300, 300, 50, 40]) is False


def test_screen_contains_normalises(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        ocr, "_run_tesseract",
        lambda *a, **k: "\u201cResults\u201d  saved\nto nuclei_results.csv \u2014 it\u2019s done",
    )
    st = make_state(work, desktop())
    assert screen_contains(st, '"results" SAVED to nuclei_results.csv - it\'s done')
    assert screen_contains(st, "saved to nuclei")
    assert not screen_contains(st, "nuclei results")  # no fuzzy matching
    with pytest.raises(GetterError, match="non-empty"):
        screen_contains(st, "  ")


def test_ocr_errors(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    st = make_state(work, desktop())
    with pytest.raises(GetterError, match="no screenshot"):
        screen_text(make_state(work))
    with pytest.raises(GetterError, match="outside the screen"):
        screen_text(st, region=[700, 10, 50, 50])
    with pytest.raises(GetterError, match="empty"):
        screen_text(st, region=[10, 10, 0, 50])
    with pytest.raises(GetterError, match=r"\[x, y, width, height\]"):
        screen_text(st, region=[10, 10, 50])
    with pytest.raises(GetterError, match="integer"):
        screen_text(st, region=[10, 10.5, 50, 50])
    with pytest.raises(GetterError, match="psm"):
        screen_text(st, region=DIALOG, psm=0)
    with pytest.raises(GetterError, match="lang"):
        screen_text(st, region=DIALOG, lang="eng --oem 0")
    with pytest.raises(GetterError, match="invert"):
        screen_text(st, region=DIALOG, invert="yes")
    with pytest.raises(GetterError, match="invert"):
        screen_text(st, region=DIALOG, invert=1)
    monkeypatch.setattr(ocr.shutil, "which", lambda cmd: None)
    with pytest.raises(GetterError, match="install tesseract-ocr"):
        screen_text(st, region=DIALOG)


@needs_tesseract
def test_ocr_missing_language(work: Path) -> None:
    st = make_state(work, desktop())
    with pytest.raises(GetterError, match="OCR failed"):
        screen_text(st, region=DIALOG, lang="zzz")


# --- pixels --------------------------------------------------------------------------------


@pytest.fixture()
def pixels() -> np.ndarray:
    arr = np.full((40, 60, 3), 200, dtype=np.uint8)
    arr[10:20, 20:40] = (255, 0, 0)  # a 20x10 red box
    arr[0, 0] = (1, 2, 3)
    return arr


def test_pixel_getters(work: Path, pixels: np.ndarray) -> None:
    st = make_state(work, pixels)
    assert pixel_color(st, 0, 0) == [1, 2, 3]
    assert pixel_color(st, 25, 15) == [255, 0, 0]
    assert pixel_color(st, 59, 39) == [200, 200, 200]
    for x, y in ((60, 0), (0, 40), (-1, 5)):
        with pytest.raises(GetterError, match="outside the screen"):
            pixel_color(st, x, y)
    assert region_mean_color(st, [20, 10, 20, 10]) == [255.0, 0.0, 0.0]
    assert region_mean_color(st, [10, 10, 20, 10]) == [227.5, 100.0, 100.0]
    assert region_fraction(st, [10, 10, 20, 10], [255, 0, 0]) == 0.5
    assert region_fraction(st, [10, 10, 20, 10], "#f5050a", tolerance=10) == 0.5
    assert region_fraction(st, [10, 10, 20, 10], "#f5050a", tolerance=5) == 0.0
    # clipped to the screen: 40x10 pixels remain on screen, 20x10 of them red
    assert region_fraction(st, [20, 10, 100, 10], [255, 0, 0], tolerance=0) == 0.5
    with pytest.raises(GetterError, match="outside the screen"):
        region_mean_color(st, [60, 0, 5, 5])
    with pytest.raises(GetterError, match="color"):
        region_fraction(st, [0, 0, 5, 5], [300, 0, 0])
    with pytest.raises(GetterError, match="color"):
        region_fraction(st, [0, 0, 5, 5], "red")
    with pytest.raises(GetterError, match="tolerance"):
        region_fraction(st, [0, 0, 5, 5], [0, 0, 0], tolerance=-1)
    with pytest.raises(GetterError, match="no screenshot"):
        pixel_color(make_state(work), 0, 0)


def test_pixel_getters_accept_gray_and_rgba(work: Path) -> None:
    gray = np.full((10, 10), 7, dtype=np.uint8)
    assert pixel_color(make_state(work, gray), 3, 3) == [7, 7, 7]
    rgba = np.zeros((10, 10, 4), dtype=np.uint8)
    rgba[..., 0] = 9
    assert region_mean_color(make_state(work, rgba), [0, 0, 10, 10]) == [9.0, 0.0, 0.0]


def test_screen_ssim(work: Path, tmp_path: Path, pixels: np.ndarray) -> None:
    ref = tmp_path / "ref.png"
    Image.fromarray(pixels).save(ref)
    st = make_state(work, pixels)
    assert screen_ssim(st, str(ref)) == pytest.approx(1.0)
    assert screen_ssim(st, str(ref), gray=False) == pytest.approx(1.0)
    noisy = np.random.default_rng(0).integers(0, 256, pixels.shape, dtype=np.uint8)
    assert screen_ssim(make_state(work, noisy), str(ref)) < 0.3
    crop_ref = tmp_path / "box.png"
    Image.fromarray(pixels[10:20, 20:40]).save(crop_ref)
    assert screen_ssim(st, str(crop_ref), region=[20, 10, 20, 10]) == pytest.approx(1.0)
    with pytest.raises(GetterError, match=r"screen is 60x40, reference .* is 20x10"):
        screen_ssim(st, str(crop_ref))
    with pytest.raises(GetterError, match="absolute"):
        screen_ssim(st, "ref.png")
    with pytest.raises(GetterError, match="not found"):
        screen_ssim(st, str(tmp_path / "missing.png"))


# --- windows -------------------------------------------------------------------------------


def test_window_getters(work: Path) -> None:
    st = make_state(work, windows=WINDOWS)
    assert window_titles(st) == ["ImageJ", "blobs.gif (inverting LUT)", "Macro Error", "Results"]
    assert window_exists(st)
    assert window_exists(st, title="Results")
    assert not window_exists(st, title="results")
    assert window_exists(st, title_regex=r"^blobs\.gif")
    assert window_exists(st, title="Macro Error", wm_class="imagej")
    assert not window_exists(st, title="Macro Error", wm_class="Fiji")
    assert modal_dialog(st)
    assert focused_window(st) == "Macro Error"
    assert focused_window(st, field="wm_class") == "ImageJ"
    assert window_count(st) == 4
    assert window_count(st, title_regex="(?i)imagej|results") == 2
    with pytest.raises(GetterError, match="regular expression"):
        window_exists(st, title_regex="(")
    with pytest.raises(GetterError, match="unknown window field"):
        focused_window(st, field="name")
    calm = make_state(work, windows=[dict(w, active=False, modal=False) for w in WINDOWS])
    assert not modal_dialog(calm) and focused_window(calm) is None
    empty = make_state(work, windows=[])
    assert window_titles(empty) == [] and not window_exists(empty) and window_count(empty) == 0
    with pytest.raises(GetterError, match="window list was not collected"):
        window_titles(make_state(work))


def test_state_normalises_windows_and_commands(work: Path) -> None:
    infos = [WindowInfo(5, "Log", "ImageJ", 0, 0, 10, 10, True, False)]
    results = {"echo hi": CommandResult(returncode=0, output="hi\n", truncated=True)}
    st = make_state(work, windows=infos, commands=results)
    assert st.windows == [infos[0].to_dict()]
    assert st.commands == {"echo hi": {"returncode": 0, "output": "hi\n", "timed_out": False}}
    json.dumps([st.windows, st.commands])


# --- commands ------------------------------------------------------------------------------


def test_command_output(work: Path) -> None:
    st = make_state(work, commands=COMMANDS)
    assert command_output(st, "wc -l < results.csv") == "42"
    assert command_output(st, "wc -l < results.csv", strip=False) == "  42\n"
    assert command_output(st, "wc -l < results.csv", field="returncode") == 0
    assert command_output(st, "false", field="returncode") == 1
    assert command_output(st, "sleep 99", field="returncode") is None
    assert command_output(st, "sleep 99", field="timed_out") is True
    with pytest.raises(GetterError, match="was not run"):
        command_output(st, "ls")
    with pytest.raises(GetterError, match="was not run"):
        command_output(make_state(work), "ls")
    with pytest.raises(GetterError, match="unknown command field"):
        command_output(st, "false", field="stderr")


def test_commands_needed() -> None:
    specs = [
        crit("rows", "command_output", "numeric", {"command": "wc -l < a.csv"}, {"expected": 3}),
        crit("rc", "command_output", "equals", {"command": "test -s b.tif", "field": "returncode"},
             {"expected": 0}),
        crit("rows again", "command_output", "regex", {"command": "wc -l < a.csv"},
             {"pattern": "3"}),
        crit("file", "file_exists", "is_true", {"path": "a.csv"}),
    ]
    want = ["wc -l < a.csv", "test -s b.tif"]
    assert commands_needed(specs) == want
    assert commands_needed([Criterion.from_dict(s) for s in specs]) == want
    assert commands_needed([]) == []
    assert LIVE_GETTERS == frozenset({"command_output"})


# --- cost ----------------------------------------------------------------------------------


def test_cheap_getters() -> None:
    assert CHEAP_GETTERS <= set(GETTERS)
    for name in ("file_exists", "table_cell", "agent_status", "window_exists", "region_fraction"):
        assert is_cheap(name)
    for name in ("screen_text", "screen_contains", "screen_ssim", "image_ssim", "app_state",
                 "command_output", "nonexistent"):
        assert not is_cheap(name)
    spec = crit("f", "file_exists", "is_true", {"path": "a.csv"})
    assert is_cheap(spec) and is_cheap(Criterion.from_dict(spec))
    ocr_spec = crit("o", "screen_contains", "is_true", {"text": "x"})
    assert not is_cheap(ocr_spec) and not is_cheap(Criterion.from_dict(ocr_spec))
    assert not LIVE_GETTERS & CHEAP_GETTERS


def test_spec_validation_knows_new_getters() -> None:
    with pytest.raises(SpecError, match="missing parameter 'text'"):
        Criterion.from_dict(crit("o", "screen_contains", "is_true"))
    with pytest.raises(SpecError, match="unknown parameter 'titel'"):
        Criterion.from_dict(crit("w", "window_exists", "is_true", {"titel": "x"}))


# --- persistence and failure reporting -----------------------------------------------------


def test_save_load_roundtrip(work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ocr, "_run_tesseract", lambda *a, **k: "Macro Error")
    st = make_state(work, desktop(), windows=WINDOWS, commands=COMMANDS)
    criteria = [
        crit("modal", "modal_dialog", "is_true"),
        crit("title", "window_exists", "is_true", {"title_regex": "Results"}),
        crit("rows", "command_output", "numeric", {"command": "wc -l < results.csv"},
             {"expected": 42}),
        crit("ocr", "screen_contains", "is_true", {"text": "macro error", "region": DIALOG}),
        crit("red", "pixel_color", "list_equal", {"x": 200, "y": 130}, {"expected": [43, 43, 48]}),
    ]
    before = evaluate(criteria, st).to_dict()
    assert before["success"], before
    saved = st.save(tmp_path / "saved")
    assert {"windows.json", "commands.json", "screenshot.png"} <= {p.name for p in saved.iterdir()}
    loaded = FinalState.load(saved)
    assert loaded.windows == WINDOWS
    assert loaded.commands == COMMANDS
    assert evaluate(criteria, loaded).to_dict() == before
    # saving again without them removes the stale files; old saves load with None
    make_state(work).save(saved)
    assert not (saved / "windows.json").exists() and not (saved / "commands.json").exists()
    old = FinalState.load(saved)
    assert old.windows is None and old.commands is None


def test_errors_become_failed_criteria(work: Path) -> None:
    criteria = [
        crit("ocr", "screen_contains", "is_true", {"text": "Macro Error"}),
        crit("pixel", "pixel_color", "list_equal", {"x": 5, "y": 5}, {"expected": [0, 0, 0]}),
        crit("off", "region_mean_color", "list_equal", {"region": [900, 900, 10, 10]},
             {"expected": [0, 0, 0]}),
        crit("cmd", "command_output", "equals", {"command": "ls"}, {"expected": ""}),
        crit("win", "window_exists", "is_true", {"title": "Results"}),
        crit("ocr off", "screen_text", "text", {"region": [-50, -50, 10, 10]}, {"expected": ""}),
    ]
    no_shot = evaluate(criteria, make_state(work)).to_dict()
    assert no_shot["score"] == 0.0 and not no_shot["success"]
    details = {c["name"]: c["detail"] for c in no_shot["criteria"]}
    assert all(not c["passed"] for c in no_shot["criteria"])
    assert "no screenshot" in details["ocr"] and "no screenshot" in details["pixel"]
    assert "was not run" in details["cmd"]
    assert "window list was not collected" in details["win"]
    with_shot = evaluate(criteria, make_state(work, desktop())).to_dict()
    details = {c["name"]: c["detail"] for c in with_shot["criteria"]}
    assert "outside the screen" in details["off"] and "outside the screen" in details["ocr off"]
