"""The Praat tasks' rewards proven offline on real generated data, with Praat itself.

Every oracle and negative that is made of Praat scripts is played headless (``praat --run`` over
the staged inputs, then the env's own state dump), and the result is scored like an episode:
the oracle must reach 1.0, every negative must fail, the start state must score 0, and so must
the generic cheats (empty and placeholder outputs, a copied input, wrong answers). WAV outputs
are then swapped for fakes (silence, a constant, noise at the right level, the input, the right
sound played backwards) that must all score 0, and the answer tasks are fed the right value in
other honest forms (with a label, in another unit, bare) and wrong ones (ambiguous, off by a
unit). Nothing here needs a display: the end-to-end module replays the same cases on the GUI.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import requires

from sciagent_gym.evaluation import FinalState, evaluate
from sciagent_gym.runs.cheats import generic_cheats, play_offline
from sciagent_gym.tasks.spec import TaskSpec
from sciagent_gym.tasks.task import Task
from sciagent_gym.tools import load_adapter, load_tool_getters, load_tool_specs

load_tool_getters("praat")

from sciagent_gym.envs.praat import data  # noqa: E402
from sciagent_gym.envs.praat.adapter import STATE_SCRIPT  # noqa: E402

SPECS: dict[str, TaskSpec] = load_tool_specs("praat")
pytestmark = requires("espeak-ng", tool="praat")
SEED = 0
#: Tasks whose output is a WAV file, and that file's name.
WAV_OUTPUTS = {"praat/concatenate": "joined.wav", "praat/extract-part": "part.wav",
               "praat/resample": "resampled.wav", "praat/scale-intensity": "scaled.wav"}
#: Tasks answered with the answer action: (unit, the gold value's generator and key).
ANSWERS = {"praat/first-formant-at-time": ("Hz", "vowels", "f1"),
           "praat/mean-f0-segment": ("Hz", "speech", "mean_f0"),
           "praat/measure-duration": ("s", "speech", "duration"),
           "praat/measure-intensity": ("dB", "ic", "max_db")}


def _cases() -> list[tuple[str, str]]:
    return [(task_id, case) for task_id, spec in sorted(SPECS.items())
            for case in ("oracle", *sorted(spec.negatives))]


@pytest.fixture
def staged(request, tmp_path) -> Iterator[Task]:
    """The task named by the test's ``task_id`` parameter, staged for seed 0."""
    task_id = request.node.callspec.params["task_id"]
    work = tmp_path / "work"
    task = Task(SPECS[task_id], SEED, data.GENERATORS,
                {"home": str(tmp_path / "home"), "tmp": str(tmp_path), "work": str(work)})
    task.stage(work)
    yield task
    task.cleanup()


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def play_headless(task: Task, steps: list[Any], scratch: Path) -> FinalState | None:
    """Play script steps on the task's inputs with ``praat --run`` and dump the objects as the
    env does; None when a step is a GUI action (only the end-to-end tests can play those)."""
    work = Path(task.paths["work"])
    lines = [f"Read from file: {_quote(str(work / name))}" for name in task.spec.open]
    lines.append(f"sciagent_scratch$ = {_quote(str(scratch / 'scratch.txt'))}")
    status, templates = "done", []
    for step in steps:
        if step in ("DONE", "FAIL"):
            status = step.lower()
        elif isinstance(step, dict) and "script" in step:
            lines += ['out$ = ""', step["script"]]
            if "answer" in step:
                templates.append(step["answer"])
                lines.append('appendInfoLine: "@@answer ", out$')
        else:
            return None
    lines += [STATE_SCRIPT, 'appendInfoLine: "@@state ", out$']
    out = _praat(scratch, "\n".join(lines))
    answers = [t.replace("{output}", v.strip())
               for t, v in zip(templates, _marked(out, "@@answer "), strict=True)]
    [state] = _marked(out, "@@state ")
    return FinalState(work_dir=work, app_state=json.loads(state), agent_status=status,
                      answer=answers[-1] if answers else None)


def _praat(home: Path, script: str) -> str:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "case.praat"
    path.write_text(script)
    res = subprocess.run(["praat", "--run", str(path)], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "HOME": str(home)})
    assert res.returncode == 0, res.stderr
    return res.stdout


def _marked(out: str, marker: str) -> list[str]:
    return [line[len(marker):] for line in out.splitlines() if line.startswith(marker)]


def _score(task: Task, state: FinalState):
    return evaluate(task.criteria(), state)


# --- oracle, negatives, start state, generic cheats -----------------------------------------


@pytest.mark.parametrize(("task_id", "case"), _cases())
def test_headless_case(staged, task_id, case, tmp_path):
    state = play_headless(staged, staged.steps(case), tmp_path / "praat")
    if state is None:
        pytest.skip(f"{case} of {task_id} is played through the GUI (end-to-end tests)")
    result = _score(staged, state)
    if case == "oracle":
        assert result.success and result.score == 1.0, result.to_dict()
    else:
        assert not result.success, result.to_dict()


@pytest.mark.parametrize("task_id", sorted(SPECS))
def test_start_state_and_generic_cheats_score_zero(staged, task_id, tmp_path):
    start = play_headless(staged, [], tmp_path / "praat")
    assert start is not None
    start.agent_status = "running"
    noop = _score(staged, start)
    assert noop.score == 0 and not noop.success, noop.to_dict()
    cheats = generic_cheats(staged.criteria(), Path(staged.paths["work"]),
                            formats=load_adapter("praat", getters=False).placeholders)
    assert len(cheats) >= 2
    for cheat in cheats:
        result = play_offline(cheat, staged.criteria(), start, tmp_path / "cheat")
        assert not result.success and result.score <= cheat.limit, (cheat.name,
                                                                    result.to_dict())


# --- WAV outputs: fakes of every kind score 0 -------------------------------------------------


def _fakes(right: np.ndarray, rate: int, work: Path) -> dict[str, tuple[np.ndarray, int]]:
    rng = np.random.default_rng(5)
    rms = float(np.sqrt(np.mean(right**2)))
    inputs = {p.name: data.read_wav(p) for p in sorted(work.glob("*.wav"))
              if p.name not in WAV_OUTPUTS.values()}
    fakes = {"silence": (np.zeros_like(right), rate),
             "constant": (np.full_like(right, 0.1), rate),
             "noise-at-the-right-level": (rng.normal(0, rms, right.shape), rate),
             "backwards": (right[::-1].copy(), rate)}
    for name, (samples, in_rate, _) in inputs.items():
        fakes[f"copy-of-{name}"] = (samples, in_rate)
    return fakes


def _getter_fn(criterion: dict[str, Any]) -> str:
    getter = criterion["getter"]
    return getter if isinstance(getter, str) else getter["fn"]


@pytest.mark.parametrize("task_id", sorted(WAV_OUTPUTS))
def test_wav_outputs_are_checked_by_content(staged, task_id, tmp_path):
    state = play_headless(staged, staged.steps("oracle"), tmp_path / "praat")
    assert state is not None and _score(staged, state).success
    work, name = Path(staged.paths["work"]), WAV_OUTPUTS[task_id]
    right, rate, _ = data.read_wav(work / name)
    # An answered measurement (scale-intensity's level before scaling) keeps its own credit.
    answered = sum(c.get("weight", 1) for c in SPECS[task_id].evaluator
                   if _getter_fn(c).startswith("answer"))
    for fake, (samples, fake_rate) in _fakes(right, rate, work).items():
        data.write_wav(work / name, samples, fake_rate)
        result = _score(staged, state)
        assert result.score <= answered and not result.success, (fake, result.to_dict())
    data.write_wav(work / name, right, rate)  # and the right sound passes again
    assert _score(staged, state).success


# --- answers: honest forms pass, wrong ones fail ------------------------------------------------


def _forms(value: float, unit: str) -> tuple[list[str], list[str]]:
    """(right answers in other honest forms, wrong answers of a plausible form)."""
    right = [f"{value:.4f} {unit}", f"{value:.4f}", f"result = {value:.4f} {unit}"]
    wrong = ["0", f"{value * 1.5:.4f} {unit}", f"{value:.4f} {unit} or {value * 1.2:.4f} {unit}",
             "I cannot tell", f"{value:.4f} cm"]
    if unit == "Hz":
        right.append(f"{value / 1000:.6f} kHz")
        wrong += [f"{value / 1000:.6f}", f"{value:.4f} kHz"]
    elif unit == "s":
        right.append(f"{value * 1000:.3f} ms")
        wrong += [f"{value * 1000:.3f}", f"{value:.4f} min"]
    return right, wrong


@pytest.mark.parametrize("task_id", sorted(ANSWERS))
def test_answers_read_with_their_units(staged, task_id):
    unit, gen, key = ANSWERS[task_id]
    value = staged.gold[gen][key]
    right, wrong = _forms(value, unit)
    work = Path(staged.paths["work"])
    # the analysis objects the work leaves (the Pitch and Formant objects are scored too)
    app = {"objects": [{"type": "Sound", "name": "speech"},
                       {"type": "Pitch", "name": "speech", "ceiling": 300.0},
                       {"type": "Formant", "name": "vowels", "max_formants": 5},
                       {"type": "Intensity", "name": "speech",
                        "time_step": staged.gold.get("ic", {}).get("time_step")}]}
    for text in right:
        result = _score(staged, FinalState(work_dir=work, agent_status="done", answer=text,
                                           app_state=app))
        assert result.success and result.score == 1.0, (text, result.to_dict())
    for text in [*wrong, None]:
        result = _score(staged, FinalState(work_dir=work, agent_status="done", answer=text))
        assert result.score == 0 and not result.success, (text, result.to_dict())
        result = _score(staged, FinalState(work_dir=work, agent_status="done", answer=text,
                                           app_state=app))
        assert not result.success, (text, result.to_dict())


def test_labelled_formant_answer_reads_as_its_value(tmp_path):
    """The issue's example: "F1 = 742 Hz" is 742 Hz (a first-number reader took the 1)."""
    spec = SPECS["praat/first-formant-at-time"]
    task = Task(spec, SEED, data.GENERATORS, {"home": "/h", "tmp": "/tmp",
                                              "work": str(tmp_path)})
    task.gold, task.staged = {"vowels": {"f1": 742.0}}, True
    app = {"objects": [{"type": "Formant", "name": "vowels", "max_formants": 5}]}
    ok = evaluate(task.criteria(), FinalState(work_dir=tmp_path, answer="F1 = 742 Hz",
                                              app_state=app))
    assert ok.success
    task.gold = {"vowels": {"f1": 1.0}}
    near_one = evaluate(task.criteria(), FinalState(work_dir=tmp_path, answer="F1 = 742 Hz"))
    assert not near_one.success
