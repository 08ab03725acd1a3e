"""The ParaView spec builders, one function per task family; ``make_specs.py`` (the one entry
point) writes ``task_specs/paraview/*.json`` from them.

- ``steps``: the GUI steps the oracles share (File > Open, Save Data, Save State, the Python
  Shell, the quick launch and its event-loop sync);
- ``common``: the generated flow field, the answer gate and the hints several families share;
- ``readings``: one value read off the Information panel or the Python Shell (the pressure
  minimum, the strongest vortex's centre, the circulation) and the missing-run infeasible twin;
- ``exports``: the CSV writer and its options (full precision, cell data) and the Excel
  infeasible twin;
- ``filters``: one filter's output (Calculator, Threshold, Plot Over Line, Contour);
- ``colour_map``: a fixed colour-map range saved in a state file;
- ``vortex_report``: the long-horizon speed field, core profile and core pressure report;
- ``vortex_cores``: the long-horizon vortex-core tasks (the figure, the census), which share
  their extract stage.
"""
