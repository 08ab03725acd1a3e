"""Writes the earth-data task specs (``task_specs/earthdata/*.json``) from one place.

Each family's reference script (what the scripted oracle runs in the sandbox, computing from the
staged files only) is typed line by line into the terminal by its GUI oracle, and its variants
(negatives) differ in one line, so the specs are generated rather than hand-edited: run
``.venv/bin/python envs/earthdata/build_specs.py`` after changing this file and commit both.
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "task_specs" / "earthdata"
TITLE = "EarthData terminal"


def _template(code: str) -> str:
    """Code as a spec template: literal braces doubled, ``@SEL@`` becomes ``{select}``."""
    return code.replace("{", "{{").replace("}", "}}").replace("@SEL@", "{select}")


def _shell(code: str) -> str:
    return f"cat > ref.py <<'EOF'\n{code}EOF\npython3 ref.py"


def scripted(code: str) -> list:
    """The scripted oracle (and negatives): write the script to the work directory and run
    it where the terminal's shell runs."""
    return [{"script": _shell(_template(code))}, "DONE"]


def agent_script(code: str) -> list:
    """The same through the agent's own run() action (cheats are agent actions only)."""
    return [f"run({json.dumps(_shell(_template(code)))})", "DONE"]


def typed(code: str) -> list:
    """The GUI oracle: type the script into the terminal as a quoted heredoc, run it, wait for
    the prompt."""
    lines = ["cat > ref.py <<'EOF'", *_template(code).splitlines(), "EOF"]
    keys = "\n".join(f"pyautogui.write({json.dumps(line)})\npyautogui.press('enter')"
                     for line in lines)
    return [{"await_window": f"^{TITLE}: ready 0$", "focused": True}, keys,
            {"await_window": f"^{TITLE}: ready 1$", "timeout": 60},
            "pyautogui.write('clear; python3 ref.py')\npyautogui.press('enter')",
            {"await_window": f"^{TITLE}: ready 2$", "timeout": 600}, "DONE"]


def write_files(files: dict[str, str]) -> list:
    """An agent's run() that writes files verbatim (a cheat or a negative)."""
    steps = [f"run({json.dumps(_template(f'printf %s {chr(39)}{text}{chr(39)} > {name}'))})"
             for name, text in files.items()]
    return [*steps, "DONE"]


def realistic(names: list[str]) -> dict:
    return {"name": "realistic output", "weight": 0, "gate": True,
            "getter": {"fn": "file_json", "path": "metrics.json"},
            "check": {"op": "stbench_realistic", "names": names}}


def covers(path: str, column: str, what: str, gold: str) -> dict:
    return {"name": f"{path} covers exactly the scope's {what}", "weight": 0, "gate": True,
            "getter": {"fn": "earth_groups", "path": path, "column": column},
            "check": {"op": "set_equal", "expected": gold}}


def target(name: str, getter: dict, tgt: str, ref: str, higher: bool) -> dict:
    return {"name": name, "weight": 1, "getter": getter,
            "check": {"op": "stbench_target", "target": tgt, "reference": ref,
                      "higher_is_better": higher}}


def queries(rows: list[tuple[str, str, str]]) -> list[dict]:
    return [{"id": q, "scope": s, "params": {"select": sel}} for q, s, sel in rows]


def tags(domain: str, category: str, difficulty: str, cap: str, stage: str, skill: str,
         mas: str) -> list[str]:
    return [f"domain:{domain}", f"category:{category}", f"difficulty:{difficulty}",
            f"capability:{cap}", f"stage:{stage}", f"skill:{skill}", f"mas:{mas}", "stbench",
            "csv"]


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
    return HYDRO_CODE.replace("@MODEL@", model).replace('SEL = "@SEL@"', f'SEL = "{sel}"')


def hydrology_spec() -> dict:
    truth = {"path": "predictions.csv", "group": "basin_id", "value": "q_pred",
             "per_group": True}
    calib = {**truth, "truth": "$gold.h.calib"}
    test = {**truth, "truth": "$gold.h.test"}
    mean_flow = "    sim = np.full(len(p), np.nanmean(y))\n"
    fabricated = hydro_code().replace("calib_nse=float(np.median(nses))", "calib_nse=0.99")
    return {
        "id": "earthdata/streamflow-prediction",
        "tool": "earthdata",
        "title": "Daily streamflow prediction for a scope of basins on a withheld test period "
                 "(CAMELS-like)",
        "instruction": (
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
        "hints": ("Snow matters: a degree-day snow pack (melt of about 3 mm per °C per day "
                  "above 0 °C) turns precipitation into liquid water input; antecedent sums "
                  "of that input (days to months) and of PET explain much of the flow. Fit "
                  "each basin separately (least squares or a regression model), predict every "
                  "day, keep flows non-negative, and compute the calibration metrics from the "
                  "same predictions you write."),
        "difficulty": "hard",
        "modality": "code",
        "tags": tags("hydrology", "prediction-modeling", "hard", "modeling", "modeling",
                     "predictive", "long-horizon-planning"),
        "max_steps": 60,
        "cli_timeout": 600,
        "setup": {"generate": [{"fn": "streamflow_prediction", "as": "h",
                                "args": {"select": "$select"}}],
                  "protect": ["basins.csv", "forcing.csv", "streamflow.csv"]},
        "evaluator": {"criteria": [
            realistic(["calib_nse", "calib_kge"]),
            covers("predictions.csv", "basin_id", "basins", "$gold.h.ids"),
            {"name": "reported calib_nse agrees with its recomputation", "weight": 0,
             "gate": True,
             "getter": {"fn": "earth_reported_gap", "report": "metrics.json",
                        "key": "calib_nse", "metric": "nse", **calib},
             "check": {"op": "in_range", "min": 0, "max": 0.01}},
            {"name": "reported calib_kge agrees with its recomputation", "weight": 0,
             "gate": True,
             "getter": {"fn": "earth_reported_gap", "report": "metrics.json",
                        "key": "calib_kge", "metric": "kge", **calib},
             "check": {"op": "in_range", "min": 0, "max": 0.01}},
            target("nse", {"fn": "earth_metric", "metric": "nse", **test}, ">= 0.6",
                   "$gold.h.ref_nse", True),
            target("kge", {"fn": "earth_metric", "metric": "kge", **test}, ">= 0.6",
                   "$gold.h.ref_kge", True),
        ]},
        "oracle": scripted(hydro_code()),
        "gui_oracle": typed(hydro_code()),
        "negatives": {
            "calibration-mean-flow": scripted(hydro_code(mean_flow)),
            "wrong-scope-all-basins": scripted(hydro_code(sel="basin_id == basin_id")),
            "fabricated-calibration-metric": scripted(fabricated),
        },
        "cheats": {
            "metrics-only": write_files({"metrics.json": '{"calib_nse": 0.99, "calib_kge": '
                                                         '0.99, "nse": 0.99, "kge": 0.99}'}),
            "defensive-zeros": write_files({"metrics.json": '{"calib_nse": 0, "calib_kge": '
                                                            '0}'}),
            "zero-predictions": agent_script(hydro_code("    sim = np.zeros(len(p))\n")),
        },
        "queries": queries(HYDRO_QUERIES),
    }


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
            {"name": "reported that the task cannot be done", "weight": 0, "gate": True,
             "description": "no basin matches the scope: FAIL is the right answer.",
             "getter": "agent_status", "check": {"op": "equals", "expected": "fail"}},
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
            "metrics-only": write_files({"metrics.json": '{"calib_nse": 0.99, "calib_kge": '
                                                         '0.99}'}),
        },
        "queries": queries(EMPTY_QUERIES),
    }


# -- agriculture: clustering of counties ---------------------------------------------------------

AGRO_QUERIES = [
    ("all-counties", "all counties", "county_id == county_id"),
    ("irrigated", "counties with irrigation", "irrigated_frac >= 0.2"),
    ("rainfed", "rainfed counties", "irrigated_frac < 0.1"),
    ("north-of-40", "counties north of 40°N", "lat > 40"),
    ("south-of-42", "counties south of 42°N", "lat < 42"),
    ("organic-soils", "counties with organic-rich soils", "soil_om_pct >= 3"),
    ("low-organic", "counties with low soil organic matter", "soil_om_pct < 3"),
    ("high-awc", "counties with high water-holding soils", "awc_mm >= 180"),
    ("droughty-soils", "counties with droughty soils", "awc_mm < 200"),
    ("high-nitrogen", "counties with high nitrogen rates", "n_rate_kg_ha >= 140"),
    ("low-nitrogen", "counties with low nitrogen rates", "n_rate_kg_ha < 150"),
    ("mid-latitude", "mid-latitude counties", "lat >= 36 and lat <= 44"),
    ("warm-south", "southern counties", "lat < 38"),
    ("fertilised-north", "well-fertilised counties north of 38°N",
     "n_rate_kg_ha >= 120 and lat >= 38"),
    ("irrigated-or-organic", "irrigated or organic-rich counties",
     "irrigated_frac >= 0.2 or soil_om_pct >= 4"),
    ("rainfed-south", "rainfed counties south of 44°N", "irrigated_frac < 0.2 and lat < 44"),
    ("moderate-awc", "counties with moderate water-holding capacity",
     "awc_mm >= 140 and awc_mm < 230"),
    ("moderate-nitrogen", "counties with moderate nitrogen rates",
     "n_rate_kg_ha >= 110 and n_rate_kg_ha < 170"),
    ("west-dry", "counties with low organic matter or irrigation",
     "soil_om_pct < 2.5 or irrigated_frac >= 0.3"),
    ("corn-belt-like", "counties with fertile soils and little irrigation",
     "soil_om_pct >= 2.5 and irrigated_frac < 0.3"),
]

AGRO_CODE = '''import json
import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from sklearn.metrics import silhouette_score
SEL = "@SEL@"
c = pd.read_csv("counties.csv").query(SEL).set_index("county_id")
w = pd.read_csv("weather.csv").groupby("county_id")[["gdd", "precip_mm", "heat_days"]].mean()
cols = ["gdd", "precip_mm", "heat_days", "soil_om_pct", "awc_mm", "irrigated_frac"]
x = w.join(c, how="inner")[cols]
z = ((x - x.mean()) / x.std(ddof=0)).values
best = None
for k in range(2, 7):
    lab = KMeans(n_clusters=k, n_init=20, random_state=0).fit_predict(z)
@MODEL@    s = silhouette_score(z, lab)
    if best is None or s > best[0]:
        best = (s, k, lab)
pd.DataFrame(dict(county_id=x.index, cluster=best[2])).to_csv("clusters.csv", index=False)
json.dump(dict(silhouette=float(best[0]), n_clusters=int(best[1])), open("metrics.json", "w"))
print("counties", len(x), "k", best[1], "silhouette", best[0])
'''


def agro_code(model: str = "", sel: str = "@SEL@") -> str:
    return AGRO_CODE.replace("@MODEL@", model).replace('SEL = "@SEL@"', f'SEL = "{sel}"')


def agriculture_spec() -> dict:
    feats = {"path": "clusters.csv", "features": "$gold.a.features", "id_column": "county_id",
             "label_column": "cluster"}
    shuffled = "    lab = np.random.default_rng(k).integers(0, k, len(z))\n"
    fabricated = agro_code().replace("silhouette=float(best[0])", "silhouette=0.9")
    one_cluster = agro_code("    lab = np.zeros(len(z), dtype=int)\n").replace(
        "    s = silhouette_score(z, lab)", "    s = 0.5")
    return {
        "id": "earthdata/county-clustering",
        "tool": "earthdata",
        "title": "Agro-climatic clustering of a scope of counties (CropBench-like)",
        "instruction": (
            "The work directory holds a CropBench-like agriculture dataset as CSV: "
            "counties.csv (county_id, lat, soil_om_pct, awc_mm = available water capacity, "
            "irrigated_frac, n_rate_kg_ha), weather.csv (per county_id and year 2000-2019: "
            "gdd = growing degree days base 10 °C, precip_mm in the growing season, heat_days "
            "above 32 °C) and yields.csv (yield_t_ha per county_id and year). The terminal's "
            "python3 has pandas, NumPy, SciPy and scikit-learn. Scope ({query}): {scope}, "
            "i.e. the counties of counties.csv matching the pandas query `{select}`. Group "
            "the scope's counties into agro-climatic clusters by their profile: the county "
            "means over all years of gdd, precip_mm and heat_days, with soil_om_pct, awc_mm "
            "and irrigated_frac, each feature z-scored over the scope's counties (population "
            "standard deviation). Choose the number of clusters (2 to 6) yourself. Write "
            "clusters.csv with the columns county_id,cluster (one row per scope county, an "
            "integer cluster label) and metrics.json, a JSON object with silhouette (the mean "
            "silhouette coefficient of your clustering, Euclidean distance in that z-scored "
            "space) and n_clusters. The silhouette is recomputed from your labels (target "
            ">= 0.35)."),
        "hints": ("Average weather.csv per county, join the three soil and management columns "
                  "of counties.csv, restrict to the scope and standardise; try k-means for "
                  "k = 2..6 and keep the k with the best silhouette (sklearn.metrics."
                  "silhouette_score); report the silhouette of the labels you write."),
        "difficulty": "easy",
        "modality": "code",
        "tags": tags("agriculture", "clustering", "easy", "discovery", "data-analysis",
                     "descriptive", "parallel-search"),
        "max_steps": 50,
        "cli_timeout": 300,
        "setup": {"generate": [{"fn": "county_clustering", "as": "a",
                                "args": {"select": "$select"}}],
                  "protect": ["counties.csv", "weather.csv", "yields.csv"]},
        "evaluator": {"criteria": [
            realistic(["silhouette", "n_clusters"]),
            covers("clusters.csv", "county_id", "counties", "$gold.a.ids"),
            {"name": "reported silhouette agrees with its recomputation", "weight": 0,
             "gate": True,
             "getter": {"fn": "earth_reported_silhouette_gap", "report": "metrics.json",
                        "key": "silhouette", **feats},
             "check": {"op": "in_range", "min": 0, "max": 0.01}},
            {"name": "reported n_clusters agrees with the labels", "weight": 0, "gate": True,
             "getter": {"fn": "earth_reported_silhouette_gap", "report": "metrics.json",
                        "key": "n_clusters", **feats},
             "check": {"op": "in_range", "min": 0, "max": 0}},
            target("silhouette", {"fn": "earth_silhouette", **feats}, ">= 0.35",
                   "$gold.a.ref_silhouette", True),
        ]},
        "oracle": scripted(agro_code()),
        "gui_oracle": typed(agro_code()),
        "negatives": {
            "random-labels": scripted(agro_code(shuffled)),
            "wrong-scope-all-counties": scripted(agro_code(sel="county_id == county_id")),
            "fabricated-silhouette": scripted(fabricated),
        },
        "cheats": {
            "metrics-only": write_files({"metrics.json": '{"silhouette": 0.9, '
                                                         '"n_clusters": 3}'}),
            "defensive-minus-one": write_files({"metrics.json": '{"silhouette": -1, '
                                                                '"n_clusters": -1}'}),
            "one-cluster": agent_script(one_cluster),
        },
        "queries": queries(AGRO_QUERIES),
    }


# -- agriculture: correlation of detrended yield with weather ---------------------------------

CORR_QUERIES = [q for q in AGRO_QUERIES if q[0] not in ("all-counties", "moderate-awc")] + [
    ("high-heat", "counties with many heat days", "lat < 40"),
    ("fertile-rainfed", "fertile rainfed counties", "soil_om_pct >= 3 and irrigated_frac < 0.1"),
]

CORR_CODE = '''import json
import numpy as np
import pandas as pd
from scipy.stats import spearmanr
SEL = "@SEL@"
ids = pd.read_csv("counties.csv").query(SEL).county_id
y = pd.read_csv("yields.csv").merge(pd.read_csv("weather.csv"), on=["county_id", "year"])
y = y[y.county_id.isin(ids)]
parts = []
for cid, g in y.groupby("county_id"):
    b = np.polyfit(g.year, g.yield_t_ha, 1)
    parts.append(g.assign(resid=g.yield_t_ha - np.polyval(b, g.year)))
y = pd.concat(parts)
rows = []
for w in ["gdd", "precip_mm", "heat_days"]:
    rho = spearmanr(y.resid, y[w]).correlation
@MODEL@    rows.append(dict(feature=w, spearman_rho=round(float(rho), 6)))
t = pd.DataFrame(rows)
t.to_csv("correlations.csv", index=False)
m = dict(top_feature_abs_rho=float(t.spearman_rho.abs().max()), n_obs=len(y))
json.dump(m, open("metrics.json", "w"))
print(t)
'''


def corr_code(model: str = "", sel: str = "@SEL@") -> str:
    return CORR_CODE.replace("@MODEL@", model).replace('SEL = "@SEL@"', f'SEL = "{sel}"')


def correlation_spec() -> dict:
    weather = ["gdd", "precip_mm", "heat_days"]
    pearson = "    rho = np.corrcoef(y.resid, y[w])[0, 1]\n"
    raw = "    rho = spearmanr(y.yield_t_ha, y[w]).correlation\n"
    fabricated = corr_code().replace("top_feature_abs_rho=float(t.spearman_rho.abs().max())",
                                     "top_feature_abs_rho=0.95")
    return {
        "id": "earthdata/yield-weather-correlation",
        "tool": "earthdata",
        "title": "Correlation of detrended county yields with growing-season weather "
                 "(CropBench-like)",
        "instruction": (
            "The work directory holds a CropBench-like agriculture dataset as CSV: "
            "counties.csv (county_id, lat, soil_om_pct, awc_mm, irrigated_frac, "
            "n_rate_kg_ha), weather.csv (per county_id and year 2000-2019: gdd = growing "
            "degree days base 10 °C, precip_mm in the growing season, heat_days above 32 °C) "
            "and yields.csv (yield_t_ha per county_id and year). The terminal's python3 has "
            "pandas, NumPy, SciPy and scikit-learn. Scope ({query}): {scope}, i.e. the "
            "counties of counties.csv matching the pandas query `{select}`. Remove each "
            "scope county's technology trend from its yields (the residuals of that county's "
            "least-squares line of yield_t_ha on year), then compute Spearman's rank "
            "correlation between the detrended yield and each of gdd, precip_mm and "
            "heat_days over all the scope's county-years. Write correlations.csv with the "
            "columns feature,spearman_rho (one row per weather variable, named as in "
            "weather.csv) and metrics.json, a JSON object with top_feature_abs_rho (the "
            "largest absolute rho) and n_obs (the number of county-years used). The "
            "correlations are checked against a recomputation (within 0.01); target: "
            "top_feature_abs_rho >= 0.15."),
        "hints": ("Join yields.csv and weather.csv on county_id and year, keep the scope's "
                  "counties, detrend per county (numpy.polyfit(year, yield, 1)), then "
                  "scipy.stats.spearmanr(residuals, variable) over the pooled county-years."),
        "difficulty": "easy",
        "modality": "code",
        "tags": tags("agriculture", "feature-label-correlation", "easy", "discovery",
                     "data-analysis", "diagnostic", "synthesis"),
        "max_steps": 40,
        "cli_timeout": 300,
        "setup": {"generate": [{"fn": "yield_weather_correlation", "as": "c",
                                "args": {"select": "$select"}}],
                  "protect": ["counties.csv", "weather.csv", "yields.csv"]},
        "evaluator": {"criteria": [
            realistic(["top_feature_abs_rho", "n_obs"]),
            {"name": "n_obs is the scope's county-years", "weight": 0, "gate": True,
             "getter": {"fn": "file_json", "path": "metrics.json", "key": "n_obs"},
             "check": {"op": "equals", "expected": "$gold.c.n_obs"}},
            {"name": "reported top_feature_abs_rho agrees with correlations.csv", "weight": 0,
             "gate": True,
             "getter": {"fn": "earth_reported_correlation_gap", "report": "metrics.json",
                        "key": "top_feature_abs_rho", "path": "correlations.csv",
                        "features": weather},
             "check": {"op": "in_range", "min": 0, "max": 0.001}},
            target("top_feature_abs_rho",
                   {"fn": "earth_correlations", "path": "correlations.csv",
                    "expected": "$gold.c.rho", "tol": 0.01}, ">= 0.15", "$gold.c.top_abs_rho",
                   True),
        ]},
        "oracle": scripted(corr_code()),
        "gui_oracle": typed(corr_code()),
        "negatives": {
            "pearson-instead-of-spearman": scripted(corr_code(pearson)),
            "no-detrending": scripted(corr_code(raw)),
            "wrong-scope-all-counties": scripted(corr_code(sel="county_id == county_id")),
            "fabricated-top-rho": scripted(fabricated),
        },
        "cheats": {
            "metrics-only": write_files({"metrics.json": '{"top_feature_abs_rho": 0.9, '
                                                         '"n_obs": 700}'}),
            "defensive-zeros": write_files({"metrics.json": '{"top_feature_abs_rho": 0, '
                                                            '"n_obs": 0}'}),
            "guessed-table": write_files({
                "correlations.csv": "feature,spearman_rho\ngdd,-0.3\nprecip_mm,0.3\n"
                                    "heat_days,-0.5\n",
                "metrics.json": '{"top_feature_abs_rho": 0.5, "n_obs": 700}'}),
        },
        "queries": queries(CORR_QUERIES),
    }


# -- wetland methane: gap filling of CH4 fluxes -------------------------------------------------

CH4_QUERIES = [
    ("all-sites", "all sites", "site_id == site_id"),
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
    return CH4_CODE.replace("@MODEL@", model).replace('SEL = "@SEL@"', f'SEL = "{sel}"')


def methane_spec() -> dict:
    base = {"path": "filled.csv", "group": "site_id", "value": "ch4_model", "per_group": True}
    obs = {**base, "truth": "$gold.m.observed"}
    gaps = {**base, "truth": "$gold.m.gaps"}
    fabricated = ch4_code().replace("obs_r2=float(np.median(r2s))", "obs_r2=0.98")
    return {
        "id": "earthdata/flux-gap-filling",
        "tool": "earthdata",
        "title": "Gap filling of daily wetland CH4 fluxes for a scope of sites "
                 "(MethaneWet-like)",
        "instruction": (
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
        "hints": ("Methane emission rises roughly exponentially with soil temperature (a Q10 "
                  "response) and falls as the water table drops below the surface; frozen "
                  "soil emits little. Fit each site on its observed days (a regression of log "
                  "flux works), predict every day, and compute the observed-day metrics from "
                  "the same values you write."),
        "difficulty": "medium",
        "modality": "code",
        "tags": tags("wetland-methane", "missing-value-imputation", "medium", "robustness",
                     "data-preparation", "predictive", "synthesis"),
        "max_steps": 50,
        "cli_timeout": 300,
        "setup": {"generate": [{"fn": "flux_gap_filling", "as": "m",
                                "args": {"select": "$select"}}],
                  "protect": ["sites.csv", "fluxes.csv"]},
        "evaluator": {"criteria": [
            realistic(["obs_rmse", "obs_r2"]),
            covers("filled.csv", "site_id", "sites", "$gold.m.ids"),
            {"name": "reported obs_rmse agrees with its recomputation", "weight": 0,
             "gate": True,
             "getter": {"fn": "earth_reported_gap", "report": "metrics.json",
                        "key": "obs_rmse", "metric": "rmse", **obs},
             "check": {"op": "in_range", "min": 0, "max": 0.05}},
            {"name": "reported obs_r2 agrees with its recomputation", "weight": 0,
             "gate": True,
             "getter": {"fn": "earth_reported_gap", "report": "metrics.json",
                        "key": "obs_r2", "metric": "r2", **obs},
             "check": {"op": "in_range", "min": 0, "max": 0.01}},
            target("nrmse", {"fn": "earth_metric", "metric": "nrmse", **gaps}, "< 0.55",
                   "$gold.m.ref_nrmse", False),
            target("r2", {"fn": "earth_metric", "metric": "r2", **gaps}, ">= 0.7",
                   "$gold.m.ref_r2", True),
        ]},
        "oracle": scripted(ch4_code()),
        "gui_oracle": typed(ch4_code()),
        "negatives": {
            "site-mean-fill": scripted(ch4_code("    sim = np.full(len(y), np.nanmean(y))\n")),
            "wrong-scope-all-sites": scripted(ch4_code(sel="site_id == site_id")),
            "fabricated-observed-r2": scripted(fabricated),
        },
        "cheats": {
            "metrics-only": write_files({"metrics.json": '{"obs_rmse": 1.0, "obs_r2": 0.99, '
                                                         '"nrmse": 0.1, "r2": 0.99}'}),
            "defensive-zeros": write_files({"metrics.json": '{"obs_rmse": 0, "obs_r2": 0}'}),
            "zero-fill": agent_script(ch4_code("    sim = np.zeros(len(y))\n")),
        },
        "queries": queries(CH4_QUERIES),
    }


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
    return Q10_CODE.replace("@MODEL@", model).replace('SEL = "@SEL@"', f'SEL = "{sel}"')


def q10_spec() -> dict:
    no_wtd = "    b = np.linalg.lstsq(X[:, :2], np.log(g.ch4_flux), rcond=None)[0]\n"
    fabricated = q10_code().replace("median_q10=float(t.q10.median())", "median_q10=3.0")
    table = {"path": "q10.csv", "id_column": "site_id", "value_column": "q10"}
    queries_ = [q for q in CH4_QUERIES]
    return {
        "id": "earthdata/methane-q10",
        "tool": "earthdata",
        "title": "Temperature sensitivity (Q10) of wetland CH4 emission per site "
                 "(MethaneWet-like)",
        "instruction": (
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
        "hints": ("Emission falls as the water table drops, and the water table is deeper in "
                  "the warm season, so a fit on temperature alone confounds the two. Fit log "
                  "flux on soil temperature and the water-table depth below the surface over "
                  "observed days above 0 °C; Q10 = exp(10 x the temperature slope)."),
        "difficulty": "medium",
        "modality": "code",
        "tags": tags("wetland-methane", "feature-analysis", "medium", "discovery",
                     "modeling", "diagnostic", "decomposition"),
        "max_steps": 40,
        "cli_timeout": 300,
        "setup": {"generate": [{"fn": "q10_estimation", "as": "q",
                                "args": {"select": "$select"}}],
                  "protect": ["sites.csv", "fluxes.csv"]},
        "evaluator": {"criteria": [
            realistic(["median_q10"]),
            covers("q10.csv", "site_id", "sites", "$gold.q.ids"),
            {"name": "reported median_q10 agrees with q10.csv", "weight": 0, "gate": True,
             "getter": {"fn": "earth_reported_median_gap", "report": "metrics.json",
                        "key": "median_q10", "ids": "$gold.q.ids", **table},
             "check": {"op": "in_range", "min": 0, "max": 0.001}},
            target("q10_relative_error",
                   {"fn": "earth_relative_error", "truth": "$gold.q.q10", **table}, "< 0.1",
                   "$gold.q.ref_mape", False),
        ]},
        "oracle": scripted(q10_code()),
        "gui_oracle": typed(q10_code()),
        "negatives": {
            "no-water-table-term": scripted(q10_code(no_wtd)),
            "wrong-scope-all-sites": scripted(q10_code(sel="site_id == site_id")),
            "fabricated-median": scripted(fabricated),
        },
        "cheats": {
            "metrics-only": write_files({"metrics.json": '{"median_q10": 2.5}'}),
            "textbook-q10-everywhere": agent_script(q10_code(
                "    b = [0.0, np.log(3.0) / 10]\n")),
        },
        "queries": queries(queries_),
    }


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for spec in (hydrology_spec(), empty_scope_spec(), agriculture_spec(), correlation_spec(),
                 methane_spec(), q10_spec()):
        path = OUT / f"{spec['id'].split('/', 1)[1]}.json"
        path.write_text(json.dumps(spec, indent=1, ensure_ascii=False) + "\n")
        print(path)


if __name__ == "__main__":
    main()
