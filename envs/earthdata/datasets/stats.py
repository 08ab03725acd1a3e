"""Generators of two per-id statistic families (one definition each, recomputed by the
evaluator on the staged files): the flow-duration-curve slope of the hydrology basins and the
yield stability (coefficient of variation of detrended yields) of the agriculture counties."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.earthdata.datasets.agro import agriculture_dataset
from sciagent_gym.envs.earthdata.datasets.common import HYDRO_TEST, scope_ids
from sciagent_gym.envs.earthdata.datasets.hydro import (
    empty_scope_streamflow_files,
    hydrology_dataset,
)


def fdc_slope(q: np.ndarray) -> float:
    """Slope of the flow duration curve between the 33 % and 66 % exceedance flows (Sawicz
    et al. 2011): (ln Q33 - ln Q66) / (0.66 - 0.33), quantiles by linear interpolation."""
    q33, q66 = np.percentile(q, 67), np.percentile(q, 34)
    return float((np.log(q33) - np.log(q66)) / 0.33)


def flow_duration(work: Path, rng: np.random.Generator, select: str) -> dict[str, Any]:
    """Stage the hydrology files; gold: per scope basin the 2008-2011 FDC slope, its median
    and (for the negatives' checks) the slope of untransformed flows and over all days."""
    empty_scope_streamflow_files(work)
    d = hydrology_dataset()
    ids = scope_ids(d["basins"], select, "basin_id")
    flow = d["flow"][(d["flow"].date < HYDRO_TEST) & d["flow"].basin_id.isin(ids)]
    slope, linear = {}, {}
    for bid, g in flow.groupby("basin_id", sort=True):
        q = g.q_mm.to_numpy()
        slope[bid] = round(fdc_slope(q), 6)
        linear[bid] = float((np.percentile(q, 67) - np.percentile(q, 34)) / 0.33)
    return {"ids": ids, "count": len(ids), "slope": slope, "linear": linear,
            "median_slope": round(float(np.median(list(slope.values()))), 6)}


def yield_stability(work: Path, rng: np.random.Generator, select: str) -> dict[str, Any]:
    """Stage the agriculture CSVs; gold: per scope county the coefficient of variation (%)
    of its yields around their least-squares trend (residual sd, ddof 1, over the mean
    yield), the median, and (for the negatives' checks) the CV of the raw yields."""
    d = agriculture_dataset()
    for name in ("counties", "weather", "yields"):
        d[name].to_csv(work / f"{name}.csv", index=False)
    ids = scope_ids(d["counties"], select, "county_id")
    y = d["yields"][d["yields"].county_id.isin(ids)]
    cv, raw = {}, {}
    for cid, g in y.groupby("county_id", sort=True):
        yr, val = g.year.to_numpy(float), g.yield_t_ha.to_numpy()
        res = val - np.polyval(np.polyfit(yr, val, 1), yr)
        cv[cid] = round(100 * float(res.std(ddof=1) / val.mean()), 4)
        raw[cid] = 100 * float(val.std(ddof=1) / val.mean())
    return {"ids": ids, "count": len(ids), "cv": cv, "raw": raw,
            "median_cv": round(float(np.median(list(cv.values()))), 6)}
