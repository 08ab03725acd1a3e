# ruff: noqa: E501  (instruction texts are long string literals)
"""Writes task_specs/paraview/*.json: every ParaView task in one place, with the GUI oracles built
from shared steps (File > Open, Save Data, the quick-launch sync). Run it after editing:
``python envs/paraview/make_specs.py``; the JSON files are what the package loads."""
import json
from pathlib import Path

from sciagent_gym.sdk import load_adapter, spec_interface

OUT = Path(__file__).resolve().parents[2] / "task_specs" / "paraview"
MAIN = {"await_window": "^ParaView 5\\.11", "focused": True}
APPLY = "pyautogui.click(50, 460)"
INFO_TAB = "pyautogui.click(132, 407)"
PROPS_TAB = "pyautogui.click(43, 407)"
GEN = {"fn": "flow_field", "as": "f", "args": {"path": "flow.vtk"}}


# A round trip through ParaView's event loop: the quick-launch box ("Dialog") opens only once
# the GUI has finished what it was doing (a first render under software OpenGL freezes it for
# seconds, and a frozen window looks settled). Used before reading the screen.
SYNC = ["pyautogui.hotkey('ctrl', 'space')",
        {"await_window": "^Dialog$", "focused": True, "timeout": 90},
        "pyautogui.press('escape')", {"await_window": "^Dialog$", "gone": True, "timeout": 60}]


def open_file(name):
    """File > Open through ParaView's own dialog, then Apply."""
    return [MAIN,
            "pyautogui.hotkey('ctrl', 'o')",
            {"await_window": "^Open File:", "focused": True},
            f"pyautogui.write('{{work}}/{name}')\npyautogui.press('enter')",
            {"await_window": "^Open File:", "gone": True},
            {"await_window": "^ParaView 5\\.11", "focused": True},
            APPLY]


def save_data(name, precision=None):
    """File > Save Data as CSV (the writer follows the extension), Configure Writer, OK."""
    steps = ["pyautogui.hotkey('ctrl', 's')",
             {"await_window": "^Save File:", "focused": True},
             f"pyautogui.write('{{work}}/{name}')\npyautogui.press('enter')",
             {"await_window": "^Configure Writer \\(CSVWriter\\)", "focused": True}]
    if precision is not None:
        steps += [{"in_window": "^Configure Writer", "do": ["pyautogui.tripleClick(336, 150)"]},
                  f"pyautogui.hotkey('ctrl', 'a')\npyautogui.write('{precision}')"]
    steps += [{"in_window": "^Configure Writer", "do": ["pyautogui.click(522, 358)"]},
              {"await_window": "^Configure Writer", "gone": True}]
    return steps


def python_shell():
    """View > Python Shell, wait for it, click into its prompt."""
    return ["pyautogui.click(98, 29)", "pyautogui.click(145, 375)", *SYNC,
            "pyautogui.click(700, 640)"]


def quick_launch(name):
    """Ctrl+Space, the filter's name, Enter: ParaView's quick launch."""
    return ["pyautogui.hotkey('ctrl', 'space')",
            {"await_window": "^Dialog$", "focused": True},
            f"pyautogui.write('{name}')\npyautogui.press('enter')",
            {"await_window": "^Dialog$", "gone": True}]


ANSWER_GATE = {"name": "an answer was given", "weight": 0, "gate": True,
               "getter": {"fn": "answer_given"}, "check": {"op": "is_true"}}


def write(spec):
    spec = build(spec)
    (OUT / (spec["id"].split("/")[1] + ".json")).write_text(json.dumps(spec, indent=2, ensure_ascii=False) + "\n")


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


SPECS = []


def task(fn):
    SPECS.append(fn)
    return fn


@task
def pressure_minimum():
    read_min = {"read": {"region": [146, 489, 76, 18], "pattern": "([0-9]+[.,][0-9]{{3,6}})",
                         "psm": 7, "number": True, "scale": 3},
                "answer": "{output}"}
    return {
        "slug": "pressure-minimum",
        "title": "Lowest pressure of a flow field",
        "instruction": "A flow solver wrote {work}/flow.vtk: a 2-D field of a uniform stream "
                       "carrying a few vortices, with point arrays pressure (kPa), vorticity and "
                       "velocity. It is not loaded yet. Open it in ParaView and report the lowest "
                       "value of its pressure field with at least three decimals, e.g. "
                       "answer(\"97.125\").",
        "hints": "File > Open, pick flow.vtk, click Apply in the Properties panel; the "
                 "Information tab lists each data array with its range [min, max] under Data "
                 "Arrays.",
        "difficulty": "easy", "modality": "gui",
        "tags": ["file-dialog", "information-panel", "screen-reading", "range"],
        "max_steps": 20,
        "params": {"n": {"choice": [2, 3, 4]}},
        "setup": {"generate": [{**GEN, "args": {"path": "flow.vtk", "n_vortices": "$n"}}],
                  "protect": ["flow.vtk"]},
        "evaluator": {"criteria": [
            ANSWER_GATE,
            {"name": "lowest pressure", "weight": 1,
             "description": "the minimum of the pressure array (ParaView shows six decimals)",
             "getter": {"fn": "answer_number"},
             "check": {"op": "numeric", "expected": "$gold.f.p_min", "abs_tol": 0.0006}}]},
        "oracle": open_file("flow.vtk") + [
            INFO_TAB, "pyautogui.scroll(-30, 140, 650)", *SYNC, read_min, "DONE"],
        "negatives": {
            "answers-maximum": ["answer(\"{gold.f.p_max}\")", "DONE"],
            "answers-colour-bar-rounding": open_file("flow.vtk") + [
                "answer(\"98\")", "DONE"],
            "no-answer": open_file("flow.vtk") + ["DONE"]},
    }


@task
def vortex_centre_console():
    code = ("from vtk.numpy_interface import dataset_adapter as dsa; import numpy as np; "
            "d = servermanager.Fetch(FindSource('flow.vtk')); "
            "i = int(np.argmin(dsa.WrapDataObject(d).PointData['pressure'])); "
            "print('CENTRE x=%.2f y=%.2f' % d.GetPoint(i)[:2])")
    read = {"read": {"region": [302, 540, 976, 190],
                     "pattern": "CENTRE (x=\\s*[0-9]+[.,][0-9]{{2}}\\s*y=\\s*[0-9]+[.,][0-9]{{2}})",
                     "psm": 6},
            "answer": "{output}"}
    return {
        "slug": "vortex-centre-console",
        "title": "Centre of the strongest vortex from ParaView's Python Shell",
        "instruction": "ParaView shows {work}/flow.vtk, a 2-D flow field (x and y in metres) of a "
                       "uniform stream carrying {n} Lamb-Oseen vortices. The core of the strongest "
                       "vortex is where the pressure is lowest. Find that grid point and report its "
                       "coordinates, e.g. answer(\"x = 3.10, y = 2.40\").",
        "hints": "View > Python Shell opens ParaView's Python console: servermanager.Fetch("
                 "FindSource('flow.vtk')) gives the data set; numpy's argmin over its point "
                 "array 'pressure' and GetPoint(i) give the location.",
        "difficulty": "medium", "modality": "gui",
        "tags": ["console", "python-shell", "vortex", "extremum"],
        "max_steps": 20,
        "params": {"n": {"choice": [2, 3, 4]}},
        "setup": {"generate": [{**GEN, "args": {"path": "flow.vtk", "n_vortices": "$n"}}],
                  "open": ["flow.vtk"], "protect": ["flow.vtk"]},
        "evaluator": {"criteria": [
            ANSWER_GATE,
            {"name": "x of the pressure minimum", "weight": 1,
             "description": "within half a grid spacing (0.05 m)",
             "getter": {"fn": "answer_number", "label": "x"},
             "check": {"op": "numeric", "expected": "$gold.f.min_x", "abs_tol": 0.05}},
            {"name": "y of the pressure minimum", "weight": 1,
             "description": "within half a grid spacing (0.05 m)",
             "getter": {"fn": "answer_number", "label": "y"},
             "check": {"op": "numeric", "expected": "$gold.f.min_y", "abs_tol": 0.05}}]},
        "oracle": [MAIN, *python_shell(), f"pyautogui.write({code!r})", "pyautogui.press('enter')",
                   *SYNC, read, "DONE"],
        "negatives": {
            "weakest-vortex": ["answer(\"x = {gold.f.weakest.x}, y = {gold.f.weakest.y}\")", "DONE"],
            "domain-centre": ["answer(\"x = 4.00, y = 3.00\")", "DONE"],
            "no-answer": [MAIN, "DONE"]},
    }

SAVE_DATA_HINT = ("File > Save Data (Ctrl+S): a file name ending in .csv picks the CSV writer; "
                  "its Configure Writer dialog sets the Precision (significant digits).")
OPEN_HINT = "File > Open (Ctrl+O), type or pick the file, then Apply in the Properties panel."
STATE_GATE = {"fn": "paraview_state"}


@task
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


@task
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


@task
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


def save_state(name):
    """File > Save State..., the file name, Enter."""
    return ["pyautogui.click(21, 29)", "pyautogui.click(72, 145)",
            {"await_window": "^Save State File", "focused": True},
            f"pyautogui.write('{{work}}/{name}')\npyautogui.press('enter')",
            {"await_window": "^Save State File", "gone": True}]


COLOR_ITEM_Y = {"pressure": 98, "velocity": 121, "vorticity": 144}


@task
def colormap_range_state():
    def steps(array_y, lo, hi, save=True):
        out = [*open_file("flow.vtk"), "pyautogui.click(70, 211)", "pyautogui.click(312, 98)",
               f"pyautogui.click(300, {array_y})",
               "pyautogui.click(158, 98)",
               {"await_window": "^Set Range$", "focused": True},
               {"in_window": "^Set Range$", "do": ["pyautogui.tripleClick(110, 43)"]},
               f"pyautogui.hotkey('ctrl', 'a')\npyautogui.write('{lo}')",
               {"in_window": "^Set Range$", "do": ["pyautogui.tripleClick(332, 43)"]},
               f"pyautogui.hotkey('ctrl', 'a')\npyautogui.write('{hi}')",
               {"in_window": "^Set Range$", "do": ["pyautogui.click(135, 72)"]},
               {"await_window": "^Set Range$", "gone": True}]
        return out + (save_state("{state}.pvsm") if save else []) + ["DONE"]
    return {
        "slug": "colormap-range-state",
        "title": "Colour by a field with a fixed colour-map range, saved as a state file",
        "instruction": "A flow solver wrote {work}/flow.vtk, a 2-D flow field; it is not loaded "
                       "yet. For a figure series that must share one colour scale, open it in "
                       "ParaView, colour it by its {c.array} array, set "
                       "the colour map range to exactly {c.lo} .. {c.hi} (no automatic rescaling) "
                       "and save the ParaView state as {work}/{state}.pvsm.",
        "hints": OPEN_HINT + " The toolbar's colouring box picks the array; the 'Rescale to "
                 "custom range' "
                 "button opens Set Range ('Rescale and disable automatic rescaling'); File > "
                 "Save State... writes a .pvsm file.",
        "difficulty": "medium", "modality": "gui",
        "tags": ["colour-map", "state-file", "pvsm", "visualisation"],
        "max_steps": 30,
        "params": {"n": {"choice": [2, 3, 4]},
                   "state": {"choice": ["figure", "shared_scale", "series_view"]},
                   "c": {"choice": [
                       {"array": "pressure", "key": "lut_range.pressure", "y": 98, "lo": 96.5, "hi": 101.5},
                       {"array": "pressure", "key": "lut_range.pressure", "y": 98, "lo": 95, "hi": 101},
                       {"array": "vorticity", "key": "lut_range.vorticity", "y": 144, "lo": -10, "hi": 10},
                       {"array": "vorticity", "key": "lut_range.vorticity", "y": 144, "lo": -6, "hi": 6},
                       {"array": "vorticity", "key": "lut_range.vorticity", "y": 144, "lo": 0, "hi": 12}]}},
        "setup": {"generate": [{**GEN, "args": {"path": "flow.vtk", "n_vortices": "$n"}}],
                  "protect": ["flow.vtk"]},
        "evaluator": {"criteria": [
            {"name": "a ParaView state with flow.vtk", "weight": 0, "gate": True,
             "getter": {"fn": "paraview_state", "path": "{state}.pvsm", "source": "flow.vtk",
                        "key": "type"},
             "check": {"op": "equals", "expected": "LegacyVTKFileReader"}},
            {"name": "coloured by the array", "weight": 1,
             "getter": {"fn": "paraview_state", "path": "{state}.pvsm", "source": "flow.vtk",
                        "key": "coloring"},
             "check": {"op": "equals", "expected": "$c.array"}},
            {"name": "colour map range", "weight": 2,
             "description": "the array's colour map spans exactly lo .. hi",
             "getter": {"fn": "paraview_state", "path": "{state}.pvsm", "key": "$c.key"},
             "check": {"op": "list_equal", "expected": ["$c.lo", "$c.hi"], "abs_tol": 1e-6}}]},
        "oracle": steps("{c.y}", "{c.lo}", "{c.hi}"),
        "negatives": {
            "data-range-kept": [*open_file("flow.vtk"), "pyautogui.click(70, 211)",
                                "pyautogui.click(312, 98)",
                                "pyautogui.click(300, {c.y})", *save_state("{state}.pvsm"),
                                "DONE"],
            "not-saved": steps("{c.y}", "{c.lo}", "{c.hi}", save=False)},
    }


@task
def circulation_console():
    code = ("iv = IntegrateVariables(Input=FindSource('flow.vtk')); d = servermanager.Fetch(iv); "
            "print('GAMMA=%.4f' % d.GetPointData().GetArray('vorticity').GetValue(0)); "
            "SaveData('{work}/{csv}', proxy=iv)")
    read = {"read": {"region": [302, 540, 976, 190], "pattern": "GAMMA=\\s*(-?[0-9]+ ?[.,] ?[0-9]{{3,4}})",
                     "psm": 6, "number": True},
            "answer": "{output}"}
    return {
        "slug": "circulation-console",
        "title": "Total circulation of the flow (vorticity integrated over the plane)",
        "instruction": "ParaView shows {work}/flow.vtk, a 2-D flow field (x, y in metres) with a "
                       "point array vorticity (1/s) of {n} vortices. What is the total circulation "
                       "of the flow, the integral of the vorticity over the whole plane, in m²/s? "
                       "Save the integrated values as the CSV table {work}/{csv} and give the "
                       "number with three decimals, e.g. answer(\"4.125\").",
        "hints": "Filters > Data Analysis > Integrate Variables integrates every point array over "
                 "the domain; from View > Python Shell: IntegrateVariables(Input=FindSource("
                 "'flow.vtk')) and servermanager.Fetch(...) give the value; File > Save Data "
                 "(or SaveData('....csv', proxy=...)) writes the integrated values as a one-row "
                 "CSV table.",
        "difficulty": "hard", "modality": "gui",
        "tags": ["console", "python-shell", "integration", "circulation"],
        "max_steps": 20,
        "params": {"n": {"choice": [2, 3, 4]},
                   "csv": {"choice": ["circulation.csv", "integrals.csv", "gamma.csv"]}},
        "setup": {"generate": [{**GEN, "args": {"path": "flow.vtk", "n_vortices": "$n"}}],
                  "open": ["flow.vtk"], "protect": ["flow.vtk"]},
        "evaluator": {"criteria": [
            ANSWER_GATE,
            {"name": "{csv} holds the integrated vorticity", "weight": 0.4,
             "description": "the Integrate Variables output saved: its vorticity column is the "
                            "area integral (a table of the field itself holds point values)",
             "getter": {"fn": "paraview_table", "path": "{csv}", "column": "vorticity",
                        "stat": "max"},
             "check": {"op": "numeric", "expected": "$gold.f.circulation", "abs_tol": 0.005,
                       "rel_tol": 0.002}},
            {"name": "integral of the vorticity", "weight": 0.6,
             "description": "the area integral (bilinear cells), within 0.2% or 0.005 m²/s",
             "getter": {"fn": "answer_number"},
             "check": {"op": "numeric", "expected": "$gold.f.circulation", "abs_tol": 0.005,
                       "rel_tol": 0.002}}]},
        "oracle": [MAIN, *python_shell(), f"pyautogui.write({code!r})", "pyautogui.press('enter')",
                   *SYNC, read, "DONE"],
        "negatives": {
            "sum-without-area": ["answer(\"{gold.f.vorticity_sum}\")", "DONE"],
            "peak-vorticity": ["answer(\"{gold.f.vort_max}\")", "DONE"],
            "no-answer": [MAIN, "DONE"]},
    }


@task
def missing_run():
    return {
        "slug": "missing-run",
        "title": "Lowest pressure of a run whose output is missing",
        "instruction": "A parameter study wrote one flow field per run into {work}: "
                       "flow_run1.vtk and flow_run2.vtk. Open the output of run {run} "
                       "({work}/flow_run{run}.vtk) in ParaView and report the lowest value of "
                       "its pressure field with three decimals, e.g. answer(\"97.125\").",
        "hints": OPEN_HINT + " The Information tab lists each array's range.",
        "difficulty": "easy", "modality": "gui", "infeasible": True,
        "tags": ["file-dialog", "infeasible", "missing-input"],
        "max_steps": 20,
        "params": {"run": {"choice": [3, 4, 5]}, "n": {"choice": [2, 3, 4]}},
        "setup": {"generate": [{**GEN, "as": "r1", "args": {"path": "flow_run1.vtk",
                                                            "n_vortices": "$n"}},
                               {**GEN, "as": "r2", "args": {"path": "flow_run2.vtk",
                                                            "n_vortices": "$n"}}],
                  "protect": ["flow_run1.vtk", "flow_run2.vtk"]},
        "evaluator": {"criteria": [
            {"name": "reported that the task cannot be done", "weight": 0, "gate": True,
             "description": "the named run wrote no file: FAIL is the right answer",
             "getter": "agent_status", "check": {"op": "equals", "expected": "fail"}},
            {"name": "no pressure invented", "weight": 0,
             "getter": "answer_given", "check": {"op": "is_false"}}]},
        "oracle": ["FAIL"],
        "negatives": {
            "claims-done": ["DONE"],
            "answers-another-run": open_file("flow_run2.vtk") + [
                INFO_TAB, "pyautogui.scroll(-30, 140, 650)", *SYNC,
                {"read": {"region": [146, 489, 76, 18], "pattern": "([0-9]+[.,][0-9]{{3,6}})",
                          "psm": 7, "number": True, "scale": 3}, "answer": "{output}"},
                "DONE"],
            "answered-then-failed": ["answer(\"{gold.r1.p_min}\")", "FAIL"]},
    }


@task
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


@task
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


BG = [84, 89, 109]  # the render view's background in a saved screenshot (PNG)


@task
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


@task
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


@task
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


@task
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


@task
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


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    for fn in SPECS:
        write(fn())
    print(len(SPECS), "specs")
