"""Offline tests of the evaluation engine (getters, checks, evaluator, templating, FinalState)."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pytest
import tifffile
from PIL import Image

from sciagent_gym.evaluation import (
    CHECKS,
    GETTERS,
    Criterion,
    EvaluationResult,
    FinalState,
    GetterError,
    SpecError,
    evaluate,
    parse_criteria,
)
from sciagent_gym.evaluation.checks import (
    contains,
    equals,
    in_range,
    is_false,
    is_true,
    list_equal,
    numeric,
    one_of,
    regex,
    set_equal,
    ssim_at_least,
    table_equal,
    text,
    unchanged,
)
from sciagent_gym.tasks.templating import resolve

IJ_CSV = (
    " ,Area,Mean,X,Y\n"
    "1,120,80.5,10.2,11\n"
    "2,98,NaN,20,21.5\n"
    "3,150,101.25,30,31\n"
)
TSV = " \tLabel\tArea\tMean\n1\tblobs.gif:1\t12\t200\n2\tblobs.gif:2\t14\t180\n"


def write(p: Path, content: str | bytes) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content, encoding="utf-8")
    return p


@pytest.fixture()
def work(tmp_path: Path) -> Path:
    w = tmp_path / "work"
    w.mkdir()
    write(w / "results.csv", IJ_CSV)
    write(w / "results.xls", TSV)
    write(w / "plain.csv", "name,count\nalpha,3\nbeta,4\n")
    write(w / "ragged.csv", " ,Area,Mean\n1,2,3\n2,4\n")
    write(w / "empty.csv", "")
    write(w / "junk.csv", bytes(range(256)) * 8)
    write(w / "notes.txt", "  Cell  count:\t24 \n")
    write(w / "latin.txt", "Area (\xb5m^2)".encode("latin-1"))
    write(w / "doc.json", json.dumps({"rois": [{"name": "a"}, {"name": "b"}], "n": 2}))
    write(w / "bad.json", '{"rois": [1, 2,')
    write(w / "sub" / "inner.txt", "inside")
    gray8 = (np.arange(64 * 48) % 256).astype(np.uint8).reshape(48, 64)
    tifffile.imwrite(w / "gray8.tif", gray8)
    tifffile.imwrite(w / "gray16.tif", (gray8.astype(np.uint16) * 100))
    tifffile.imwrite(w / "float32.tif", gray8.astype(np.float32) / 255.0)
    stack = np.stack([gray8, 255 - gray8, gray8 // 2]).astype(np.uint8)
    tifffile.imwrite(w / "stack.tif", stack, photometric="minisblack")
    rgb = np.dstack([gray8, 255 - gray8, np.full_like(gray8, 7)])
    Image.fromarray(rgb).save(w / "rgb.png")
    Image.fromarray(gray8).save(w / "pil8.tif")
    Image.fromarray(gray8).save(w / "gray.png")
    write(w / "broken.tif", b"II*\x00garbage" * 10)
    return w


@pytest.fixture()
def state(work: Path) -> FinalState:
    return FinalState(
        work_dir=work,
        app_state={"images": [{"title": "blobs.gif", "width": 256}, {"title": "mask"}], "n": 2},
        app_state_error=None,
        screenshot=np.zeros((4, 5, 3), np.uint8),
        terminal="ok\n",
        agent_status="done",
    )


def get(name: str, state: FinalState, **params):
    return GETTERS[name](state, **params)


# --- FinalState.path --------------------------------------------------------------------------


def test_path_inside(state: FinalState, work: Path) -> None:
    assert state.path("sub/inner.txt") == (work / "sub" / "inner.txt").resolve()
    assert state.path("sub/../results.csv") == (work / "results.csv").resolve()


@pytest.mark.parametrize(
    ("rel", "fragment"),
    [
        ("../x", "escapes the working directory"),
        ("sub/../../x", "escapes the working directory"),
        ("/etc/passwd", "absolute paths are not allowed"),
        ("", "empty path"),
    ],
)
def test_path_escape(state: FinalState, rel: str, fragment: str) -> None:
    with pytest.raises(GetterError, match=fragment):
        state.path(rel)


def test_path_symlink_outside(state: FinalState, work: Path, tmp_path: Path) -> None:
    secret = write(tmp_path / "secret.txt", "gold")
    (work / "link.txt").symlink_to(secret)
    (work / "inlink.txt").symlink_to(work / "notes.txt")
    with pytest.raises(GetterError, match="outside the working directory"):
        state.path("link.txt")
    assert get("file_text", state, path="inlink.txt").startswith("  Cell")


def test_bad_agent_status(work: Path) -> None:
    with pytest.raises(ValueError, match="agent_status"):
        FinalState(work_dir=work, agent_status="success")


# --- file getters -----------------------------------------------------------------------------


def test_file_getters(state: FinalState, work: Path) -> None:
    assert get("file_exists", state, path="results.csv") is True
    assert get("file_exists", state, path="nope.csv") is False
    assert get("file_exists", state, path="sub") is False
    assert get("file_text", state, path="latin.txt") == "Area (\xb5m^2)"
    assert get("file_json", state, path="doc.json", key="rois.1.name") == "b"
    assert get("file_json", state, path="doc.json", key="rois.-1.name") == "b"
    assert get("file_json", state, path="doc.json", key="rois[0].name") == "a"
    assert get("file_json", state, path="doc.json")["n"] == 2
    digest = hashlib.sha256((work / "results.csv").read_bytes()).hexdigest()
    assert get("file_sha256", state, path="results.csv") == digest


@pytest.mark.parametrize(
    ("getter", "params", "fragment"),
    [
        ("file_text", {"path": "missing.txt"}, "missing.txt: not found"),
        ("file_text", {"path": "sub"}, "is a directory"),
        ("file_json", {"path": "bad.json"}, "bad.json: invalid JSON at line 1"),
        ("file_json", {"path": "doc.json", "key": "rois.5"}, "index 5 out of range"),
        ("file_json", {"path": "doc.json", "key": "nope"}, "keys: rois, n"),
        ("file_sha256", {"path": "missing.bin"}, "not found"),
    ],
)
def test_file_getter_errors(state: FinalState, getter: str, params: dict, fragment: str) -> None:
    with pytest.raises(GetterError, match=fragment):
        get(getter, state, **params)


# --- table getters ----------------------------------------------------------------------------


def test_imagej_csv(state: FinalState) -> None:
    assert get("table_rows", state, path="results.csv") == 3
    assert get("table_columns", state, path="results.csv") == ["Area", "Mean", "X", "Y"]
    assert get("table_column", state, path="results.csv", column="Area") == [120.0, 98.0, 150.0]
    assert get("table_column", state, path="results.csv", column="Area", agg="mean") == 368 / 3
    assert get("table_column", state, path="results.csv", column="Area", agg="sum") == 368
    assert get("table_column", state, path="results.csv", column="Area", agg="min") == 98
    assert get("table_column", state, path="results.csv", column="Area", agg="max") == 150
    assert get("table_column", state, path="results.csv", column="Area", agg="median") == 120
    assert get("table_column", state, path="results.csv", column="Mean", agg="count") == 3
    assert math.isnan(get("table_column", state, path="results.csv", column="Mean", agg="mean"))
    assert math.isnan(get("table_cell", state, path="results.csv", row=1, column="Mean"))
    assert get("table_cell", state, path="results.csv", row=-1, column="Y") == 31.0
    assert get("table_cell", state, path="results.csv", row=0, column="area") == 120.0
    records = get("table_records", state, path="results.csv", columns=["Area", "X"])
    assert records[0] == {"Area": 120.0, "X": 10.2}


def test_tsv_and_plain_csv(state: FinalState) -> None:
    assert get("table_columns", state, path="results.xls") == ["Label", "Area", "Mean"]
    assert get("table_column", state, path="results.xls", column="Label") == [
        "blobs.gif:1",
        "blobs.gif:2",
    ]
    assert get("table_column", state, path="results.xls", column="Area", agg="sum") == 26
    assert get("table_columns", state, path="plain.csv") == ["name", "count"]
    assert get("table_cell", state, path="plain.csv", row=1, column="name") == "beta"


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"path": "ragged.csv"}, "ragged.csv: line 3 has 2 fields, header has 3"),
        ({"path": "empty.csv"}, "empty.csv: empty file"),
        ({"path": "junk.csv"}, "junk.csv: binary data"),
        ({"path": "nothere.csv"}, "nothere.csv: not found"),
        ({"path": "../results.csv"}, "escapes the working directory"),
    ],
)
def test_table_errors(state: FinalState, params: dict, fragment: str) -> None:
    with pytest.raises(GetterError, match=fragment):
        get("table_rows", state, **params)


def test_table_column_errors(state: FinalState) -> None:
    with pytest.raises(GetterError, match=r"no column 'Perim' \(columns: 'Area', 'Mean'"):
        get("table_column", state, path="results.csv", column="Perim")
    with pytest.raises(GetterError, match="not numeric"):
        get("table_column", state, path="results.xls", column="Label", agg="mean")
    with pytest.raises(GetterError, match="unknown aggregate"):
        get("table_column", state, path="results.csv", column="Area", agg="avg")
    with pytest.raises(GetterError, match="row 7 out of range"):
        get("table_cell", state, path="results.csv", row=7, column="Area")


def test_table_variants(state: FinalState, work: Path) -> None:
    write(work / "crlf.csv", " ,Area,Label,\r\n1,5,\"a, b\",\r\n2,6,c,\r\n\r\n")
    assert get("table_columns", state, path="crlf.csv") == ["Area", "Label"]
    assert get("table_column", state, path="crlf.csv", column="Label") == ["a, b", "c"]
    write(work / "header_only.csv", " ,Area,Mean\n")
    assert get("table_rows", state, path="header_only.csv") == 0
    with pytest.raises(GetterError, match="no numeric values"):
        get("table_column", state, path="header_only.csv", column="Area", agg="mean")
    write(work / "single.txt", "Count\n24\n")
    assert get("table_column", state, path="single.txt", column="Count", agg="max") == 24


# --- image getters ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "dtype", "bits", "channels", "frames"),
    [
        ("gray8.tif", "uint8", 8, 1, 1),
        ("gray16.tif", "uint16", 16, 1, 1),
        ("float32.tif", "float32", 32, 1, 1),
        ("stack.tif", "uint8", 8, 1, 3),
        ("rgb.png", "uint8", 24, 3, 1),
        ("gray.png", "uint8", 8, 1, 1),
        ("pil8.tif", "uint8", 8, 1, 1),
    ],
)
def test_image_info(
    state: FinalState, path: str, dtype: str, bits: int, channels: int, frames: int
) -> None:
    info = get("image_info", state, path=path)
    assert (info["width"], info["height"]) == (64, 48)
    assert info["dtype"] == dtype
    assert info["bit_depth"] == bits
    assert info["channels"] == channels
    assert info["n_frames"] == frames
    assert info["min"] <= info["mean"] <= info["max"]


def test_imagej_hyperstack_and_rgb_tiff(state: FinalState, work: Path) -> None:
    data = np.zeros((2, 3, 48, 64), np.float32)
    data[1, 2] = 1.5
    tifffile.imwrite(work / "hyper.tif", data, imagej=True, metadata={"axes": "ZCYX"})
    info = get("image_info", state, path="hyper.tif")
    assert (info["channels"], info["n_frames"], info["bit_depth"]) == (3, 2, 32)
    assert info["max"] == 1.5
    tifffile.imwrite(work / "rgb.tif", np.zeros((48, 64, 3), np.uint8))
    info = get("image_info", state, path="rgb.tif")
    assert (info["channels"], info["bit_depth"], info["n_frames"]) == (3, 24, 1)


def test_image_values(state: FinalState, work: Path) -> None:
    assert get("image_stat", state, path="gray16.tif", stat="max") == 255 * 100
    assert get("image_stat", state, path="float32.tif", stat="max") == pytest.approx(1.0)
    assert get("image_array", state, path="stack.tif").shape == (3, 48, 64)
    assert get("image_array", state, path="rgb.png").shape == (48, 64, 3)
    ref = str(work / "gray8.tif")
    assert get("image_ssim", state, path="gray8.tif", reference_path=ref) == pytest.approx(1.0)
    assert get("image_ssim", state, path="pil8.tif", reference_path=ref) == pytest.approx(1.0)
    # raw values: the same picture scaled to 0..1 or x100 is a different image ...
    assert get("image_ssim", state, path="float32.tif", reference_path=ref) < 0.1
    assert get("image_ssim", state, path="gray16.tif", reference_path=ref) < 0.5
    # ... unless each image is normalised to its own range first
    for other in ("float32.tif", "gray16.tif", "gray.png"):
        assert get(
            "image_ssim", state, path=other, reference_path=ref, normalize=True
        ) == pytest.approx(1.0, abs=1e-6)
    inverted = 255 - tifffile.imread(work / "gray8.tif")
    tifffile.imwrite(work / "inverted.tif", inverted)
    assert get("image_ssim", state, path="inverted.tif", reference_path=ref, normalize=True) < 0
    stack_ref = str(work / "stack.tif")
    assert get("image_ssim", state, path="stack.tif", reference_path=stack_ref) == 1.0


def test_image_errors(state: FinalState, work: Path) -> None:
    with pytest.raises(GetterError, match="broken.tif: cannot read image"):
        get("image_info", state, path="broken.tif")
    with pytest.raises(GetterError, match="results.csv: cannot read image"):
        get("image_info", state, path="results.csv")
    with pytest.raises(GetterError, match="unknown image stat"):
        get("image_stat", state, path="gray8.tif", stat="area")
    with pytest.raises(GetterError, match="must be an absolute host path"):
        get("image_ssim", state, path="gray8.tif", reference_path="gray8.tif")
    with pytest.raises(GetterError, match="reference is 64x48x3"):
        get("image_ssim", state, path="gray8.tif", reference_path=str(work / "rgb.png"))


# --- app / status getters ---------------------------------------------------------------------


def test_app_state(state: FinalState, work: Path) -> None:
    assert get("app_state", state, key="images.-1.title") == "mask"
    assert get("app_state", state, key="images.0.width") == 256
    assert get("app_state", state, key="n") == 2
    with pytest.raises(GetterError, match=r"key 'height' not found at 'images.0' \(keys: title"):
        get("app_state", state, key="images.0.height")
    with pytest.raises(GetterError, match="keys: images, n"):
        get("app_state", state, key="windows")
    broken = FinalState(work_dir=work, app_state=None, app_state_error="macro timed out")
    with pytest.raises(GetterError, match="app state unavailable: macro timed out"):
        get("app_state", broken, key="n")
    assert get("agent_status", state) == "done"
    assert get("terminal_text", state) == "ok\n"


# --- checks -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fn", "value", "params", "expected"),
    [
        (equals, 24.0, {"expected": 24}, True),
        (equals, True, {"expected": 1}, False),
        (equals, [1, "a"], {"expected": [1, "a"]}, True),
        (equals, "a", {"expected": "b"}, False),
        (text, "  Hello   World ", {"expected": "hello world"}, True),
        (text, "Hello", {"expected": "hello", "case": True}, False),
        (text, None, {"expected": "x"}, False),
        (regex, "count: 24 cells", {"pattern": r"\b24\b"}, True),
        (regex, "count: 24 cells", {"pattern": r"\d+", "fullmatch": True}, False),
        (regex, "42", {"pattern": r"\d+", "fullmatch": True}, True),
        (numeric, 23, {"expected": 24, "abs_tol": 1}, True),
        (numeric, 22, {"expected": 24, "abs_tol": 1}, False),
        (numeric, "105", {"expected": 100, "rel_tol": 0.05}, True),
        (numeric, True, {"expected": 1}, False),
        (numeric, float("nan"), {"expected": 1, "abs_tol": 1e9}, False),
        (numeric, "abc", {"expected": 1}, False),
        (numeric, np.float32(2.5), {"expected": 2.5}, True),
        (in_range, 5, {"min": 1, "max": 10}, True),
        (in_range, 11, {"min": 1, "max": 10}, False),
        (in_range, 0, {"max": 0}, True),
        (in_range, float("nan"), {"min": 0}, False),
        (is_true, True, {}, True),
        (is_true, 1, {}, False),
        (is_false, False, {}, True),
        (is_false, None, {}, False),
        (one_of, "b", {"options": ["a", "b"]}, True),
        (one_of, " B ", {"options": ["a", "b"], "normalize": True}, True),
        (one_of, "c", {"options": ["a", "b"]}, False),
        (set_equal, ["b", "a", "a"], {"expected": ["a", "b"]}, True),
        (set_equal, ["A "], {"expected": ["a"], "normalize": True}, True),
        (set_equal, ["a", "c"], {"expected": ["a", "b"]}, False),
        (set_equal, "ab", {"expected": ["a", "b"]}, False),
        (list_equal, [1.0, 2.05, "x"], {"expected": [1, 2, "x"], "abs_tol": 0.1}, True),
        (list_equal, [2, 1], {"expected": [1, 2]}, False),
        (list_equal, [1], {"expected": [1, 2]}, False),
        (contains, "hello world", {"item": "world"}, True),
        (contains, [1, 2, 3], {"item": 2.0}, True),
        (contains, {"a": 1}, {"item": "b"}, False),
        (contains, None, {"item": "b"}, False),
        (ssim_at_least, 0.95, {"threshold": 0.9}, True),
        (ssim_at_least, 0.85, {"threshold": 0.9}, False),
        (unchanged, "ab" * 32, {"expected_sha256": "AB" * 32}, True),
        (unchanged, "ab" * 32, {"expected_sha256": "cd" * 32}, False),
    ],
)
def test_checks(fn, value, params: dict, expected: bool) -> None:
    passed, detail = fn(value, **params)
    assert passed is expected
    assert isinstance(detail, str) and detail


def test_check_details() -> None:
    assert numeric(23, expected=24, abs_tol=1)[1] == "got 23, expected 24 ± 1"
    assert "not a number" in numeric(True, expected=1)[1]
    assert set_equal(["a", "c"], expected=["a", "b"])[1] == "missing ['b']; unexpected ['c']"
    assert list_equal([1, 3], expected=[1, 2])[1] == "item 1: got 3, expected 2"
    assert "modified" in unchanged("00" * 32, expected_sha256="11" * 32)[1]


def test_table_equal() -> None:
    got = [{"Area": 10.0, "Label": "a"}, {"Area": 20.2, "Label": "b"}]
    exp = [{"Area": 10, "Label": "a"}, {"Area": 20, "Label": "b"}]
    assert table_equal(got, expected=exp, abs_tol=0.5)[0]
    assert not table_equal(got, expected=exp)[0]
    assert table_equal(got, expected=exp, rel_tol=0.02)[0]
    assert table_equal(got, expected=[{"Label": "a"}, {"Label": "b"}])[0]
    assert table_equal(got, expected=exp, columns=["Label"])[0]
    flipped = list(reversed(exp))
    ok, detail = table_equal(got, expected=flipped, abs_tol=0.5)
    assert not ok and detail.startswith("row 0: column 'Area'")
    assert table_equal(got, expected=flipped, abs_tol=0.5, row_order=False)[0]
    assert table_equal(got[:1], expected=exp)[1] == "got 1 rows, expected 2"
    assert not table_equal(got, expected=[{"Area": 10}, {"Area": 99}], row_order=False)[0]
    assert not table_equal(got, expected=[{"Perim": 1}, {"Perim": 2}])[0]
    # greedy matching would fail here; augmenting paths find the assignment
    loose = [{"v": 1.0}, {"v": 1.4}]
    assert table_equal(loose, expected=[{"v": 1.2}, {"v": 0.9}], abs_tol=0.25, row_order=False)[0]


def test_all_checks_covered() -> None:
    names = {
        "equals", "text", "regex", "numeric", "in_range", "is_true", "is_false", "one_of",
        "set_equal", "list_equal", "contains", "table_equal", "ssim_at_least", "unchanged",
    }
    assert names <= set(CHECKS)


# --- evaluator --------------------------------------------------------------------------------


def crit(name: str, fn: str, op: str, weight: float = 1, gate: bool = False, **kw) -> dict:
    getter = {"fn": fn, **kw.get("g", {})}
    check = {"op": op, **kw.get("c", {})}
    return {"name": name, "weight": weight, "gate": gate, "getter": getter, "check": check}


SPEC = [
    crit("exists", "file_exists", "is_true", gate=True, g={"path": "results.csv"}),
    crit("count", "table_rows", "numeric", weight=2, g={"path": "results.csv"},
         c={"expected": 4, "abs_tol": 0}),
    crit("area", "table_column", "numeric", weight=1,
         g={"path": "results.csv", "column": "Area", "agg": "sum"}, c={"expected": 368}),
    crit("status", "agent_status", "equals", c={"expected": "done"}),
]


def test_evaluate_partial_score(state: FinalState) -> None:
    result = evaluate(parse_criteria(SPEC), state)
    assert isinstance(result, EvaluationResult)
    assert result.score == pytest.approx(3 / 5)
    assert result.success is False
    by_name = {c.name: c for c in result.criteria}
    assert by_name["count"].passed is False
    assert by_name["count"].detail == "got 3, expected 4"
    assert by_name["count"].value == 3
    assert by_name["area"].passed is True
    d = result.to_dict()
    assert set(d) == {"score", "success", "criteria"}
    assert set(d["criteria"][0]) == {"name", "weight", "passed", "detail", "value"}
    json.dumps(d, allow_nan=False)


def test_evaluate_success_and_empty(state: FinalState) -> None:
    ok = evaluate(parse_criteria([SPEC[0], SPEC[2], SPEC[3]]), state)
    assert ok.score == 1.0 and ok.success
    empty = evaluate([], state)
    assert empty.score == 0.0 and empty.success is False and empty.criteria == []


def test_gate_skips_rest(state: FinalState) -> None:
    spec = [crit("exists", "file_exists", "is_true", gate=True, g={"path": "missing.csv"})]
    spec += SPEC[1:]
    result = evaluate(parse_criteria(spec), state)
    assert result.score == 0.0
    assert [c.passed for c in result.criteria] == [False, False, False, False]
    assert result.criteria[1].detail == "skipped: gate 'exists' failed"
    assert result.criteria[3].detail == "skipped: gate 'exists' failed"


def test_gate_only_affects_later(state: FinalState) -> None:
    spec = [
        crit("status", "agent_status", "equals", c={"expected": "done"}),
        crit("g", "file_exists", "is_true", gate=True, g={"path": "missing.csv"}),
        crit("after", "agent_status", "equals", c={"expected": "done"}),
    ]
    result = evaluate(parse_criteria(spec), state)
    assert [c.passed for c in result.criteria] == [True, False, False]
    assert result.score == pytest.approx(1 / 3)


def test_errors_become_failed_criteria(state: FinalState, tmp_path: Path, work: Path) -> None:
    (work / "escape.txt").symlink_to(write(tmp_path / "outside.txt", "x"))
    spec = [
        crit("up", "file_text", "text", g={"path": "../x"}, c={"expected": "x"}),
        crit("abs", "file_text", "text", g={"path": "/etc/passwd"}, c={"expected": "x"}),
        crit("link", "file_text", "text", g={"path": "escape.txt"}, c={"expected": "x"}),
        crit("ragged", "table_rows", "numeric", g={"path": "ragged.csv"}, c={"expected": 2}),
        crit("junk", "table_rows", "numeric", g={"path": "junk.csv"}, c={"expected": 2}),
        crit("empty", "table_columns", "contains", g={"path": "empty.csv"}, c={"item": "A"}),
        crit("img", "image_info", "contains", g={"path": "broken.tif"}, c={"item": "width"}),
        crit("app", "app_state", "equals", g={"key": "windows.0"}, c={"expected": 1}),
    ]
    result = evaluate(parse_criteria(spec), state)
    details = {c.name: c.detail for c in result.criteria}
    assert not any(c.passed for c in result.criteria)
    assert details["up"] == "../x: path escapes the working directory"
    assert details["abs"].startswith("/etc/passwd: absolute paths are not allowed")
    assert "outside the working directory" in details["link"]
    assert details["ragged"] == "ragged.csv: line 3 has 2 fields, header has 3"
    assert "binary data" in details["junk"]
    assert details["empty"] == "empty.csv: empty file"
    assert "cannot read image" in details["img"]
    assert "keys: images, n" in details["app"]


def test_crashing_getter_and_check(state: FinalState) -> None:
    GETTERS["_boom"] = lambda state: 1 / 0
    try:
        result = evaluate(
            [
                Criterion("boom", "_boom", {}, "is_true", {}),
                Criterion("bad check", "agent_status", {}, "numeric", {"expected": "x"}),
                Criterion("unknown", "no_such_getter", {}, "is_true", {}),
            ],
            state,
        )
    finally:
        del GETTERS["_boom"]
    details = [c.detail for c in result.criteria]
    assert details[0].startswith("getter '_boom' failed: ZeroDivisionError")
    assert details[1].startswith("check 'numeric' failed: ValueError")
    assert details[2] == "unknown getter 'no_such_getter'"


def test_value_is_jsonable_and_truncated(state: FinalState, work: Path) -> None:
    write(work / "long.txt", "x" * 5000)
    spec = [
        crit("long", "file_text", "contains", g={"path": "long.txt"}, c={"item": "y"}),
        crit("arr", "image_array", "equals", g={"path": "gray8.tif"}, c={"expected": 0}),
        crit("nan", "table_cell", "numeric", g={"path": "results.csv", "row": 1, "column": "Mean"},
             c={"expected": 1}),
    ]
    result = evaluate(parse_criteria(spec), state)
    values = [c.value for c in result.criteria]
    assert values[0].startswith("xxx") and values[0].endswith("(5000 chars)")
    assert len(values[0]) < 300
    assert values[1] == "array(shape=[48, 64], dtype=uint8)"
    assert values[2] == "NaN"
    assert result.criteria[2].detail == "got NaN, expected 1"
    json.dumps(result.to_dict(), allow_nan=False)


def test_determinism(state: FinalState, work: Path) -> None:
    spec = SPEC + [
        crit("ssim", "image_ssim", "ssim_at_least",
             g={"path": "gray16.tif", "reference_path": str(work / "gray8.tif")},
             c={"threshold": 0.9}),
        crit("mean", "image_stat", "numeric", g={"path": "float32.tif", "stat": "mean"},
             c={"expected": 0.5, "abs_tol": 0.1}),
        crit("bad", "table_rows", "numeric", g={"path": "ragged.csv"}, c={"expected": 1}),
    ]
    criteria = parse_criteria(spec)
    first = json.dumps(evaluate(criteria, state).to_dict(), sort_keys=True)
    for _ in range(20):
        assert json.dumps(evaluate(criteria, state).to_dict(), sort_keys=True) == first


def test_infeasible_task(work: Path) -> None:
    spec = parse_criteria([crit("refused", "agent_status", "equals", c={"expected": "fail"})])
    assert evaluate(spec, FinalState(work_dir=work, agent_status="fail")).success
    assert not evaluate(spec, FinalState(work_dir=work, agent_status="done")).success


# --- spec errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mutate", "field", "fragment"),
    [
        (lambda d: d["check"].update(op="numerik"), "evaluator.criteria[2].check.op",
         "unknown check 'numerik' (known: "),
        (lambda d: d["getter"].update(fn="table_rowz"), "evaluator.criteria[2].getter.fn",
         "unknown getter 'table_rowz'"),
        (lambda d: d.update(weight=-1), "evaluator.criteria[2].weight", ">= 0"),
        (lambda d: d.update(weight="2"), "evaluator.criteria[2].weight", "must be a number"),
        (lambda d: d.pop("name"), "evaluator.criteria[2].name", "missing"),
        (lambda d: d.update(wieght=2), "evaluator.criteria[2].wieght", "unknown field"),
        (lambda d: d.update(gate="yes"), "evaluator.criteria[2].gate", "true or false"),
        (lambda d: d.update(getter=[1]), "evaluator.criteria[2].getter", "must be an object"),
        (lambda d: d["getter"].update(pth="x"), "evaluator.criteria[2].getter.pth",
         "unknown parameter 'pth' for getter 'table_column' (accepted: path, column, agg)"),
        (lambda d: d["getter"].pop("column"), "evaluator.criteria[2].getter",
         "missing parameter 'column'"),
        (lambda d: d["check"].update(abs_tol=-1), "evaluator.criteria[2].check.abs_tol",
         "must be >= 0"),
        (lambda d: d["check"].update(expected="many"), "evaluator.criteria[2].check.expected",
         "must be a number"),
        (lambda d: d.update(check={"op": "regex", "pattern": "("}),
         "evaluator.criteria[2].check.pattern", "invalid regular expression"),
        (lambda d: d.update(check={"op": "in_range"}), "evaluator.criteria[2].check.min",
         "give min, max or both"),
        (lambda d: d.update(check={"op": "unchanged", "expected_sha256": "abc"}),
         "evaluator.criteria[2].check.expected_sha256", "64 hex digits"),
    ],
)
def test_spec_errors(mutate, field: str, fragment: str) -> None:
    spec = json.loads(json.dumps(SPEC))
    mutate(spec[2])
    with pytest.raises(SpecError) as info:
        parse_criteria(spec)
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: ")
    assert fragment in str(info.value)


def test_spec_misc() -> None:
    with pytest.raises(SpecError, match="duplicate criterion name 'count'"):
        parse_criteria([SPEC[1], SPEC[1]])
    with pytest.raises(SpecError, match="evaluator.criteria: must be a list"):
        parse_criteria({"a": 1})
    c = Criterion.from_dict(
        {"name": "count", "weight": 2, "gate": False,
         "getter": {"fn": "table_rows", "path": "results.csv"},
         "check": {"op": "numeric", "expected": 24, "abs_tol": 1}}
    )
    assert c == Criterion("count", "table_rows", {"path": "results.csv"}, "numeric",
                          {"expected": 24, "abs_tol": 1}, 2.0, False)
    assert Criterion.from_dict(c.to_dict()) == c
    short = Criterion.from_dict({"name": "s", "getter": "agent_status", "check": "is_true"})
    assert (short.getter, short.check, short.weight) == ("agent_status", "is_true", 1.0)


def test_evaluate_accepts_dicts(state: FinalState) -> None:
    assert evaluate(SPEC[:1], state).success
    with pytest.raises(SpecError, match=r"criteria\[0\].check.op"):
        evaluate([crit("x", "agent_status", "nope")], state)


def test_a_broken_requirement_halves_the_score_and_a_gate_zeroes_it(state: FinalState) -> None:
    """Weighted work all done but a weight-0 requirement broken ("nothing else changed"):
    the score must not be 1.0 (it was, with success False), and each one halves it."""
    done = crit("work", "agent_status", "equals", c={"expected": "done"})
    broken = crit("nothing else", "agent_status", "equals", weight=0, c={"expected": "fail"})
    kept = crit("kept", "agent_status", "equals", weight=0, c={"expected": "done"})
    one = evaluate(parse_criteria([done, broken, kept]), state)
    assert one.score == 0.5 and not one.success
    two = evaluate(parse_criteria([done, broken, {**broken, "name": "other"}]), state)
    assert two.score == 0.25
    assert evaluate(parse_criteria([done, kept]), state).score == 1.0
    gate = {**broken, "name": "gate", "gate": True}
    assert evaluate(parse_criteria([gate, done]), state).score == 0.0
    # a requirement skipped behind a failed gate is not counted as broken (a gate only stops
    # what follows it, so the work scored before it stands)
    assert evaluate(parse_criteria([done, gate, broken]), state).score == 1.0


def test_zero_weights(state: FinalState) -> None:
    spec = [crit("s", "agent_status", "equals", weight=0, c={"expected": "done"})]
    assert evaluate(parse_criteria(spec), state).score == 1.0
    spec = [crit("s", "agent_status", "equals", weight=0, c={"expected": "fail"})]
    assert evaluate(parse_criteria(spec), state).score == 0.0


# --- templating -------------------------------------------------------------------------------


def test_resolve() -> None:
    ctx = {"n": 24, "gold": {"area": 12.5, "rows": [1, 2]}, "name": "blobs"}
    obj = {
        "instruction": "Count the {name} and save {n} rows (}}{{ literal)",
        "criteria": [{"check": {"op": "numeric", "expected": "$gold.area"}}],
        "rows": "$gold.rows",
        "fmt": "{gold.area:.1f} px",
        "price": "$$5",
        "plain": "a $ b",
        "num": 3,
    }
    out = resolve(obj, ctx)
    assert out["instruction"] == "Count the blobs and save 24 rows (}{ literal)"
    assert out["criteria"][0]["check"]["expected"] == 12.5
    assert out["rows"] == [1, 2]
    assert out["fmt"] == "12.5 px"
    assert out["price"] == "$5"
    assert out["plain"] == "a $ b"
    assert out["num"] == 3
    assert obj["rows"] == "$gold.rows"  # input not mutated


@pytest.mark.parametrize(
    ("obj", "field", "fragment"),
    [
        ({"a": ["x", "{missing}"]}, "a[1]", "unknown template variable 'missing' (known: n"),
        ({"a": "$nope"}, "a", "unknown template variable 'nope'"),
        ({"a": "$gold.x"}, "a", "key 'x' not found"),
        ({"a": "{}"}, "a", "is not a context name"),
        ({"a": "{n.__class__}"}, "a", "cannot look up '__class__'"),
        ({"a": "oops {"}, "a", "bad placeholder"),
    ],
)
def test_resolve_errors(obj: dict, field: str, fragment: str) -> None:
    with pytest.raises(SpecError) as info:
        resolve(obj, {"n": 1, "gold": {"area": 2}})
    assert info.value.field == field
    assert fragment in str(info.value)


# --- save / load ------------------------------------------------------------------------------


def test_save_load_roundtrip(state: FinalState, work: Path, tmp_path: Path) -> None:
    (work / "abs_link.txt").symlink_to(work / "notes.txt")
    (work / "rel_link.txt").symlink_to("notes.txt")
    criteria = parse_criteria(SPEC + [
        crit("app", "app_state", "equals", g={"key": "images.-1.title"}, c={"expected": "mask"}),
        crit("link", "file_text", "regex", g={"path": "abs_link.txt"}, c={"pattern": "count"}),
        crit("rel", "file_text", "regex", g={"path": "rel_link.txt"}, c={"pattern": "count"}),
    ])
    before = evaluate(criteria, state).to_dict()
    saved = state.save(tmp_path / "saved")
    assert {p.name for p in saved.iterdir()} == {
        "work", "app_state.json", "screenshot.png", "meta.json"
    }
    loaded = FinalState.load(saved)
    assert loaded.work_dir == saved / "work"
    assert loaded.app_state == state.app_state
    assert loaded.app_state_error is None
    assert loaded.terminal == "ok\n" and loaded.agent_status == "done"
    assert loaded.screenshot is not None
    assert np.array_equal(loaded.screenshot, state.screenshot)
    assert (saved / "work" / "sub" / "inner.txt").read_text() == "inside"
    after = evaluate(criteria, loaded).to_dict()
    assert after == before
    assert after["criteria"][-2]["passed"] and after["criteria"][-1]["passed"]


def test_save_without_app_state(work: Path, tmp_path: Path) -> None:
    st = FinalState(work_dir=work, app_state=None, app_state_error="no channel",
                    agent_status="truncated")
    out = st.save(tmp_path / "s")
    loaded = FinalState.load(out)
    assert loaded.app_state is None and loaded.app_state_error == "no channel"
    assert loaded.screenshot is None and loaded.agent_status == "truncated"
    with pytest.raises(ValueError, match="inside its own work_dir"):
        st.save(work / "inner")

