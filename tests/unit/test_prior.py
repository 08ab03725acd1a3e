"""The prior audit (sciagent_gym.runs.prior) on the fixture tool's generator: a constant answer
that often passes, an answer the instruction decides, unbalanced choice letters and answers
behind a gate on program state are each found; a well-spread answer passes."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path

import pytest

from sciagent_gym.evaluation import Criterion
from sciagent_gym.runs.prior import (
    LIMIT,
    README_MARKER,
    audit_prior,
    audit_task,
    gold_answer,
    passes,
    readme_section,
    report_from_dict,
)
from sciagent_gym.tasks.spec import parse_spec
from sciagent_gym.tools import load_adapter
from sciagent_gym.tools.discovery import add_tools_root, remove_tools_root

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_TOOLS = ROOT / "tests" / "fixtures" / "tools"
SPECS = FIXTURE_TOOLS / "task_specs" / "faketool"


@pytest.fixture(scope="module", autouse=True)
def fixture_tools():
    add_tools_root(FIXTURE_TOOLS)
    yield
    remove_tools_root(FIXTURE_TOOLS)


@pytest.fixture(scope="module")
def generators():
    return load_adapter("faketool").generators


def spec_with(name: str, **changes) -> dict:
    data = copy.deepcopy(json.loads((SPECS / f"{name}.json").read_text()))
    data.update(changes)
    return data


def test_a_low_entropy_answer_is_caught_and_a_spread_one_passes():
    """count-lines' answer is 3..9: one of seven values, so a constant passes about 1 in 7;
    sum-numbers' is the sum of 3-6 numbers in 1..99. Only answer criteria are judged."""
    report = audit_prior("faketool", train=30, unseen=30)
    by = {(c.task_id, c.criterion): c for c in report.criteria}
    count = by["faketool/count-lines", "answer is the count"]
    assert count.unseen == 30 and count.train == 30
    assert count.share > LIMIT and count.over and not report.passed
    assert 3 <= float(count.best) <= 9
    total = by["faketool/sum-numbers", "answer is the sum"]
    assert total.share <= LIMIT and total.ok
    assert ("faketool/sum-numbers", "sum.txt holds the sum") not in by  # a file, not an answer
    assert ("faketool/sum-numbers", "saved in the program") not in by
    assert report.row()["over"] >= 1 and report.row()["worst"] == round(count.share, 3)


def test_an_answer_the_instruction_states_is_instruction_determined(generators):
    """The count is in the instruction: every group of variants sharing an instruction has one
    gold answer."""
    data = spec_with("count-lines", id="faketool/told-count",
                     instruction="numbers.txt in {work} holds {count} numbers. How many?")
    [prior] = audit_task(parse_spec(data), generators, train=20, unseen=20)
    assert prior.groups >= 3 and prior.determined == prior.groups
    assert "holds" in prior.example and not prior.ok
    # the instruction of the original names no count: one group, whose golds differ
    [plain] = audit_task(parse_spec(spec_with("count-lines")), generators, train=20, unseen=20)
    assert plain.groups == 1 and plain.determined == 0


def test_multiple_choice_is_held_to_chance_plus_five_points(generators):
    """Options A-D; the right one is C on every variant: C passes all unseen variants."""
    data = spec_with("count-lines", id="faketool/pick-one")
    data["evaluator"]["criteria"][0]["getter"] = {"fn": "answer_text"}
    data["evaluator"]["criteria"][0]["check"] = {
        "op": "choice", "options": ["two", "three", "many", "none"], "expected": "C"}
    [prior] = audit_task(parse_spec(data), generators, train=10, unseen=10)
    assert prior.choices == 4 and prior.limit == pytest.approx(0.30)
    assert prior.best == "C" and prior.share == 1.0 and prior.over


def test_a_gate_on_program_state_in_front_is_reported(generators):
    data = spec_with("count-lines", id="faketool/gated")
    data["evaluator"]["criteria"].insert(0, {
        "name": "saved in the program", "weight": 0, "gate": True,
        "getter": {"fn": "app_state", "key": "saved"}, "check": {"op": "is_true"}})
    [prior] = audit_task(parse_spec(data), generators, train=5, unseen=5)
    assert prior.gated == "saved in the program"


def test_gold_answers_pass_their_own_checks(tmp_path):
    cases = [
        ("answer_number", {"op": "numeric", "expected": 0.271, "rel_tol": 0.05}),
        ("answer_number", {"op": "numeric", "expected": 24.0}),
        ("answer_number", {"op": "equals", "expected": 7}),
        ("answer_text", {"op": "text", "expected": "Fm-3m"}),
        ("answer_text", {"op": "choice", "options": ["cubic", "hexagonal", "monoclinic"],
                         "expected": "hexagonal"}),
        ("answer_numbers", {"op": "list_equal", "expected": [1.5, -2, 3], "abs_tol": 0.1}),
        ("answer_number", {"op": "in_range", "min": 2, "max": 3}),
    ]
    cases.append(({"fn": "answer_number", "label": "c"},
                  {"op": "numeric", "expected": 5.2, "abs_tol": 0.01}))  # read as "c = 5.2"
    for getter, check in cases:
        getter = getter if isinstance(getter, dict) else {"fn": getter}
        c = Criterion.from_dict({"name": "x", "getter": getter, "check": check})
        answer = gold_answer(c)
        assert answer is not None and passes(c, answer, tmp_path), (getter, check, answer)
        assert not passes(c, "42424242", tmp_path)
    regex = Criterion.from_dict({"name": "x", "getter": {"fn": "answer_text"},
                                 "check": {"op": "regex", "pattern": "^a+$"}})
    assert gold_answer(regex) is None


def test_the_cli_prints_the_table_and_exits_1_when_a_criterion_is_over(capsys):
    from sciagent_gym.cli.main import main

    assert main(["audit", "--prior", "--tool", "faketool", "--train", "20", "--unseen", "20",
                 "-q"]) == 1
    out = capsys.readouterr().out
    assert "OVER" in out and "| faketool |" in out
    assert main(["audit", "--prior", "--tool", "faketool", "--task", "faketool/sum-numbers",
                 "--train", "20", "--unseen", "20", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tools"][0]["passed"] and data["unseen"] == 20


def test_an_unknown_tool_is_a_clear_error_not_a_traceback(capsys):
    from sciagent_gym.cli.main import main

    for mode in (["--prior"], ["--attacks"], []):
        assert main(["audit", *mode, "--tool", "no-such-tool", "-q"]) == 2
        assert "error: unknown tool 'no-such-tool'" in capsys.readouterr().err


def test_a_report_survives_json_and_the_docs_show_the_measured_one():
    report = audit_prior("faketool", train=10, unseen=10)
    back = report_from_dict(json.loads(json.dumps(report.to_dict())))
    assert back.row() == report.row() and back.table() == report.table()
    measured = ROOT / "benchmarks" / "results" / "prior-all.json"
    page = (ROOT / "docs" / "rewards-and-splits.md").read_text()
    assert README_MARKER in page
    start = page.index(README_MARKER) + len(README_MARKER)
    shown = page[start:page.index("\n<!-- end generated -->", start - 1)]
    assert shown == readme_section(json.loads(measured.read_text())), \
        "docs/rewards-and-splits.md's prior table is stale: make readme"


def test_a_criterion_of_a_later_stage_is_judged_on_its_own_check(tmp_path):
    """A staged workflow's answer is blocked by its earlier stages in a real evaluation; the
    prior judges the check alone (the gate in front is reported as such)."""
    c = Criterion.from_dict({"name": "x", "getter": {"fn": "answer_number"},
                             "check": {"op": "numeric", "expected": 3.5}})
    staged = replace(c, stage="report", blocks_from=("open",))
    assert passes(staged, "3.5", tmp_path) and not passes(staged, "4", tmp_path)
