# ruff: noqa: E501  (instruction texts are long string literals)
"""ParaView families on the CSV writer and its options: the field at full precision, cell
averages (Point Data to Cell Data), and the Excel infeasible twin (no such writer)."""

from __future__ import annotations

from sciagent_gym.envs.paraview.specs.common import GEN, OPEN_HINT, SAVE_DATA_HINT
from sciagent_gym.envs.paraview.specs.steps import (
    APPLY,
    MAIN,
    open_file,
    quick_launch,
    save_data,
)


def export_csv_precision():
    return {
        "slug": "export-csv-precision",
        "title": "Export the flow field as a full-precision CSV table",
        "instruction": "A flow solver wrote {work}/flow.vtk (point arrays pressure, vorticity and "
                       "velocity on a 2-D grid); it is not loaded yet. A colleague post-processes "
                       "it in a spreadsheet and needs every grid point's values without rounding: "
                       "open it in ParaView and save its point data as a CSV table "
                       "{work}/{stem}.csv written with 8 significant digits.",
        "hints": OPEN_HINT + " " + SAVE_DATA_HINT,
        "difficulty": "medium", "modality": "gui",
        "tags": ["file-dialog", "export", "csv", "writer-options"],
        "max_steps": 24,
        "params": {"n": {"choice": [2, 3, 4]},
                   "stem": {"choice": ["flow_points", "grid_values", "flow_table"]}},
        "setup": {"generate": [{**GEN, "args": {"path": "flow.vtk", "n_vortices": "$n"}}],
                  "protect": ["flow.vtk"]},
        "evaluator": {"criteria": [
            {"name": "one row per grid point", "weight": 0, "gate": True,
             "description": "a CSV table with as many rows as the grid has points",
             "getter": {"fn": "paraview_table", "path": "{stem}.csv", "column": "pressure",
                        "stat": "rows"},
             "check": {"op": "numeric", "expected": "$gold.f.n_points", "abs_tol": 0.5}},
            {"name": "pressure minimum unrounded", "weight": 1,
             "description": "the lowest pressure as the file holds it (6 decimals): 8 digits keep "
                            "it, ParaView's default 5 do not",
             "getter": {"fn": "paraview_table", "path": "{stem}.csv", "column": "pressure",
                        "stat": "min"},
             "check": {"op": "numeric", "expected": "$gold.f.p_min", "abs_tol": 2e-6}},
            {"name": "vorticity extremes unrounded", "weight": 1,
             "description": "the highest vorticity to 1e-6",
             "getter": {"fn": "paraview_table", "path": "{stem}.csv", "column": "vorticity",
                        "stat": "max"},
             "check": {"op": "numeric", "expected": "$gold.f.vort_max", "abs_tol": 2e-6}},
            {"name": "every pressure value", "weight": 1,
             "description": "the sum of the pressure column matches the field's (no value lost)",
             "getter": {"fn": "paraview_table", "path": "{stem}.csv", "column": "pressure",
                        "stat": "sum"},
             "check": {"op": "numeric", "expected": "$gold.f.p_sum", "abs_tol": 0.01}}]},
        "oracle": open_file("flow.vtk") + save_data("{stem}.csv", precision=8) + ["DONE"],
        "negatives": {
            "default-precision": open_file("flow.vtk") + save_data("{stem}.csv") + ["DONE"],
            "not-saved": open_file("flow.vtk") + ["DONE"]},
    }


def excel_export():
    return {
        "slug": "excel-export",
        "title": "Export the flow field as an Excel workbook",
        "instruction": "ParaView shows {work}/flow.vtk, a 2-D flow field. The project's reporting "
                       "template needs the point data as a native Excel workbook: save it from "
                       "ParaView as {work}/{stem}.xlsx (an Office Open XML spreadsheet, one sheet, "
                       "one row per grid point).",
        "hints": "File > Save Data lists the formats ParaView can write.",
        "difficulty": "medium", "modality": "gui", "infeasible": True,
        "tags": ["infeasible", "export", "unsupported-format"],
        "max_steps": 20,
        "params": {"n": {"choice": [2, 3, 4]}, "stem": {"choice": ["flow", "report", "points"]}},
        "setup": {"generate": [{**GEN, "args": {"path": "flow.vtk", "n_vortices": "$n"}}],
                  "open": ["flow.vtk"], "protect": ["flow.vtk"]},
        "evaluator": {"criteria": [
            {"name": "reported that the task cannot be done", "weight": 0, "gate": True,
             "description": "ParaView 5.11 has no Excel writer (it writes CSV, not .xlsx): FAIL "
                            "is the right answer",
             "getter": "agent_status", "check": {"op": "equals", "expected": "fail"}},
            {"name": "no answer invented", "weight": 0,
             "getter": "answer_given", "check": {"op": "is_false"}}]},
        "oracle": ["FAIL"],
        "negatives": {
            "claims-done": ["DONE"],
            "csv-renamed-as-xlsx": [MAIN, "pyautogui.click(70, 211)", *save_data("{stem}.csv"),
                                    "DONE"]},
    }


def cell_average_csv():
    def steps(assoc="c", convert=True):
        out = [MAIN, "pyautogui.click(70, 211)"]
        if convert:
            out += [*quick_launch("Point Data to Cell Data"), APPLY]
        out += ["pyautogui.hotkey('ctrl', 's')",
                {"await_window": "^Save File:", "focused": True},
                "pyautogui.write('{work}/cells.csv')\npyautogui.press('enter')",
                {"await_window": "^Configure Writer \\(CSVWriter\\)", "focused": True}]
        if assoc:  # open Field Association's list, jump to the item by its initial
            out += [{"in_window": "^Configure Writer", "do": ["pyautogui.click(336, 202)"]},
                    f"pyautogui.press('{assoc}')\npyautogui.press('enter')"]
        out += [{"in_window": "^Configure Writer", "do": ["pyautogui.click(522, 358)"]},
                {"await_window": "^Configure Writer", "gone": True}, "DONE"]
        return out
    return {
        "slug": "cell-average-csv",
        "title": "Cell-averaged fields exported per cell (Point Data to Cell Data)",
        "instruction": "ParaView shows {work}/flow.vtk, a 2-D flow field whose arrays live on the "
                       "grid points. A finite-volume code downstream needs one value per grid cell: "
                       "convert the point data to cell data (each cell the average of its corners) "
                       "with ParaView and save the cell values as the CSV table {work}/cells.csv, "
                       "one row per cell.",
        "hints": "Filters > Alphabetical > Point Data to Cell Data, Apply; " + SAVE_DATA_HINT +
                 " Its Field Association chooses point or cell data.",
        "difficulty": "medium", "modality": "gui",
        "tags": ["point-to-cell", "export", "csv", "writer-options"],
        "max_steps": 22,
        "params": {"n": {"choice": [2, 3, 4]}},
        "setup": {"generate": [{**GEN, "args": {"path": "flow.vtk", "n_vortices": "$n"}}],
                  "open": ["flow.vtk"], "protect": ["flow.vtk"]},
        "evaluator": {"criteria": [
            {"name": "one row per cell", "weight": 0, "gate": True,
             "getter": {"fn": "paraview_table", "path": "cells.csv", "column": "pressure",
                        "stat": "rows"},
             "check": {"op": "numeric", "expected": "$gold.f.n_cells", "abs_tol": 0.5}},
            {"name": "cell-averaged pressure", "weight": 1,
             "description": "the mean of the cells' pressure (5 significant digits each)",
             "getter": {"fn": "paraview_table", "path": "cells.csv", "column": "pressure",
                        "stat": "mean"},
             "check": {"op": "numeric", "expected": "$gold.f.p_cell_mean", "abs_tol": 0.001}},
            {"name": "cell vorticity integrates to the circulation", "weight": 1,
             "description": "the sum of the cells' vorticity (the circulation over the cell area)",
             "getter": {"fn": "paraview_table", "path": "cells.csv", "column": "vorticity",
                        "stat": "sum"},
             "check": {"op": "numeric", "expected": "$gold.f.circulation_cells", "abs_tol": 0.5,
                       "rel_tol": 0.002}}]},
        "oracle": steps(),
        "negatives": {
            "point-association": steps(assoc="p"),
            "no-conversion": steps(assoc=None, convert=False)},
    }
