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

The models, reference pipelines and generators live in :mod:`.datasets`, one module per
domain (``hydro``, ``agro``, ``methane``, ``general``; ``stats``: two per-id statistic
families; ``common``: constants, metrics and scope selection). This module re-exports them
and holds :data:`GENERATORS`, the generators the adapter hands to the core.
"""

from __future__ import annotations

from sciagent_gym.envs.earthdata.datasets import agro, general, hydro, methane, stats
from sciagent_gym.envs.earthdata.datasets.agro import *  # noqa: F403
from sciagent_gym.envs.earthdata.datasets.common import *  # noqa: F403
from sciagent_gym.envs.earthdata.datasets.general import *  # noqa: F403
from sciagent_gym.envs.earthdata.datasets.hydro import *  # noqa: F403
from sciagent_gym.envs.earthdata.datasets.methane import *  # noqa: F403
from sciagent_gym.envs.earthdata.datasets.stats import *  # noqa: F403

GENERATORS = {
    "streamflow_prediction": hydro.streamflow_prediction,
    "empty_scope_streamflow": hydro.empty_scope_streamflow,
    "streamflow_signatures": hydro.streamflow_signatures,
    "stratified_streamflow": hydro.stratified_streamflow,
    "county_clustering": agro.county_clustering,
    "yield_weather_correlation": agro.yield_weather_correlation,
    "yield_trends": agro.yield_trends,
    "flux_gap_filling": methane.flux_gap_filling,
    "q10_estimation": methane.q10_estimation,
    "flux_forecast": methane.flux_forecast,
    "model_comparison": methane.model_comparison,
    "flux_budget": methane.flux_budget,
    "transfer_learning": general.transfer_learning,
    "population_total": general.population_total,
    "series_forecast": general.series_forecast,
    "imbalanced_classification": general.imbalanced_classification,
    "model_distillation": general.model_distillation,
    "cross_county_yield": agro.cross_county_yield,
    "flow_duration": stats.flow_duration,
    "yield_stability": stats.yield_stability,
}
