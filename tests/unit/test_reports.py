"""Episode metrics (Score, SR, Steps, Steps*, FTR, VOID, domain-macro) on hand-made results."""

from __future__ import annotations

import csv
import math

from sciagent_gym.runs.reports import (
    compare_runs,
    episode_metrics,
    format_comparison,
    format_table,
    plot,
    plot_comparison,
    run_label,
    write_comparison_csv,
    write_csv,
)


def _r(task, score, success, steps, terminated=True, truncated=False, **extra):
    return {"task_id": task, "score": score, "success": success, "steps": steps,
            "terminated": terminated, "truncated": truncated, **extra}


RESULTS = [
    _r("imagej/a", 1.0, True, 4),
    _r("imagej/a", 0.5, False, 10),                    # agent said DONE wrongly
    _r("imagej/a", 0.0, False, 50, False, True),       # budget exhausted
    _r("imagej/b", 0.25, False, 3),
]


def test_metrics_follow_the_definitions():
    m = episode_metrics(RESULTS)
    a = m["task"]["imagej/a"]
    assert a["episodes"] == 3
    assert math.isclose(a["score"], 0.5) and math.isclose(a["sr"], 1 / 3)
    assert math.isclose(a["steps"], 64 / 3) and a["steps_star"] == 4
    assert math.isclose(a["ftr"], 0.5)           # 1 of 2 agent-ended episodes failed
    assert math.isclose(a["void"], 1 / 3)
    b = m["task"]["imagej/b"]
    assert math.isnan(b["steps_star"])           # undefined without a success
    assert m["tool"]["imagej"]["episodes"] == 4
    assert set(m["domain"]) == {"microscopy"}
    assert math.isclose(m["domain_macro"]["score"], m["domain"]["microscopy"]["score"])


def test_table_csv_and_plot(tmp_path):
    m = episode_metrics(RESULTS)
    table = format_table(m)
    assert "task imagej/a" in table and "domain-macro average" in table and " - " in table
    write_csv(m, tmp_path / "r.csv")
    rows = list(csv.reader((tmp_path / "r.csv").open()))
    # header, 2 tasks, 1 tool, 1 domain, 1 modality ("unrecorded": results without it),
    # 1 scope and 1 interface ("unknown": the hand-made tasks are no real task), macro
    assert rows[0][:3] == ["level", "name", "episodes"] and \
        len(rows) == 1 + 2 + 1 + 1 + 1 + 1 + 1 + 1
    plot(m, tmp_path / "r.png")
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_end_reason_separates_agent_budget_and_crash():
    """A runner's DONE on the last allowed step is budget exhaustion, not the agent's
    decision; a crash is neither (results without ``end`` fall back to the flags)."""
    rows = [
        _r("praat/a", 0.0, False, 20, end="budget"),         # runner sent DONE at the budget
        _r("praat/a", 0.0, False, 5, False, True, end="crash"),
        _r("praat/a", 1.0, True, 4, end="agent"),
        _r("praat/a", 0.0, False, 3, end="agent"),
    ]
    a = episode_metrics(rows)["task"]["praat/a"]
    assert math.isclose(a["void"], 0.25) and math.isclose(a["crash"], 0.25)
    assert math.isclose(a["ftr"], 0.5)  # 1 of the 2 agent-ended episodes failed


def test_domain_macro_is_a_mean_of_domain_means():
    rows = [_r("imagej/a", 1.0, True, 1), _r("imagej/a", 1.0, True, 1),
            _r("imagej/a", 1.0, True, 1), _r("praat/a", 0.0, False, 1)]
    m = episode_metrics(rows)
    assert len(m["domain"]) == 2
    assert math.isclose(m["domain_macro"]["score"], 0.5)  # not the plain mean, 0.75


def test_modality_is_a_level_of_its_own():
    rows = [_r("imagej/a", 1.0, True, 1, modality="gui"),
            _r("imagej/b", 0.0, False, 1, modality="gui+cli")]
    m = episode_metrics(rows)
    assert m["modality"]["gui"]["score"] == 1.0 and m["modality"]["gui+cli"]["score"] == 0.0
    assert "modality gui+cli" in format_table(m)


def test_runs_are_compared_side_by_side_not_pooled(tmp_path):
    """An oracle run and a random run are two column groups (1.00 and 0.00), not one 0.50."""
    oracle = [_r("imagej/a", 1.0, True, 3, policy="oracle", modality="gui")] * 2
    random = [_r("imagej/a", 0.0, False, 9, policy="random", modality="gui")] * 2
    model = [_r("imagej/a", 0.5, False, 9, policy="vlm", agent={"model": "m-1"})]
    assert run_label("runs/x", oracle) == "oracle" and run_label("runs/y", model) == "m-1"
    assert run_label("runs/empty", [{}]) == "empty"
    compared = compare_runs({"oracle": oracle, "random": random})
    table = format_comparison(compared)
    row = next(line for line in table.splitlines() if line.startswith("task imagej/a"))
    assert row.split()[2:] == ["1.00", "100%", "0.00", "0%"]
    assert "0.50" not in table
    write_comparison_csv(compared, tmp_path / "c.csv")
    rows = list(csv.reader((tmp_path / "c.csv").open()))
    assert rows[0][:3] == ["run", "level", "name"] and {r[0] for r in rows[1:]} == \
        {"oracle", "random"}
    plot_comparison(compared, tmp_path / "c.png")
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_steps_star_against_the_gui_oracle_reference():
    """Opt is the GUI oracle's step count on the successful variants; */Opt the mean ratio.
    Recorded counts are used as they are; a run recorded without them gets them from the spec
    (ds9/toggle-grid: 1 step when the grid already is as asked, else 3)."""
    from sciagent_gym.tasks.task import Task
    from sciagent_gym.tools import load_tool_specs

    results = [_r("imagej/a", 1.0, True, 8, oracle_steps=4),
               _r("imagej/a", 1.0, True, 6, oracle_steps=6),
               _r("imagej/a", 0.0, False, 50, oracle_steps=4)]   # failures do not count
    a = episode_metrics(results)["task"]["imagej/a"]
    assert a["steps_star"] == 7 and a["steps_opt"] == 5
    assert math.isclose(a["step_ratio"], (8 / 4 + 6 / 6) / 2)
    spec = load_tool_specs("ds9")["ds9/toggle-grid"]
    paths = {"home": "~", "work": "~/work", "tmp": "/tmp"}
    counts = {v: Task(spec, v, {}, paths).oracle_steps for v in range(12)}
    assert set(counts.values()) == {1, 3}
    old = [_r("ds9/toggle-grid", 1.0, True, 5, variant=v) for v in counts]
    m = episode_metrics(old)["task"]["ds9/toggle-grid"]
    assert math.isclose(m["steps_opt"], sum(counts.values()) / len(counts))
    assert "*/Opt" in format_table(episode_metrics(results))
    no_ref = episode_metrics([_r("imagej/b", 1.0, True, 3)])["task"]["imagej/b"]
    assert math.isnan(no_ref["steps_opt"]) and math.isnan(no_ref["step_ratio"])


def test_cross_tool_tasks_are_reported_apart_as_diagnostics(monkeypatch):
    import types

    from sciagent_gym.runs import reports

    specs = {"imagej/a": types.SimpleNamespace(tags=["segmentation"], oracle_interface="menus"),
             "imagej/handoff": types.SimpleNamespace(tags=["cross-tool", "xrd"],
                                                     oracle_interface=None)}
    monkeypatch.setattr(reports, "load_tool_specs", lambda tool: specs)
    rows = [_r("imagej/a", 1.0, True, 4), _r("imagej/handoff", 0.0, False, 9),
            _r("nosuchtool/x", 0.5, False, 2)]
    m = episode_metrics(rows)
    assert m["scope"]["single-tool"]["score"] == 1.0
    assert m["scope"]["cross-tool"]["score"] == 0.0 and m["scope"]["cross-tool"]["episodes"] == 1
    assert m["scope"]["unknown"]["episodes"] == 1
    assert "scope cross-tool" in format_table(m)
    # and by the GUI oracle's interface
    assert m["interface"]["menus"]["episodes"] == 1 and m["interface"]["none"]["episodes"] == 1
    assert m["interface"]["unknown"]["episodes"] == 1 and "interface menus" in format_table(m)


def _crit(name, stage, passed):
    return {"name": name, "stage": stage, "passed": passed, "weight": 1.0}


def test_stages_column_is_how_far_staged_episodes_got():
    staged = [
        _r("imagej/long", 1.0, True, 40, criteria=[_crit("a", "open", True),
                                                   _crit("b", "measure", True),
                                                   _crit("c", "export", True)]),
        # the export passed but measuring did not: the workflow stopped at stage 1 of 3
        _r("imagej/long", 0.67, False, 30, criteria=[_crit("a", "open", True),
                                                     _crit("b", "measure", False),
                                                     _crit("c", "export", True)]),
        _r("imagej/short", 1.0, True, 3, criteria=[{"name": "x", "passed": True}]),
    ]
    m = episode_metrics(staged)
    assert math.isclose(m["task"]["imagej/long"]["stages"], (1 + 1 / 3) / 2)
    assert math.isnan(m["task"]["imagej/short"]["stages"])  # not staged: undefined
    assert math.isclose(m["tool"]["imagej"]["stages"], (1 + 1 / 3) / 2)  # only staged ones count
    assert "Stages" in format_table(m)
