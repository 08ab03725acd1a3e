"""Staged evaluators: flattening, validation, blocking, stage-local gates, stages reached."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciagent_gym.errors import TaskSpecError
from sciagent_gym.evaluation import FinalState, SpecError, evaluate, parse_criteria
from sciagent_gym.evaluation.stages import flatten_evaluator
from sciagent_gym.tasks.spec import parse_spec


def exists(name: str, path: str, **extra) -> dict:
    return {"name": name, "getter": {"fn": "file_exists", "path": path},
            "check": {"op": "is_true"}, **extra}


STAGED = {"stages": [
    {"name": "open", "criteria": [exists("opened", "a.txt")]},
    {"name": "measure", "blocks_from": ["open"],
     "criteria": [exists("measured", "b.txt", gate=True, weight=0), exists("value", "c.txt")]},
    {"name": "export", "blocks_from": "measure", "criteria": [exists("exported", "d.txt")]},
    {"name": "note", "criteria": [exists("noted", "e.txt")]},
]}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    return tmp_path


def score(work: Path, files: list[str]) -> dict:
    for f in files:
        (work / f).write_text("x")
    crits = parse_criteria(flatten_evaluator(STAGED))
    return evaluate(crits, FinalState(work_dir=work, agent_status="done")).to_dict()


def test_all_stages_pass(work: Path) -> None:
    res = score(work, ["a.txt", "b.txt", "c.txt", "d.txt", "e.txt"])
    assert res["score"] == 1.0 and res["success"]
    assert [s["passed"] for s in res["stages"]] == [True, True, True, True]
    assert res["stages_reached"] == 4


def test_a_failed_stage_blocks_its_dependants_but_not_independent_stages(work: Path) -> None:
    # measure's and export's outputs exist, but the file was never opened: they prove nothing
    res = score(work, ["b.txt", "c.txt", "d.txt", "e.txt"])
    by_name = {c["name"]: c for c in res["criteria"]}
    assert by_name["value"]["detail"] == "blocked: stage 'open' did not pass"
    assert by_name["exported"]["detail"] == "blocked: stage 'measure' did not pass"
    assert by_name["noted"]["passed"]  # "note" depends on nothing
    stages = {s["name"]: s for s in res["stages"]}
    assert stages["measure"]["blocked_by"] == "open"
    assert stages["export"]["blocked_by"] == "measure"
    assert res["stages_reached"] == 0
    assert res["score"] == pytest.approx(1 / 4)  # noted (1) of opened, value, exported, noted


def test_partial_credit_counts_stages_reached(work: Path) -> None:
    res = score(work, ["a.txt", "b.txt", "c.txt"])
    assert res["stages_reached"] == 2
    assert res["score"] == pytest.approx(2 / 4)
    assert not res["success"]


def test_a_gate_skips_only_the_rest_of_its_stage(work: Path) -> None:
    res = score(work, ["a.txt", "c.txt", "e.txt"])
    by_name = {c["name"]: c for c in res["criteria"]}
    assert by_name["value"]["detail"] == "skipped: gate 'measured' failed"
    assert by_name["noted"]["passed"]  # a later stage is not gated by another stage's gate
    assert by_name["exported"]["detail"] == "blocked: stage 'measure' did not pass"


def test_unstaged_evaluators_keep_their_global_gates(work: Path) -> None:
    crits = parse_criteria([exists("g", "a.txt", gate=True), exists("later", "e.txt")])
    (work / "e.txt").write_text("x")
    res = evaluate(crits, FinalState(work_dir=work, agent_status="done"))
    assert res.criteria[1].detail == "skipped: gate 'g' failed"
    assert res.stages == [] and "stages" not in res.to_dict()


@pytest.mark.parametrize("bad, message", [
    ({"criteria": [exists("a", "a")], "stages": []}, "exactly one of"),
    ({"stages": [{"name": "only", "criteria": [exists("a", "a")]}]}, "at least two"),
    ({"stages": [{"name": "x", "criteria": [exists("a", "a")]},
                 {"name": "x", "criteria": [exists("b", "b")]}]}, "duplicate stage"),
    ({"stages": [{"name": "x", "blocks_from": ["y"], "criteria": [exists("a", "a")]},
                 {"name": "y", "criteria": [exists("b", "b")]}]}, "not an earlier stage"),
    ({"stages": [{"name": "x", "criteria": []},
                 {"name": "y", "criteria": [exists("b", "b")]}]}, "non-empty"),
    ({"stages": [{"name": "x", "criteria": [exists("a", "a", stage="z")]},
                 {"name": "y", "criteria": [exists("b", "b")]}]}, "belong to the stage"),
    ({"stages": [{"name": "x", "weight": 2, "criteria": [exists("a", "a")]},
                 {"name": "y", "criteria": [exists("b", "b")]}]}, "unknown field"),
])
def test_malformed_stage_lists_are_spec_errors(bad: dict, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        flatten_evaluator(bad)


def test_a_criterion_cannot_wait_for_a_later_stage() -> None:
    flat = [exists("a", "a", stage="x", blocks_from=["y"]), exists("b", "b", stage="y")]
    with pytest.raises(SpecError, match="not an earlier stage"):
        parse_criteria(flat)


def _spec(evaluator: dict) -> dict:
    return {"id": "t/s", "tool": "t", "title": "T", "instruction": "Do it.",
            "difficulty": "hard", "evaluator": evaluator, "oracle": ["DONE"],
            "negatives": {"nothing": ["DONE"]}}


def test_task_specs_accept_stages_and_name_criteria_uniquely_across_them() -> None:
    spec = parse_spec(_spec(STAGED))
    assert [c["stage"] for c in spec.evaluator] == ["open", "measure", "measure", "export",
                                                    "note"]
    dup = {"stages": [{"name": "x", "criteria": [exists("a", "a")]},
                      {"name": "y", "criteria": [exists("a", "b")]}]}
    with pytest.raises(TaskSpecError, match="duplicate criterion name"):
        parse_spec(_spec(dup))
    with pytest.raises(TaskSpecError, match="blocks_from"):
        parse_spec(_spec({"stages": [{"name": "x", "blocks_from": "nope",
                                      "criteria": [exists("a", "a")]},
                                     {"name": "y", "criteria": [exists("b", "b")]}]}))
