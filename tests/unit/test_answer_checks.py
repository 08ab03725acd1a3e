"""The ``choice`` and ``sts_at_least`` checks and the choice cheats (no model loaded here: the STS
score itself is tested once in test_text_scores.py, where the model is loaded)."""

from __future__ import annotations

import pytest

from sciagent_gym.evaluation import CHECKS, FinalState, SpecError, parse_criteria
from sciagent_gym.evaluation import answer_checks as ac
from sciagent_gym.runs.cheats import generic_cheats, play_offline

OPTIONS = ["FCC lattice, a = 3.6 Å", "BCC lattice, a = 2.9 Å", "HCP lattice", "simple cubic"]


@pytest.mark.parametrize("answer", [
    "B", "b", "(B)", "B)", "B.", "[B]", " B ", "Answer: B", "The answer is (B)", "option B",
    "BCC lattice, a = 2.9 Å", "bcc  lattice, a = 2.9 å.", '"BCC lattice, a = 2.9 Å"',
    "(B) BCC lattice, a = 2.9 Å", "B) BCC lattice, a = 2.9 Å", "B. BCC lattice, a = 2.9 Å",
    "B - BCC lattice, a = 2.9 Å", "Option B: BCC lattice, a = 2.9 Å",
])
def test_choice_accepts_one_named_option(answer):
    ok, detail = CHECKS["choice"](answer, OPTIONS, "B")
    assert ok, detail
    assert "option B (right)" in detail


@pytest.mark.parametrize(("answer", "reason"), [
    ("A", "option A (wrong)"),
    ("HCP lattice", "option C (wrong)"),
    ("A, B", "several letters (A, B)"),
    ("A or B", "several letters (A, B)"),
    ("B/C", "several letters (B, C)"),
    ("A B C D", "several letters (A, B, C, D)"),
    ("(A) FCC lattice, a = 3.6 Å (B) BCC lattice, a = 2.9 Å (C) HCP lattice (D) simple cubic",
     "names 4 options"),
    ("FCC lattice, a = 3.6 Å; BCC lattice, a = 2.9 Å", "names 2 options"),
    ("B) HCP lattice", "disagree"),
    ("C - BCC lattice, a = 2.9 Å", "disagree"),
    ("A-B", "names no option"),
    ("Both A and B", "several letters (A, B)"),
    ("", "empty answer"),
    ("   ", "empty answer"),
    ("E", "past the 4 options"),
    ("It looks body-centred to me", "names no option"),
    ("BCC", "names no option"),                  # a fragment is not the option's text
    ("B" * 5000, "not one option"),
])
def test_choice_fails_with_a_reason(answer, reason):
    ok, detail = CHECKS["choice"](answer, OPTIONS, "B")
    assert not ok
    assert reason in detail, detail
    assert "expected" in detail


@pytest.mark.parametrize("value", [None, ["B"], {"answer": "B"}, True])
def test_choice_refuses_values_that_are_not_text(value):
    assert not CHECKS["choice"](value, OPTIONS, "B")[0]


def test_expected_may_be_the_option_text():
    assert CHECKS["choice"]("B", OPTIONS, "BCC lattice, a = 2.9 Å")[0]
    assert not CHECKS["choice"]("C", OPTIONS, "BCC lattice, a = 2.9 Å")[0]


def _crit(check: dict) -> list:
    return parse_criteria([{"name": "pick", "getter": "answer_text", "check": check}])


@pytest.mark.parametrize(("params", "field"), [
    ({"options": ["only one"], "expected": "A"}, "options"),
    ({"options": "A, B", "expected": "A"}, "options"),
    ({"options": ["x", " X "], "expected": "A"}, "options"),      # duplicate after normalising
    ({"options": ["x", ""], "expected": "A"}, "options"),
    ({"options": ["x", "y"], "expected": "C"}, "expected"),        # past the options
    ({"options": ["x", "y"], "expected": "z"}, "expected"),        # neither letter nor text
    ({"options": ["x", "y"], "expected": 1}, "expected"),          # indices are ambiguous
])
def test_choice_params_are_checked_at_load(params, field):
    with pytest.raises(SpecError) as err:
        _crit({"op": "choice", **params})
    assert err.value.field.endswith(f"check.{field}")


@pytest.mark.parametrize(("params", "field"), [
    ({"reference": "", "min": 0.5}, "reference"),
    ({"reference": 3, "min": 0.5}, "reference"),
    ({"reference": "grains", "min": 1.5}, "min"),
    ({"reference": "grains", "min": "0.5"}, "min"),
    ({"reference": "grains"}, ""),                                # missing: the signature
])
def test_sts_params_are_checked_at_load(params, field):
    with pytest.raises(SpecError) as err:
        _crit({"op": "sts_at_least", **params})
    assert err.value.field.endswith(f"check.{field}" if field else "check")


def test_sts_at_least_threshold_and_detail(monkeypatch):
    """The threshold logic on a stand-in scorer (the real one is tested with the model)."""
    from sciagent_gym.evaluation import sentence_model

    monkeypatch.setattr(sentence_model, "sts", lambda a, b: [0.61234] * len(a))
    ok, detail = CHECKS["sts_at_least"]("equiaxed grains", "equiaxed grains, 5 µm", 0.6)
    assert ok and detail.startswith("STS 0.6123 >= 0.6")
    assert ac.sts_of(detail) == pytest.approx(0.6123)
    ok, detail = CHECKS["sts_at_least"]("equiaxed grains", "equiaxed grains, 5 µm", 0.7)
    assert not ok and detail.startswith("STS 0.6123 < 0.7")


@pytest.mark.parametrize("value", [None, "", "   ", ["text"], "x" * 5000])
def test_sts_at_least_fails_without_loading_a_model(monkeypatch, value):
    from sciagent_gym.evaluation import sentence_model

    def boom(*_a):
        raise AssertionError("no text to embed: the model must not be asked")

    monkeypatch.setattr(sentence_model, "sts", boom)
    ok, detail = CHECKS["sts_at_least"](value, "a reference", 0.5)
    assert not ok and ac.sts_of(detail) is None


def test_choice_cheats_all_score_zero(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    question = "Which lattice is shown? (A) FCC lattice, a = 3.6 Å (B) BCC lattice, a = 2.9 Å " \
               "(C) HCP lattice (D) simple cubic. Answer with one letter."
    crits = parse_criteria([
        {"name": "answered", "getter": "answer_given", "check": "is_true", "weight": 0,
         "gate": True},
        {"name": "pick", "getter": "answer_text",
         "check": {"op": "choice", "options": OPTIONS, "expected": "B"}},
    ])
    start = FinalState(work_dir=work, agent_status="done")
    for instruction in (None, question):
        cheats = {c.name: c for c in generic_cheats(crits, work, instruction)}
        assert {"choice-every-letter", "choice-every-option", "choice-question-copied",
                "choice-wrong-option"} <= set(cheats)
        if instruction:
            assert cheats["choice-question-copied"].answer == question
        for cheat in cheats.values():
            result = play_offline(cheat, crits, start, tmp_path / "scratch")
            assert result.score == 0.0 and not result.success, cheat.name
    right = FinalState(work_dir=work, agent_status="done", answer="(B)")
    from sciagent_gym.evaluation import evaluate
    assert evaluate(crits, right).score == 1.0


@pytest.mark.parametrize(("sts", "credit", "success"), [
    (0.93, 1.0, True), (0.7, 1.0, True), (0.6, 0.5, False), (0.5, 0.0, False), (0.12, 0.0, False),
])
def test_graded_sts_earns_its_share_of_the_way_from_floor_to_min(monkeypatch, tmp_path, sts,
                                                                  credit, success):
    """CSMBench scores open answers continuously: with ``floor`` the criterion earns
    (STS - floor) / (min - floor) of its weight, all of it (and success) from ``min`` on."""
    from sciagent_gym.evaluation import FinalState, evaluate, sentence_model

    monkeypatch.setattr(sentence_model, "sts", lambda a, b: [sts] * len(a))
    crit = {"name": "described", "weight": 2, "getter": "answer_text",
            "check": {"op": "sts_at_least", "reference": "a square lattice", "min": 0.7,
                      "floor": 0.5}}
    other = {"name": "named", "weight": 2, "getter": "answer_given", "check": "is_true"}
    ev = evaluate([crit, other], FinalState(work_dir=tmp_path, answer="a square lattice"))
    assert ev.criteria[0].credit == pytest.approx(credit)
    assert ev.criteria[0].passed is success and ev.success is success
    assert ev.score == pytest.approx((2 * credit + 2) / 4)
    assert ev.criteria[0].to_dict()["credit"] == pytest.approx(credit)
    assert "credit" not in ev.criteria[1].to_dict()  # pass/fail checks earn all or nothing


def test_graded_sts_earns_nothing_without_an_answer(tmp_path):
    from sciagent_gym.evaluation import FinalState, evaluate

    crit = {"name": "described", "weight": 1, "getter": "answer_text",
            "check": {"op": "sts_at_least", "reference": "a square lattice", "min": 0.7,
                      "floor": 0.5}}
    ev = evaluate([crit], FinalState(work_dir=tmp_path, answer=""))
    assert ev.score == 0.0 and ev.criteria[0].earned == 0.0


@pytest.mark.parametrize("floor", [0.7, 0.9, "0.5", -2])
def test_the_floor_must_be_a_cosine_below_min(floor):
    with pytest.raises(SpecError) as err:
        _crit({"op": "sts_at_least", "reference": "grains", "min": 0.7, "floor": floor})
    assert err.value.field.endswith("check.floor")
