"""StaR's step-level toggle metrics on hand-counted cases."""

from __future__ import annotations

import pytest

from sciagent_gym.runs.state_control import (
    Decision,
    ToggleSample,
    decision_of,
    state_control_metrics,
    task_success,
)

BOX = (100, 200, 140, 220)


@pytest.mark.parametrize(("action", "expected"), [
    ("pyautogui.click(120, 210)", Decision("click", (120, 210))),
    ({"type": "click", "x": 5, "y": 6}, Decision("click", (5, 6))),
    ("pyautogui.moveTo(1, 1)\npyautogui.click(120, 210)", Decision("click", (120, 210))),
    ("time.sleep(0.5)\npyautogui.click(120, 210)", Decision("click", (120, 210))),
    ("time.sleep(0.5)\nDONE", Decision("other")),  # the env takes DONE only on its own
    ("DONE", Decision("done")),
    ("pyautogui.rightClick(120, 210)", Decision("other")),
    ("pyautogui.press('enter')", Decision("other")),
    ("FAIL", Decision("other")),
    ("pyautogui.click(5000, 5000)", Decision("other")),  # off screen: rejected by the env
    ("not python at all (", Decision("other")),
])
def test_decision_of(action, expected):
    assert decision_of(action) == expected


def test_metrics_count_each_error_where_it_belongs():
    pos, neg = ToggleSample(True, BOX), ToggleSample(False, BOX)
    samples = [pos, pos, pos, pos, neg, neg, neg, neg]
    decisions = [
        Decision("click", (120, 210)),  # positive, right
        Decision("click", (10, 10)),    # positive, right type, missed the toggle
        Decision("done"),               # positive, did nothing: false negative
        Decision("other"),              # positive, something else: false negative
        Decision("done"),               # negative, right
        Decision("done"),               # negative, right
        Decision("click", (101, 201)),  # negative, clicked the toggle: false positive
        Decision("click", (500, 500)),  # negative, clicked elsewhere: wrong type only
    ]
    m = state_control_metrics(samples, decisions)
    assert (m["n"], m["n_positive"], m["n_negative"]) == (8, 4, 4)
    assert m["O-AMR"] == pytest.approx(100 * 3 / 8)
    assert m["P-AMR"] == pytest.approx(25.0)
    assert m["N-AMR"] == pytest.approx(50.0)
    assert m["TMR"] == pytest.approx(100 * 4 / 8)  # 2 positive clicks + 2 negative DONEs
    assert m["P-FNR"] == pytest.approx(50.0)
    assert m["N-FPR"] == pytest.approx(25.0)


def test_empty_groups_are_undefined_not_zero():
    m = state_control_metrics([ToggleSample(True, BOX)], [Decision("click", (120, 210))])
    assert m["N-AMR"] is None and m["N-FPR"] is None and m["O-AMR"] == 100.0
    with pytest.raises(ValueError, match="decisions"):
        state_control_metrics([ToggleSample(True, BOX)], [])


def test_box_checks_normalisation_and_partial_success():
    with pytest.raises(ValueError, match="off the"):
        ToggleSample(True, (1200, 10, 1300, 20))
    assert Decision("click", (640, 400)).normalised((1280, 800)) == (500, 500)
    assert task_success([True, False]) == 0.5
    assert task_success([True, True, True]) == 1.0
    with pytest.raises(ValueError):
        task_success([])
