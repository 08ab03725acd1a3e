"""The earth-data datasets, one module per domain: each holds its seeded process model, its
reference pipelines and its task generators (the models are described in
:mod:`sciagent_gym.envs.earthdata.data`, which re-exports these modules and holds
``GENERATORS``).

- ``common``: the dataset constants, the efficiency metrics and scope selection;
- ``hydro``: the CAMELS-like hydrology dataset (streamflow prediction, signatures, strata);
- ``agro``: the CropBench-like agriculture dataset (clustering, correlation, trends,
  cross-county yield);
- ``methane``: the MethaneWet-like wetland methane dataset (gap filling, Q10, forecast, model
  comparison, budget);
- ``general``: ST-Bench's general control set (transfer, sampling, forecast, imbalanced
  classification, distillation);
- ``stats``: two per-id statistic families over the hydrology and agriculture datasets
  (flow-duration-curve slope, yield stability).
"""
