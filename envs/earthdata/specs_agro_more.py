"""Spec builder of the yield-trend family (agriculture, exploratory analysis: Theil-Sen slope
and Mann-Kendall tau per county); written by build_specs.py."""

from __future__ import annotations

from sciagent_gym.envs.earthdata.specs_agro import CORR_QUERIES
from sciagent_gym.envs.earthdata.specs_common import (
    agent_script,
    covers,
    queries,
    realistic,
    recomputed,
    scripted,
    tags,
    target,
    typed,
    write_files,
)

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
    return TREND_CODE.replace("@MODEL@", model).replace('SEL = "@SEL@"', f'SEL = "{sel}"')


def trends_spec() -> dict:
    table = {"path": "trends.csv", "id_column": "county_id"}
    sen = {"fn": "earth_checked_median", "expected": "$gold.t.sen", "value_column": "sen_slope",
           "tol": 1.0, **table}
    tau = {"fn": "earth_checked_median", "expected": "$gold.t.tau",
           "value_column": "kendall_tau", "tol": 0.005, **table}
    fabricated = trend_code().replace("median_kendall_tau=float(t.kendall_tau.median())",
                                      "median_kendall_tau=0.5")

    def reported(key: str, column: str) -> dict:
        return {"name": f"reported {key} agrees with trends.csv", "weight": 0, "gate": True,
                "getter": {"fn": "earth_reported_median_gap", "report": "metrics.json",
                           "key": key, "ids": "$gold.t.ids", "value_column": column, **table},
                "check": {"op": "in_range", "min": 0, "max": 0.001}}

    return {
        "id": "earthdata/yield-trends",
        "tool": "earthdata",
        "title": "Robust yield trends of a scope of counties: Theil-Sen slope and Mann-Kendall "
                 "tau (CropBench-like)",
        "instruction": (
            "The work directory holds a CropBench-like agriculture dataset as CSV: "
            "counties.csv (county_id, lat, soil_om_pct, awc_mm, irrigated_frac, n_rate_kg_ha), "
            "weather.csv (gdd, precip_mm, heat_days per county_id and year 2000-2019) and "
            "yields.csv (yield_t_ha per county_id and year). The terminal's python3 has "
            "pandas, NumPy, SciPy and scikit-learn. Scope ({query}): {scope}, i.e. the "
            "counties of counties.csv matching the pandas query `{select}`. Quantify the "
            "yield trend of every county in scope over 2000-2019 robustly to outlier seasons: "
            "its Theil-Sen slope of yield on year, in kg/ha per year, and the Mann-Kendall "
            "trend statistic (Kendall's tau between year and yield). Write trends.csv with the "
            "columns county_id,sen_slope,kendall_tau (one row per scope county) and "
            "metrics.json, a JSON object with median_sen_slope and median_kendall_tau "
            "(medians over the scope's counties). Each county's values are checked against a "
            "recomputation (within 1 kg/ha per year and 0.005); targets: median_sen_slope "
            ">= 20 and median_kendall_tau >= 0.1."),
        "hints": ("scipy.stats.theilslopes gives the median of pairwise slopes and "
                  "scipy.stats.kendalltau the rank statistic; a least-squares slope or "
                  "Pearson's r is pulled by drought and heat seasons. Mind the unit: the "
                  "yields are in t/ha."),
        "difficulty": "easy",
        "modality": "code",
        "tags": tags("agriculture", "exploratory-analysis", "easy", "discovery",
                     "data-analysis", "descriptive", "parallel-search"),
        "max_steps": 40,
        "cli_timeout": 300,
        "setup": {"generate": [{"fn": "yield_trends", "as": "t",
                                "args": {"select": "$select"}}],
                  "protect": ["counties.csv", "weather.csv", "yields.csv"]},
        "evaluator": {"criteria": [
            realistic(["median_sen_slope", "median_kendall_tau"]),
            covers("trends.csv", "county_id", "counties", "$gold.t.ids"),
            reported("median_sen_slope", "sen_slope"),
            reported("median_kendall_tau", "kendall_tau"),
            recomputed("every county's sen_slope is within 1 of its recomputation", sen),
            recomputed("every county's kendall_tau is within 0.005 of its recomputation", tau),
            target("median_sen_slope", sen, ">= 20", "$gold.t.median_sen", True),
            target("median_kendall_tau", tau, ">= 0.1", "$gold.t.median_tau", True),
        ]},
        "oracle": scripted(trend_code()),
        "gui_oracle": typed(trend_code()),
        "negatives": {
            "least-squares-slope": scripted(trend_code(
                "    slope = np.polyfit(g.year, g.yield_t_ha, 1)[0]\n")),
            "pearson-instead-of-tau": scripted(trend_code(
                "    tau = np.corrcoef(g.year, g.yield_t_ha)[0, 1]\n")),
            "slope-in-t-per-ha": scripted(trend_code("    slope = slope / 1000\n")),
            "wrong-scope-all-counties": scripted(trend_code(sel="county_id == county_id")),
            "fabricated-median-tau": scripted(fabricated),
        },
        "cheats": {
            "metrics-only": write_files({"metrics.json": '{"median_sen_slope": 60, '
                                                         '"median_kendall_tau": 0.3}'}),
            "defensive-zeros": write_files({"metrics.json": '{"median_sen_slope": 0, '
                                                            '"median_kendall_tau": 0}'}),
            "textbook-trend": agent_script(trend_code("    slope, tau = 0.08, 0.5\n")),
        },
        "queries": queries(CORR_QUERIES),
    }
