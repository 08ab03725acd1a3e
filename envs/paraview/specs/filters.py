# ruff: noqa: E501  (instruction texts are long string literals)
"""ParaView families on one filter's output: the speed (Calculator), the low-pressure cells
(Threshold), a pressure profile (Plot Over Line) and an isobar (Contour)."""

from __future__ import annotations

from sciagent_gym.envs.paraview.specs.common import ANSWER_GATE, GEN, OPEN_HINT, SAVE_DATA_HINT
from sciagent_gym.envs.paraview.specs.steps import (
    APPLY,
    INFO_TAB,
    MAIN,
    SYNC,
    open_file,
    quick_launch,
    save_data,
)


def speed_calculator():
    return {
        "slug": "speed-calculator",
        "title": "Flow speed with the Calculator filter, exported as CSV",
        "instruction": "ParaView shows {work}/flow.vtk, a 2-D flow field with a point vector array "
                       "velocity (m/s). Derive the flow speed |velocity| as a new point array named "
                       "speed with ParaView's Calculator filter and save the calculator's output as "
                       "the CSV table {work}/speed.csv.",
        "hints": "Select flow.vtk, Filters > Alphabetical > Calculator (or Ctrl+Space, "
                 "'Calculator'); set Result Array Name and the expression mag(velocity); Apply; "
                 "then " + SAVE_DATA_HINT,
        "difficulty": "medium", "modality": "gui",
        "tags": ["calculator", "export", "csv", "derived-field"],
        "max_steps": 24,
        "params": {"n": {"choice": [2, 3, 4]}},
        "setup": {"generate": [{**GEN, "args": {"path": "flow.vtk", "n_vortices": "$n"}}],
                  "open": ["flow.vtk"], "protect": ["flow.vtk"]},
        "evaluator": {"criteria": [
            {"name": "one row per grid point", "weight": 0, "gate": True,
             "getter": {"fn": "paraview_table", "path": "speed.csv", "column": "speed",
                        "stat": "rows"},
             "check": {"op": "numeric", "expected": "$gold.f.n_points", "abs_tol": 0.5}},
            {"name": "peak speed", "weight": 1,
             "description": "max of the speed column = max |velocity| (5 significant digits)",
             "getter": {"fn": "paraview_table", "path": "speed.csv", "column": "speed",
                        "stat": "max"},
             "check": {"op": "numeric", "expected": "$gold.f.speed_max", "rel_tol": 2e-4}},
            {"name": "mean speed", "weight": 1,
             "description": "mean of the speed column = mean |velocity| over the grid",
             "getter": {"fn": "paraview_table", "path": "speed.csv", "column": "speed",
                        "stat": "mean"},
             "check": {"op": "numeric", "expected": "$gold.f.speed_mean", "rel_tol": 2e-4}}]},
        "oracle": [MAIN, "pyautogui.click(70, 211)", *quick_launch("Calculator"),
                   "pyautogui.tripleClick(198, 603)",
                   "pyautogui.hotkey('ctrl', 'a')\npyautogui.write('speed')",
                   "pyautogui.click(140, 631)",
                   "pyautogui.write('mag(velocity)')",
                   APPLY, *save_data("speed.csv"), "DONE"],
        "negatives": {
            "x-component-only": [MAIN, "pyautogui.click(70, 211)", *quick_launch("Calculator"),
                                 "pyautogui.tripleClick(198, 603)",
                                 "pyautogui.hotkey('ctrl', 'a')\npyautogui.write('speed')",
                                 "pyautogui.click(140, 631)",
                                 "pyautogui.write('abs(velocity_X)')",
                                 APPLY, *save_data("speed.csv"), "DONE"],
            "no-calculator": [MAIN, "pyautogui.click(70, 211)", *save_data("speed.csv"), "DONE"]},
    }


def threshold_cells():
    read = {"read": {"region": [80, 581, 90, 18], "pattern": "([0-9]{{1,3}}(?:,[0-9]{{3}})*)",
                     "psm": 7, "scale": 3},
            "answer": "{output}"}
    return {
        "slug": "threshold-cells",
        "title": "Cells of the low-pressure cores (Threshold)",
        "instruction": "ParaView shows {work}/flow.vtk, a 2-D flow field with a point array "
                       "pressure (kPa). The vortex cores are where the pressure is below "
                       "{level} kPa. Extract them with ParaView's Threshold filter on pressure "
                       "(keep the cells whose points all have pressure from the field's minimum up "
                       "to {level}), save the threshold's output as the CSV table {work}/{csv}, and "
                       "report how many cells the output has, e.g. answer(\"512\").",
        "hints": "Select flow.vtk, Filters > Common > Threshold (or Ctrl+Space, 'Threshold'); "
                 "Scalars pressure, set the Upper Threshold, keep All Scalars ticked, Apply; "
                 "File > Save Data (Ctrl+S) with a name ending in .csv writes the selected "
                 "filter's output; the Information tab shows the number of cells.",
        "difficulty": "medium", "modality": "gui", "heldout": True,
        "tags": ["threshold", "information-panel", "screen-reading", "count"],
        "max_steps": 30,
        "params": {"n": {"choice": [2, 3, 4]}, "level": {"choice": [100.6, 100.9, 101.1]},
                   "csv": {"choice": ["cores.csv", "low_pressure.csv", "vortex_cells.csv"]}},
        "setup": {"generate": [{**GEN, "args": {"path": "flow.vtk", "n_vortices": "$n",
                                                "level": "$level"}}],
                  "open": ["flow.vtk"], "protect": ["flow.vtk"]},
        "evaluator": {"criteria": [
            ANSWER_GATE,
            {"name": "{csv} has the threshold's points", "weight": 0.25,
             "description": "one row per point of the kept cells",
             "getter": {"fn": "paraview_table", "path": "{csv}", "column": "pressure",
                        "stat": "rows"},
             "check": {"op": "numeric", "expected": "$gold.f.threshold_points", "abs_tol": 0.5}},
            {"name": "{csv} holds the deepest core", "weight": 0.15,
             "description": "its lowest pressure is the field's minimum",
             "getter": {"fn": "paraview_table", "path": "{csv}", "column": "pressure",
                        "stat": "min"},
             "check": {"op": "numeric", "expected": "$gold.f.p_min", "abs_tol": 0.001}},
            {"name": "cells below the level", "weight": 0.6,
             "description": "cells whose four corner points all have pressure <= the level",
             "getter": {"fn": "answer_number"},
             "check": {"op": "numeric", "expected": "$gold.f.threshold_cells", "abs_tol": 0.5}}]},
        "oracle": [MAIN, "pyautogui.click(70, 211)", *quick_launch("Threshold"),
                   "pyautogui.tripleClick(176, 614)",
                   "pyautogui.hotkey('ctrl', 'a')\npyautogui.write('{level}')",
                   APPLY, *save_data("{csv}"), INFO_TAB, *SYNC, read, "DONE"],
        "negatives": {
            "all-cells": ["answer(\"{gold.f.n_cells}\")", "DONE"],
            "points-not-cells": ["answer(\"{gold.f.n_points}\")", "DONE"],
            "no-answer": [MAIN, "DONE"],
            "whole-field-saved": [MAIN, "pyautogui.click(70, 211)", *save_data("{csv}"),
                                  "answer(\"{gold.f.threshold_cells}\")", "DONE"]},
    }


def pressure_profile():
    def steps(y, save=True):
        out = open_file("flow.vtk") + [
            "pyautogui.click(70, 211)", *quick_launch("Plot Over Line"),
            "pyautogui.tripleClick(163, 678)",
            f"pyautogui.hotkey('ctrl', 'a')\npyautogui.write('{y}')",
            "pyautogui.tripleClick(163, 703)",
            f"pyautogui.hotkey('ctrl', 'a')\npyautogui.write('{y}')",
            APPLY]
        return out + (save_data("{stem}.csv") if save else []) + ["DONE"]
    return {
        "slug": "pressure-profile",
        "title": "Pressure profile through the strongest vortex (Plot Over Line)",
        "instruction": "A flow solver wrote {work}/flow.vtk, a 2-D flow field on x = 0..8 m, "
                       "y = 0..6 m; it is not loaded yet. The strongest vortex sits on the line "
                       "y = {r.y} m. Open the file in ParaView, sample the fields along that "
                       "horizontal line across the whole domain (from x = 0 to x = 8 m) with Plot "
                       "Over Line, and save the sampled line as the CSV table {work}/{stem}.csv.",
        "hints": OPEN_HINT + " Filters > Data Analysis > Plot Over Line: set Point1 and Point2 "
                 "of the line, Apply; select PlotOverLine1 and " + SAVE_DATA_HINT,
        "difficulty": "hard", "modality": "gui",
        "tags": ["file-dialog", "plot-over-line", "profile", "export", "csv"],
        "max_steps": 30,
        "params": {"n": {"choice": [2, 3, 4]},
                   "stem": {"choice": ["profile", "centreline", "line_y"]},
                   "r": {"choice": [{"row": 18, "y": 1.8, "other": 3.1},
                                    {"row": 24, "y": 2.4, "other": 4.0},
                                    {"row": 31, "y": 3.1, "other": 1.8},
                                    {"row": 37, "y": 3.7, "other": 2.2},
                                    {"row": 42, "y": 4.2, "other": 2.6}]}},
        "setup": {"generate": [{**GEN, "args": {"path": "flow.vtk", "n_vortices": "$n",
                                                "strong_row": "$r.row"}}],
                  "protect": ["flow.vtk"]},
        "evaluator": {"criteria": [
            {"name": "a sampled line", "weight": 0, "gate": True,
             "description": "a CSV with at least 100 samples and their coordinates",
             "getter": {"fn": "paraview_table", "path": "{stem}.csv", "column": "Points:1",
                        "stat": "rows"},
             "check": {"op": "in_range", "min": 100}},
            {"name": "horizontal at the vortex", "weight": 1,
             "description": "every sample at y = the vortex's y",
             "getter": {"fn": "paraview_table", "path": "{stem}.csv", "column": "Points:1",
                        "stat": "spread"},
             "check": {"op": "in_range", "max": 1e-6}},
            {"name": "on the vortex's line", "weight": 0, "gate": True,
             "getter": {"fn": "paraview_table", "path": "{stem}.csv", "column": "Points:1",
                        "stat": "mean"},
             "check": {"op": "numeric", "expected": "$gold.f.line_y", "abs_tol": 1e-4}},
            {"name": "across the whole domain", "weight": 1,
             "description": "x from 0 to 8 m",
             "getter": {"fn": "paraview_table", "path": "{stem}.csv", "column": "Points:0",
                        "stat": "spread"},
             "check": {"op": "numeric", "expected": "$gold.f.x_max", "abs_tol": 1e-4}},
            {"name": "pressure dip of the core", "weight": 1,
             "description": "the profile's lowest pressure and where it is (x within 0.05 m)",
             "getter": {"fn": "paraview_table", "path": "{stem}.csv", "column": "pressure",
                        "stat": "argmin:Points:0"},
             "check": {"op": "numeric", "expected": "$gold.f.profile_min_x", "abs_tol": 0.05}},
            {"name": "pressure at the core", "weight": 1,
             "getter": {"fn": "paraview_table", "path": "{stem}.csv", "column": "pressure",
                        "stat": "min"},
             "check": {"op": "in_range", "min": "$gold.f.profile_min_lo",
                       "max": "$gold.f.profile_min_hi"}}]},
        "oracle": steps("{r.y}"),
        "negatives": {
            "default-diagonal": open_file("flow.vtk") + [
                "pyautogui.click(70, 211)", *quick_launch("Plot Over Line"), APPLY,
                *save_data("{stem}.csv"), "DONE"],
            "not-saved": steps("{r.y}", save=False),
            "wrong-line": steps("{r.other}")},
    }


def isobar_contour():
    def steps(value, save=True):
        out = [MAIN, "pyautogui.click(70, 211)", *quick_launch("Contour"),
               "pyautogui.doubleClick(100, 704)",
               f"pyautogui.hotkey('ctrl', 'a')\npyautogui.write('{value}')\npyautogui.press('enter')",
               APPLY]
        return out + (save_data("isobar.csv") if save else []) + ["DONE"]
    return {
        "slug": "isobar-contour",
        "title": "Isobar around the vortex cores (Contour), exported as CSV",
        "instruction": "ParaView shows {work}/flow.vtk, a 2-D flow field with a point array "
                       "pressure (kPa). Draw the isobar p = {level} kPa that encloses the vortex "
                       "cores with ParaView's Contour filter and save the contour's points as the "
                       "CSV table {work}/isobar.csv.",
        "hints": "Select flow.vtk, Filters > Common > Contour (or Ctrl+Space, 'Contour'); Contour "
                 "By pressure, edit the value under Isosurfaces, Apply; then " + SAVE_DATA_HINT,
        "difficulty": "medium", "modality": "gui",
        "tags": ["contour", "isobar", "export", "csv"],
        "max_steps": 22,
        "params": {"n": {"choice": [2, 3, 4]}, "level": {"choice": [100.4, 100.7, 101.0]}},
        "setup": {"generate": [{**GEN, "args": {"path": "flow.vtk", "n_vortices": "$n",
                                                "level": "$level"}}],
                  "open": ["flow.vtk"], "protect": ["flow.vtk"]},
        "evaluator": {"criteria": [
            {"name": "a contour table", "weight": 0, "gate": True,
             "getter": {"fn": "paraview_table", "path": "isobar.csv", "column": "Points:0",
                        "stat": "rows"},
             "check": {"op": "in_range", "min": 8}},
            {"name": "every point on the isobar", "weight": 1,
             "description": "the pressure column is the level everywhere",
             "getter": {"fn": "paraview_table", "path": "isobar.csv", "column": "pressure",
                        "stat": "mean"},
             "check": {"op": "numeric", "expected": "$level", "abs_tol": 1e-6}},
            {"name": "one level only", "weight": 0, "gate": True,
             "getter": {"fn": "paraview_table", "path": "isobar.csv", "column": "pressure",
                        "stat": "spread"},
             "check": {"op": "in_range", "max": 1e-6}},
            {"name": "the whole isobar", "weight": 1,
             "description": "one point per grid edge the level crosses",
             "getter": {"fn": "paraview_table", "path": "isobar.csv", "column": "Points:0",
                        "stat": "rows"},
             "check": {"op": "numeric", "expected": "$gold.f.isobar_points", "abs_tol": 0.5}}]},
        "oracle": steps("{level}"),
        "negatives": {
            "default-value": [MAIN, "pyautogui.click(70, 211)", *quick_launch("Contour"), APPLY,
                              *save_data("isobar.csv"), "DONE"],
            "not-saved": steps("{level}", save=False)},
    }
