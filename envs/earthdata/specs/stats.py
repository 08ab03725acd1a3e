"""Spec builders of two per-id statistic families (envs/earthdata/datasets/stats.py): the
slope of the flow duration curve per basin (hydrology, novel metrics) and the yield stability
per county (agriculture, exploratory analysis); written by make_specs.py."""

from __future__ import annotations

from sciagent_gym.envs.earthdata.specs.agro import CORR_QUERIES
from sciagent_gym.envs.earthdata.specs.common import (
    agent_script,
    code_spec,
    covers,
    metrics_json,
    realistic,
    recomputed,
    reported_median,
    scripted,
    tags,
    target,
    variant,
)
from sciagent_gym.envs.earthdata.specs.crop_trends import DATA as AGRO_DATA
from sciagent_gym.envs.earthdata.specs.flow_signatures import DATA as HYDRO_DATA
from sciagent_gym.envs.earthdata.specs.hydro import HYDRO_QUERIES

# -- the slope of the flow duration curve ------------------------------------------------------

FDC_CODE = '''import json
import numpy as np
import pandas as pd
SEL = "@SEL@"
ids = sorted(pd.read_csv("basins.csv").query(SEL).basin_id)
q = pd.read_csv("streamflow.csv")
rows = []
for bid in ids:
    x = q[q.basin_id == bid].q_mm.to_numpy()
    q33, q66 = np.percentile(x, 67), np.percentile(x, 34)
    slope = (np.log(q33) - np.log(q66)) / 0.33
@MODEL@    rows.append(dict(basin_id=bid, fdc_slope=round(slope, 6)))
t = pd.DataFrame(rows)
t.to_csv("fdc.csv", index=False)
json.dump(dict(median_fdc_slope=float(t.fdc_slope.median())), open("metrics.json", "w"))
print(t.describe())
'''


def fdc_code(model: str = "", sel: str = "@SEL@") -> str:
    return variant(FDC_CODE, model, sel)


def fdc_spec() -> dict:
    table = {"path": "fdc.csv", "id_column": "basin_id", "value_column": "fdc_slope"}
    slope = {"fn": "earth_checked_median", "expected": "$gold.f.slope", "tol": 0.02, **table}
    fabricated = fdc_code().replace("median_fdc_slope=float(t.fdc_slope.median())",
                                    "median_fdc_slope=2.0")
    return code_spec(
        "flow-duration-slope",
        title="Slope of the flow duration curve of a scope of basins (CAMELS-like "
              "signature)",
        instruction=HYDRO_DATA + (
            "Compute the slope of the flow duration curve of every basin in scope from its "
            "observed streamflow of 2008-2011 (Sawicz et al. 2011): (ln Q33 - ln Q66) / "
            "(0.66 - 0.33), where Q33 and Q66 are the flows exceeded 33 % and 66 % of the "
            "time (quantiles by linear interpolation). Write fdc.csv with the columns "
            "basin_id,fdc_slope (one row per scope basin) and metrics.json, a JSON object "
            "with median_fdc_slope (the median over the scope's basins). Each basin's slope "
            "is checked against a recomputation (within 0.02); target: median_fdc_slope >= "
            "0.8."),
        hints=("A flow exceeded 33 % of the time is the 67th percentile of the daily "
               "flows; the slope is taken on log flows, which makes it dimensionless."),
        difficulty="easy",
        tag=tags("hydrology", "novel-metrics", "easy", "discovery", "data-analysis",
                 "descriptive", "parallel-search"),
        generate=("flow_duration", "f"),
        protect=["basins.csv", "forcing.csv", "streamflow.csv"],
        criteria=[
            realistic(["median_fdc_slope"]),
            covers("fdc.csv", "basin_id", "basins", "$gold.f.ids"),
            reported_median("median_fdc_slope", "$gold.f.ids", table),
            recomputed("every basin's fdc_slope is within 0.02 of its recomputation", slope),
            target("median_fdc_slope", slope, ">= 0.8", "$gold.f.median_slope", True),
        ],
        code=fdc_code,
        negatives={
            "untransformed-flows": scripted(fdc_code(
                "    slope = (q33 - q66) / 0.33\n")),
            "non-exceedance-percentiles": scripted(fdc_code(
                "    slope = (np.log(np.percentile(x, 33)) - np.log(np.percentile(x, 66))) "
                "/ 0.33\n")),
            "wrong-scope-all-basins": scripted(fdc_code(sel="basin_id == basin_id")),
            "fabricated-median": scripted(fabricated),
        },
        cheats={
            "metrics-only": metrics_json({"median_fdc_slope": 2.0}),
            "defensive-zeros": metrics_json({"median_fdc_slope": 0}),
            "constant-slope": agent_script(fdc_code("    slope = 2.0\n")),
        },
        scopes=HYDRO_QUERIES)


# -- yield stability: the coefficient of variation around the trend ----------------------------

CV_CODE = '''import json
import numpy as np
import pandas as pd
SEL = "@SEL@"
ids = sorted(pd.read_csv("counties.csv").query(SEL).county_id)
y = pd.read_csv("yields.csv")
rows = []
for cid in ids:
    g = y[y.county_id == cid]
    res = g.yield_t_ha - np.polyval(np.polyfit(g.year, g.yield_t_ha, 1), g.year)
    cv = 100 * res.std(ddof=1) / g.yield_t_ha.mean()
@MODEL@    rows.append(dict(county_id=cid, cv_pct=round(cv, 4)))
t = pd.DataFrame(rows)
t.to_csv("stability.csv", index=False)
json.dump(dict(median_cv_pct=float(t.cv_pct.median())), open("metrics.json", "w"))
print(t.describe())
'''


def cv_code(model: str = "", sel: str = "@SEL@") -> str:
    return variant(CV_CODE, model, sel)


def stability_spec() -> dict:
    table = {"path": "stability.csv", "id_column": "county_id", "value_column": "cv_pct"}
    cv = {"fn": "earth_checked_median", "expected": "$gold.s.cv", "tol": 0.1, **table}
    fabricated = cv_code().replace("median_cv_pct=float(t.cv_pct.median())",
                                   "median_cv_pct=10.0")
    return code_spec(
        "yield-stability",
        title="Yield stability of a scope of counties: variation around the yield trend "
              "(CropBench-like)",
        instruction=AGRO_DATA + (
            "Quantify the year-to-year stability of every scope county's yield over "
            "2000-2019 apart from its technology trend: the coefficient of variation in % of "
            "the residuals of a least-squares linear trend of yield on year (their sample "
            "standard deviation, ddof = 1, over the county's mean yield, times 100). Write "
            "stability.csv with the columns county_id,cv_pct (one row per scope county) and "
            "metrics.json, a JSON object with median_cv_pct (the median over the scope's "
            "counties). Each county's value is checked against a recomputation (within 0.1); "
            "target: median_cv_pct < 45."),
        hints=("The CV of the raw yields mixes the trend into the variability; remove the "
               "linear trend first and divide by the mean of the yields themselves."),
        difficulty="easy",
        tag=tags("agriculture", "exploratory-analysis", "easy", "robustness",
                 "data-analysis", "descriptive", "synthesis"),
        generate=("yield_stability", "s"),
        protect=["counties.csv", "weather.csv", "yields.csv"],
        criteria=[
            realistic(["median_cv_pct"]),
            covers("stability.csv", "county_id", "counties", "$gold.s.ids"),
            reported_median("median_cv_pct", "$gold.s.ids", table),
            recomputed("every county's cv_pct is within 0.1 of its recomputation", cv),
            target("median_cv_pct", cv, "< 45", "$gold.s.median_cv", False),
        ],
        code=cv_code,
        negatives={
            "raw-yield-cv": scripted(cv_code(
                "    cv = 100 * g.yield_t_ha.std(ddof=1) / g.yield_t_ha.mean()\n")),
            "wrong-scope-all-counties": scripted(cv_code(sel="county_id == county_id")),
            "fabricated-median": scripted(fabricated),
        },
        cheats={
            "metrics-only": metrics_json({"median_cv_pct": 10.0}),
            "defensive-zeros": metrics_json({"median_cv_pct": 0}),
            "constant-cv": agent_script(cv_code("    cv = 10.0\n")),
        },
        scopes=CORR_QUERIES)
