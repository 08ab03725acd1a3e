"""Spec builders of the further hydrology families: streamflow signatures (novel metrics) and
streamflow prediction scored per snow stratum (performance stratification); written by
make_specs.py."""

from __future__ import annotations

from sciagent_gym.envs.earthdata.specs.common import (
    agent_script,
    code_spec,
    covers,
    metrics_json,
    realistic,
    recomputed,
    reported,
    reported_median,
    scripted,
    tags,
    target,
    variant,
)
from sciagent_gym.envs.earthdata.specs.hydro import HYDRO_CODE, HYDRO_QUERIES

DATA = ("The work directory holds a CAMELS-like hydrology dataset as CSV: basins.csv "
        "(basin_id, area_km2, elev_m, lat, aridity = PET/P, snow_frac = share of "
        "precipitation falling below 0 °C, forest_frac, soil_depth_m), forcing.csv (daily "
        "precip_mm, tmean_c, pet_mm per basin_id and date, 2008-2013) and streamflow.csv "
        "(daily observed q_mm per basin_id and date, 2008-2011 only). The terminal's python3 "
        "has pandas, NumPy, SciPy and scikit-learn. Scope ({query}): {scope}, i.e. the basins "
        "of basins.csv matching the pandas query `{select}`. ")

# -- streamflow signatures: baseflow index and runoff ratio -----------------------------------

SIG_CODE = '''import json
import numpy as np
import pandas as pd
SEL = "@SEL@"
ids = sorted(pd.read_csv("basins.csv").query(SEL).basin_id)
q = pd.read_csv("streamflow.csv")
p = pd.read_csv("forcing.csv")
p = p[p.date < "2012-01-01"]
rows = []
for bid in ids:
    x = q[q.basin_id == bid].sort_values("date").q_mm.values
    f = np.zeros(len(x))
    for t in range(1, len(x)):
        f[t] = min(max(0.925 * f[t - 1] + 0.9625 * (x[t] - x[t - 1]), 0.0), x[t])
    bfi = (x - f).sum() / x.sum()
@MODEL@    rr = x.sum() / p[p.basin_id == bid].precip_mm.sum()
    rows.append(dict(basin_id=bid, bfi=round(bfi, 6), runoff_ratio=round(rr, 6)))
t = pd.DataFrame(rows)
t.to_csv("signatures.csv", index=False)
m = dict(median_bfi=float(t.bfi.median()), median_runoff_ratio=float(t.runoff_ratio.median()))
json.dump(m, open("metrics.json", "w"))
print(t.describe())
'''


def sig_code(model: str = "", sel: str = "@SEL@") -> str:
    return variant(SIG_CODE, model, sel)


def signatures_spec() -> dict:
    table = {"path": "signatures.csv", "id_column": "basin_id"}
    bfi = {"fn": "earth_checked_median", "expected": "$gold.s.bfi", "value_column": "bfi",
           "tol": 0.005, **table}
    rr = {"fn": "earth_checked_median", "expected": "$gold.s.runoff_ratio",
          "value_column": "runoff_ratio", "tol": 0.005, **table}
    min7 = "    bfi = pd.Series(x).rolling(7, center=True, min_periods=1).min().sum() / x.sum()\n"
    all_years = sig_code().replace('p = p[p.date < "2012-01-01"]\n', "")
    fabricated = sig_code().replace("median_bfi=float(t.bfi.median())", "median_bfi=0.8")

    def median_of(key: str, column: str) -> dict:
        return reported_median(key, "$gold.s.ids", {"value_column": column, **table})

    return code_spec(
        "streamflow-signatures",
        title="Baseflow index and runoff ratio of a scope of basins (CAMELS-like "
              "hydrological signatures)",
        instruction=DATA + (
            "Compute two hydrological signatures of every basin in scope from its observed "
            "streamflow of 2008-2011: the baseflow index (BFI), with baseflow separated by "
            "one forward pass of the Lyne-Hollick digital filter with alpha = 0.925 (quickflow "
            "f_t = alpha f_(t-1) + (1 + alpha)/2 (q_t - q_(t-1)), f at the first day 0, kept "
            "within [0, q_t]; BFI = sum of q - f over the sum of q), and the runoff ratio (the "
            "sum of streamflow over the sum of precipitation, both over 2008-2011). Write "
            "signatures.csv with the columns basin_id,bfi,runoff_ratio (one row per scope "
            "basin) and metrics.json, a JSON object with median_bfi and median_runoff_ratio "
            "(medians over the scope's basins). Each basin's values are checked against a "
            "recomputation (within 0.005); targets: median BFI >= 0.5, median runoff ratio "
            ">= 0.3."),
        hints=("Process each basin's days in date order; the filter is a short loop. Use "
               "the precipitation of the same four years as the streamflow, and report "
               "the medians of the values you write."),
        difficulty="easy",
        tag=tags("hydrology", "novel-metrics", "easy", "discovery", "data-analysis",
                 "descriptive", "synthesis"),
        generate=("streamflow_signatures", "s"),
        protect=["basins.csv", "forcing.csv", "streamflow.csv"],
        criteria=[
            realistic(["median_bfi", "median_runoff_ratio"]),
            covers("signatures.csv", "basin_id", "basins", "$gold.s.ids"),
            median_of("median_bfi", "bfi"),
            median_of("median_runoff_ratio", "runoff_ratio"),
            recomputed("every basin's bfi is within 0.005 of its recomputation", bfi),
            recomputed("every basin's runoff_ratio is within 0.005 of its recomputation", rr),
            target("median_bfi", bfi, ">= 0.5", "$gold.s.median_bfi", True),
            target("median_runoff_ratio", rr, ">= 0.3", "$gold.s.median_runoff_ratio", True),
        ],
        code=sig_code,
        negatives={
            "bfi-from-7-day-minimum": scripted(sig_code(min7)),
            "runoff-ratio-over-all-years": scripted(all_years),
            "wrong-scope-all-basins": scripted(sig_code(sel="basin_id == basin_id")),
            "fabricated-median-bfi": scripted(fabricated),
        },
        cheats={
            "metrics-only": metrics_json({"median_bfi": 0.7, "median_runoff_ratio": 0.5}),
            "defensive-zeros": metrics_json({"median_bfi": 0, "median_runoff_ratio": 0}),
            "constant-signatures": agent_script(sig_code("    bfi = 0.7\n").replace(
                "    rr = x.sum()", "    rr = 0.5 + 0 * x.sum()")),
        },
        scopes=HYDRO_QUERIES)


# -- streamflow prediction scored per snow stratum --------------------------------------------

STRAT_QUERIES = [
    ("north-or-high", "northern or high basins", "lat >= 44 or elev_m >= 2000"),
    ("upland", "basins above 1000 m", "elev_m >= 1000"),
    ("forested", "forested basins", "forest_frac >= 0.5"),
    ("sparsely-forested", "sparsely forested basins", "forest_frac < 0.5"),
    ("deep-soil", "basins with deep soils", "soil_depth_m >= 1.2"),
    ("shallow-soil", "basins with shallow soils", "soil_depth_m < 1.2"),
    ("large", "large basins", "area_km2 >= 500"),
    ("small", "small basins", "area_km2 < 500"),
    ("northern", "northern basins", "lat >= 41"),
    ("southern", "southern basins", "lat < 41"),
    ("humid", "humid basins", "aridity < 1.0"),
    ("arid", "arid basins", "aridity >= 1.0"),
    ("mid-elevation", "mid-elevation basins", "elev_m >= 700 and elev_m <= 2300"),
    ("central", "mid-latitude basins", "lat >= 37 and lat < 45"),
    ("large-or-forested", "large or forested basins", "area_km2 >= 1000 or forest_frac >= 0.6"),
    ("small-or-humid", "small or humid basins", "area_km2 < 300 or aridity < 0.8"),
    ("thin-soil-or-arid", "basins with thin soils or an arid climate",
     "soil_depth_m < 0.9 or aridity > 1.5"),
    ("south-or-low", "southern or lowland basins", "lat < 38 or elev_m < 800"),
    ("moderate-aridity", "basins of moderate aridity", "aridity >= 0.6 and aridity < 1.6"),
    ("mid-soil", "basins with medium soil depth", "soil_depth_m >= 0.7 and soil_depth_m < 1.6"),
]

STRATA = '''snowy = (pd.read_csv("basins.csv").set_index("basin_id").snow_frac[ids] >= 0.4).values
nses = np.array(nses)
m = dict(calib_nse_snow=float(np.median(nses[snowy])),
         calib_nse_rain=float(np.median(nses[~snowy])))
'''
OLD_METRICS = "m = dict(calib_nse=float(np.median(nses)), calib_kge=float(np.median(kges)))\n"


def strat_code(model: str = "", sel: str = "@SEL@") -> str:
    return variant(HYDRO_CODE.replace(OLD_METRICS, STRATA), model, sel)


def stratified_spec() -> dict:
    base = {"path": "predictions.csv", "group": "basin_id", "value": "q_pred",
            "per_group": True}
    no_snow = strat_code().replace("liq = 0.0 if t[i] < 0 else p[i]", "liq = p[i]")
    fabricated = strat_code().replace("calib_nse_snow=float(np.median(nses[snowy]))",
                                      "calib_nse_snow=0.95")

    def stratum(name: str) -> dict:
        return reported(f"calib_nse_{name}", 0.01, metric="nse",
                        truth=f"$gold.h.calib_{name}", **base)

    return code_spec(
        "stratified-streamflow",
        title="Streamflow prediction evaluated per snow stratum (CAMELS-like performance "
              "stratification)",
        instruction=DATA + (
            "2012-2013 is a withheld test period. Build a rainfall-runoff model of daily "
            "streamflow for every basin in scope, calibrated on 2008-2011, and write "
            "predictions.csv with the columns basin_id,date,q_pred: one row per scope basin "
            "and day of 2008-2013, for the scope's basins only. Performance is stratified by "
            "snow regime: the snow stratum is the scope's basins with snow_frac >= 0.4, the "
            "rain stratum the others. Write metrics.json, a JSON object with calib_nse_snow "
            "and calib_nse_rain: the median over each stratum's basins of the Nash-Sutcliffe "
            "efficiency of your q_pred against the observed streamflow of 2008-2011. Your "
            "2012-2013 predictions are scored per stratum against the withheld observations "
            "(median NSE in each stratum; targets nse_snow >= 0.55 and nse_rain >= 0.55)."),
        hints=("Even basins with under 40 % snowfall store some winter precipitation as "
               "snow: a degree-day snow pack (about 3 mm per °C per day) turns precipitation "
               "into liquid input, and antecedent sums of that input and of PET explain "
               "much of the flow. Fit each basin separately and compute each stratum's "
               "median from the same predictions you write."),
        difficulty="hard",
        tag=tags("hydrology", "performance-stratification", "hard", "robustness",
                 "evaluation", "diagnostic", "decomposition"),
        max_steps=60,
        cli_timeout=600,
        generate=("stratified_streamflow", "h"),
        protect=["basins.csv", "forcing.csv", "streamflow.csv"],
        criteria=[
            realistic(["calib_nse_snow", "calib_nse_rain"]),
            covers("predictions.csv", "basin_id", "basins", "$gold.h.ids"),
            stratum("snow"),
            stratum("rain"),
            target("nse_snow", {"fn": "earth_metric", "metric": "nse",
                                "truth": "$gold.h.test_snow", **base}, ">= 0.55",
                   "$gold.h.base_nse_snow", True),
            target("nse_rain", {"fn": "earth_metric", "metric": "nse",
                                "truth": "$gold.h.test_rain", **base}, ">= 0.55",
                   "$gold.h.base_nse_rain", True),
        ],
        code=strat_code,
        negatives={
            "no-snow-model": scripted(no_snow),
            "calibration-mean-flow": scripted(strat_code(
                "    sim = np.full(len(p), np.nanmean(y))\n")),
            "wrong-scope-all-basins": scripted(strat_code(sel="basin_id == basin_id")),
            "fabricated-snow-nse": scripted(fabricated),
        },
        cheats={
            "metrics-only": metrics_json({"calib_nse_snow": 0.9, "calib_nse_rain": 0.9}),
            "defensive-zeros": metrics_json({"calib_nse_snow": 0, "calib_nse_rain": 0}),
            "zero-predictions": agent_script(strat_code("    sim = np.zeros(len(p))\n")),
        },
        scopes=STRAT_QUERIES)
