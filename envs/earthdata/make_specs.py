"""Writes the earth-data task specs (``task_specs/earthdata/*.json``) from one place.

Each family's reference script (what the scripted oracle runs in the sandbox, computing from the
staged files only) is typed line by line into the terminal by its GUI oracle, and its variants
(negatives) differ in one line, so the specs are generated rather than hand-edited: run
``.venv/bin/python -m sciagent_gym.envs.earthdata.make_specs`` after changing it or a module of
``specs/`` and commit the output with them (envs/earthdata/tests/test_earthdata_specs.py fails on a
stale file).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from sciagent_gym.envs.earthdata.specs import (
    agro,
    crop_trends,
    flow_signatures,
    general,
    hydro,
    learning_workflows,
    methane,
    methane_models,
    stats,
)
from sciagent_gym.envs.earthdata.specs.common import OUT

from sciagent_gym.sdk import load_adapter, spec_interface

BUILDERS: list[Callable[[], dict]] = [
    hydro.hydrology_spec, hydro.empty_scope_spec,
    flow_signatures.signatures_spec, flow_signatures.stratified_spec,
    agro.agriculture_spec, agro.correlation_spec,
    crop_trends.trends_spec,
    methane.methane_spec, methane.q10_spec,
    methane_models.forecast_spec, methane_models.comparison_spec,
    methane_models.budget_spec,
    general.transfer_spec, general.sampling_spec,
    learning_workflows.series_spec, learning_workflows.imbalanced_spec,
    learning_workflows.distill_spec, crop_trends.cross_spec,
    stats.fdc_spec, stats.stability_spec]


def build(make: Callable[[], dict]) -> dict:
    """One family's spec as written: what ``make`` returns, with the interface its GUI oracle
    works through (menus, console, mixed) declared."""
    spec = make()
    spec["oracle_interface"] = spec_interface(
        spec, load_adapter("earthdata", getters=False).console_language)
    return spec


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for make in BUILDERS:
        spec = build(make)
        path = OUT / f"{spec['id'].split('/', 1)[1]}.json"
        path.write_text(json.dumps(spec, indent=1, ensure_ascii=False) + "\n")
        print(path)


if __name__ == "__main__":
    main()
