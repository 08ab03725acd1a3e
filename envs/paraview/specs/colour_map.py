# ruff: noqa: E501  (instruction texts are long string literals)
"""The ParaView family that colours by a field with a fixed colour-map range and saves the
state file."""

from __future__ import annotations

from sciagent_gym.envs.paraview.specs.common import GEN, OPEN_HINT
from sciagent_gym.envs.paraview.specs.steps import (
    open_file,
    save_state,
)

#: the colouring box's list rows (window y) of the three arrays; the task's params use them
COLOR_ITEM_Y = {"pressure": 98, "velocity": 121, "vorticity": 144}


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
