"""The earth-data spec builders, one function per task family; ``make_specs.py`` (the one
entry point) writes ``task_specs/earthdata/*.json`` from them.

- ``common``: the oracle step forms, the criteria every family uses and the spec frame;
- ``hydro``: streamflow prediction and its infeasible empty-scope twin;
- ``flow_signatures``: streamflow signatures (BFI, runoff ratio) and streamflow prediction
  scored per snow stratum;
- ``agro``: county clustering and yield-weather correlation;
- ``crop_trends``: yield trends (Theil-Sen, Kendall's tau) and a yield model carried to
  unseen counties;
- ``methane``: CH4 gap filling and Q10 estimation;
- ``methane_models``: a withheld year's CH4 forecast, the temperature-only against the
  temperature + water-table model by AIC, and the annual budget;
- ``general``: the general control set's transfer learning and sampling;
- ``learning_workflows``: the general control set's seasonal forecast, class-imbalance
  augmentation and model distillation;
- ``stats``: the flow-duration-curve slope and the yield stability.
"""
