"""Writes task_specs/paraview/*.json from the task builders of ``specs/`` (GUI oracles built from
shared steps: File > Open, Save Data, the quick-launch sync). Run it after editing one:
``python envs/paraview/make_specs.py``; the JSON files are what the package loads
(envs/paraview/tests/test_paraview_specs.py fails on a stale file)."""
import json
from pathlib import Path

from sciagent_gym.envs.paraview.specs import (
    colour_map,
    exports,
    filters,
    readings,
    vortex_cores,
    vortex_report,
)

from sciagent_gym.sdk import load_adapter, spec_interface

OUT = Path(__file__).resolve().parents[2] / "task_specs" / "paraview"

#: every task's builder, in the order the specs were first written
SPECS = [readings.pressure_minimum, readings.vortex_centre_console,
         exports.export_csv_precision, filters.speed_calculator, filters.threshold_cells,
         colour_map.colormap_range_state, readings.circulation_console, readings.missing_run,
         exports.excel_export, filters.pressure_profile, vortex_report.vortex_report,
         vortex_cores.vortex_cores_figure, filters.isobar_contour, exports.cell_average_csv,
         vortex_cores.vortex_core_census]


def write(spec):
    spec = build(spec)
    (OUT / (spec["id"].split("/")[1] + ".json")).write_text(
        json.dumps(spec, indent=2, ensure_ascii=False) + "\n")


def build(spec):
    """One task's spec as written: the id, then what the task function returns with the
    interface its GUI oracle works through (menus, console, mixed) declared after its modality."""
    spec = {"id": f"paraview/{spec.pop('slug')}", "tool": "paraview", **spec}
    interface = spec_interface(spec, load_adapter("paraview", getters=False).console_language)
    out = {}
    for key, value in spec.items():
        out[key] = value
        if key == "modality":
            out["oracle_interface"] = interface
    out.setdefault("oracle_interface", interface)
    return out


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    for fn in SPECS:
        write(fn())
    print(len(SPECS), "specs")
