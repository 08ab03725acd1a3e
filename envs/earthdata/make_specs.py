"""Writes the earth-data task specs (``task_specs/earthdata/*.json``) from one place.

Each family's reference script (what the scripted oracle runs in the sandbox, computing from the
staged files only) is typed line by line into the terminal by its GUI oracle, and its variants
(negatives) differ in one line, so the specs are generated rather than hand-edited: run
``.venv/bin/python envs/earthdata/build_specs.py`` after changing it or a
``specs_*.py`` module and commit the output with them.
"""

from __future__ import annotations

import json

from sciagent_gym.envs.earthdata import (
    specs_agro,
    specs_agro_more,
    specs_general,
    specs_general_more,
    specs_hydro,
    specs_hydro_more,
    specs_methane,
    specs_methane_more,
    specs_stats,
)
from sciagent_gym.envs.earthdata.specs_common import OUT

from sciagent_gym.sdk import load_adapter, spec_interface

BUILDERS = [specs_hydro.hydrology_spec, specs_hydro.empty_scope_spec,
            specs_hydro_more.signatures_spec, specs_hydro_more.stratified_spec,
            specs_agro.agriculture_spec, specs_agro.correlation_spec,
            specs_agro_more.trends_spec,
            specs_methane.methane_spec, specs_methane.q10_spec,
            specs_methane_more.forecast_spec, specs_methane_more.comparison_spec,
            specs_methane_more.budget_spec,
            specs_general.transfer_spec, specs_general.sampling_spec,
            specs_general_more.series_spec, specs_general_more.imbalanced_spec,
            specs_general_more.distill_spec, specs_agro_more.cross_spec,
            specs_stats.fdc_spec, specs_stats.stability_spec]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for build in BUILDERS:
        spec = build()
        spec["oracle_interface"] = spec_interface(
            spec, load_adapter("earthdata", getters=False).console_language)
        path = OUT / f"{spec['id'].split('/', 1)[1]}.json"
        path.write_text(json.dumps(spec, indent=1, ensure_ascii=False) + "\n")
        print(path)


if __name__ == "__main__":
    main()
