"""``bench --all`` on the fake provider (fixture tool): the JSON/CSV/Markdown shape, tools with
a missing program skipped and listed, a failing tool recorded while the run goes on, and a
rerun resuming (measured tools skipped unless forced, failed ones tried again)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

import sciagent_gym
from sciagent_gym import tools
from sciagent_gym.cli.main import build_parser
from sciagent_gym.runs import bench_all
from sciagent_gym.runs.bench import run_bench
from sciagent_gym.tools.discovery import add_tools_root, remove_tools_root

FIXTURE_TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "tools"
ROOT = Path(__file__).resolve().parents[2]
# No sleeps in the baseline and no spare sandboxes (the fake provider keeps none).
FAKE = {"make_kwargs": {"provider": "fake", "screen_size": (160, 100)}, "reset_sleep": 0.0,
        "step_sleep": 0.0, "pool_size": 1, "pool_workers": 1}


@pytest.fixture(scope="module", autouse=True)
def fixture_tools():
    add_tools_root(FIXTURE_TOOLS)
    sciagent_gym._register_all()  # SciGUI-FakeTool-v0 for gym.make
    yield
    remove_tools_root(FIXTURE_TOOLS)


@pytest.fixture(scope="module")
def fake_result() -> dict:
    """One real run_bench of the fixture tool on the fake provider."""
    return run_bench("SciGUI-FakeTool-v0", episodes=2, baseline_episodes=1, vector_sizes=(),
                     **FAKE)


@pytest.fixture
def three_tools(monkeypatch):
    """faketool, a copy of it under another name, and a tool whose program is missing."""
    real = tools.discover()
    fake = real["faketool"]
    absent = SimpleNamespace(name="nope", missing=lambda: True)
    found = {"faketool": fake, "faketwo": fake,
             "missingtool": SimpleNamespace(env_id="SciGUI-Missing-v0", requires=[absent])}
    monkeypatch.setattr(tools, "discover", lambda: found)
    return found


class Measure:
    """A stand-in for run_bench returning ``result``; with ``fail_first`` its first call
    raises as a program that does not start."""

    def __init__(self, result: dict, fail_first: bool = False) -> None:
        self.result, self.fail_first, self.calls = result, fail_first, []

    def __call__(self, env_id: str, **kwargs) -> dict:
        self.calls.append(env_id)
        if self.fail_first and len(self.calls) == 1:
            raise RuntimeError("the program did not start")
        return self.result


def test_run_bench_splits_idle_and_reacting_steps(fake_result):
    assert fake_result["vector_steps_per_s"] == {}
    idle, react = fake_result["step_idle_s"], fake_result["step_reacting_s"]
    n = sum(d["n"] for d in (idle, react) if d)
    assert n == fake_result["step_overhead_s"]["n"] > 0  # every scripted step, one kind or other
    assert fake_result["peak_memory_mb_no_pool"] >= 0


def test_real_fake_run_writes_json_csv_md_png(tmp_path, three_tools):
    data = bench_all.run_all(tmp_path, ["faketool", "missingtool"], episodes=2,
                             baseline_episodes=1, show_progress=False, command="cmd", **FAKE)
    row = data["rows"]["faketool"]
    assert row["status"] == "ok" and row["error"] is None
    for key in ("reset_warm_p50", "reset_cold_p95", "step_fast_p50", "eph_ratio", "load_end"):
        assert isinstance(row[key], float)
    assert data["missing"] == {"missingtool": "missing nope"}
    assert "missingtool" not in data["rows"]
    saved = json.loads((tmp_path / "bench-all.json").read_text())
    assert saved["rows"]["faketool"]["bench"]["env"] == "SciGUI-FakeTool-v0"
    assert saved["command"] == "cmd"
    table = list(csv.reader(io.StringIO((tmp_path / "bench-all.csv").read_text())))
    assert table[0] == [h for _, h in bench_all.COLUMNS]
    assert [r[0] for r in table[1:]] == ["faketool", "missingtool"]
    assert table[2][2] == "not installed"
    md = (tmp_path / "bench-all.md").read_text().splitlines()
    assert md[0].startswith("| tool | reset warm p50 / p95 |")
    assert md[2].startswith("| faketool |") and md[2].count("|") == md[0].count("|")
    assert md[-1] == "Not installed (skipped): missingtool (missing nope)."
    assert (tmp_path / "bench-all.png").stat().st_size > 5000


def test_failure_recorded_run_goes_on_and_resume(tmp_path, three_tools, fake_result):
    failing = Measure(fake_result, fail_first=True)
    data = bench_all.run_all(tmp_path, None, show_progress=False, measure=failing, command="full")
    assert failing.calls == ["SciGUI-FakeTool-v0"] * 2  # both installed tools, missing skipped
    rows = data["rows"]
    assert rows["faketool"]["status"] == "error"
    assert rows["faketool"]["error"] == "RuntimeError: the program did not start"
    assert rows["faketwo"]["status"] == "ok"
    md = bench_all.markdown(data)
    assert "Failed: faketool (RuntimeError: the program did not start)." in md
    # A rerun measures only the failed tool; --force measures all again.
    again = Measure(fake_result)
    data = bench_all.run_all(tmp_path, None, show_progress=False, measure=again)
    assert len(again.calls) == 1 and data["rows"]["faketool"]["status"] == "ok"
    done = Measure(fake_result)
    bench_all.run_all(tmp_path, None, show_progress=False, measure=done)
    assert done.calls == []
    forced = Measure(fake_result)
    data = bench_all.run_all(tmp_path, ["faketwo"], show_progress=False, measure=forced,
                             force=True, command="partial")
    assert len(forced.calls) == 1
    # Rerunning some tools keeps the others' missing entries and the full run's command.
    assert data["missing"] == {"missingtool": "missing nope"} and data["command"] == "full"
    assert set(json.loads((tmp_path / "bench-all.json").read_text())["rows"]) == {
        "faketool", "faketwo"}


def _settle_result(path, tool, frame, damage, steps=30):
    summary = {m: {"steps": steps, "half_painted": n} for m, n in (("frame", frame),
                                                                   ("damage", damage))}
    path.write_text(json.dumps({"tool": tool, "modes": {m: {"summary": summary[m]}
                                                          for m in summary}}))


def test_half_painted_column_from_the_settle_bench(tmp_path, three_tools):
    data = bench_all.run_all(tmp_path, ["faketool", "faketwo"], episodes=2, baseline_episodes=1,
                             show_progress=False, **FAKE)
    _settle_result(tmp_path / "settle-damage-faketool.json", "faketool", 3, 1)
    # a variant run of the same tool, and a file of another shape, are not the tool's row
    _settle_result(tmp_path / "settle-damage-nobusy-faketool.json", "faketool", 9, 9)
    (tmp_path / "settle-damage.json").write_text("[1, 2]")
    half = bench_all.half_painted(tmp_path)
    assert half == {"faketool": {"frame": 3, "damage": 1, "steps": 30}}
    md = bench_all.markdown(data, half).splitlines()
    head = [c.strip() for c in md[0].strip("|").split("|")]
    col = head.index("half-painted frame / damage")
    cells = {line.split("|")[1].strip(): line.strip("|").split("|")[col].strip()
             for line in md[2:4]}
    assert cells == {"faketool": "3 / 1 of 30", "faketwo": "–"}
    assert "Half-painted" in bench_all.readme_section(data, half)
    assert "half-painted" not in bench_all.readme_section(data, {})


def test_unknown_tool_is_an_error(three_tools):
    with pytest.raises(ValueError, match="unknown tool"):
        bench_all.tool_status(["nosuchtool"])


def test_cli_parses_all_and_records_the_command():
    args = build_parser().parse_args(["bench", "--all", "--tools", "imagej,praat",
                                      "--episodes", "5", "--baseline-episodes", "1",
                                      "--out", "benchmarks/results"])
    assert args.all and args.tools == "imagej,praat" and not args.force
    assert bench_all._command(args) == ("sciagent-gym bench --all --tools imagej,praat "
                                        "--episodes 5 --baseline-episodes 1 "
                                        "--out benchmarks/results")


def test_docs_speed_table_is_the_generated_one():
    """docs/speed.md shows bench-all.json as scripts/update_readme.py renders it."""
    results = ROOT / "benchmarks" / "results" / "bench-all.json"
    if not results.is_file():
        pytest.skip("no bench-all.json committed yet")
    marker = bench_all.README_MARKER
    page = (ROOT / "docs" / "speed.md").read_text()
    start = page.index(marker) + len(marker)
    section = page[start:page.index("<!-- end generated -->", start)]
    assert section.strip() == bench_all.readme_section(
        json.loads(results.read_text()), bench_all.half_painted(results.parent))
