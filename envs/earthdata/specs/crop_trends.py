"""Spec builders of the further agriculture families: yield trends (exploratory analysis:
Theil-Sen slope and Mann-Kendall tau per county) and a yield model carried to unseen counties
(cross-dataset evaluation); written by make_specs.py."""

from __future__ import annotations

from sciagent_gym.envs.earthdata.specs.agro import CORR_QUERIES
from sciagent_gym.envs.earthdata.specs.common import (
    agent_script,
    code_spec,
    covers,
    gate,
    metrics_json,
    realistic,
    recomputed,
    reported_median,
    scripted,
    tags,
    target,
    variant,
    within,
)

DATA = ("The work directory holds a CropBench-like agriculture dataset as CSV: "
        "counties.csv (county_id, lat, soil_om_pct, awc_mm, irrigated_frac, n_rate_kg_ha), "
        "weather.csv (gdd, precip_mm, heat_days per county_id and year 2000-2019) and "
        "yields.csv (yield_t_ha per county_id and year). The terminal's python3 has pandas, "
        "NumPy, SciPy and scikit-learn. Scope ({query}): {scope}, i.e. the counties of "
        "counties.csv matching the pandas query `{select}`. ")

# -- yield trends: Theil-Sen slope and Mann-Kendall tau ---------------------------------------

TREND_CODE = '''import json
import numpy as np
import pandas as pd
from scipy.stats import kendalltau, theilslopes
SEL = "@SEL@"
ids = sorted(pd.read_csv("counties.csv").query(SEL).county_id)
y = pd.read_csv("yields.csv")
rows = []
for cid in ids:
    g = y[y.county_id == cid].sort_values("year")
    slope = theilslopes(g.yield_t_ha, g.year)[0]
    tau = kendalltau(g.year, g.yield_t_ha).correlation
@MODEL@    rows.append(dict(county_id=cid, sen_slope=round(1000 * slope, 4),
                     kendall_tau=round(tau, 6)))
t = pd.DataFrame(rows)
t.to_csv("trends.csv", index=False)
m = dict(median_sen_slope=float(t.sen_slope.median()),
         median_kendall_tau=float(t.kendall_tau.median()))
json.dump(m, open("metrics.json", "w"))
print(t.describe())
'''


def trend_code(model: str = "", sel: str = "@SEL@") -> str:
    return variant(TREND_CODE, model, sel)


def trends_spec() -> dict:
    table = {"path": "trends.csv", "id_column": "county_id"}
    sen = {"fn": "earth_checked_median", "expected": "$gold.t.sen", "value_column": "sen_slope",
           "tol": 1.0, **table}
    tau = {"fn": "earth_checked_median", "expected": "$gold.t.tau",
           "value_column": "kendall_tau", "tol": 0.005, **table}
    fabricated = trend_code().replace("median_kendall_tau=float(t.kendall_tau.median())",
                                      "median_kendall_tau=0.5")

    def median_of(key: str, column: str) -> dict:
        return reported_median(key, "$gold.t.ids", {"value_column": column, **table})

    return code_spec(
        "yield-trends",
        title="Robust yield trends of a scope of counties: Theil-Sen slope and Mann-Kendall "
              "tau (CropBench-like)",
        instruction=DATA + (
            "Quantify the yield trend of every county in scope over 2000-2019 robustly to outlier "
            "seasons: its Theil-Sen slope of yield on year, in kg/ha per year, and the "
            "Mann-Kendall trend statistic (Kendall's tau between year and yield). Write trends.csv "
            "with the columns county_id,sen_slope,kendall_tau (one row per scope county) and "
            "metrics.json, a JSON object with median_sen_slope and median_kendall_tau (medians "
            "over the scope's counties). Each county's values are checked against a recomputation "
            "(within 1 kg/ha per year and 0.005); targets: median_sen_slope >= 20 and "
            "median_kendall_tau >= 0.1."),
        hints=("scipy.stats.theilslopes gives the median of pairwise slopes and "
               "scipy.stats.kendalltau the rank statistic; a least-squares slope or "
               "Pearson's r is pulled by drought and heat seasons. Mind the unit: the "
               "yields are in t/ha."),
        difficulty="easy",
        tag=tags("agriculture", "exploratory-analysis", "easy", "discovery",
                 "data-analysis", "descriptive", "parallel-search"),
        generate=("yield_trends", "t"),
        protect=["counties.csv", "weather.csv", "yields.csv"],
        criteria=[
            realistic(["median_sen_slope", "median_kendall_tau"]),
            covers("trends.csv", "county_id", "counties", "$gold.t.ids"),
            median_of("median_sen_slope", "sen_slope"),
            median_of("median_kendall_tau", "kendall_tau"),
            recomputed("every county's sen_slope is within 1 of its recomputation", sen),
            recomputed("every county's kendall_tau is within 0.005 of its recomputation", tau),
            target("median_sen_slope", sen, ">= 20", "$gold.t.median_sen", True),
            target("median_kendall_tau", tau, ">= 0.1", "$gold.t.median_tau", True),
        ],
        code=trend_code,
        negatives={
            "least-squares-slope": scripted(trend_code(
                "    slope = np.polyfit(g.year, g.yield_t_ha, 1)[0]\n")),
            "pearson-instead-of-tau": scripted(trend_code(
                "    tau = np.corrcoef(g.year, g.yield_t_ha)[0, 1]\n")),
            "slope-in-t-per-ha": scripted(trend_code("    slope = slope / 1000\n")),
            "wrong-scope-all-counties": scripted(trend_code(sel="county_id == county_id")),
            "fabricated-median-tau": scripted(fabricated),
        },
        cheats={
            "metrics-only": metrics_json({"median_sen_slope": 60, "median_kendall_tau": 0.3}),
            "defensive-zeros": metrics_json({"median_sen_slope": 0, "median_kendall_tau": 0}),
            "textbook-trend": agent_script(trend_code("    slope, tau = 0.08, 0.5\n")),
        },
        scopes=CORR_QUERIES)


# -- cross-dataset evaluation: a yield model carried to counties it never saw -------------------

CROSS_QUERIES = [
    ("irrigated", "counties with irrigation", "irrigated_frac >= 0.2"),
    ("rainfed", "rainfed counties", "irrigated_frac < 0.1"),
    ("south-of-42", "counties south of 42°N", "lat < 42"),
    ("low-organic", "counties with low soil organic matter", "soil_om_pct < 3"),
    ("droughty-soils", "counties with droughty soils", "awc_mm < 200"),
    ("high-nitrogen", "counties with high nitrogen rates", "n_rate_kg_ha >= 140"),
    ("mid-latitude", "mid-latitude counties", "lat >= 36 and lat <= 44"),
    ("warm-south", "southern counties", "lat < 38"),
    ("rainfed-south", "rainfed counties south of 44°N", "irrigated_frac < 0.2 and lat < 44"),
    ("moderate-nitrogen", "counties with moderate nitrogen rates",
     "n_rate_kg_ha >= 110 and n_rate_kg_ha < 170"),
    ("west-dry", "counties with low organic matter or irrigation",
     "soil_om_pct < 2.5 or irrigated_frac >= 0.3"),
    ("central-band", "counties between 36 and 40°N", "lat >= 36 and lat < 40"),
    ("heavily-irrigated", "heavily irrigated counties", "irrigated_frac >= 0.4"),
    ("sandy", "counties with sandy, low-capacity soils", "awc_mm < 160"),
    ("low-input", "counties with low nitrogen rates", "n_rate_kg_ha < 120"),
    ("first-third", "the first 29 counties by id", "county_id < 'C030'"),
    ("last-third", "the last 30 counties by id", "county_id >= 'C061'"),
    ("retentive-south", "retentive soils south of 40°N", "awc_mm >= 160 and lat < 40"),
    ("partly-irrigated", "partly irrigated counties",
     "irrigated_frac >= 0.05 and irrigated_frac < 0.3"),
    ("central-mostly-rainfed", "mostly rainfed counties between 34 and 42°N",
     "lat >= 34 and lat < 42 and irrigated_frac < 0.3"),
]

CROSS_CODE = '''import json
import numpy as np
import pandas as pd
SEL = "@SEL@"
c = pd.read_csv("counties.csv")
ids = sorted(c.query(SEL).county_id)
w = pd.read_csv("weather.csv").merge(c, on="county_id")
tr = pd.read_csv("yields.csv").merge(w, on=["county_id", "year"])
te = w[w.county_id.isin(ids)].copy()
def design(f):
    return np.column_stack([np.ones(len(f)), f.year - 2000, f.gdd, f.gdd ** 2, f.precip_mm,
                            f.precip_mm ** 2, f.heat_days, f.irrigated_frac, f.awc_mm,
                            f.soil_om_pct, f.n_rate_kg_ha])
coef = np.linalg.lstsq(design(tr), np.log(tr.yield_t_ha), rcond=None)[0]
te["yield_pred"] = np.exp(design(te) @ coef)
@MODEL@te[["county_id", "year", "yield_pred"]].to_csv("predictions.csv", index=False)
json.dump(dict(mean_pred_yield=float(te.yield_pred.mean())), open("metrics.json", "w"))
print(te.yield_pred.describe())
'''


def cross_code(model: str = "", sel: str = "@SEL@") -> str:
    return variant(CROSS_CODE, model, sel)


def cross_spec() -> dict:
    pred = {"path": "predictions.csv", "truth": "$gold.x.truth", "group": "county_id",
            "value": "yield_pred"}
    fabricated = cross_code().replace("mean_pred_yield=float(te.yield_pred.mean())",
                                      "mean_pred_yield=9.0")
    return code_spec(
        "cross-county-yield",
        title="A yield model evaluated on counties it never saw (cross-dataset evaluation, "
              "CropBench-like)",
        instruction=DATA + (
            "yields.csv holds every county EXCEPT the scope's: build a yield model on the other "
            "counties and evaluate it across datasets by predicting the yield of every scope "
            "county and year 2000-2019 from its weather and attributes. Write predictions.csv with "
            "the columns county_id,year,yield_pred (t/ha; the scope's counties only) and "
            "metrics.json, a JSON object with mean_pred_yield (the mean of yield_pred over your "
            "rows). Your predictions are scored against the withheld yields (R2 = 1 - SSE/SST "
            "pooled over the scope's county-years, target >= 0.75)."),
        hints=("Yields rise with a technology trend, peak at an optimal GDD, fall with "
               "heat days and water deficits (irrigation offsets them), and their level "
               "depends on soil organic matter and nitrogen; a multiplicative model (log "
               "yield) transfers better than per-year means of the other counties."),
        difficulty="medium",
        tag=tags("agriculture", "cross-dataset-eval", "medium", "robustness",
                 "evaluation", "predictive", "error-recovery"),
        generate=("cross_county_yield", "x"),
        protect=["counties.csv", "weather.csv", "yields.csv"],
        criteria=[
            realistic(["mean_pred_yield"]),
            covers("predictions.csv", "county_id", "counties", "$gold.x.ids"),
            gate("reported mean_pred_yield agrees with predictions.csv",
                 {"fn": "earth_reported_mean_gap", "report": "metrics.json",
                  "key": "mean_pred_yield", "key_column": "year", **pred}, within(0.01)),
            target("r2", {"fn": "earth_metric", "metric": "r2", "key": "year", **pred},
                   ">= 0.75", "$gold.x.base_r2", True),
        ],
        code=cross_code,
        negatives={
            "per-year-mean": scripted(cross_code(
                'te["yield_pred"] = te.year.map(tr.groupby("year").yield_t_ha.mean())\n')),
            "wrong-scope-all-counties": scripted(cross_code(sel="county_id == county_id")),
            "fabricated-mean": scripted(fabricated),
        },
        cheats={
            "metrics-only": metrics_json({"mean_pred_yield": 8.0, "r2": 0.9}),
            "defensive-zeros": metrics_json({"mean_pred_yield": 0}),
            "constant-yield": agent_script(cross_code('te["yield_pred"] = 8.0\n')),
        },
        scopes=CROSS_QUERIES)
