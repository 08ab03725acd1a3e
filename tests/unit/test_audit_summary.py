"""The audit's summary table (a row per tool), generated from the JSON reports a test run saves."""

from __future__ import annotations

import json

from sciagent_gym.cli.main import main
from sciagent_gym.runs.audit_report import AuditReport, CaseResult, CrossResult, write_json
from sciagent_gym.runs.audit_summary import HEADER, load_report, summary_row


def _case(task, case, score, success, ok=True, noop_correct=False, gui=False):
    return CaseResult(task_id=task, seed=0, case=case, score=score, success=success, ok=ok,
                      failed_criteria=[], seconds=0.1, noop_correct=noop_correct, gui=gui)


def _report() -> AuditReport:
    cases = [
        _case("t/a", "oracle", 1.0, True), _case("t/a", "gui_oracle", 0.5, False, ok=False,
                                                 gui=True),
        _case("t/a", "noop", 0.0, False),
        _case("t/a", "wrong-file", 0.5, False), _case("t/a", "cheat:done", 0.0, False),
        _case("t/a", "cheat:empty", 0.1, False),
        _case("t/b", "oracle", 1.0, True, gui=True),  # a GUI-only oracle
        _case("t/b", "noop", 1.0, True, noop_correct=True),
        _case("t/b", "cheat:done", 1.0, True, noop_correct=True),
        _case("t/b", "late", 0.9, True, ok=False),  # a negative that wrongly succeeded
    ]
    cross = [CrossResult("t/a", "t/b", 0, 0.0, False), CrossResult("t/b", "t/a", 0, 0.0, False)]
    return AuditReport(tool="t", seeds=[0], cases=cases, cross=cross)


def test_row_counts_each_kind_of_case_and_the_do_nothing_variants_apart():
    row = summary_row(_report(), "Tool T").split(" | ")
    assert row[0] == "| Tool T" and row[1] == "2"
    assert row[2] == "2/2"                                   # oracles at 1.0
    assert row[3] == "1/2 (2 of 2 tasks)"                    # GUI oracles at 1.0
    assert row[4] == "1/1 (+1 do-nothing variant: 1.0)"      # no-ops
    assert row[5] == "1/2"                                   # negatives that failed
    assert row[7] == "3/3" and row[8] == "0.10"              # cheats held, best cheat score
    assert row[9] == "0 (+1 on do-nothing variants: DONE is right there)"
    assert row[10] == "8/10 |"                               # cases as expected


def test_json_round_trip_and_cli(tmp_path, capsys):
    report = _report()
    write_json(report, tmp_path / "t.json")
    back = load_report(tmp_path / "t.json")
    assert back.to_dict() == json.loads(json.dumps(report.to_dict()))
    assert main(["audit", "--summary", str(tmp_path)]) == 1  # a case was not as expected
    out = capsys.readouterr().out
    assert out.startswith(HEADER) and "| t | 2 |" in out
