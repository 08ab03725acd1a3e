"""Fityk's perceivers (envs/fityk/perceive.py): the formula evaluator takes arithmetic on the
names the screen showed and nothing else, and the list reader pairs centres with areas."""

from __future__ import annotations

import ast
import math

import pytest
from sciagent_gym.envs.fityk import perceive

from sciagent_gym.errors import StepError


def evaluate(expr: str, names: dict[str, float]) -> float:
    return perceive._evaluate(ast.parse(expr, mode="eval"), names)


def test_bragg_and_scherrer_formulas_on_panel_values():
    shown = {"Center": 38.44, "FWHM": 0.21}
    d = evaluate("0.15406 / (2 * sin(radians(Center / 2)))", shown)
    assert d == pytest.approx(0.15406 / (2 * math.sin(math.radians(19.22))))
    tau = evaluate("0.9 * 0.15406 / (radians(FWHM) * cos(radians(Center / 2)))", shown)
    half = math.radians(19.22)
    assert tau == pytest.approx(0.9 * 0.15406 / (math.radians(0.21) * math.cos(half)))
    assert evaluate("100 * A2 / (A1 + A2 + A3)", {"A1": 6.0, "A2": 3.0, "A3": 1.0}) == 30.0
    assert evaluate("max(A1, A2) - -1", {"A1": 2.0, "A2": 5.0}) == 6.0


@pytest.mark.parametrize("expr", ["__import__('os').system('true')", "Center.real",
                                  "[Center][0]", "open('/etc/passwd')", "lambda: 1"])
def test_anything_but_arithmetic_is_refused(expr):
    with pytest.raises((ValueError, StepError)):
        evaluate(expr, {"Center": 1.0})


def test_a_name_the_panel_did_not_show_is_a_step_error():
    with pytest.raises(StepError, match="does not show 'FWHM'"):
        evaluate("FWHM / 2", {"Center": 1.0})
