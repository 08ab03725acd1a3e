"""What several ParaView families share besides GUI steps: the generated flow field, the
answer gate and the hints on opening a file and saving data."""

from __future__ import annotations

GEN = {"fn": "flow_field", "as": "f", "args": {"path": "flow.vtk"}}
ANSWER_GATE = {"name": "an answer was given", "weight": 0, "gate": True,
               "getter": {"fn": "answer_given"}, "check": {"op": "is_true"}}
SAVE_DATA_HINT = ("File > Save Data (Ctrl+S): a file name ending in .csv picks the CSV writer; "
                  "its Configure Writer dialog sets the Precision (significant digits).")
OPEN_HINT = "File > Open (Ctrl+O), type or pick the file, then Apply in the Properties panel."
