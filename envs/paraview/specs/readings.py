# ruff: noqa: E501  (instruction texts are long string literals)
"""ParaView families that read one value off the GUI: the lowest pressure (Information panel),
the strongest vortex's centre and the circulation (Python Shell), and the infeasible twin whose
run output is missing."""

from __future__ import annotations

from sciagent_gym.envs.paraview.specs.common import ANSWER_GATE, GEN, OPEN_HINT
from sciagent_gym.envs.paraview.specs.steps import (
    INFO_TAB,
    MAIN,
    SYNC,
    open_file,
    python_shell,
)


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
