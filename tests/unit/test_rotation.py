"""The rotating audit sample: bounded, changed tools first, every tool within a few runs."""

from __future__ import annotations

import math

from rotation import audit_sample, recently_changed

TOOLS = ["a", "b", "c", "d", "e", "f", "g", "h", "i"]


def test_everything_when_it_fits(monkeypatch):
    monkeypatch.delenv("SCIAGENT_AUDIT_ALL", raising=False)
    assert audit_sample(TOOLS[:5], budget=5, key=3, fresh=[]) == TOOLS[:5]
    monkeypatch.setenv("SCIAGENT_AUDIT_ALL", "1")
    assert audit_sample(TOOLS, budget=2, key=3, fresh=[]) == TOOLS


def test_many_changed_tools_leave_slots_for_the_rotation(monkeypatch):
    monkeypatch.delenv("SCIAGENT_AUDIT_ALL", raising=False)
    changed = ["i", "h", "g", "f", "e"]
    runs = [audit_sample(TOOLS, budget=5, key=k, fresh=changed) for k in range(8)]
    assert all({"i", "h", "g"} <= set(r) and len(r) == 5 for r in runs)
    assert set().union(*runs) == set(TOOLS)  # the others still come round


def test_changed_tools_always_then_a_window_that_covers_all(monkeypatch):
    monkeypatch.delenv("SCIAGENT_AUDIT_ALL", raising=False)
    runs = [audit_sample(TOOLS, budget=4, key=k, fresh=["g"]) for k in range(10, 20)]
    assert all(len(r) == 4 and "g" in r for r in runs)
    rest = len(TOOLS) - 1
    needed = math.ceil(rest / 3)  # three rotating slots a run
    assert set().union(*runs[:needed]) == set(TOOLS)


def test_recently_changed_reads_tool_folders_from_git():
    found = recently_changed(["ds9", "imagej", "praat", "pymol", "qgis", "qupath"], commits=400)
    assert found and set(found) <= {"ds9", "imagej", "praat", "pymol", "qgis", "qupath"}
