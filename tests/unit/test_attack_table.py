"""The threat model's attack table (docs/threat-model.md): rendered from a saved catalogue report,
and in step with it."""

from __future__ import annotations

import json
from pathlib import Path

from sciagent_gym.runs import attack_table
from sciagent_gym.runs.attacks import CATALOGUE

ROOT = Path(__file__).resolve().parents[2]
SAVED = ROOT / "benchmarks" / "results" / "attacks-all.json"
PAGE = ROOT / "docs" / "threat-model.md"

CATALOGUE_OF_TWO = {"spy": ("spy", "see the program"), "fork-bomb": ("limits", "1000 processes")}


def _report() -> dict:
    return {"held": 3, "total": 4, "skipped": {"qupath": "not installed"},
            "measured": "2026-12-06 17:00 UTC",
            "tools": [{"tool": "ds9", "results": [{"attack": "spy", "held": True},
                                                   {"attack": "fork-bomb", "held": True}]},
                      {"tool": "pymol", "results": [{"attack": "spy", "held": False},
                                                     {"attack": "fork-bomb", "held": True}]}]}


def test_rows_count_held_tools_and_name_the_others():
    rows = attack_table.rows(_report(), CATALOGUE_OF_TWO)
    assert rows[0] == ["`spy`", "spy", "see the program", "1/2", "broken: pymol"]
    assert rows[1] == ["`fork-bomb`", "limits", "1000 processes", "2/2", "-"]


def test_an_attack_a_tool_did_not_play_is_named():
    report = _report()
    report["tools"][1]["results"].pop()
    rows = attack_table.rows(report, CATALOGUE_OF_TWO)
    assert rows[1][3:] == ["1/2", "not played: pymol"]


def test_section_says_how_it_was_measured():
    text = attack_table.readme_section(_report(), CATALOGUE_OF_TWO)
    assert text.startswith("Measured on 2026-12-06 17:00 UTC with `sciagent-gym audit --attacks")
    assert "not installed: qupath" in text and text.endswith("| **total** | | | **3/4** | |")


def test_the_threat_model_page_shows_the_saved_report():
    if not SAVED.is_file():  # the table is generated once a full run is saved
        assert attack_table.README_MARKER not in PAGE.read_text()
        return
    text = PAGE.read_text()
    start = text.index(attack_table.README_MARKER) + len(attack_table.README_MARKER)
    stop = text.index("\n<!-- end generated -->", start - 1)
    want = attack_table.readme_section(json.loads(SAVED.read_text()),
                                       attack_table.catalogue_of(CATALOGUE))
    assert text[start:stop] == want, "run scripts/update_readme.py (make readme)"


def test_the_catalogue_has_at_least_thirty_attacks():
    assert len(CATALOGUE) >= 30 and len({a.name for a in CATALOGUE}) == len(CATALOGUE)


def test_an_attack_that_does_not_apply_counts_on_neither_side():
    report = _report()
    report["tools"][0]["results"][0]["played"] = False  # spy does not apply to ds9
    rows = attack_table.rows(report, CATALOGUE_OF_TWO)
    assert rows[0][3:] == ["0/1", "broken: pymol, not applicable on ds9"]
