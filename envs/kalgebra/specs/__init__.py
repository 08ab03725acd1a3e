"""The KAlgebra spec builders, one function per task family; ``make_specs.py`` (the one entry
point) writes ``task_specs/kalgebra/*.json`` from them.

- ``steps``: the GUI step forms every oracle is made of (the console line, the file dialogs,
  the 2D Graph's fields, the Variables panel's read) and the console-language helpers;
- ``criteria``: the criteria the families share and the spec frame;
- ``console_tasks``: values computed by typing into the console (a derivative, a series, a
  product, Newton's method, a logistic model saved as a script);
- ``script_tasks``: tasks on a ``.kal`` script staged in the work folder (load and evaluate,
  a local maximum, a projectile's range, and the two infeasible ones);
- ``plot_tasks``: the 2D Graph (a root read off the pointer's readout, curves saved as SVG);
- ``workflows``: the long-horizon studies (a cubic's curve sketching, a damped oscillator's
  report) scored in stages.
"""
