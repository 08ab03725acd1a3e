# ruff: noqa: E501  (instruction texts are long string literals)
"""The long-horizon ParaView vortex-core families, which share their extract stage: the cores
extracted, counted, shown and saved (the figure), and the isobar, cell count, core
circulation and state (the census)."""

from __future__ import annotations

from sciagent_gym.envs.paraview.specs.common import GEN, OPEN_HINT, SAVE_DATA_HINT
from sciagent_gym.envs.paraview.specs.steps import (
    APPLY,
    INFO_TAB,
    MAIN,
    PROPS_TAB,
    SYNC,
    open_file,
    quick_launch,
    save_data,
    save_state,
)

BG = [84, 89, 109]  # the render view's background in a saved screenshot (PNG)


def _cores_extract_stage(level: str) -> dict:
    """The stage both vortex-core tasks share: cores.csv holds the threshold's points, only
    pressures up to ``level`` (a template reference) and the deepest core."""
    return {"name": "extract", "description": "the cores exported",
            "criteria": [
                {"name": "cores.csv has the threshold's points", "weight": 0, "gate": True,
                 "description": "one row per point of the kept cells",
                 "getter": {"fn": "paraview_table", "path": "cores.csv", "column": "pressure",
                            "stat": "rows"},
                 "check": {"op": "numeric", "expected": "$gold.f.threshold_points",
                           "abs_tol": 0.5}},
                {"name": "only low pressure", "weight": 1,
                 "getter": {"fn": "paraview_table", "path": "cores.csv", "column": "pressure",
                            "stat": "max"},
                 "check": {"op": "in_range", "max": level}},
                {"name": "the deepest core included", "weight": 1,
                 "getter": {"fn": "paraview_table", "path": "cores.csv", "column": "pressure",
                            "stat": "min"},
                 "check": {"op": "numeric", "expected": "$gold.f.p_min", "abs_tol": 0.001}}]}


def vortex_cores_figure():
    read = {"read": {"region": [80, 581, 90, 18], "pattern": "([0-9]{{1,3}}(?:,[0-9]{{3}})*)",
                     "psm": 7, "scale": 3},
            "answer": "{output}"}
    extract = [*open_file("flow.vtk"), "pyautogui.click(70, 211)", *quick_launch("Threshold"),
               "pyautogui.tripleClick(176, 614)",
               "pyautogui.hotkey('ctrl', 'a')\npyautogui.write('{level}')",
               APPLY, *save_data("cores.csv")]
    measure = [INFO_TAB, *SYNC, read]
    hide_field = ["pyautogui.click(13, 211)", "pyautogui.click(90, 255)"]
    figure = [MAIN, "pyautogui.click(312, 98)", "pyautogui.click(300, 144)",
              "pyautogui.click(21, 29)", "pyautogui.click(90, 216)",
              {"await_window": "^Save Screenshot$", "focused": True},
              "pyautogui.write('{work}/cores.png')\npyautogui.press('enter')",
              {"await_window": "^Save Screenshot Options", "focused": True},
              {"in_window": "^Save Screenshot Options", "do": ["pyautogui.tripleClick(194, 77)"]},
              "pyautogui.hotkey('ctrl', 'a')\npyautogui.write('800')",
              {"in_window": "^Save Screenshot Options", "do": ["pyautogui.tripleClick(356, 77)"]},
              "pyautogui.hotkey('ctrl', 'a')\npyautogui.write('600')",
              {"in_window": "^Save Screenshot Options", "do": ["pyautogui.click(522, 358)"]},
              {"await_window": "^Save Screenshot Options", "gone": True}]
    return {
        "slug": "vortex-cores-figure",
        "title": "Vortex cores: extract, count, figure and state (long)",
        "instruction": "A flow solver wrote {work}/flow.vtk, a 2-D flow field (point arrays "
                       "pressure in kPa, vorticity, velocity); it is not loaded yet. The vortex "
                       "cores are where the pressure is below {level} kPa. In ParaView: (1) open "
                       "the file; (2) extract the cores with the Threshold filter on pressure (from "
                       "the field's minimum up to {level}, keeping cells whose points are all in "
                       "range) and save the threshold's output as the CSV table {work}/cores.csv; "
                       "(3) report how many cells the threshold's output has through the answer "
                       "action, e.g. answer(\"512\"); (4) colour the cores by vorticity and save a "
                       "screenshot of the render view showing only the cores (hide the full field), "
                       "800 x 600 pixels, as {work}/cores.png; "
                       "(5) save the ParaView state as {work}/cores.pvsm.",
        "hints": OPEN_HINT + " Threshold: Scalars pressure, Upper Threshold, Apply. "
                 + SAVE_DATA_HINT + " The Information tab shows the number of cells; the "
                 "toolbar's colouring box picks the array; File > Save Screenshot... asks for the "
                 "image resolution; File > Save State... writes the .pvsm.",
        "difficulty": "hard", "modality": "gui",
        "tags": ["long-horizon", "file-dialog", "threshold", "screen-reading", "screenshot",
                 "state-file", "export"],
        "max_steps": 75,
        "params": {"n": {"choice": [2, 3, 4]}, "level": {"choice": [100.6, 100.9, 101.1]}},
        "setup": {"generate": [{**GEN, "args": {"path": "flow.vtk", "n_vortices": "$n",
                                                "level": "$level"}}],
                  "protect": ["flow.vtk"]},
        "evaluator": {"stages": [
            _cores_extract_stage("$level"),
            {"name": "measure", "blocks_from": ["extract"],
             "criteria": [
                 {"name": "cells in the cores", "weight": 2,
                  "getter": {"fn": "answer_number"},
                  "check": {"op": "numeric", "expected": "$gold.f.threshold_cells",
                            "abs_tol": 0.5}}]},
            {"name": "figure", "blocks_from": ["extract"],
             "criteria": [
                 {"name": "800 x 600 screenshot", "weight": 0, "gate": True,
                  "getter": {"fn": "paraview_png", "path": "cores.png", "stat": "width"},
                  "check": {"op": "numeric", "expected": 800, "abs_tol": 0.5}},
                 {"name": "600 pixels high", "weight": 1,
                  "getter": {"fn": "paraview_png", "path": "cores.png", "stat": "height"},
                  "check": {"op": "numeric", "expected": 600, "abs_tol": 0.5}},
                 {"name": "shows the cores, not the whole field", "weight": 1,
                  "description": "most of the view is background; the cores cover a little",
                  "getter": {"fn": "paraview_png", "path": "cores.png", "stat": "fraction",
                             "color": BG, "tolerance": 6},
                  "check": {"op": "in_range", "min": 0.8, "max": 0.995}}]},
            {"name": "state", "blocks_from": ["extract"],
             "criteria": [
                 {"name": "threshold level in the state", "weight": 1,
                  "getter": {"fn": "paraview_state", "path": "cores.pvsm", "source": "Threshold1",
                             "key": "properties.UpperThreshold.0"},
                  "check": {"op": "numeric", "expected": "$level", "abs_tol": 1e-6}},
                 {"name": "cores coloured by vorticity", "weight": 1,
                  "getter": {"fn": "paraview_state", "path": "cores.pvsm", "source": "Threshold1",
                             "key": "coloring"},
                  "check": {"op": "equals", "expected": "vorticity"}}]}]},
        "oracle": [*extract, *measure, *hide_field, *figure, *save_state("cores.pvsm"), "DONE"],
        "negatives": {
            "stops-after-extract": [*extract, "DONE"],
            "stops-after-count": [*extract, *measure, "DONE"],
            "whole-field-figure": [*open_file("flow.vtk"), "pyautogui.click(70, 211)",
                                   *save_data("cores.csv"), MAIN, "pyautogui.click(70, 211)",
                                   *figure,
                                   *save_state("cores.pvsm"), "DONE"]},
    }


def vortex_core_census():
    read = {"read": {"region": [80, 581, 90, 18], "pattern": "([0-9]{{1,3}}(?:,[0-9]{{3}})*)",
                     "psm": 7, "scale": 3},
            "answer": "{output}"}
    opened = open_file("flow.vtk")
    isobar = ["pyautogui.click(70, 211)", *quick_launch("Contour"),
              "pyautogui.doubleClick(100, 704)",
              "pyautogui.hotkey('ctrl', 'a')\npyautogui.write('{t.level}')\npyautogui.press('enter')",
              APPLY, *save_data("isobar.csv")]

    def extract(level):
        return ["pyautogui.click(70, 211)", *quick_launch("Threshold"),
                "pyautogui.tripleClick(176, 614)",
                f"pyautogui.hotkey('ctrl', 'a')\npyautogui.write('{level}')",
                APPLY, *save_data("cores.csv")]
    measure = [INFO_TAB, *SYNC, read]
    # Integrate Variables on the selected item (the threshold, or the whole field)
    integrate = [PROPS_TAB, *quick_launch("Integrate Variables"), APPLY,
                 *save_data("{circ}")]
    state = save_state("census.pvsm")
    whole_field = ["pyautogui.click(70, 211)", *integrate]
    return {
        "slug": "vortex-core-census",
        "title": "Vortex core census: isobar, cores, cell count, core circulation, state (long)",
        "instruction": "A flow solver wrote {work}/flow.vtk, a 2-D flow field (x, y in metres; "
                       "point arrays pressure in kPa, vorticity in 1/s, velocity); it is not loaded "
                       "yet. The vortex cores are where the pressure is below {t.level} kPa. In "
                       "ParaView: (1) open the file; (2) draw the isobar p = {t.level} kPa with the "
                       "Contour filter on pressure and save the contour's points as the CSV table "
                       "{work}/isobar.csv; (3) extract the cores from the field with the Threshold "
                       "filter on pressure (from the field's minimum up to {t.level}, keeping cells "
                       "whose points are all in range) and save the threshold's output as "
                       "{work}/cores.csv; (4) report how many cells the threshold's output has "
                       "through the answer action, e.g. answer(\"512\"); (5) integrate the fields "
                       "over the cores only (Integrate Variables on the threshold's output: its "
                       "vorticity is the circulation the cores carry, in m²/s) and save the "
                       "integrated values as {work}/{circ}; (6) save the ParaView state as "
                       "{work}/census.pvsm.",
        "hints": OPEN_HINT + " Contour: Contour By pressure, edit the value under Isosurfaces. "
                 "Threshold: Scalars pressure, Upper Threshold, Apply. Integrate Variables is "
                 "under Filters > Data Analysis. " + SAVE_DATA_HINT + " The Information tab "
                 "shows the number of cells; File > Save State... writes the .pvsm.",
        "difficulty": "hard", "modality": "gui",
        "tags": ["long-horizon", "file-dialog", "contour", "threshold", "integration",
                 "circulation", "screen-reading", "state-file", "export"],
        "max_steps": 75,
        "params": {"n": {"choice": [2, 3, 4]},
                   "t": {"choice": [{"level": 100.6, "wrong": 100.9},
                                    {"level": 100.9, "wrong": 101.1},
                                    {"level": 101.1, "wrong": 100.6}]},
                   "circ": {"choice": ["core_circulation.csv", "cores_integrated.csv",
                                       "circulation.csv"]}},
        "setup": {"generate": [{**GEN, "args": {"path": "flow.vtk", "n_vortices": "$n",
                                                "level": "$t.level"}}],
                  "protect": ["flow.vtk"]},
        "evaluator": {"stages": [
            {"name": "isobar", "description": "the isobar around the cores exported",
             "criteria": [
                 {"name": "isobar.csv is a contour table", "weight": 0, "gate": True,
                  "getter": {"fn": "paraview_table", "path": "isobar.csv", "column": "Points:0",
                             "stat": "rows"},
                  "check": {"op": "in_range", "min": 8}},
                 {"name": "every point on the level", "weight": 1,
                  "description": "the contour's pressure column is the level everywhere",
                  "getter": {"fn": "paraview_table", "path": "isobar.csv", "column": "pressure",
                             "stat": "spread"},
                  "check": {"op": "in_range", "max": 1e-6}},
                 {"name": "the whole isobar at the level", "weight": 1,
                  "description": "one point per grid edge the level crosses, at the level",
                  "getter": {"fn": "paraview_table", "path": "isobar.csv", "column": "pressure",
                             "stat": "mean"},
                  "check": {"op": "numeric", "expected": "$t.level", "abs_tol": 1e-6}},
                 {"name": "one point per crossed edge", "weight": 1,
                  "getter": {"fn": "paraview_table", "path": "isobar.csv", "column": "Points:0",
                             "stat": "rows"},
                  "check": {"op": "numeric", "expected": "$gold.f.isobar_points",
                            "abs_tol": 0.5}}]},
            _cores_extract_stage("$t.level"),
            {"name": "measure", "blocks_from": ["extract"],
             "criteria": [
                 {"name": "cells in the cores", "weight": 3,
                  "getter": {"fn": "answer_number"},
                  "check": {"op": "numeric", "expected": "$gold.f.threshold_cells",
                            "abs_tol": 0.5}}]},
            {"name": "circulation", "blocks_from": ["extract"],
             "description": "the fields integrated over the cores' cells only",
             "criteria": [
                 {"name": "{circ} is one integrated row", "weight": 0, "gate": True,
                  "getter": {"fn": "paraview_table", "path": "{circ}", "column": "vorticity",
                             "stat": "rows"},
                  "check": {"op": "numeric", "expected": 1, "abs_tol": 0.1}},
                 {"name": "circulation of the cores", "weight": 3,
                  "description": "the vorticity integrated over the threshold's cells (bilinear "
                                 "cells; the CSV's 5 significant digits): within 0.2% or 0.005 "
                                 "m²/s; the whole field's integral is not it",
                  "getter": {"fn": "paraview_table", "path": "{circ}", "column": "vorticity",
                             "stat": "max"},
                  "check": {"op": "numeric", "expected": "$gold.f.core_circulation",
                            "abs_tol": 0.005, "rel_tol": 0.002}}]},
            {"name": "state", "blocks_from": ["extract"],
             "criteria": [
                 {"name": "threshold level in the state", "weight": 1,
                  "getter": {"fn": "paraview_state", "path": "census.pvsm",
                             "source": "Threshold1", "key": "properties.UpperThreshold.0"},
                  "check": {"op": "numeric", "expected": "$t.level", "abs_tol": 1e-6}},
                 {"name": "state holds the isobar", "weight": 1,
                  "getter": {"fn": "paraview_state", "path": "census.pvsm", "key": "filters"},
                  "check": {"op": "contains", "item": "Contour"}},
                 {"name": "state holds the integration", "weight": 1,
                  "getter": {"fn": "paraview_state", "path": "census.pvsm", "key": "filters"},
                  "check": {"op": "contains", "item": "IntegrateAttributes"}}]}]},
        "oracle": [*opened, *isobar, *extract("{t.level}"), *measure, *integrate, *state,
                   "DONE"],
        "negatives": {
            "stops-after-isobar": [*opened, *isobar, "DONE"],
            "stops-after-count": [*opened, *isobar, *extract("{t.level}"), *measure, "DONE"],
            "wrong-threshold-level": [*opened, *isobar, *extract("{t.wrong}"), *measure,
                                      *integrate, *state, "DONE"],
            "integrates-whole-field": [*opened, *isobar, *extract("{t.level}"), *measure,
                                       *whole_field, *state, "DONE"],
            "answers-point-count": [*opened, *isobar, *extract("{t.level}"),
                                    "answer(\"{gold.f.threshold_points}\")", *integrate, *state,
                                    "DONE"]},
    }
