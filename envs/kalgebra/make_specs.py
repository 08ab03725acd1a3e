"""Writes ``task_specs/kalgebra/*.json`` (run ``python -m sciagent_gym.envs.kalgebra.make_specs``).

The specs share their GUI steps (the console line, the file dialogs, the 2D Graph's fields),
so they are written from the builders of ``specs/`` rather than by hand; the JSON files are
what the package loads (envs/kalgebra/tests/test_kalgebra_specs.py fails on a stale file).
"""

from __future__ import annotations

import json
from pathlib import Path

from sciagent_gym.envs.kalgebra.specs import console_tasks, plot_tasks, script_tasks, workflows
from sciagent_gym.envs.kalgebra.specs.console_tasks import POLY  # noqa: F401  (tests format it)

from sciagent_gym.sdk import load_adapter, spec_interface

OUT = Path(__file__).resolve().parents[2] / "task_specs" / "kalgebra"

TASKS = [console_tasks.derivative_at_point, console_tasks.partial_sum,
         console_tasks.wallis_product, script_tasks.load_script_evaluate,
         plot_tasks.root_from_plot, plot_tasks.plot_save_svg, console_tasks.newton_fixed_point,
         script_tasks.antiderivative_infeasible, script_tasks.missing_script_infeasible,
         console_tasks.logistic_script, script_tasks.local_maximum,
         script_tasks.projectile_range, workflows.function_study, workflows.oscillator_report]


def build(make) -> dict:
    """One task's spec as written: what ``make`` returns, with the interface its GUI oracle
    works through (menus, console, mixed) declared."""
    data = make()
    data["oracle_interface"] = spec_interface(
        data, load_adapter("kalgebra", getters=False).console_language)
    return data


def write_all() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for make in TASKS:
        data = build(make)
        path = OUT / (data["id"].split("/", 1)[1] + ".json")
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    write_all()
