"""Task spec loading: errors name the file and the field; variants are seeded."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from sciagent_gym.tasks.spec import TaskSpecError, load_spec, parse_spec
from sciagent_gym.tasks.task import Task, sample_params

REPO = Path(__file__).resolve().parents[2]
GOOD = {
    "id": "imagej/demo", "tool": "imagej", "title": "Demo", "instruction": "Do {what} in {work}",
    "difficulty": "easy", "params": {"what": {"choice": ["a", "b", "c"]}, "n": {"int": [1, 9]}},
    "evaluator": {"criteria": [{"name": "saved", "getter": {"fn": "file_exists", "path": "x"},
                                "check": {"op": "is_true"}}]},
    "oracle": [{"run": "touch x"}, "DONE"], "negatives": {"nothing": ["DONE"]},
}


def _broken(**changes):
    spec = copy.deepcopy(GOOD)
    for key, value in changes.items():
        if value is None:
            spec.pop(key)
        else:
            spec[key] = value
    return spec


@pytest.mark.parametrize(("changes", "field"), [
    ({"id": None}, "id"),
    ({"difficulty": "trivial"}, "difficulty"),
    ({"surprise": 1}, "surprise"),
    ({"id": "pymol/demo"}, "id"),
    ({"max_steps": 0}, "max_steps"),
    ({"params": {"n": {"int": [5, 1]}}}, "params.n.int"),
    ({"oracle": [{"teleport": 1}]}, "oracle[0]"),
    ({"negatives": {}}, "negatives"),
    ({"evaluator": {"criteria": []}}, "evaluator.criteria"),
    ({"evaluator": {"criteria": [{"name": "c", "getter": {"fn": "nope"},
                                  "check": {"op": "is_true"}}]}}, "evaluator.criteria[0]"),
    ({"evaluator": {"criteria": [{"name": "c", "getter": {"fn": "file_exists", "paht": "x"},
                                  "check": {"op": "is_true"}}]}}, "evaluator.criteria[0]"),
    ({"toggles": [{"name": "t", "initial": "yes", "target": True}]}, "toggles[0].initial"),
    ({"toggles": [{"name": "t", "initial": True}]}, "toggles[0]"),
    ({"toggles": [{"name": "t", "initial": True, "target": False, "box": [1, 2]}]},
     "toggles[0].box"),
    ({"oracle": [{"toggle": "nope", "then": ["DONE"]}]}, "oracle[0]"),
    ({"setup": {"script": ["grid yes"]}}, "setup.script"),
])
def test_errors_name_the_field(changes, field):
    with pytest.raises(TaskSpecError) as info:
        parse_spec(_broken(**changes), "specs/demo.json")
    assert info.value.field == field
    assert str(info.value).startswith("specs/demo.json: ")


def test_invalid_json_and_name_mismatch(tmp_path):
    bad = tmp_path / "demo.json"
    bad.write_text('{"id": ')
    with pytest.raises(TaskSpecError, match="demo.json: line 1: invalid JSON"):
        load_spec(bad)
    other = tmp_path / "other.json"
    other.write_text(json.dumps(GOOD))
    with pytest.raises(TaskSpecError, match="does not match the file name"):
        load_spec(other)


def test_params_are_seeded_and_cover_the_choices():
    spec = parse_spec(GOOD)
    assert sample_params(spec, 5) == sample_params(spec, 5)
    seen = {sample_params(spec, s)["what"] for s in range(40)}
    assert seen == {"a", "b", "c"}
    assert all(1 <= sample_params(spec, s)["n"] <= 9 for s in range(40))


def test_instruction_never_sees_gold():
    spec = parse_spec(_broken(instruction="answer is {gold}"))
    with pytest.raises(Exception, match="gold"):
        Task(spec, 0, {}, {"work": "/w", "home": "/h", "tmp": "/t"})


TOGGLE = {**GOOD, "instruction": "Turn the grid {word}",
          "params": {"start": {"choice": [True, False]}, "want": {"choice": [True, False]},
                     "word": "on"},
          "toggles": [{"name": "grid", "initial": "$start", "target": "$want",
                       "box": [10, 20, 30, 40]}],
          "setup": {"script": "grid {start}"},
          "oracle": [{"toggle": "grid", "then": ["pyautogui.click(20, 30)"]}, "DONE"]}


def test_toggle_tasks_know_positive_and_negative_variants():
    spec = parse_spec(copy.deepcopy(TOGGLE), "specs/demo.json")
    seen = set()
    for seed in range(40):
        task = Task(spec, seed, {}, {"work": "/w", "home": "/h", "tmp": "/t"})
        [toggle] = task.toggles
        assert (toggle.initial, toggle.target) == (task.params["start"], task.params["want"])
        assert toggle.box == (10, 20, 30, 40) and toggle.positive == (toggle.initial
                                                                      != toggle.target)
        assert task.noop_correct == (not toggle.positive)
        assert task.setup_script == f"grid {task.params['start']}"
        clicks = ["pyautogui.click(20, 30)"] if toggle.positive else []
        assert task.steps() == [*clicks, "DONE"]
        seen.add(toggle.positive)
    assert seen == {True, False}


TWO_TOGGLES = {
    **TOGGLE, "instruction": "Grid {g}, colour bar {c}",
    "params": {"g0": {"choice": [True, False]}, "g": {"choice": [True, False]},
               "c0": {"choice": [True, False]}, "c": {"choice": [True, False]}},
    "toggles": [{"name": "grid", "initial": "$g0", "target": "$g", "credit": "grid {g}"},
                {"name": "colorbar", "initial": "$c0", "target": "$c",
                 "credit": "colour bar {c}"}],
    "evaluator": {"criteria": [
        {"name": "grid {g}", "getter": {"fn": "app_state", "key": "grid"},
         "check": {"op": "equals", "expected": "$g"}},
        {"name": "colour bar {c}", "getter": {"fn": "app_state", "key": "colorbar"},
         "check": {"op": "equals", "expected": "$c"}}]},
    "setup": {}, "oracle": ["DONE"]}


def test_toggles_that_start_right_earn_nothing_while_another_must_change(tmp_path):
    """The start state scores 0 unless doing nothing is the answer (then it scores 1.0)."""
    from sciagent_gym.evaluation import FinalState, evaluate

    spec = parse_spec(copy.deepcopy(TWO_TOGGLES), "specs/demo.json")
    kinds = set()
    for seed in range(60):
        task = Task(spec, seed, {}, {"work": "/w", "home": "/h", "tmp": "/t"})
        task.stage(tmp_path / str(seed))
        p = task.params
        start = FinalState(work_dir=tmp_path, app_state={"grid": p["g0"], "colorbar": p["c0"]})
        done = FinalState(work_dir=tmp_path, app_state={"grid": p["g"], "colorbar": p["c"]})
        criteria = task.criteria()
        changes = sum(t.positive for t in task.toggles)
        assert evaluate(criteria, start).score == (1.0 if changes == 0 else 0.0)
        assert evaluate(criteria, done).score == 1.0 and evaluate(criteria, done).success
        assert sum(c.weight for c in criteria) == (changes or 2)
        if changes == 1:  # flipping both toggles (the one that had to stay too) pays nothing
            flipped = {t.name: not t.initial for t in task.toggles}
            result = evaluate(criteria, FinalState(work_dir=tmp_path, app_state=flipped))
            assert result.score == 0.0 and not result.success
        kinds.add(changes)
    assert kinds == {0, 1, 2}
    broken = copy.deepcopy(TWO_TOGGLES)
    broken["toggles"][0]["credit"] = "no such criterion"
    task = Task(parse_spec(broken, "specs/demo.json"), 1, {}, {"work": "/w", "home": "/h",
                                                               "tmp": "/t"})
    task.stage(tmp_path / "broken")
    if any(t.positive for t in task.toggles):
        with pytest.raises(TaskSpecError, match="credit names 'no such criterion'"):
            task.criteria()


def test_toggle_refs_must_resolve_to_booleans():
    spec = parse_spec({**copy.deepcopy(TOGGLE), "toggles": [
        {"name": "grid", "initial": "$word", "target": "$want"}]}, "specs/demo.json")
    with pytest.raises(TaskSpecError, match="not true or false"):
        _ = Task(spec, 0, {}, {"work": "/w", "home": "/h", "tmp": "/t"}).toggles


def test_tasks_without_toggles_are_never_noop_correct():
    task = Task(parse_spec(copy.deepcopy(GOOD)), 0, {}, {"work": "/w", "home": "/h", "tmp": "/t"})
    assert task.toggles == [] and task.noop_correct is False and task.setup_script == ""


def test_check_params_given_as_references_are_validated_once_resolved(tmp_path):
    spec = {**copy.deepcopy(GOOD), "params": {"names": ["a", "b"], "what": "x"},
            "evaluator": {"criteria": [{"name": "names", "getter": {"fn": "file_exists",
                                                                    "path": "x"},
                                        "check": {"op": "set_equal", "expected": "$names"}}]}}
    task = Task(parse_spec(spec), 0, {}, {"work": "/w", "home": "/h", "tmp": "/t"})
    task.stage(tmp_path)
    assert task.criteria()[-1].check_params == {"expected": ["a", "b"]}
    spec["params"]["names"] = "not a list"
    task = Task(parse_spec(spec), 0, {}, {"work": "/w", "home": "/h", "tmp": "/t"})
    task.stage(tmp_path)
    with pytest.raises(Exception, match="expected"):
        task.criteria()
    literal = copy.deepcopy(spec)
    literal["evaluator"]["criteria"][0]["check"]["expected"] = "abc"
    with pytest.raises(TaskSpecError, match="expected"):
        parse_spec(literal)
