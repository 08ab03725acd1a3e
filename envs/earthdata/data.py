"""Seeded process models of the earth-data tasks (ST-Bench's three domains) and their gold values.

Each domain's dataset is generated from a fixed dataset seed (:data:`DATASET_SEED`), so every
query of a task family analyses the same shared files (as ST-Bench's queries share their
Parquet files) and differs only in its scope, a pandas ``DataFrame.query`` expression over the
domain's attribute table. Files are CSV (Debian 12's python3 has no pyarrow). What the
evaluator needs but the agent must not see (withheld test-period streamflow, the true fluxes in
gaps) is returned as gold and never written into the work directory.

Models (all daily unless said otherwise):

- **hydrology** (CAMELS-like), :func:`hydrology_dataset`: basins with area, elevation,
  latitude, aridity (PET/P), snow fraction (share of precipitation on days below 0 °C), forest
  fraction and soil depth; forcing of precipitation (wet-day occurrence and exponential
  amounts), temperature (seasonal cycle plus AR(1) anomalies, lapse rate 6.5 K/km) and PET
  (temperature-driven); streamflow from a degree-day snow pack (3 mm/°C/d), a soil bucket
  (capacity from soil depth and forest cover; ET = PET * S/Smax; saturation-excess quickflow
  (S/Smax)^2; percolation to a groundwater store draining linearly) and a linear routing
  reservoir, with 10 % multiplicative log-normal noise. 2008-2011 is the calibration period
  (observed streamflow staged), 2012-2013 the test period (withheld).
- **agriculture** (CropBench-like), :func:`agriculture_dataset`: counties drawn from four
  agro-climatic regions (latitude, soil organic matter, available water capacity, irrigated
  share, nitrogen rate); per growing season GDD (base 10 °C), growing-season precipitation and
  heat days (> 32 °C); yield = (base + 0.08 t/ha/yr technology trend) * a quadratic GDD
  response peaking at 2700 °C d * a water response (irrigation offsets deficits) * a heat
  penalty (1.2 % per heat day), plus 5 % noise.
- **wetland methane** (MethaneWet-like), :func:`methane_dataset`: sites (bog, fen, marsh;
  some on permafrost) with daily soil temperature and water-table depth (cm below the surface,
  negative when flooded); CH4 flux (mg CH4 m-2 d-1) = Fref * Q10^((Ts - 10)/10) *
  exp(-max(WTD, 0)/lambda) above 0 °C and 3 % of Fref in frozen soil, with 20 % multiplicative
  noise; gaps in runs of 1-20 days (about 20 % of the record) whose true values are withheld.
"""

from __future__ import annotations

from sciagent_gym.envs.earthdata import (
    data_agro,
    data_general,
    data_hydro,
    data_methane,
    data_stats,
)
from sciagent_gym.envs.earthdata.data_agro import *  # noqa: F403
from sciagent_gym.envs.earthdata.data_common import *  # noqa: F403
from sciagent_gym.envs.earthdata.data_general import *  # noqa: F403
from sciagent_gym.envs.earthdata.data_hydro import *  # noqa: F403
from sciagent_gym.envs.earthdata.data_methane import *  # noqa: F403
from sciagent_gym.envs.earthdata.data_stats import *  # noqa: F403

GENERATORS = {
    "streamflow_prediction": data_hydro.streamflow_prediction,
    "empty_scope_streamflow": data_hydro.empty_scope_streamflow,
    "streamflow_signatures": data_hydro.streamflow_signatures,
    "stratified_streamflow": data_hydro.stratified_streamflow,
    "county_clustering": data_agro.county_clustering,
    "yield_weather_correlation": data_agro.yield_weather_correlation,
    "yield_trends": data_agro.yield_trends,
    "flux_gap_filling": data_methane.flux_gap_filling,
    "q10_estimation": data_methane.q10_estimation,
    "flux_forecast": data_methane.flux_forecast,
    "model_comparison": data_methane.model_comparison,
    "flux_budget": data_methane.flux_budget,
    "transfer_learning": data_general.transfer_learning,
    "population_total": data_general.population_total,
    "series_forecast": data_general.series_forecast,
    "imbalanced_classification": data_general.imbalanced_classification,
    "model_distillation": data_general.model_distillation,
    "cross_county_yield": data_agro.cross_county_yield,
    "flow_duration": data_stats.flow_duration,
    "yield_stability": data_stats.yield_stability,
}
