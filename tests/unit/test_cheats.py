"""The generic cheat catalogue and the audit's rules for cheats (offline, on made-up tasks)."""

from __future__ import annotations

import io
import json
import wave

import numpy as np
import pytest
from PIL import Image

import sciagent_gym.benchmarks.stbench  # noqa: F401  registers the stbench_* checks
from sciagent_gym.evaluation import FinalState, parse_criteria
from sciagent_gym.runs.audit import _expected_ok
from sciagent_gym.runs.audit_report import AuditReport, CaseResult
from sciagent_gym.runs.cheats import (
    PLACEHOLDER_LIMIT,
    generic_cheats,
    output_paths,
    play_offline,
)


def criteria(*items):
    return parse_criteria([{"name": f"c{i}", **item} for i, item in enumerate(items)])


@pytest.fixture
def start(tmp_path):
    """A start work directory with an input image and an input recording."""
    work = tmp_path / "start"
    work.mkdir()
    Image.fromarray(np.zeros((30, 40), np.uint8)).save(work / "input.png")
    with wave.open(str(work / "voice.wav"), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x01\x00" * 4000)
    return work


def test_outputs_are_the_paths_the_criteria_read():
    crits = criteria(
        {"getter": {"fn": "file_exists", "path": "out/figure.png"}, "check": "is_true"},
        {"getter": {"fn": "table_rows", "path": "results.csv"},
         "check": {"op": "equals", "expected": 3}},
        {"getter": {"fn": "file_text", "path": "/etc/passwd"}, "check": "is_true"},
        {"getter": "agent_status", "check": {"op": "equals", "expected": "done"}},
    )
    assert output_paths(crits) == ["out/figure.png", "results.csv"]


def test_protected_inputs_are_not_outputs(start):
    """A state-control variant whose answer is to leave things as they are: its only files are
    protected inputs, so no file cheat is made (overwriting one can only fail, which would
    read as a false negative in the audit's cross matrix)."""
    protect = {"getter": {"fn": "file_sha256", "path": "project.qgs"},
               "check": {"op": "unchanged", "expected_sha256": "0" * 64}, "weight": 0}
    crits = criteria(protect, {"getter": "agent_status",
                               "check": {"op": "equals", "expected": "done"}})
    assert output_paths(crits) == []
    assert [c.name for c in generic_cheats(crits, start)] == ["done-at-once"]
    # an input that another criterion also reads stays a candidate
    crits = criteria(protect, {"getter": {"fn": "file_text", "path": "project.qgs"},
                               "check": "is_true"})
    assert output_paths(crits) == ["project.qgs"]


def test_catalogue_covers_empty_placeholders_copies_and_answers(start):
    crits = _sized_criteria()
    cheats = {c.name: c for c in generic_cheats(crits, start)}
    assert {"done-at-once", "empty-outputs", "input-copied", "answer-zero",
            "answer-wrong-1"} <= set(cheats)
    assert cheats["empty-outputs"].files == {p: b"" for p in output_paths(crits)}
    assert cheats["answer-wrong-1"].answer == "1114 Hz"        # 742 * 1.5 + 1, same unit
    sized = [c for n, c in cheats.items() if n.startswith("placeholders-black-")]
    sizes = {n.rsplit("-", 1)[1] for n in cheats if n.startswith("placeholders-black-")}
    assert {"40x30", "64x48"} <= sizes                          # the input's, the stated
    png = Image.open(io.BytesIO(sized[0].files["fig.png"]))
    assert np.ptp(np.asarray(png)) == 0                         # uniform
    with wave.open(io.BytesIO(sized[0].files["out.wav"])) as w:
        assert (w.getframerate(), w.getnframes()) == (8000, 4000)
        assert set(w.readframes(4000)) == {0}                   # silent, input's rate and length
    assert sized[0].files["t.csv"].decode().strip() == "Area"   # header-only table
    assert cheats["input-copied"].files["out.wav"] == (start / "voice.wav").read_bytes()
    assert all(c.limit == (PLACEHOLDER_LIMIT if c.kind == "placeholder" else 0.0)
               for c in cheats.values())


def _sized_criteria():
    return criteria(
        {"getter": {"fn": "image_stat", "path": "fig.png", "stat": "width"},
         "check": {"op": "equals", "expected": 64}},
        {"getter": {"fn": "image_stat", "path": "fig.png", "stat": "height"},
         "check": {"op": "equals", "expected": 48}},
        {"getter": {"fn": "file_exists", "path": "out.wav"}, "check": "is_true"},
        {"getter": {"fn": "table_column", "path": "t.csv", "column": "Area"},
         "check": {"op": "equals", "expected": [1]}},
        {"getter": {"fn": "answer_number", "unit": "Hz"},
         "check": {"op": "numeric", "expected": 742, "abs_tol": 5}},
    )


def test_content_blind_criteria_are_caught_and_content_aware_ones_hold(start, tmp_path):
    """The audit's point: an existence gate with weight earns credit for an empty file."""
    blind = criteria(
        {"getter": {"fn": "file_exists", "path": "result.json"}, "check": "is_true",
         "gate": True},
        {"getter": {"fn": "file_json", "path": "result.json", "key": "count"},
         "check": {"op": "equals", "expected": 7}},
    )
    fair = parse_criteria([{**c.to_dict(), "weight": 0 if c.gate else 1} for c in blind])
    start_state = FinalState(work_dir=start, agent_status="done")
    empty = next(c for c in generic_cheats(blind, start) if c.name == "empty-outputs")
    assert play_offline(empty, blind, start_state, tmp_path / "a").score == 0.5
    assert play_offline(empty, fair, start_state, tmp_path / "b").score == 0.0
    placeholder = next(c for c in generic_cheats(fair, start) if c.kind == "placeholder")
    assert json.loads(placeholder.files["result.json"]) == {}
    assert play_offline(placeholder, fair, start_state, tmp_path / "c").score == 0.0
    assert sorted(p.name for p in start.iterdir()) == ["input.png", "voice.wav"]  # untouched


def test_answer_cheats_use_the_answer_action(start, tmp_path):
    crits = criteria({"getter": {"fn": "answer_number", "unit": "s"},
                      "check": {"op": "in_range", "min": 1.0, "max": 1.2}})
    cheats = {c.name: c for c in generic_cheats(crits, start)}
    start_state = FinalState(work_dir=start, agent_status="done")
    assert cheats["answer-wrong-1"].answer == "12.4 s"
    for name in ("answer-zero", "answer-wrong-1"):
        assert play_offline(cheats[name], crits, start_state, tmp_path).score == 0.0


@pytest.mark.parametrize(("score", "success", "limit", "ok"), [
    (0.0, False, 0.0, True),
    (0.2, False, 0.0, False),            # any credit is a finding
    (0.1, False, PLACEHOLDER_LIMIT, True),
    (0.2, False, PLACEHOLDER_LIMIT, False),
    (1.0, True, PLACEHOLDER_LIMIT, False),
])
def test_cheat_rule(score, success, limit, ok):
    assert _expected_ok("cheat:x", False, score, success, limit=limit) is ok


def test_state_control_cheats_may_not_beat_the_noop():
    assert _expected_ok("cheat:x", False, 0.5, False, toggles=True, noop_score=0.5)
    assert not _expected_ok("cheat:x", False, 0.75, False, toggles=True, noop_score=0.5)
    assert _expected_ok("cheat:x", False, 1.0, True, noop_correct=True, toggles=True,
                        noop_score=1.0)


def test_report_table_shows_cheats_and_modalities():
    report = AuditReport("demo", [0])
    report.cases = [
        CaseResult("demo/a", 0, "oracle", 1.0, True, True, [], 0.1, modality="gui"),
        CaseResult("demo/a", 0, "noop", 0.0, False, True, [], 0.1, modality="gui"),
        CaseResult("demo/a", 0, "cheat:empty-outputs", 0.0, False, True, [], 0.0,
                   modality="gui"),
        CaseResult("demo/a", 0, "cheat:answer-zero", 0.25, False, False, ["x"], 0.0,
                   modality="gui"),
        CaseResult("demo/b", 0, "oracle", 1.0, True, True, [], 0.1, modality="gui+cli"),
        CaseResult("demo/b", 0, "noop", 0.0, False, True, [], 0.1, modality="gui+cli"),
    ]
    table = report.table()
    assert "cheats held: 1/2" in table and "modality gui: 1 tasks" in table
    assert "FAILED demo/a seed 0 cheat:answer-zero" in table
    assert "cheat successes: 0" in table and "do-nothing" not in table
    assert not report.passed
    # On a variant whose right answer is to do nothing, DONE at once succeeds, rightly.
    report.cases.append(CaseResult("demo/c", 0, "cheat:done-at-once", 1.0, True, True, [], 0.0,
                                   noop_correct=True))
    assert "cheat successes: 0 (and 1 on do-nothing variants" in report.table()


def test_an_open_answer_scored_by_similarity_is_cheated_with_the_question(start):
    """The question shares words with its answer: copying it back is a cheat the audit plays
    (scored by the model in the FigureQA audit); a numeric answer task does not get it."""
    question = "What does the micrograph show? Answer in one sentence."
    sts = criteria({"getter": {"fn": "answer_text"},
                    "check": {"op": "sts_at_least", "reference": "equiaxed grains", "min": 0.7}})
    copied = [c for c in generic_cheats(sts, start, question) if c.name == "answer-question-copied"]
    assert [c.answer for c in copied] == [question]
    assert not [c for c in generic_cheats(sts, start) if c.name == "answer-question-copied"]
    numeric = criteria({"getter": {"fn": "answer_number"},
                        "check": {"op": "in_range", "min": 1.0, "max": 1.2}})
    assert "answer-question-copied" not in {c.name for c in generic_cheats(numeric, start,
                                                                           question)}


def test_a_cheat_paid_by_st_bench_training_reward_is_a_finding(start, tmp_path, monkeypatch):
    """reward='stbench' pays metrics with no gate applied, so a cheat that its gates stop in
    the partial score but the training reward pays must still fail the audit."""
    from types import SimpleNamespace

    from sciagent_gym.runs import audit
    from sciagent_gym.runs.cheats import Cheat, play_offline_scores

    crits = criteria(
        {"weight": 0, "gate": True, "getter": {"fn": "file_text", "path": "scope.txt"},
         "check": {"op": "text", "expected": "the scope"}},
        {"getter": {"fn": "file_json", "path": "metrics.json", "key": "total"},
         "check": {"op": "stbench_target", "target": "> 0", "reference": 10}})
    cheat = Cheat("report-only", "placeholder", {"metrics.json": b'{"total": 5}'})
    start_state = FinalState(work_dir=start, agent_status="done")
    ev, training = play_offline_scores(cheat, crits, start_state, tmp_path / "a")
    # 0.1 sanity + 0.4 target + 0.5 x half the reference
    assert ev.score == 0.0 and training == "reward='stbench' pays 0.750: target met by c1"
    # a task without ST-Bench metrics has no training reward to check
    assert play_offline_scores(cheat, crits[:1], start_state, tmp_path / "b")[1] is None
    # a finite report that misses the target earns the paper's shaping (sanity, a share of
    # the reference) and is no finding
    missing = Cheat("report-only", "placeholder", {"metrics.json": b'{"total": -3}'})
    assert play_offline_scores(missing, crits, start_state, tmp_path / "d")[1] is None

    monkeypatch.setattr(audit, "generic_cheats", lambda *a: [cheat])
    base = SimpleNamespace(task=SimpleNamespace(criteria=lambda: crits, instruction="x",
                                                noop_correct=False), modality="code",
                           adapter=SimpleNamespace(placeholders={}))
    spec = SimpleNamespace(id="t/x", infeasible=False, toggles=())
    [case] = audit._generic_cheats(base, spec, 0, 0.0, start_state, tmp_path / "c")
    assert not case.ok and "reward='stbench' pays 0.750: target met by c1" in case.failed_criteria


def test_an_st_bench_query_is_cheated_with_its_prompt_copied_into_every_output(start, tmp_path):
    """ST-Bench's rule: echoing the prompt scores 0 (a copy: no placeholder allowance)."""
    prompt = "Write metrics.json with nse >= 0.6 for the basins in scope."
    crits = criteria(
        {"weight": 0, "gate": True, "getter": {"fn": "file_json", "path": "metrics.json"},
         "check": {"op": "stbench_realistic", "names": ["nse"]}},
        {"getter": {"fn": "file_json", "path": "metrics.json", "key": "nse"},
         "check": {"op": "stbench_target", "target": ">= 0.6", "reference": 0.8}})
    [copied] = [c for c in generic_cheats(crits, start, prompt) if c.name == "prompt-copied"]
    assert copied.files == {"metrics.json": prompt.encode()} and copied.limit == 0.0
    start_state = FinalState(work_dir=start, agent_status="done")
    assert play_offline(copied, crits, start_state, tmp_path).score == 0.0
    # only ST-Bench queries get it
    plain = criteria({"getter": {"fn": "file_text", "path": "out.txt"},
                      "check": {"op": "text", "expected": "ok"}})
    assert "prompt-copied" not in {c.name for c in generic_cheats(plain, start, prompt)}
