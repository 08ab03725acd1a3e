"""Spec builders of the hydrology families: streamflow prediction and its infeasible
empty-scope twin (written by make_specs.py)."""

from __future__ import annotations

import json

from sciagent_gym.envs.earthdata.specs.common import (
    TITLE,
    agent_script,
    code_spec,
    covers,
    gate,
    metrics_json,
    queries,
    realistic,
    reported,
    scripted,
    tags,
    target,
    variant,
)

# -- hydrology: streamflow prediction on a withheld test period ---------------------------------

HYDRO_QUERIES = [
    ("snow-dominated", "snow-dominated basins", "snow_frac >= 0.5"),
    ("rain-dominated", "rain-dominated basins", "snow_frac < 0.3"),
    ("arid", "arid basins", "aridity > 1.5"),
    ("humid", "humid basins", "aridity < 0.8"),
    ("high-elevation", "basins above 2000 m", "elev_m > 2000"),
    ("lowland", "lowland basins below 1000 m", "elev_m < 1000"),
    ("forested", "forested basins", "forest_frac >= 0.6"),
    ("sparsely-forested", "sparsely forested basins", "forest_frac < 0.35"),
    ("deep-soil", "basins with deep soils", "soil_depth_m >= 1.5"),
    ("shallow-soil", "basins with shallow soils", "soil_depth_m < 0.8"),
    ("large", "large basins", "area_km2 >= 1000"),
    ("small", "small headwater basins", "area_km2 < 150"),
    ("northern", "northern basins", "lat >= 43"),
    ("southern", "southern basins", "lat < 37"),
    ("snowy-humid", "snowy humid basins", "snow_frac >= 0.4 and aridity < 1.0"),
    ("dry-snowy", "dry snowy basins", "aridity > 1.2 and snow_frac >= 0.5"),
    ("forested-humid", "forested humid basins", "forest_frac >= 0.5 and aridity < 1.2"),
    ("mid-elevation", "mid-elevation basins", "elev_m >= 1000 and elev_m <= 2000"),
    ("transitional-snow", "basins in the rain-snow transition",
     "snow_frac >= 0.3 and snow_frac < 0.5"),
    ("high-forested", "forested mountain basins", "elev_m > 1800 and forest_frac >= 0.4"),
]

HYDRO_CODE = '''import json
import numpy as np
import pandas as pd
SEL = "@SEL@"
ids = sorted(pd.read_csv("basins.csv").query(SEL).basin_id)
f = pd.read_csv("forcing.csv")
f = f[f.basin_id.isin(ids)]
q = pd.read_csv("streamflow.csv").set_index(["basin_id", "date"]).q_mm
def kge(s, o):
    r = np.corrcoef(s, o)[0, 1]
    return 1 - np.sqrt((r - 1) ** 2 + (s.std() / o.std() - 1) ** 2 + (s.mean() / o.mean() - 1) ** 2)
def nse(s, o):
    return 1 - ((s - o) ** 2).sum() / ((o - o.mean()) ** 2).sum()
out, nses, kges = [], [], []
for bid, g in f.groupby("basin_id"):
    p, t, e = g.precip_mm.values, g.tmean_c.values, g.pet_mm.values
    pack, w, sp = 0.0, np.zeros(len(p)), np.zeros(len(p))
    for i in range(len(p)):
        liq = 0.0 if t[i] < 0 else p[i]
        pack += p[i] - liq
        m = min(pack, 3.0 * max(t[i], 0.0))
        pack -= m
        w[i], sp[i] = liq + m, pack
    W, E = pd.Series(w), pd.Series(e)
    X = [np.ones(len(p)), w, sp] + [W.shift(k).fillna(0).values for k in (1, 2, 3)]
    for k in (7, 30, 90, 180):
        X += [W.rolling(k, min_periods=1).sum().values, E.rolling(k, min_periods=1).sum().values]
    X = np.column_stack(X)
    y = q.reindex(list(zip([bid] * len(g), g.date))).values
    c = ~np.isnan(y)
    sim = np.maximum(X @ np.linalg.lstsq(X[c], y[c], rcond=None)[0], 0)
@MODEL@    out.append(pd.DataFrame(dict(basin_id=bid, date=g.date.values, q_pred=sim.round(4))))
    nses.append(nse(sim.round(4)[c], y[c]))
    kges.append(kge(sim.round(4)[c], y[c]))
pd.concat(out).to_csv("predictions.csv", index=False)
m = dict(calib_nse=float(np.median(nses)), calib_kge=float(np.median(kges)))
json.dump(m, open("metrics.json", "w"))
print("basins", len(ids), "calib_nse", np.median(nses))
'''


def hydro_code(model: str = "", sel: str = "@SEL@") -> str:
    return variant(HYDRO_CODE, model, sel)


def hydrology_spec() -> dict:
    truth = {"path": "predictions.csv", "group": "basin_id", "value": "q_pred",
             "per_group": True}
    calib = {**truth, "truth": "$gold.h.calib"}
    test = {**truth, "truth": "$gold.h.test"}
    mean_flow = "    sim = np.full(len(p), np.nanmean(y))\n"
    fabricated = hydro_code().replace("calib_nse=float(np.median(nses))", "calib_nse=0.99")
    return code_spec(
        "streamflow-prediction",
        title="Daily streamflow prediction for a scope of basins on a withheld test period "
              "(CAMELS-like)",
        instruction=(
            "The work directory holds a CAMELS-like hydrology dataset as CSV: basins.csv "
            "(basin_id, area_km2, elev_m, lat, aridity = PET/P, snow_frac = share of "
            "precipitation falling below 0 °C, forest_frac, soil_depth_m), forcing.csv (daily "
            "precip_mm, tmean_c, pet_mm per basin_id and date, 2008-2013) and streamflow.csv "
            "(daily observed q_mm per basin_id and date, 2008-2011 only: 2012-2013 is a "
            "withheld test period). The terminal's python3 has pandas, NumPy, SciPy and "
            "scikit-learn. Scope ({query}): {scope}, i.e. the basins of basins.csv matching "
            "the pandas query `{select}`. Build a rainfall-runoff model of daily streamflow "
            "for every basin in scope, calibrated on 2008-2011, and write predictions.csv "
            "with the columns basin_id,date,q_pred: one row per scope basin and day of "
            "2008-2013 (calibration and test periods), for the scope's basins only. Also "
            "write metrics.json, a JSON object with calib_nse and calib_kge: the median over "
            "the scope's basins of the Nash-Sutcliffe and Kling-Gupta (2009) efficiencies of "
            "your q_pred against the observed streamflow in 2008-2011. Your predictions for "
            "2012-2013 are scored against the withheld observations (median NSE and KGE over "
            "the scope's basins; targets NSE >= 0.6 and KGE >= 0.6)."),
        hints=("Snow matters: a degree-day snow pack (melt of about 3 mm per °C per day "
               "above 0 °C) turns precipitation into liquid water input; antecedent sums "
               "of that input (days to months) and of PET explain much of the flow. Fit "
               "each basin separately (least squares or a regression model), predict every "
               "day, keep flows non-negative, and compute the calibration metrics from the "
               "same predictions you write."),
        difficulty="hard",
        tag=tags("hydrology", "prediction-modeling", "hard", "modeling", "modeling",
                 "predictive", "long-horizon-planning"),
        max_steps=60,
        cli_timeout=600,
        generate=("streamflow_prediction", "h"),
        protect=["basins.csv", "forcing.csv", "streamflow.csv"],
        criteria=[
            realistic(["calib_nse", "calib_kge"]),
            covers("predictions.csv", "basin_id", "basins", "$gold.h.ids"),
            reported("calib_nse", 0.01, metric="nse", **calib),
            reported("calib_kge", 0.01, metric="kge", **calib),
            target("nse", {"fn": "earth_metric", "metric": "nse", **test}, ">= 0.6",
                   "$gold.h.base_nse", True),
            target("kge", {"fn": "earth_metric", "metric": "kge", **test}, ">= 0.6",
                   "$gold.h.base_kge", True),
        ],
        code=hydro_code,
        negatives={
            "calibration-mean-flow": scripted(hydro_code(mean_flow)),
            "wrong-scope-all-basins": scripted(hydro_code(sel="basin_id == basin_id")),
            "fabricated-calibration-metric": scripted(fabricated),
        },
        cheats={
            "metrics-only": metrics_json({"calib_nse": 0.99, "calib_kge": 0.99, "nse": 0.99,
                                          "kge": 0.99}),
            "defensive-zeros": metrics_json({"calib_nse": 0, "calib_kge": 0}),
            "zero-predictions": agent_script(hydro_code("    sim = np.zeros(len(p))\n")),
        },
        scopes=HYDRO_QUERIES)


EMPTY_QUERIES = [
    ("above-3500m", "basins above 3500 m", "elev_m > 3500"),
    ("glaciated", "glacier-dominated basins (snow fraction above 0.9)", "snow_frac > 0.9"),
    ("hyper-arid", "hyper-arid basins (aridity above 5)", "aridity > 5"),
    ("continental-scale", "basins larger than 20000 km2", "area_km2 > 20000"),
    ("subarctic", "subarctic basins north of 60°N", "lat > 60"),
    ("tropical", "tropical basins south of 23°N", "lat < 23"),
    ("bare-rock", "basins without forest", "forest_frac < 0.01"),
    ("fully-forested", "fully forested basins", "forest_frac > 0.99"),
    ("very-deep-soil", "basins with soils deeper than 3 m", "soil_depth_m > 3"),
    ("no-soil", "basins with soils shallower than 10 cm", "soil_depth_m < 0.1"),
    ("coastal-lowland", "coastal basins below 50 m", "elev_m < 50"),
    ("tiny", "plot-scale basins under 5 km2", "area_km2 < 5"),
    ("wet-tropics", "super-humid basins (aridity below 0.2)", "aridity < 0.2"),
    ("snow-free-alpine", "alpine basins above 2500 m without snow",
     "elev_m > 2500 and snow_frac < 0.1"),
    ("arid-glacial", "arid glacier basins", "aridity > 2 and snow_frac > 0.8"),
    ("large-alpine", "large alpine basins", "area_km2 > 3900 and elev_m > 2500"),
    ("forested-desert", "forested desert basins", "forest_frac > 0.9 and aridity > 2.5"),
    ("polar", "polar basins north of 66°N", "lat > 66"),
    ("deep-arid-lowland", "deep-soil hyper-arid lowlands",
     "soil_depth_m > 1.9 and aridity > 2.9 and elev_m < 500"),
    ("equatorial", "equatorial basins", "lat < 5"),
]


def empty_scope_spec() -> dict:
    spec = hydrology_spec()
    count = ("python3 -c 'import pandas as pd; "
             "print(\"basins in scope:\", len(pd.read_csv(\"basins.csv\").query(\"{select}\")))'")
    return {
        "id": "earthdata/empty-scope-streamflow",
        "tool": "earthdata",
        "title": "Streamflow prediction for a scope no basin matches (infeasible)",
        "instruction": spec["instruction"],
        "hints": spec["hints"],
        "difficulty": "medium",
        "modality": "code",
        "infeasible": True,
        "tags": tags("hydrology", "prediction-modeling", "medium", "robustness",
                     "data-preparation", "diagnostic", "error-recovery") + ["infeasible"],
        "max_steps": 40,
        "cli_timeout": 600,
        "setup": {"generate": [{"fn": "empty_scope_streamflow", "as": "h",
                                "args": {"select": "$select"}}],
                  "protect": ["basins.csv", "forcing.csv", "streamflow.csv"]},
        "evaluator": {"criteria": [
            gate("reported that the task cannot be done", "agent_status",
                 {"op": "equals", "expected": "fail"},
                 description="no basin matches the scope: FAIL is the right answer."),
            {"name": "no predictions fabricated", "weight": 0,
             "getter": {"fn": "file_exists", "path": "predictions.csv"},
             "check": {"op": "is_false"}},
            {"name": "no metrics fabricated", "weight": 0,
             "getter": {"fn": "file_exists", "path": "metrics.json"},
             "check": {"op": "is_false"}},
        ]},
        "oracle": [{"script": count}, "FAIL"],
        "gui_oracle": [{"await_window": f"^{TITLE}: ready 0$", "focused": True},
                       f"pyautogui.write({json.dumps(count)})\npyautogui.press('enter')",
                       {"await_window": f"^{TITLE}: ready 1$", "timeout": 120}, "FAIL"],
        "negatives": {
            "claims-done": ["DONE"],
            "all-basins-then-done": [scripted(hydro_code(sel="basin_id == basin_id"))[0],
                                     "DONE"],
            "defensive-metrics-then-failed": [
                {"script": "printf %s '{{\"calib_nse\": -1, \"calib_kge\": -1}}' "
                           "> metrics.json"}, "FAIL"],
        },
        "cheats": {
            "metrics-only": metrics_json({"calib_nse": 0.99, "calib_kge": 0.99}),
        },
        "queries": queries(EMPTY_QUERIES),
    }
