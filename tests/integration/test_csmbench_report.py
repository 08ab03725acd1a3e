"""CSMBench's evaluation in `report`: episodes recorded by run_episode (fake provider, fixture
tool) of a multiple-choice item and an open item, scored by accuracy, STS, BERTScore F1 and the
LLM judge (a scripted local chat-completions server). The open item's reference is a gold value,
so the report must stage the variant again to read it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sciagent_gym import tools
from sciagent_gym.benchmarks.csmbench import report as cr
from sciagent_gym.cli.main import main
from sciagent_gym.env import SciGUIEnv
from sciagent_gym.runs.rollout import run_episode
from sciagent_gym.tasks.spec import parse_spec
from sciagent_gym.tools.discovery import add_tools_root, remove_tools_root

FIXTURE_TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "tools"
SUM = "faketool/sum-numbers"
MC, OPEN, VALUE = "faketool/csm-mc", "faketool/csm-open", "faketool/csm-value"
SCALE = {MC: "scale:macro", OPEN: "scale:micro", VALUE: "scale:meso"}
OPTIONS = ["a grain micrograph", "a stress-strain curve", "a phase diagram"]
REFERENCE = "The numbers in the file add up to {gold.numbers.sum} in total."


@pytest.fixture(scope="module", autouse=True)
def fixture_tools(tmp_path_factory):
    """The fixture tool, and a temporary model cache (the sentence model is extracted there)."""
    env, cache = pytest.MonkeyPatch(), tmp_path_factory.mktemp("cache")
    env.setenv("SCIAGENT_CACHE", str(cache))
    add_tools_root(FIXTURE_TOOLS)
    yield
    remove_tools_root(FIXTURE_TOOLS)
    env.undo()
    shutil.rmtree(cache, ignore_errors=True)   # 90 MB of weights: not kept by pytest


def item_spec(task_id: str, answer: str | None) -> object:
    """The fixture's sum task as a CSMBench item answering ``answer`` (None: no answer)."""
    data = json.loads((FIXTURE_TOOLS / "task_specs" / f"{SUM}.json").read_text())
    getter, check = "answer_text", {"op": "sts_at_least", "reference": REFERENCE, "min": 0.5}
    if task_id == MC:
        check = {"op": "choice", "options": OPTIONS, "expected": "B"}
    elif task_id == VALUE:
        getter, check = "answer_number", {"op": "numeric", "expected": "$gold.numbers.sum"}
    data.update(id=task_id, tags=["csmbench", SCALE[task_id]],
                oracle=([f'answer("{answer}")'] if answer is not None else []) + ["DONE"])
    data["evaluator"] = {"criteria": [
        {"name": "answered", "weight": 0, "gate": True, "getter": "answer_given",
         "check": "is_true"},
        {"name": "the item", "weight": 1, "getter": getter, "check": check}]}
    return parse_spec(data, f"{task_id}.json")


def record(out: Path, answers: dict[str, list[str | None]]) -> dict[str, object]:
    """One episode per answer per item, by an "oracle" that gives that answer."""
    env = SciGUIEnv("faketool", task=SUM, provider="fake", screen_size=(160, 100))
    specs = {}
    try:
        for task_id, given in answers.items():
            for seed, answer in enumerate(given):
                specs[task_id] = env.specs[task_id] = item_spec(task_id, answer)
                run_episode(env, "oracle", seed, task=task_id,
                            out_dir=out / f"{task_id.split('/')[1]}-{seed}")
    finally:
        env.close()
    return specs


PARAPHRASE = "Their total is {gold.numbers.sum}."


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """MC: right, right (by text), wrong, two letters; open: a paraphrase of the reference, an
    unrelated sentence, no answer; value: right, wrong."""
    out = tmp_path_factory.mktemp("run")
    specs = record(out, {MC: ["B", "a stress-strain curve", "A", "A, B"],
                         OPEN: [PARAPHRASE, "The harbour was windy all afternoon.", None],
                         VALUE: ["{gold.numbers.sum}", "0"]})
    return out, specs


def test_items_read_the_recorded_verdicts_and_the_staged_reference(run):
    out, specs = run
    items = cr.csmbench_items(
        [{**json.loads((ep / "result.json").read_text()), "directory": str(ep)}
         for ep in sorted(out.iterdir())], specs)
    mc = [it for it in items if it.kind == "mc"]
    opn = [it for it in items if it.kind == "open"]
    assert [it.correct for it in mc] == [True, True, False, False]   # B, its text, A, "A, B"
    assert {it.scale for it in mc} == {"macro"} and {it.scale for it in opn} == {"micro"}
    answered = [it for it in opn if it.answer is not None]
    assert len(opn) == 3 and len(answered) == 2
    for it in opn:        # the gold sum filled in: a staged variant, not the template
        assert "{" not in it.reference and it.reference.startswith("The numbers in the file")
        assert "numbers.txt" in it.question
    para = next(it for it in answered if it.answer.startswith("Their total"))
    assert para.answer.split()[-1].rstrip(".") in para.reference


def test_summary_accuracy_sts_bertscore_and_judge(run, model_server):
    out, specs = run
    server = model_server([(200, "9"), (200, "2")])
    from sciagent_gym.benchmarks.csmbench.text_scores import Judge

    judge = Judge(server.url, model="judge-m")
    items = cr.csmbench_items(
        [{**json.loads((ep / "result.json").read_text()), "directory": str(ep)}
         for ep in sorted(out.iterdir())], specs)
    s = cr.csmbench_summary(items, judge=judge)
    o = s["overall"]
    assert (s["items"], o["mc_items"], o["open_items"], o["answered"]) == (9, 4, 3, 2)
    assert o["accuracy"] == 0.5
    assert (o["value_items"], o["value_accuracy"]) == (2, 0.5)
    assert list(s["by_scale"]) == ["micro", "meso", "macro"]       # in CSMBench's order
    assert s["by_scale"]["macro"]["accuracy"] == 0.5 and s["by_scale"]["macro"]["sts"] is None
    # paraphrase high, unrelated low, missing 0: the mean of three
    assert 0.1 < o["sts"] < 0.6 and s["by_scale"]["micro"]["sts"] == o["sts"]
    assert s["bertscore"].startswith("BERTScore F1 with all-MiniLM-L6-v2")
    assert 0 < o["bertscore_f1"] < 1
    # two calls (the unanswered item is not sent, it scores the floor 1): (9 + 2 + 1) / 3
    assert len(server.requests) == 2 and o["judge"] == pytest.approx(4.0)
    assert o["judged"] == 3 and s["judge_missing"] == 0
    table = cr.format_csmbench(s)
    assert "macro      mc" in table and "micro      open" in table and "judge-m at" in table
    assert "meso       value     2    0.500" in table


def test_report_cli_prints_and_saves_csmbench(run, model_server, monkeypatch, capsys):
    out, specs = run
    monkeypatch.setattr(tools, "load_tool_specs", lambda name=None: dict(specs))
    server = model_server([(200, "Score: 7"), (200, "not sure")])
    assert main(["report", str(out), "--out", str(out.parent / "rep"), "--json",
                 "--judge-url", server.url, "--judge-model", "m2", "--judge-key", "k"]) == 0
    csm = json.loads(capsys.readouterr().out)["csmbench"]
    assert csm["overall"]["accuracy"] == 0.5 and csm["judge_missing"] == 1
    assert csm["overall"]["judge"] == pytest.approx((7 + 1) / 2)  # the unparsed one left out
    assert server.headers[-1]["Authorization"] == "Bearer k"
    assert main(["report", str(out), "--out", str(out.parent / "rep")]) == 0
    text = capsys.readouterr().out
    assert "CSMBench: 9 items" in text and "LLM judge: not requested" in text


def test_runs_without_csmbench_items_print_nothing_new(tmp_path, capsys):
    env = SciGUIEnv("faketool", task=SUM, provider="fake", screen_size=(160, 100))
    try:
        run_episode(env, "oracle", 0, out_dir=tmp_path / "ep0")
    finally:
        env.close()
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "rep")]) == 0
    assert "CSMBench" not in capsys.readouterr().out
