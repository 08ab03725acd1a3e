"""GUI oracles: the spec field, what counts as GUI-only, the step count (the reference for
Steps*), and the two step forms a GUI oracle has beside actions: ``in_window`` (coordinates
relative to a window found in the window list) and ``read`` (a value read off the screen with
OCR and given through the answer action). Played on the fake provider; OCR is replaced by a
stand-in only where the test is about what the step does with the text it gets back.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from sciagent_gym.actions import types as A
from sciagent_gym.env import SciGUIEnv
from sciagent_gym.errors import StepError, TaskSpecError
from sciagent_gym.tasks import steps as steps_module
from sciagent_gym.tasks.spec import parse_spec
from sciagent_gym.tasks.step_schema import count_oracle_steps, gui_only
from sciagent_gym.tasks.steps import run_steps
from sciagent_gym.tools.discovery import add_tools_root, remove_tools_root

FIXTURE_TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "tools"
SUM_SPEC = json.loads((FIXTURE_TOOLS / "task_specs/faketool/sum-numbers.json").read_text())


@pytest.fixture(scope="module", autouse=True)
def fixture_tools():
    add_tools_root(FIXTURE_TOOLS)
    yield
    remove_tools_root(FIXTURE_TOOLS)


class Recorder(gym.Wrapper):
    """Keeps the actions that reach ``step()``: what a demonstration records."""

    def __init__(self, env):
        super().__init__(env)
        self.sent: list = []

    def step(self, action):
        self.sent.append(action)
        return self.env.step(action)

    @property
    def provider(self):
        return self.env.provider

    @property
    def task(self):
        return self.env.task


@pytest.fixture
def env():
    made = Recorder(SciGUIEnv("faketool", provider="fake", screen_size=(400, 300)))
    yield made
    made.close()


def _spec(**changes):
    data = copy.deepcopy(SUM_SPEC)
    data.update(changes)
    return parse_spec(data, "test.json")


@pytest.mark.parametrize(("steps", "cli", "expected"), [
    (["pyautogui.click(1, 2)", {"await_window": "x"}, "DONE"], False, True),
    ([{"in_window": "Dialog", "do": ["pyautogui.click(1, 2)"]}, "DONE"], False, True),
    ([{"read": {"pattern": "[0-9]+"}, "answer": "{output}"}, "DONE"], False, True),
    ([{"script": "quit"}, "DONE"], False, False),
    ([{"script": "print 1", "answer": "{output}"}, "DONE"], False, False),
    ([{"run": "ls"}, "DONE"], False, False),
    ([{"run": "ls"}, "DONE"], True, True),
    (['run("ls")', "DONE"], False, False),
    ([{"action": {"type": "run", "command": "ls"}}, "DONE"], False, False),
    ([{"toggle": "t", "then": [{"script": "x"}]}, "DONE"], False, False),
    ([{"toggle": "t", "then": ["pyautogui.press('a')"]}, "DONE"], False, True),
])
def test_gui_only_accepts_step_actions_and_refuses_the_channel(steps, cli, expected):
    assert gui_only(steps, allow_cli=cli) is expected


def test_step_count_counts_step_calls_not_waits():
    steps = [{"await_window": "a"}, "pyautogui.click(1, 2)",
             {"in_window": "b", "do": ["pyautogui.click(1, 2)", "pyautogui.press('enter')"]},
             {"read": {"pattern": "x"}, "answer": "{output}"},
             {"action": {"type": "done"}}]
    assert count_oracle_steps(steps) == 5


def test_the_spec_field_is_validated_and_falls_back_to_a_gui_only_oracle():
    own = ["pyautogui.click(5, 5)", 'answer("{gold.numbers.sum}")', "DONE"]
    assert _spec(gui_oracle=own).gui_oracle == own
    assert _spec().gui_oracle == SUM_SPEC["oracle"]  # an answer and DONE: GUI-only already
    scripted = _spec(oracle=[{"script": "sum"}, "DONE"])
    assert scripted.gui_oracle is None
    with pytest.raises(TaskSpecError, match="gui_oracle.*no script"):
        _spec(gui_oracle=[{"script": "sum"}, "DONE"])
    with pytest.raises(TaskSpecError, match="gui_oracle.*DONE or FAIL"):
        _spec(gui_oracle=["pyautogui.click(5, 5)"])
    with pytest.raises(TaskSpecError, match=r"gui_oracle\[0\].read.pattern.*bad regex"):
        _spec(gui_oracle=[{"read": {"pattern": "("}, "answer": "{output}"}, "DONE"])
    with pytest.raises(TaskSpecError, match=r"gui_oracle\[0\]"):
        _spec(gui_oracle=[{"in_window": "x", "do": [{"script": "y"}]}, "DONE"])
    for bad in (-1, 301, "5"):
        with pytest.raises(TaskSpecError, match=r"timeout \(0-300 s\)"):
            _spec(gui_oracle=[{"read": {"pattern": "x", "timeout": bad}, "answer": "{output}"},
                              "DONE"])


def test_in_window_moves_clicks_to_the_window_found_on_screen(env):
    env.reset(seed=0, options={"task": "faketool/sum-numbers"})
    provider = env.provider
    provider.open_window("Sum dialog")
    win = next(w for w in provider.windows() if w.title == "Sum dialog")
    taken = run_steps(env, [{"in_window": "^Sum dialog$",
                             "do": ["pyautogui.click(10, 20)", "pyautogui.press('enter')",
                                    "pyautogui.dragTo(30, 40)"]}])
    assert taken == 3
    click, press, drag = provider.executed[-3:]
    assert click == A.Click(win.x + 10, win.y + 20)
    assert press == A.Press("enter")
    assert (drag.x, drag.y) == (win.x + 30, win.y + 40)
    # what the trajectory records is the absolute action, as an agent would have sent it
    assert env.sent[-3] == f"pyautogui.click({win.x + 10}, {win.y + 20})"
    # several calls in one entry stay one step, as they would outside in_window
    assert run_steps(env, [{"in_window": "^Sum dialog$",
                            "do": ["pyautogui.click(1, 2)\npyautogui.write('7')"]}]) == 1
    assert provider.executed[-2] == A.Click(win.x + 1, win.y + 2)


def test_in_window_refuses_a_missing_window_and_a_click_off_screen(env):
    env.reset(seed=0, options={"task": "faketool/sum-numbers"})
    with pytest.raises(StepError, match="no window 'Nope'"):
        run_steps(env, [{"in_window": "Nope", "do": ["pyautogui.click(1, 1)"]}])
    with pytest.raises(StepError, match="falls off"):
        run_steps(env, [{"in_window": "Fake Tool", "do": ["pyautogui.click(5000, 1)"]}])


def test_read_answers_what_ocr_saw_in_the_region(env, monkeypatch):
    env.reset(seed=0, options={"task": "faketool/sum-numbers"})
    total = env.task.gold["numbers"]["sum"]
    seen = []

    def fake_ocr(rgb, psm=6, scale=2):
        seen.append(rgb.shape)
        return f"Result\nSum: {total}\n"

    monkeypatch.setattr("sciagent_gym.evaluation.getters.ocr.ocr_region", fake_ocr)
    run_steps(env, [{"read": {"region": [10, 20, 50, 30], "pattern": r"Sum:\s*(\d+)"},
                     "answer": "{output}"}])
    assert seen == [(30, 50, 3)]
    assert env.sent[-1] == {"type": "answer", "text": str(total)}
    with pytest.raises(StepError, match="not on screen.*OCR saw"):
        run_steps(env, [{"read": {"pattern": r"Mean:\s*(\d+)"}, "answer": "{output}"}])


def test_read_with_a_timeout_looks_again_until_a_busy_program_prints(env, monkeypatch):
    env.reset(seed=0, options={"task": "faketool/sum-numbers"})
    screens = iter(["> library(survival)\n", "> library(survival)\n", "> median\n[1] 41.5\n"])
    monkeypatch.setattr("sciagent_gym.evaluation.getters.ocr.ocr_region",
                        lambda rgb, psm=6, scale=2: next(screens))
    run_steps(env, [{"read": {"pattern": r"\[1\] ([0-9.]+)", "timeout": 10},
                     "answer": "{output}"}])
    assert env.sent[-1] == {"type": "answer", "text": "41.5"}
    # without a timeout one look is all: the first screen has no result yet
    screens = iter(["> library(survival)\n", "> median\n[1] 41.5\n"])
    with pytest.raises(StepError, match="not on screen"):
        run_steps(env, [{"read": {"pattern": r"\[1\] ([0-9.]+)"}, "answer": "{output}"}])
    # and a timeout ends: the error says what OCR saw last
    monkeypatch.setattr("sciagent_gym.evaluation.getters.ocr.ocr_region",
                        lambda rgb, psm=6, scale=2: "> still busy\n")
    with pytest.raises(StepError, match="still busy"):
        run_steps(env, [{"read": {"pattern": r"\[1\] ([0-9.]+)", "timeout": 0.6},
                         "answer": "{output}"}])


@pytest.mark.parametrize("ocr, pattern, expected", [
    # what tesseract made of Praat's 17-digit values in the flake runs (seed 17)
    ("286.5982 7440420236 hertz", r"([0-9]+[.,][0-9 ]+?)\s*hertz", "286.59827440420236"),
    ("74,49439304220743 dB", r"(-?[0-9]+[.,][0-9]{1,3})", "74.494"),
    ("-3,5 dB", r"(-?[0-9]+[.,][0-9]{1,3})", "-3.5"),
    ("1.25 seconds", r"([0-9]+(?:[.,][0-9]{1,4})?)", "1.25"),
    ("GAMMA=8 . 6984", r"GAMMA=\s*(-?[0-9]+ ?[.,] ?[0-9]{3,4})", "8.6984"),  # ParaView's console
])
def test_read_number_repairs_what_ocr_does_to_long_numbers(env, monkeypatch, ocr, pattern,
                                                           expected):
    env.reset(seed=0, options={"task": "faketool/sum-numbers"})
    monkeypatch.setattr("sciagent_gym.evaluation.getters.ocr.ocr_region",
                        lambda rgb, psm=6, scale=2: f"File Edit Search\n{ocr}\n")
    run_steps(env, [{"read": {"pattern": pattern, "number": True}, "answer": "{output}"}])
    assert env.sent[-1] == {"type": "answer", "text": expected}


def test_read_number_refuses_what_is_not_a_number(env, monkeypatch):
    env.reset(seed=0, options={"task": "faketool/sum-numbers"})
    monkeypatch.setattr("sciagent_gym.evaluation.getters.ocr.ocr_region",
                        lambda rgb, psm=6, scale=2: "1,234.5,6 Hz")
    with pytest.raises(StepError, match="is not a number"):
        run_steps(env, [{"read": {"pattern": r"([0-9.,]+) Hz", "number": True},
                         "answer": "{output}"}])


def test_oracle_steps_is_the_gui_oracle_step_count_and_reaches_info(env):
    _, info = env.reset(seed=0, options={"task": "faketool/sum-numbers"})
    assert env.task.oracle_steps == 2 == info["oracle_steps"]
    taken = run_steps(env, env.task.steps("gui_oracle"))
    assert taken == env.task.oracle_steps
    assert env.unwrapped.evaluation is not None


def test_the_steps_module_names_no_channel_in_gui_forms():
    # the GUI forms read the screen and the window list only: nothing from the adapter
    src = Path(steps_module.__file__).read_text()
    for name in ("window_actions", "read_screen", "find_window"):
        body = src.split(f"def {name}(", 1)[1].split("\ndef ", 1)[0]
        assert "adapter" not in body and "run_script" not in body, name


def test_the_cli_offers_every_rollout_policy():
    from sciagent_gym.cli.main import RUN_POLICIES
    from sciagent_gym.runs.rollout import POLICIES

    assert RUN_POLICIES == POLICIES


def test_list_gives_each_task_its_gui_oracle_step_range(capsys):
    from sciagent_gym.cli.main import main

    assert main(["list", "--json", "--tool", "ds9"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    tasks = {t["id"]: t for t in row["tasks"]}
    assert tasks["ds9/toggle-grid"]["oracle_steps"] == {"min": 1, "median": 1, "max": 3}
    assert tasks["ds9/colormap-scale-gui"]["oracle_steps"]["max"] == 5
    assert main(["list", "--markdown", "--tasks", "--tool", "ds9"]) == 0
    table = capsys.readouterr().out
    assert "| `ds9/toggle-grid` | easy | gui | 10 | 1-3 |" in table
    assert "| `ds9/missing-extension` | " in table and "FAIL is right" in table


# -- perceive: a tool's own pixel reader ----------------------------------------------------

def test_perceive_answers_what_the_tools_perceiver_measured_in_the_window(env, monkeypatch):
    env.reset(seed=0, options={"task": "faketool/sum-numbers"})
    provider = env.provider
    frame = np.zeros((provider.height, provider.width, 3), dtype=np.uint8)
    win = next(w for w in provider.windows() if w.title == "Fake Tool")
    # a quarter of a 20 x 20 square at the window's (10, 10) is white
    frame[win.y + 10:win.y + 20, win.x + 10:win.x + 20] = 255
    monkeypatch.setattr(provider, "wait_settled", lambda: frame.copy())
    taken = run_steps(env, [{"perceive": {"fn": "bright_share", "window": "^Fake Tool$",
                                          "region": [10, 10, 20, 20]},
                             "answer": "{output} %"}])
    assert taken == 1 and env.sent[-1] == {"type": "answer", "text": "25 %"}
    # args reach the perceiver: nothing in the square is brighter than 255
    run_steps(env, [{"perceive": {"fn": "bright_share", "window": "^Fake Tool$",
                                  "region": [10, 10, 20, 20], "args": {"level": 255}},
                     "answer": "{output} %"}])
    assert env.sent[-1] == {"type": "answer", "text": "0 %"}
    with pytest.raises(StepError, match="blank"):
        run_steps(env, [{"perceive": {"fn": "bright_share", "region": [0, 0, 5, 5]},
                         "answer": "{output}"}])
    with pytest.raises(StepError, match=r"no perceiver 'nope'.*bright_share"):
        run_steps(env, [{"perceive": {"fn": "nope"}, "answer": "{output}"}])


def test_perceive_with_a_timeout_looks_again_until_the_figure_is_shown(env, monkeypatch):
    env.reset(seed=0, options={"task": "faketool/sum-numbers"})
    provider = env.provider
    blank = np.zeros((provider.height, provider.width, 3), dtype=np.uint8)
    shown = blank.copy()
    shown[:, : provider.width // 2] = 255
    frames = iter([blank, blank, shown])
    monkeypatch.setattr(provider, "wait_settled", lambda: next(frames))
    run_steps(env, [{"perceive": {"fn": "bright_share", "timeout": 10}, "answer": "{output}"}])
    assert env.sent[-1] == {"type": "answer", "text": "50"}
    # without a timeout one look is all
    monkeypatch.setattr(provider, "wait_settled", lambda: blank.copy())
    with pytest.raises(StepError, match="blank"):
        run_steps(env, [{"perceive": {"fn": "bright_share"}, "answer": "{output}"}])


def test_perceive_steps_are_validated_gui_only_and_counted():
    step = {"perceive": {"fn": "bright_share", "args": {"level": 10}}, "answer": "{output}"}
    assert _spec(gui_oracle=[step, "DONE"]).gui_oracle == [step, "DONE"]
    assert gui_only([step, "DONE"]) and count_oracle_steps([step, "DONE"]) == 2
    for bad in ({"perceive": {"fn": 3}, "answer": "{output}"},
                {"perceive": {"fn": "f", "args": [1]}, "answer": "{output}"},
                {"perceive": {"fn": "f", "gold": 1}, "answer": "{output}"},
                {"perceive": {"fn": "f"}, "answer": "no placeholder"},
                {"perceive": {"fn": "f", "timeout": 301}, "answer": "{output}"}):
        with pytest.raises(TaskSpecError, match=r"gui_oracle\[0\].*perceive step"):
            _spec(gui_oracle=[bad, "DONE"])
    with pytest.raises(TaskSpecError, match=r"perceive.region"):
        _spec(gui_oracle=[{"perceive": {"fn": "f", "region": [1, 2]}, "answer": "{output}"},
                          "DONE"])
