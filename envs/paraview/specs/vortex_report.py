# ruff: noqa: E501  (instruction texts are long string literals)
"""The long-horizon ParaView report on the strongest vortex, scored in stages: the speed
field, the pressure profile through the core, the core pressure and the state file."""

from __future__ import annotations

from sciagent_gym.envs.paraview.specs.common import GEN, OPEN_HINT, SAVE_DATA_HINT
from sciagent_gym.envs.paraview.specs.steps import (
    APPLY,
    INFO_TAB,
    SYNC,
    open_file,
    quick_launch,
    save_data,
    save_state,
)


def vortex_report():
    read = {"read": {"region": [196, 507, 74, 18], "pattern": "([0-9]+[.,][0-9]{{3}})",
                     "psm": 7, "number": True, "scale": 3},
            "answer": "{output}"}
    derive = [*open_file("flow.vtk"), "pyautogui.click(70, 211)", *quick_launch("Calculator"),
              "pyautogui.tripleClick(198, 603)",
              "pyautogui.hotkey('ctrl', 'a')\npyautogui.write('speed')",
              "pyautogui.click(140, 631)", "pyautogui.write('mag(velocity)')", APPLY,
              *save_data("speed.csv")]
    profile = [*quick_launch("Plot Over Line"),
               "pyautogui.tripleClick(163, 678)",
               "pyautogui.hotkey('ctrl', 'a')\npyautogui.write('{r.y}')",
               "pyautogui.tripleClick(163, 703)",
               "pyautogui.hotkey('ctrl', 'a')\npyautogui.write('{r.y}')",
               APPLY, *save_data("profile.csv")]
    measure = [INFO_TAB, "pyautogui.scroll(-30, 140, 650)", *SYNC, read]
    return {
        "slug": "vortex-report",
        "title": "Vortex analysis: speed field, core profile, core pressure, state (long)",
        "instruction": "A flow solver wrote {work}/flow.vtk, a 2-D flow field (x = 0..8 m, "
                       "y = 0..6 m; point arrays pressure in kPa, vorticity, velocity); it is not "
                       "loaded yet. Its strongest vortex sits on the line y = {r.y} m. In ParaView: "
                       "(1) open the file; (2) derive the flow speed |velocity| as a point array "
                       "named speed with the Calculator filter and save the calculator's output as "
                       "the CSV table {work}/speed.csv; (3) sample the calculator's output along the "
                       "horizontal line y = {r.y} m from x = 0 to x = 8 m with Plot Over Line and "
                       "save the sampled line as {work}/profile.csv; (4) report the lowest pressure "
                       "on that line with three decimals through the answer action, e.g. "
                       "answer(\"97.125\"); (5) save the ParaView state as {work}/analysis.pvsm.",
        "hints": OPEN_HINT + " Calculator: Result Array Name speed, expression mag(velocity). "
                 "Plot Over Line: Point1/Point2 of the line. " + SAVE_DATA_HINT + " The "
                 "Information tab lists the sampled arrays' ranges; File > Save State... writes "
                 "the .pvsm.",
        "difficulty": "hard", "modality": "gui",
        "tags": ["long-horizon", "file-dialog", "calculator", "plot-over-line", "screen-reading",
                 "state-file", "export"],
        "max_steps": 75,
        "params": {"n": {"choice": [2, 3, 4]},
                   "r": {"choice": [{"row": 18, "y": 1.8}, {"row": 24, "y": 2.4},
                                    {"row": 31, "y": 3.1}, {"row": 37, "y": 3.7},
                                    {"row": 42, "y": 4.2}]}},
        "setup": {"generate": [{**GEN, "args": {"path": "flow.vtk", "n_vortices": "$n",
                                                "strong_row": "$r.row"}}],
                  "protect": ["flow.vtk"]},
        "evaluator": {"stages": [
            {"name": "derive", "description": "the speed field exported",
             "criteria": [
                 {"name": "speed.csv has one row per grid point", "weight": 0, "gate": True,
                  "getter": {"fn": "paraview_table", "path": "speed.csv", "column": "speed",
                             "stat": "rows"},
                  "check": {"op": "numeric", "expected": "$gold.f.n_points", "abs_tol": 0.5}},
                 {"name": "peak speed", "weight": 1,
                  "getter": {"fn": "paraview_table", "path": "speed.csv", "column": "speed",
                             "stat": "max"},
                  "check": {"op": "numeric", "expected": "$gold.f.speed_max", "rel_tol": 2e-4}},
                 {"name": "mean speed", "weight": 1,
                  "getter": {"fn": "paraview_table", "path": "speed.csv", "column": "speed",
                             "stat": "mean"},
                  "check": {"op": "numeric", "expected": "$gold.f.speed_mean", "rel_tol": 2e-4}}]},
            {"name": "profile", "blocks_from": ["derive"],
             "description": "the line through the core, sampled from the calculator's output",
             "criteria": [
                 {"name": "profile.csv samples speed", "weight": 0, "gate": True,
                  "getter": {"fn": "paraview_table", "path": "profile.csv", "column": "speed",
                             "stat": "rows"},
                  "check": {"op": "in_range", "min": 100}},
                 {"name": "on the line y = const", "weight": 1,
                  "getter": {"fn": "paraview_table", "path": "profile.csv", "column": "Points:1",
                             "stat": "mean"},
                  "check": {"op": "numeric", "expected": "$gold.f.line_y", "abs_tol": 1e-4}},
                 {"name": "horizontal", "weight": 1,
                  "getter": {"fn": "paraview_table", "path": "profile.csv", "column": "Points:1",
                             "stat": "spread"},
                  "check": {"op": "in_range", "max": 1e-6}},
                 {"name": "across the domain", "weight": 1,
                  "getter": {"fn": "paraview_table", "path": "profile.csv", "column": "Points:0",
                             "stat": "spread"},
                  "check": {"op": "numeric", "expected": "$gold.f.x_max", "abs_tol": 1e-4}},
                 {"name": "core on the line", "weight": 1,
                  "getter": {"fn": "paraview_table", "path": "profile.csv", "column": "pressure",
                             "stat": "argmin:Points:0"},
                  "check": {"op": "numeric", "expected": "$gold.f.profile_min_x",
                            "abs_tol": 0.05}}]},
            {"name": "measure", "blocks_from": ["profile"],
             "description": "the core pressure read off ParaView",
             "criteria": [
                 {"name": "lowest pressure on the line", "weight": 2,
                  "getter": {"fn": "answer_number"},
                  "check": {"op": "in_range", "min": "$gold.f.profile_min_lo",
                            "max": "$gold.f.profile_min_hi"}}]},
            {"name": "state", "blocks_from": ["profile"],
             "description": "the pipeline saved",
             "criteria": [
                 {"name": "state holds the calculator", "weight": 1,
                  "getter": {"fn": "paraview_state", "path": "analysis.pvsm", "key": "filters"},
                  "check": {"op": "contains", "item": "Calculator"}},
                 {"name": "state holds the line probe", "weight": 1,
                  "getter": {"fn": "paraview_state", "path": "analysis.pvsm", "key": "filters"},
                  "check": {"op": "contains", "item": "ProbeLine"}}]}]},
        "oracle": [*derive, *profile, *measure, *save_state("analysis.pvsm"), "DONE"],
        "negatives": {
            "stops-after-derive": [*derive, "DONE"],
            "stops-after-profile": [*derive, *profile, "DONE"],
            "no-speed-field": [*open_file("flow.vtk"), "pyautogui.click(70, 211)",
                               *profile, *measure, *save_state("analysis.pvsm"), "DONE"]},
    }
