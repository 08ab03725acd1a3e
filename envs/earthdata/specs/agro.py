"""Spec builders of the agriculture families: county clustering and yield-weather
correlation (written by make_specs.py)."""

from __future__ import annotations

from sciagent_gym.envs.earthdata.specs.common import (
    agent_script,
    code_spec,
    covers,
    gate,
    metrics_json,
    realistic,
    scripted,
    tags,
    target,
    variant,
    within,
    write_files,
)

# -- agriculture: clustering of counties ---------------------------------------------------------

AGRO_QUERIES = [
    ("fertilised-or-irrigated", "heavily fertilised or irrigated counties",
     "n_rate_kg_ha >= 160 or irrigated_frac >= 0.3"),
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
    return variant(AGRO_CODE, model, sel)


def agriculture_spec() -> dict:
    feats = {"path": "clusters.csv", "features": "$gold.a.features", "id_column": "county_id",
             "label_column": "cluster"}
    shuffled = "    lab = np.random.default_rng(k).integers(0, k, len(z))\n"
    fabricated = agro_code().replace("silhouette=float(best[0])", "silhouette=0.9")
    one_cluster = agro_code("    lab = np.zeros(len(z), dtype=int)\n").replace(
        "    s = silhouette_score(z, lab)", "    s = 0.5")
    return code_spec(
        "county-clustering",
        title="Agro-climatic clustering of a scope of counties (CropBench-like)",
        instruction=(
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
        hints=("Average weather.csv per county, join the three soil and management columns "
               "of counties.csv, restrict to the scope and standardise; try k-means for "
               "k = 2..6 and keep the k with the best silhouette (sklearn.metrics."
               "silhouette_score); report the silhouette of the labels you write."),
        difficulty="easy",
        tag=tags("agriculture", "clustering", "easy", "discovery", "data-analysis",
                 "descriptive", "parallel-search"),
        max_steps=50,
        generate=("county_clustering", "a"),
        protect=["counties.csv", "weather.csv", "yields.csv"],
        criteria=[
            realistic(["silhouette", "n_clusters"]),
            covers("clusters.csv", "county_id", "counties", "$gold.a.ids"),
            gate("reported silhouette agrees with its recomputation",
                 {"fn": "earth_reported_silhouette_gap", "report": "metrics.json",
                  "key": "silhouette", **feats}, within(0.01)),
            gate("reported n_clusters agrees with the labels",
                 {"fn": "earth_reported_silhouette_gap", "report": "metrics.json",
                  "key": "n_clusters", **feats}, within(0)),
            target("silhouette", {"fn": "earth_silhouette", **feats}, ">= 0.35",
                   "$gold.a.base_silhouette", True),
        ],
        code=agro_code,
        negatives={
            "random-labels": scripted(agro_code(shuffled)),
            "wrong-scope-all-counties": scripted(agro_code(sel="county_id == county_id")),
            "fabricated-silhouette": scripted(fabricated),
        },
        cheats={
            "metrics-only": metrics_json({"silhouette": 0.9, "n_clusters": 3}),
            "defensive-minus-one": metrics_json({"silhouette": -1, "n_clusters": -1}),
            "one-cluster": agent_script(one_cluster),
        },
        scopes=AGRO_QUERIES)


# -- agriculture: correlation of detrended yield with weather ---------------------------------

CORR_QUERIES = [q for q in AGRO_QUERIES if q[0] not in ("fertilised-or-irrigated",
                                                          "moderate-awc")] + [
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
    return variant(CORR_CODE, model, sel)


def correlation_spec() -> dict:
    weather = ["gdd", "precip_mm", "heat_days"]
    pearson = "    rho = np.corrcoef(y.resid, y[w])[0, 1]\n"
    raw = "    rho = spearmanr(y.yield_t_ha, y[w]).correlation\n"
    fabricated = corr_code().replace("top_feature_abs_rho=float(t.spearman_rho.abs().max())",
                                     "top_feature_abs_rho=0.95")
    return code_spec(
        "yield-weather-correlation",
        title="Correlation of detrended county yields with growing-season weather "
              "(CropBench-like)",
        instruction=(
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
        hints=("Join yields.csv and weather.csv on county_id and year, keep the scope's "
               "counties, detrend per county (numpy.polyfit(year, yield, 1)), then "
               "scipy.stats.spearmanr(residuals, variable) over the pooled county-years."),
        difficulty="easy",
        tag=tags("agriculture", "feature-label-correlation", "easy", "discovery",
                 "data-analysis", "diagnostic", "synthesis"),
        generate=("yield_weather_correlation", "c"),
        protect=["counties.csv", "weather.csv", "yields.csv"],
        criteria=[
            realistic(["top_feature_abs_rho", "n_obs"]),
            gate("n_obs is the scope's county-years",
                 {"fn": "file_json", "path": "metrics.json", "key": "n_obs"},
                 {"op": "equals", "expected": "$gold.c.n_obs"}),
            gate("reported top_feature_abs_rho agrees with correlations.csv",
                 {"fn": "earth_reported_correlation_gap", "report": "metrics.json",
                  "key": "top_feature_abs_rho", "path": "correlations.csv",
                  "features": weather}, within(0.001)),
            target("top_feature_abs_rho",
                   {"fn": "earth_correlations", "path": "correlations.csv",
                    "expected": "$gold.c.rho", "tol": 0.01}, ">= 0.15", "$gold.c.top_abs_rho",
                   True),
        ],
        code=corr_code,
        negatives={
            "pearson-instead-of-spearman": scripted(corr_code(pearson)),
            "no-detrending": scripted(corr_code(raw)),
            "wrong-scope-all-counties": scripted(corr_code(sel="county_id == county_id")),
            "fabricated-top-rho": scripted(fabricated),
        },
        cheats={
            "metrics-only": metrics_json({"top_feature_abs_rho": 0.9, "n_obs": 700}),
            "defensive-zeros": metrics_json({"top_feature_abs_rho": 0, "n_obs": 0}),
            "guessed-table": write_files({
                "correlations.csv": "feature,spearman_rho\ngdd,-0.3\nprecip_mm,0.3\n"
                                    "heat_days,-0.5\n",
                "metrics.json": '{"top_feature_abs_rho": 0.5, "n_obs": 700}'}),
        },
        scopes=CORR_QUERIES)
