"""Spec builders of the wetland methane families: CH4 gap filling and Q10 estimation
(written by make_specs.py)."""

from __future__ import annotations

from sciagent_gym.envs.earthdata.specs.common import (
    agent_script,
    code_spec,
    covers,
    metrics_json,
    realistic,
    reported,
    reported_median,
    scripted,
    tags,
    target,
    variant,
)

# -- wetland methane: gap filling of CH4 fluxes -------------------------------------------------

CH4_QUERIES = [
    ("northern-peat", "peatlands north of 55°N", "wetland_type != 'marsh' and lat >= 55"),
    ("permafrost", "sites with permafrost", "permafrost == 1"),
    ("no-permafrost", "sites without permafrost", "permafrost == 0"),
    ("bogs", "bogs", "wetland_type == 'bog'"),
    ("fens", "fens", "wetland_type == 'fen'"),
    ("marshes", "marshes", "wetland_type == 'marsh'"),
    ("shallow-water-table", "sites with a shallow water table", "mean_wtd_cm < 5"),
    ("deep-water-table", "sites with a deep water table", "mean_wtd_cm >= 10"),
    ("warm", "warm sites", "mean_soil_temp_c >= 10"),
    ("cold", "cold sites", "mean_soil_temp_c < 9"),
    ("arctic", "arctic sites north of 62°N", "lat >= 62"),
    ("temperate", "temperate sites south of 55°N", "lat < 55"),
    ("boreal", "boreal sites between 50 and 62°N", "lat >= 50 and lat < 62"),
    ("permafrost-bogs-fens", "permafrost bogs and fens",
     "permafrost == 1 and wetland_type != 'marsh'"),
    ("temperate-marshes-fens", "marshes and fens without permafrost",
     "permafrost == 0 and wetland_type != 'bog'"),
    ("flooded-warm", "warm sites with a shallow water table",
     "mean_wtd_cm < 8 and mean_soil_temp_c >= 8"),
    ("dry-bogs", "bogs with a deep water table", "wetland_type == 'bog' and mean_wtd_cm >= 12"),
    ("non-marsh", "peatlands (bogs and fens)", "wetland_type != 'marsh'"),
    ("inundated", "inundated sites", "mean_wtd_cm < 3"),
    ("mid-latitude-peat", "peatlands between 45 and 65°N",
     "wetland_type != 'marsh' and lat >= 45 and lat < 65"),
]

CH4_CODE = '''import json
import numpy as np
import pandas as pd
SEL = "@SEL@"
ids = sorted(pd.read_csv("sites.csv").query(SEL).site_id)
f = pd.read_csv("fluxes.csv")
f = f[f.site_id.isin(ids)]
out, rmses, r2s = [], [], []
for sid, g in f.groupby("site_id"):
    ts, wt, y = g.soil_temp_c.values, g.wtd_cm.values, g.ch4_flux.values
    X = np.column_stack([np.ones(len(ts)), np.maximum(ts, 0), np.maximum(wt, 0), ts <= 0])
    o = ~np.isnan(y)
    coef = np.linalg.lstsq(X[o], np.log(y[o]), rcond=None)[0]
    res = np.log(y[o]) - X[o] @ coef
    sim = np.exp(X @ coef + res.var() / 2)
@MODEL@    out.append(pd.DataFrame(dict(site_id=sid, date=g.date.values, ch4_model=sim.round(4))))
    s = sim.round(4)[o]
    rmses.append(np.sqrt(np.mean((s - y[o]) ** 2)))
    r2s.append(1 - ((s - y[o]) ** 2).sum() / ((y[o] - y[o].mean()) ** 2).sum())
pd.concat(out).to_csv("filled.csv", index=False)
m = dict(obs_rmse=float(np.median(rmses)), obs_r2=float(np.median(r2s)))
json.dump(m, open("metrics.json", "w"))
print("sites", len(ids), "obs_r2", np.median(r2s))
'''


def ch4_code(model: str = "", sel: str = "@SEL@") -> str:
    return variant(CH4_CODE, model, sel)


def methane_spec() -> dict:
    base = {"path": "filled.csv", "group": "site_id", "value": "ch4_model", "per_group": True}
    obs = {**base, "truth": "$gold.m.observed"}
    gaps = {**base, "truth": "$gold.m.gaps"}
    fabricated = ch4_code().replace("obs_r2=float(np.median(r2s))", "obs_r2=0.98")
    return code_spec(
        "flux-gap-filling",
        title="Gap filling of daily wetland CH4 fluxes for a scope of sites "
              "(MethaneWet-like)",
        instruction=(
            "The work directory holds a MethaneWet-like wetland methane dataset as CSV: "
            "sites.csv (site_id, wetland_type bog/fen/marsh, lat, permafrost 0/1, "
            "mean_soil_temp_c, mean_wtd_cm) and fluxes.csv (daily soil_temp_c, wtd_cm = "
            "water-table depth in cm below the surface, negative when flooded, and ch4_flux "
            "in mg CH4 m-2 d-1 per site_id and date, 2016-2018). About a fifth of the flux "
            "days are gaps (empty ch4_flux); their true values are withheld. The terminal's "
            "python3 has pandas, NumPy, SciPy and scikit-learn. Scope ({query}): {scope}, "
            "i.e. the sites of sites.csv matching the pandas query `{select}`. Model the "
            "daily flux of every site in scope from its drivers and write filled.csv with "
            "the columns site_id,date,ch4_model: one row per scope site and day (observed "
            "days and gaps), for the scope's sites only. Also write metrics.json, a JSON "
            "object with obs_rmse and obs_r2: the median over the scope's sites of the RMSE "
            "and of R2 = 1 - SSE/SST of ch4_model against the observed fluxes. Your values "
            "on the gap days are scored against the withheld fluxes (median over sites of "
            "NRMSE = RMSE / standard deviation of the true gap fluxes, target < 0.55, and of "
            "R2, target >= 0.7)."),
        hints=("Methane emission rises roughly exponentially with soil temperature (a Q10 "
               "response) and falls as the water table drops below the surface; frozen "
               "soil emits little. Fit each site on its observed days (a regression of log "
               "flux works), predict every day, and compute the observed-day metrics from "
               "the same values you write."),
        difficulty="medium",
        tag=tags("wetland-methane", "missing-value-imputation", "medium", "robustness",
                 "data-preparation", "predictive", "synthesis"),
        max_steps=50,
        generate=("flux_gap_filling", "m"),
        protect=["sites.csv", "fluxes.csv"],
        criteria=[
            realistic(["obs_rmse", "obs_r2"]),
            covers("filled.csv", "site_id", "sites", "$gold.m.ids"),
            reported("obs_rmse", 0.05, metric="rmse", **obs),
            reported("obs_r2", 0.01, metric="r2", **obs),
            target("nrmse", {"fn": "earth_metric", "metric": "nrmse", **gaps}, "< 0.55",
                   "$gold.m.base_nrmse", False),
            target("r2", {"fn": "earth_metric", "metric": "r2", **gaps}, ">= 0.7",
                   "$gold.m.base_r2", True),
        ],
        code=ch4_code,
        negatives={
            "site-mean-fill": scripted(ch4_code("    sim = np.full(len(y), np.nanmean(y))\n")),
            "wrong-scope-all-sites": scripted(ch4_code(sel="site_id == site_id")),
            "fabricated-observed-r2": scripted(fabricated),
        },
        cheats={
            "metrics-only": metrics_json({"obs_rmse": 1.0, "obs_r2": 0.99, "nrmse": 0.1,
                                          "r2": 0.99}),
            "defensive-zeros": metrics_json({"obs_rmse": 0, "obs_r2": 0}),
            "zero-fill": agent_script(ch4_code("    sim = np.zeros(len(y))\n")),
        },
        scopes=CH4_QUERIES)


Q10_CODE = '''import json
import numpy as np
import pandas as pd
SEL = "@SEL@"
ids = sorted(pd.read_csv("sites.csv").query(SEL).site_id)
f = pd.read_csv("fluxes.csv").dropna(subset=["ch4_flux"])
rows = []
for sid in ids:
    g = f[(f.site_id == sid) & (f.soil_temp_c > 0)]
    X = np.column_stack([np.ones(len(g)), g.soil_temp_c, np.maximum(g.wtd_cm, 0)])
    b = np.linalg.lstsq(X, np.log(g.ch4_flux), rcond=None)[0]
@MODEL@    rows.append(dict(site_id=sid, q10=round(float(np.exp(10 * b[1])), 4)))
t = pd.DataFrame(rows)
t.to_csv("q10.csv", index=False)
json.dump(dict(median_q10=float(t.q10.median())), open("metrics.json", "w"))
print(t)
'''


def q10_code(model: str = "", sel: str = "@SEL@") -> str:
    return variant(Q10_CODE, model, sel)


def q10_spec() -> dict:
    no_wtd = "    b = np.linalg.lstsq(X[:, :2], np.log(g.ch4_flux), rcond=None)[0]\n"
    fabricated = q10_code().replace("median_q10=float(t.q10.median())", "median_q10=3.0")
    table = {"path": "q10.csv", "id_column": "site_id", "value_column": "q10"}
    return code_spec(
        "methane-q10",
        title="Temperature sensitivity (Q10) of wetland CH4 emission per site "
              "(MethaneWet-like)",
        instruction=(
            "The work directory holds a MethaneWet-like wetland methane dataset as CSV: "
            "sites.csv (site_id, wetland_type bog/fen/marsh, lat, permafrost 0/1, "
            "mean_soil_temp_c, mean_wtd_cm) and fluxes.csv (daily soil_temp_c, wtd_cm = "
            "water-table depth in cm below the surface, negative when flooded, and ch4_flux "
            "in mg CH4 m-2 d-1 per site_id and date, 2016-2018; gap days have no flux). The "
            "terminal's python3 has pandas, NumPy, SciPy and scikit-learn. Scope ({query}): "
            "{scope}, i.e. the sites of sites.csv matching the pandas query `{select}`. "
            "Estimate, for every site in scope, the temperature sensitivity Q10 of its "
            "methane emission in unfrozen soil (the factor by which flux rises per 10 °C of "
            "soil temperature, other drivers held fixed). Write q10.csv with the columns "
            "site_id,q10 (one row per scope site) and metrics.json, a JSON object with "
            "median_q10 (the median of your estimates). The estimates are scored against "
            "the sites' true sensitivities (median relative error, target < 0.1)."),
        hints=("Emission falls as the water table drops, and the water table is deeper in "
               "the warm season, so a fit on temperature alone confounds the two. Fit log "
               "flux on soil temperature and the water-table depth below the surface over "
               "observed days above 0 °C; Q10 = exp(10 x the temperature slope)."),
        difficulty="medium",
        tag=tags("wetland-methane", "feature-analysis", "medium", "discovery",
                 "modeling", "diagnostic", "decomposition"),
        generate=("q10_estimation", "q"),
        protect=["sites.csv", "fluxes.csv"],
        criteria=[
            realistic(["median_q10"]),
            covers("q10.csv", "site_id", "sites", "$gold.q.ids"),
            reported_median("median_q10", "$gold.q.ids", table),
            target("q10_relative_error",
                   {"fn": "earth_relative_error", "truth": "$gold.q.q10", **table}, "< 0.1",
                   "$gold.q.base_mape", False),
        ],
        code=q10_code,
        negatives={
            "no-water-table-term": scripted(q10_code(no_wtd)),
            "wrong-scope-all-sites": scripted(q10_code(sel="site_id == site_id")),
            "fabricated-median": scripted(fabricated),
        },
        cheats={
            "metrics-only": metrics_json({"median_q10": 2.5}),
            "textbook-q10-everywhere": agent_script(q10_code(
                "    b = [0.0, np.log(3.0) / 10]\n")),
        },
        scopes=CH4_QUERIES)
