"""Rules every tool's task specs follow, checked once for all tools (offline).

Tool-specific checks (data generators, gold values, getters on each format) stay in the
``test_<tool>_specs.py`` modules.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sciagent_gym.tasks.spec import load_specs
from sciagent_gym.tasks.task import sample_params
from sciagent_gym.tools import discover, task_specs_root

TOOLS = sorted(discover())
SPECS = {tool: load_specs(task_specs_root(), tool) for tool in TOOLS}
ALL = [(tool, spec_id) for tool in TOOLS for spec_id in sorted(SPECS[tool])]
# Tools with a task solved by mouse and keyboard alone (ImageJ's is withdrawn, see README;
# QuPath's oracles cannot run on these machines).
GUI_ORACLE_TOOLS = ("ds9", "praat", "pymol", "qgis")


def _flat(steps):
    """Steps with state-control ``toggle`` steps opened up."""
    for step in steps:
        if isinstance(step, dict) and "toggle" in step:
            yield from _flat(step["then"])
        else:
            yield step


def _uses_only_gui(spec) -> bool:
    return not any(isinstance(step, dict) and ("script" in step or "run" in step)
                   for step in _flat(spec.oracle))


@pytest.mark.parametrize("tool", TOOLS)
def test_tool_has_ten_tasks_spread_over_difficulties_and_an_infeasible_one(tool):
    specs = SPECS[tool].values()
    assert len(specs) >= (8 if tool == "imagej" else 10)
    assert {s.difficulty for s in specs} == {"easy", "medium", "hard"}
    assert sum(s.infeasible for s in specs) >= 1
    for spec in specs:
        assert spec.tool == tool and Path(spec.source).stem == spec.slug


@pytest.mark.parametrize("tool", GUI_ORACLE_TOOLS)
def test_a_gui_only_oracle_waits_for_its_windows(tool):
    gui = [s for s in SPECS[tool].values() if _uses_only_gui(s) and not s.infeasible]
    assert gui, f"{tool}: no oracle uses only GUI actions"
    for spec in gui:
        assert any(isinstance(step, dict) and "await_window" in step for step in spec.oracle)


@pytest.mark.parametrize(("tool", "spec_id"), ALL)
def test_spec_has_negatives_a_gate_and_a_final_answer(tool, spec_id):
    spec = SPECS[tool][spec_id]
    assert len(spec.negatives) >= 2
    assert spec.oracle[-1] in ("DONE", "FAIL")
    assert spec.evaluator[0].get("gate") is True
    assert spec.hints.strip(), "hints (shown with hints=True) are missing"


@pytest.mark.parametrize(("tool", "spec_id"), ALL)
def test_params_are_deterministic_and_vary(tool, spec_id):
    spec = SPECS[tool][spec_id]
    sampled = [sample_params(spec, seed) for seed in range(20)]
    assert sampled == [sample_params(spec, seed) for seed in range(20)]
    assert len({repr(sorted(p.items())) for p in sampled}) > 1, "params never vary"
