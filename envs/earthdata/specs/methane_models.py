"""Spec builders of the further wetland methane families: forecasting a withheld year of CH4
fluxes (held out), comparing a temperature-only with a temperature + water-table model by
AIC (model comparison) and the annual CH4 budget (up-downscaling); written by
make_specs.py."""

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
from sciagent_gym.envs.earthdata.specs.methane import CH4_CODE, CH4_QUERIES

DATA = ("The work directory holds a MethaneWet-like wetland methane dataset as CSV: "
        "sites.csv (site_id, wetland_type bog/fen/marsh, lat, permafrost 0/1, "
        "mean_soil_temp_c, mean_wtd_cm) and fluxes.csv (daily soil_temp_c, wtd_cm = "
        "water-table depth in cm below the surface, negative when flooded, and ch4_flux in "
        "mg CH4 m-2 d-1 per site_id and date, 2016-2018). The terminal's python3 has pandas, "
        "NumPy, SciPy and scikit-learn. Scope ({query}): {scope}, i.e. the sites of sites.csv "
        "matching the pandas query `{select}`. ")

# -- forecasting the withheld year 2018 ---------------------------------------------------------

FORECAST_CODE = (CH4_CODE.replace("filled.csv", "forecast.csv")
                 .replace("ch4_model", "ch4_forecast")
                 .replace("obs_rmse=", "fit_rmse=").replace("obs_r2=", "fit_r2=")
                 .replace('"obs_r2"', '"fit_r2"'))


def forecast_code(model: str = "", sel: str = "@SEL@") -> str:
    return variant(FORECAST_CODE, model, sel)


def forecast_spec() -> dict:
    base = {"path": "forecast.csv", "group": "site_id", "value": "ch4_forecast",
            "per_group": True}
    fit = {**base, "truth": "$gold.f.observed"}
    test = {**base, "truth": "$gold.f.test"}
    fabricated = forecast_code().replace("fit_r2=float(np.median(r2s))", "fit_r2=0.97")

    return code_spec(
        "flux-forecast",
        title="Forecast of a withheld year of daily wetland CH4 fluxes from their drivers "
              "(MethaneWet-like)",
        heldout=True,
        instruction=DATA + (
            "Every flux of 2018 is withheld (empty ch4_flux; the soil temperature and water "
            "table of 2018 are given), and about a fifth of the 2016-2017 days are gaps "
            "(empty ch4_flux) too. Using 2016-2017 only for fitting, forecast the daily flux "
            "of every site in scope in 2018 from its drivers. Write forecast.csv with the "
            "columns site_id,date,ch4_forecast: one row per scope site and day of 2016-2018, "
            "for the scope's sites only. Also write metrics.json, a JSON object with fit_rmse "
            "and fit_r2: the median over the scope's sites of the RMSE and of R2 = 1 - "
            "SSE/SST of ch4_forecast against the observed 2016-2017 fluxes. Your 2018 values "
            "are scored against the withheld fluxes (median over sites of NRMSE = RMSE / "
            "standard deviation of the true 2018 fluxes, target < 0.6, and of R2, target "
            ">= 0.65)."),
        hints=("Methane emission rises roughly exponentially with soil temperature (a Q10 "
               "response) and falls as the water table drops below the surface; frozen "
               "soil emits little. A per-site regression of log flux on these drivers, fit "
               "on the observed days, carries over to a new year; the site's mean or last "
               "year's values do not."),
        difficulty="medium",
        tag=tags("wetland-methane", "forecasting", "medium", "modeling", "modeling",
                 "predictive", "long-horizon-planning"),
        max_steps=50,
        generate=("flux_forecast", "f"),
        protect=["sites.csv", "fluxes.csv"],
        criteria=[
            realistic(["fit_rmse", "fit_r2"]),
            covers("forecast.csv", "site_id", "sites", "$gold.f.ids"),
            reported("fit_rmse", 0.05, metric="rmse", **fit),
            reported("fit_r2", 0.01, metric="r2", **fit),
            target("nrmse", {"fn": "earth_metric", "metric": "nrmse", **test}, "< 0.6",
                   "$gold.f.base_nrmse", False),
            target("r2", {"fn": "earth_metric", "metric": "r2", **test}, ">= 0.65",
                   "$gold.f.base_r2", True),
        ],
        code=forecast_code,
        negatives={
            "site-mean": scripted(forecast_code("    sim = np.full(len(y), np.nanmean(y))\n")),
            "wrong-scope-all-sites": scripted(forecast_code(sel="site_id == site_id")),
            "fabricated-fit-r2": scripted(fabricated),
        },
        cheats={
            "metrics-only": metrics_json({"fit_rmse": 5.0, "fit_r2": 0.9, "nrmse": 0.2,
                                          "r2": 0.9}),
            "defensive-zeros": metrics_json({"fit_rmse": 0, "fit_r2": 0}),
            "zero-forecast": agent_script(forecast_code("    sim = np.zeros(len(y))\n")),
        },
        scopes=CH4_QUERIES)


# -- model comparison by AIC ------------------------------------------------------------------

AIC_CODE = '''import json
import numpy as np
import pandas as pd
SEL = "@SEL@"
ids = sorted(pd.read_csv("sites.csv").query(SEL).site_id)
f = pd.read_csv("fluxes.csv").dropna(subset=["ch4_flux"])
rows = []
for sid in ids:
    g = f[(f.site_id == sid) & (f.soil_temp_c > 0)]
@MODEL@    y = np.log(g.ch4_flux.values)
    aic = []
    for cols in ([g.soil_temp_c], [g.soil_temp_c, np.maximum(g.wtd_cm, 0)]):
        X = np.column_stack([np.ones(len(g))] + cols)
        sse = ((y - X @ np.linalg.lstsq(X, y, rcond=None)[0]) ** 2).sum()
        aic.append(len(y) * np.log(sse / len(y)) + 2 * (X.shape[1] + 1))
    rows.append(dict(site_id=sid, delta_aic=round(aic[0] - aic[1], 4)))
t = pd.DataFrame(rows)
t.to_csv("comparison.csv", index=False)
json.dump(dict(median_delta_aic=float(t.delta_aic.median())), open("metrics.json", "w"))
print(t)
'''


def aic_code(model: str = "", sel: str = "@SEL@") -> str:
    return variant(AIC_CODE, model, sel)


def comparison_spec() -> dict:
    table = {"path": "comparison.csv", "id_column": "site_id", "value_column": "delta_aic"}
    frozen = aic_code("    g = f[f.site_id == sid]\n")
    bic = aic_code().replace("+ 2 * (X.shape[1] + 1)", "+ np.log(len(y)) * (X.shape[1] + 1)")
    fabricated = aic_code().replace("median_delta_aic=float(t.delta_aic.median())",
                                    "median_delta_aic=100.0")
    return code_spec(
        "methane-model-comparison",
        title="Does the water table matter? AIC comparison of two CH4 flux models per "
              "site (MethaneWet-like)",
        instruction=DATA + (
            "Gap days have no flux. For every site in scope, compare two models of the log of "
            "the observed flux on days with soil above 0 °C, each fit by least squares with "
            "an intercept: (A) soil temperature only; (B) soil temperature and the water-table "
            "depth below the surface (wtd_cm where positive, 0 when flooded). Compute the "
            "difference delta_aic = AIC(A) - AIC(B) of the Gaussian fits (AIC = n ln(SSE/n) "
            "+ 2k with k parameters; any equivalent form gives the same difference). Write "
            "comparison.csv with the columns site_id,delta_aic (one row per scope site) and "
            "metrics.json, a JSON object with median_delta_aic (the median over the scope's "
            "sites). Each site's value is checked against a recomputation (within 0.5); "
            "target: median_delta_aic >= 200 (overwhelming evidence for the water-table "
            "term)."),
        hints=("Select each site's observed days with soil_temp_c > 0, take log(ch4_flux), "
               "fit both designs with numpy.linalg.lstsq and compare n ln(SSE/n) plus twice "
               "the parameter count (BIC's penalty is a different criterion)."),
        difficulty="medium",
        tag=tags("wetland-methane", "model-comparison", "medium", "optimization",
                 "evaluation", "diagnostic", "parallel-search"),
        generate=("model_comparison", "c"),
        protect=["sites.csv", "fluxes.csv"],
        criteria=[
            realistic(["median_delta_aic"]),
            covers("comparison.csv", "site_id", "sites", "$gold.c.ids"),
            reported_median("median_delta_aic", "$gold.c.ids", table),
            target("median_delta_aic",
                   {"fn": "earth_checked_median", "expected": "$gold.c.delta_aic",
                    "tol": 0.5, **table}, ">= 200", "$gold.c.median_delta_aic", True),
        ],
        code=aic_code,
        negatives={
            "frozen-days-included": scripted(frozen),
            "bic-instead-of-aic": scripted(bic),
            "wrong-scope-all-sites": scripted(aic_code(sel="site_id == site_id")),
            "fabricated-median": scripted(fabricated),
        },
        cheats={
            "metrics-only": metrics_json({"median_delta_aic": 50}),
            "defensive-zeros": metrics_json({"median_delta_aic": 0}),
            "guessed-table": agent_script(aic_code().replace(
                "delta_aic=round(aic[0] - aic[1], 4)", "delta_aic=50.0")),
        },
        scopes=CH4_QUERIES)


# -- upscaling daily fluxes to annual budgets ---------------------------------------------------

BUDGET_CODE = '''import json
import numpy as np
import pandas as pd
SEL = "@SEL@"
ids = sorted(pd.read_csv("sites.csv").query(SEL).site_id)
f = pd.read_csv("fluxes.csv")
rows = []
for sid in ids:
    g = f[f.site_id == sid]
    ts, wt, y = g.soil_temp_c.values, g.wtd_cm.values, g.ch4_flux.values
    X = np.column_stack([np.ones(len(ts)), np.maximum(ts, 0), np.maximum(wt, 0), ts <= 0])
    o = ~np.isnan(y)
    coef = np.linalg.lstsq(X[o], np.log(y[o]), rcond=None)[0]
    res = np.log(y[o]) - X[o] @ coef
    filled = np.where(o, y, np.exp(X @ coef + res.var() / 2))
@MODEL@    rows.append(dict(site_id=sid, budget=round(filled.sum() / 1000 / 3, 4)))
t = pd.DataFrame(rows)
t.to_csv("budget.csv", index=False)
json.dump(dict(median_budget=float(t.budget.median())), open("metrics.json", "w"))
print(t)
'''


def budget_code(model: str = "", sel: str = "@SEL@") -> str:
    return variant(BUDGET_CODE, model, sel)


def budget_spec() -> dict:
    table = {"path": "budget.csv", "id_column": "site_id", "value_column": "budget"}
    fabricated = budget_code().replace("median_budget=float(t.budget.median())",
                                       "median_budget=12.0")
    return code_spec(
        "methane-annual-budget",
        title="Annual CH4 budgets of a scope of wetland sites from gappy daily fluxes "
              "(MethaneWet-like temporal upscaling)",
        instruction=DATA + (
            "About a fifth of the flux days are gaps (empty ch4_flux); their true values are "
            "withheld. Upscale the daily fluxes of every site in scope to its mean annual "
            "CH4 budget over 2016-2018 in g CH4 m-2 yr-1 (the total emission of the three "
            "years, gaps included, divided by 3). Write budget.csv with the columns "
            "site_id,budget (one row per scope site) and metrics.json, a JSON object with "
            "median_budget (the median over the scope's sites). The budgets are scored "
            "against the sites' true budgets, computed from every day's true flux (median "
            "relative error in %, target < 5)."),
        hints=("A budget that sums only the observed days misses about a fifth of the "
               "emission. Fill the gaps from the drivers (log flux regressed on soil "
               "temperature above 0 °C, the water-table depth below the surface and a "
               "frozen-soil indicator, fit per site) before summing; mind the units "
               "(mg per day to g per year)."),
        difficulty="medium",
        tag=tags("wetland-methane", "up-downscaling", "medium", "robustness",
                 "data-preparation", "descriptive", "synthesis"),
        generate=("flux_budget", "b"),
        protect=["sites.csv", "fluxes.csv"],
        criteria=[
            realistic(["median_budget"]),
            covers("budget.csv", "site_id", "sites", "$gold.b.ids"),
            reported_median("median_budget", "$gold.b.ids", table),
            target("budget_error_pct",
                   {"fn": "earth_relative_error", "truth": "$gold.b.budget", "percent": True,
                    **table}, "< 5", "$gold.b.base_error_pct", False),
        ],
        code=budget_code,
        negatives={
            "observed-days-only": scripted(budget_code("    filled = np.nan_to_num(y)\n")),
            "milligrams-not-grams": scripted(budget_code("    filled = filled * 1000\n")),
            "wrong-scope-all-sites": scripted(budget_code(sel="site_id == site_id")),
            "fabricated-median": scripted(fabricated),
        },
        cheats={
            "metrics-only": metrics_json({"median_budget": 12.0}),
            "defensive-zeros": metrics_json({"median_budget": 0}),
            "constant-budget": agent_script(budget_code("    filled = np.full(len(y), 30.0)\n")),
        },
        scopes=CH4_QUERIES)
