"""The answer action's reading side: units, the answer getters and the spec fields around them
(offline: no program needed)."""

from __future__ import annotations

import math
from pathlib import Path

import gymnasium as gym
import pytest

import sciagent_gym  # noqa: F401
from sciagent_gym.evaluation import GETTERS, FinalState, GetterError, evaluate
from sciagent_gym.evaluation.units import convert, lookup, unit_at
from sciagent_gym.tasks.spec import TaskSpecError, parse_spec
from sciagent_gym.tasks.task import HELDOUT_SPLIT, Task, episode_split, split_of


def state(answer: str | None, tmp: Path = Path("/nonexistent")) -> FinalState:
    return FinalState(work_dir=tmp, answer=answer, agent_status="done")


def number(answer: str, **params) -> float:
    return GETTERS["answer_number"](state(answer), **params)


@pytest.mark.parametrize(("text", "unit", "expected"), [
    ("742", None, 742.0),
    ("742 Hz", "Hz", 742.0),
    ("742Hz", "Hz", 742.0),
    ("F1 = 742 Hz", "Hz", 742.0),           # the 1 of F1 is a label, not a value
    ("F1: 742 Hz", "Hz", 742.0),
    ("0.742 kHz", "Hz", 742.0),
    ("1.5e3 Hz", "kHz", 1.5),
    ("3 x 10^2 ms", "s", 0.3),
    ("-3.5 dB", "dB", -3.5),
    ("−3.5 dB", "dB", -3.5),                # a typographic minus
    ("45.2°", "deg", 45.2),
    ("12.5 µm²", "um^2", 12.5),
    ("12.5 um^2", "µm²", 12.5),
    ("0.0125 mm2", "µm²", 12500.0),
    ("1,234.5 px", "px", 1234.5),
    ("12 stars", None, 12.0),                # unknown words after a count are ignored
    ("142 Hz between 0.5 s and 1.2 s", "Hz", 142.0),  # other dimensions are context
    ("The mean is 142 Hz (142 Hz).", "Hz", 142.0),     # the same value twice is one value
    ("25 %", "%", 25.0),
    ("0.25", "%", 0.25),                     # a bare number is taken in the criterion's unit
    ("1580 cm-1", "cm-1", 1580.0),           # wavenumbers, however written
    ("1580 cm⁻¹", "cm^-1", 1580.0),
    ("2.3 eV", "meV", 2300.0),
    ("210 GPa", "MPa", 210000.0),
    ("298 K", "K", 298.0),
    ("5.24 g/cm3", "g/cm³", 5.24),
    ("5240 kg/m^3", "g/cm3", 5.24),
    ("61.2 Å^3", "Å³", 61.2),
    ("0.0612 nm³", "A^3", 61.2),
])
def test_answer_number_reads_value_and_unit(text, unit, expected):
    assert math.isclose(number(text, unit=unit), expected, rel_tol=1e-12)


@pytest.mark.parametrize(("text", "unit", "reason"), [
    ("1 or 2", None, "ambiguous"),
    ("F1 is 742 Hz, F2 is 1200 Hz", "Hz", "ambiguous"),
    ("x=12, y=40", None, "ambiguous"),
    ("0.5 s", "Hz", "is in s, not in Hz"),
    ("no idea", None, "holds no number"),
    ("0,742", None, "decimal comma"),
    ("12,5 Hz", "Hz", "decimal comma"),
    ("   ", None, "empty"),
])
def test_answer_number_refuses_what_a_grader_could_not_read(text, unit, reason):
    with pytest.raises(GetterError, match=reason):
        number(text, unit=unit)


def test_no_answer_says_how_to_give_one():
    with pytest.raises(GetterError, match=r"answer\(\"742 Hz\"\)"):
        GETTERS["answer_number"](state(None))


def test_label_picks_one_value_out_of_several():
    assert number("x = 12, y = 40", label="y") == 40.0
    assert number("F1: 742 Hz; F2: 1200 Hz", label="F2", unit="kHz") == 1.2
    with pytest.raises(GetterError, match="has no 'z = value'"):
        number("x = 12, y = 40", label="z")


def test_answer_numbers_and_text():
    assert GETTERS["answer_numbers"](state("residues 45, 67, 89")) == [45.0, 67.0, 89.0]
    assert GETTERS["answer_numbers"](state("1.2 kHz, 300 Hz"), unit="Hz") == [1200.0, 300.0]
    assert GETTERS["answer_text"](state("  chain B \n")) == "chain B"


def test_answer_given_is_false_without_a_non_empty_answer():
    assert GETTERS["answer_given"](state("0")) is True
    assert GETTERS["answer_given"](state(None)) is False
    assert GETTERS["answer_given"](state("   ")) is False


def test_unknown_unit_in_a_criterion_is_reported():
    with pytest.raises(GetterError, match="unknown unit 'parsec'"):
        number("3", unit="parsec")


def test_units_convert_only_within_a_dimension():
    assert convert(1.0, lookup("km"), lookup("m")) == 1000.0
    assert math.isclose(convert(1.0, lookup("ha"), lookup("m²")), 1e4)
    with pytest.raises(ValueError, match="cannot be converted"):
        convert(1.0, lookup("s"), lookup("Hz"))
    assert unit_at("742 kHz", 3)[0].name == "kHz"
    assert unit_at("5 mice", 1)[0] is None        # "m" glued to a word is not a unit


def test_answer_criterion_scores_and_saved_state_keeps_the_answer(tmp_path):
    crit = [{"name": "F1", "getter": {"fn": "answer_number", "unit": "Hz"},
             "check": {"op": "numeric", "expected": 742, "abs_tol": 5}}]
    assert evaluate(crit, state("F1 = 0.744 kHz", tmp_path)).success
    assert not evaluate(crit, state("F1 = 1 kHz", tmp_path)).success
    assert not evaluate(crit, state(None, tmp_path)).success
    (tmp_path / "work").mkdir()
    saved = FinalState(work_dir=tmp_path / "work", answer="742 Hz").save(tmp_path / "saved")
    assert FinalState.load(saved).answer == "742 Hz"


# -- spec fields -------------------------------------------------------------------------------

def _spec(**extra):
    data = {"id": "imagej/x", "tool": "imagej", "title": "t", "instruction": "i",
            "difficulty": "easy", "oracle": ["DONE"], "negatives": {"n": ["DONE"]},
            "evaluator": {"criteria": [{"name": "a", "getter": "answer_text",
                                        "check": {"op": "equals", "expected": "x"}}]}}
    return parse_spec({**data, **extra})


def test_modality_defaults_to_gui_and_is_validated():
    assert _spec().modality == "gui" and not _spec().allow_cli
    assert _spec(modality="gui+cli").allow_cli
    with pytest.raises(TaskSpecError, match="modality: must be one of gui, gui"):
        _spec(modality="shell")
    with pytest.raises(TaskSpecError, match="allow_cli: unknown field"):
        _spec(allow_cli=True)


def test_cheats_are_agent_actions_only():
    spec = _spec(cheats={"echo": ['run("echo 1 > a.txt")', "DONE"]})
    assert spec.cheats["echo"][0].startswith("run(")
    with pytest.raises(TaskSpecError, match="cheats.s: a cheat is what an agent can do"):
        _spec(cheats={"s": [{"script": "x"}, "DONE"]})


def test_answer_step_needs_the_output_placeholder(tmp_path):
    spec = _spec(oracle=[{"script": "print 1", "answer": "{output} Hz"}, "DONE"])
    task = Task(spec, 0, {}, {"work": str(tmp_path), "home": "/h", "tmp": "/t"})
    task.stage(tmp_path)
    assert task.steps("oracle")[0] == {"script": "print 1", "answer": "{output} Hz"}
    with pytest.raises(TaskSpecError, match="an answer step is"):
        _spec(oracle=[{"script": "print 1", "answer": "42 Hz"}, "DONE"])


def test_heldout_split_selects_task_families():
    heldout = gym.make("SciGUI-ImageJ-v0", provider="fake", split=HELDOUT_SPLIT).unwrapped
    train = gym.make("SciGUI-ImageJ-v0", provider="fake", split="train").unwrapped
    every = gym.make("SciGUI-ImageJ-v0", provider="fake").unwrapped
    assert heldout.task_ids and set(heldout.task_ids).isdisjoint(train.task_ids)
    assert sorted(heldout.task_ids + train.task_ids) == every.task_ids
    assert all(every.specs[t].heldout for t in heldout.task_ids)
    with pytest.raises(ValueError, match="is a held-out task"):
        gym.make("SciGUI-ImageJ-v0", provider="fake", split="train", task=heldout.task_ids[0])
    with pytest.raises(ValueError, match="modality must be None or one of"):
        gym.make("SciGUI-ImageJ-v0", provider="fake", modality="shell")


def test_heldout_episodes_count_under_the_heldout_split():
    """info["split"] and run records: a held-out family's variants are never 'train'."""
    specs = gym.make("SciGUI-ImageJ-v0", provider="fake").unwrapped.specs
    held = next(s for s in specs.values() if s.heldout)
    other = next(s for s in specs.values() if not s.heldout)
    assert {episode_split(held, v) for v in range(40)} == {HELDOUT_SPLIT}
    assert [episode_split(other, v) for v in range(40)] == \
        [split_of(other.id, v) for v in range(40)]
