"""The agriculture (CropBench-like) dataset, its reference pipelines and its task
generators (the model: envs/earthdata/data.py)."""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sciagent_gym.envs.earthdata.datasets.common import (
    DATASET_SEED,
    N_COUNTIES,
    YEARS,
    nse,
    scope_ids,
)

REGIONS = {  # lat, om %, awc mm, irrigated share, N kg/ha, gdd, precip mm, heat-day scale
    "corn-belt": (41.5, 4.0, 220, 0.05, 180, 2700, 560, 4),
    "plains": (39.0, 2.0, 150, 0.55, 140, 2950, 330, 14),
    "south": (34.5, 1.5, 170, 0.15, 120, 3500, 620, 22),
    "north": (46.5, 5.0, 190, 0.03, 120, 2050, 430, 1),
}


@cache
def agriculture_dataset(seed: int = DATASET_SEED) -> dict[str, pd.DataFrame]:
    """counties (attributes), weather (per county-year) and yields (per county-year)."""
    rng = np.random.default_rng([seed, 2])
    names = list(REGIONS)
    region = rng.integers(0, len(names), N_COUNTIES)
    rows, wrows, yrows = [], [], []
    for i in range(N_COUNTIES):
        lat0, om, awc, irr, nrate, gdd0, p0, heat0 = REGIONS[names[region[i]]]
        cid = f"C{i + 1:03d}"
        c = {"county_id": cid, "lat": round(lat0 + rng.normal(0, 1.0), 2),
             "soil_om_pct": round(max(0.5, om + rng.normal(0, 0.5)), 2),
             "awc_mm": round(max(60.0, awc + rng.normal(0, 20)), 1),
             "irrigated_frac": round(float(np.clip(irr + rng.normal(0, 0.07), 0, 0.95)), 3),
             "n_rate_kg_ha": round(nrate + rng.normal(0, 15), 1)}
        rows.append(c)
        gbase = gdd0 + rng.normal(0, 90)
        pbase = p0 + rng.normal(0, 40)
        base = 6.0 + 0.8 * (c["soil_om_pct"] - 3) + 0.01 * (c["n_rate_kg_ha"] - 150)
        for year in YEARS:
            gdd = gbase + rng.normal(0, 180)
            pr = max(60.0, pbase * math.exp(rng.normal(0, 0.25)))
            heat = int(rng.poisson(max(0.2, heat0 * math.exp((gdd - gbase) / 300))))
            y = crop_yield(base, year, gdd, pr, heat, c["awc_mm"], c["irrigated_frac"])
            y *= math.exp(rng.normal(0, 0.05))
            wrows.append({"county_id": cid, "year": year, "gdd": round(gdd, 1),
                          "precip_mm": round(pr, 1), "heat_days": heat})
            yrows.append({"county_id": cid, "year": year, "yield_t_ha": round(y, 3)})
    return {"counties": pd.DataFrame(rows), "weather": pd.DataFrame(wrows),
            "yields": pd.DataFrame(yrows)}


def crop_yield(base: float, year: int, gdd: float, precip: float, heat: int, awc: float,
               irrigated: float) -> float:
    """The weather-driven yield model (t/ha) without noise (module docstring)."""
    trend = base + 0.08 * (year - 2000)
    f_gdd = max(0.05, 1 - ((gdd - 2700) / 1400) ** 2)
    need = 500.0
    supply = precip + 0.4 * awc
    f_water = min(1.0, supply / need)
    f_water = irrigated + (1 - irrigated) * f_water
    f_heat = max(0.3, 1 - 0.012 * heat)
    return trend * f_gdd * f_water * f_heat


AGRO_FEATURES = ["gdd", "precip_mm", "heat_days", "soil_om_pct", "awc_mm", "irrigated_frac"]


def agro_profile(select: str, seed: int = DATASET_SEED) -> pd.DataFrame:
    """The scope's counties, one row each: county means of the weather and the soil and
    management attributes (:data:`AGRO_FEATURES`), z-scored over the scope."""
    d = agriculture_dataset(seed)
    ids = scope_ids(d["counties"], select, "county_id")
    w = d["weather"].groupby("county_id")[["gdd", "precip_mm", "heat_days"]].mean()
    c = d["counties"].set_index("county_id")[["soil_om_pct", "awc_mm", "irrigated_frac"]]
    prof = w.join(c).loc[ids, AGRO_FEATURES]
    return (prof - prof.mean()) / prof.std(ddof=0)


def silhouette(x: np.ndarray, labels: np.ndarray) -> float:
    """Mean silhouette (Euclidean), as scikit-learn's silhouette_score: 0 for a point alone
    in its cluster. Needs 2 <= clusters <= n - 1."""
    labels = np.asarray(labels)
    uniq = np.unique(labels)
    if not 2 <= len(uniq) <= len(labels) - 1:
        raise ValueError(f"{len(uniq)} clusters of {len(labels)} points: silhouette undefined")
    dist = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))
    s = np.zeros(len(labels))
    for i in range(len(labels)):
        own = labels == labels[i]
        if own.sum() == 1:
            continue
        a = dist[i, own].sum() / (own.sum() - 1)
        b = min(dist[i, labels == u].mean() for u in uniq if u != labels[i])
        s[i] = (b - a) / max(a, b)
    return float(s.mean())


def kmeans(x: np.ndarray, k: int, rng: np.random.Generator, inits: int = 20) -> np.ndarray:
    """Lloyd's k-means with k-means++ starts; the labels of the lowest-inertia run."""
    best, best_inertia = None, np.inf
    for _ in range(inits):
        centres = [x[rng.integers(len(x))]]
        for _ in range(1, k):
            d2 = np.min([((x - c) ** 2).sum(1) for c in centres], axis=0)
            centres.append(x[rng.choice(len(x), p=d2 / d2.sum())])
        c = np.array(centres)
        for _ in range(100):
            lab = np.argmin(((x[:, None, :] - c[None]) ** 2).sum(-1), axis=1)
            new = np.array([x[lab == j].mean(0) if np.any(lab == j) else c[j]
                            for j in range(k)])
            if np.allclose(new, c):
                break
            c = new
        inertia = float(((x - c[lab]) ** 2).sum())
        if inertia < best_inertia:
            best, best_inertia = lab, inertia
    return best


def county_clustering(work: Path, rng: np.random.Generator, select: str) -> dict[str, Any]:
    """Stage counties.csv, weather.csv and yields.csv; gold: the scope's county ids, their
    z-scored profiles (for recomputing a silhouette from any labels) and the reference
    pipeline's silhouette (k-means, k = 2..6, the best) and the baseline's (base_silhouette:
    k-means with k = 2 on the unscaled profile, whose labels are scored on the z-scored one
    as any answer is; the stbench reference). The baseline is what an agent writes without
    thinking about feature scales: millimetres and degree-days swamp the soil and
    management shares, and k is not chosen."""
    d = agriculture_dataset()
    for name in ("counties", "weather", "yields"):
        d[name].to_csv(work / f"{name}.csv", index=False)
    prof = agro_profile(select)
    x = prof.to_numpy()
    gen = np.random.default_rng(0)
    scores = {k: silhouette(x, kmeans(x, k, gen)) for k in range(2, 7)}
    k = max(scores, key=scores.get)
    w = d["weather"].groupby("county_id")[["gdd", "precip_mm", "heat_days"]].mean()
    c = d["counties"].set_index("county_id")[["soil_om_pct", "awc_mm", "irrigated_frac"]]
    raw = w.join(c).loc[list(prof.index), AGRO_FEATURES].to_numpy()
    base = silhouette(x, kmeans(raw, 2, np.random.default_rng(0)))
    return {"ids": list(prof.index), "count": len(prof),
            "features": {i: [float(v) for v in row] for i, row in zip(prof.index, x,
                                                                         strict=True)},
            "ref_silhouette": round(scores[k], 4), "ref_k": k,
            "base_silhouette": round(base, 6)}  # as the getter rounds: ties stay ties


WEATHER = ["gdd", "precip_mm", "heat_days"]


def detrended_yields(select: str, seed: int = DATASET_SEED) -> pd.DataFrame:
    """County-years of the scope with ``resid``: yield minus its county's least-squares line
    on year (the technology trend), joined to that season's weather."""
    d = agriculture_dataset(seed)
    ids = scope_ids(d["counties"], select, "county_id")
    y = d["yields"][d["yields"].county_id.isin(ids)].merge(d["weather"],
                                                           on=["county_id", "year"])
    parts = []
    for _, g in y.groupby("county_id", sort=True):
        slope, icpt = np.polyfit(g.year, g.yield_t_ha, 1)
        parts.append(g.assign(resid=g.yield_t_ha - (icpt + slope * g.year)))
    return pd.concat(parts, ignore_index=True)


def yield_weather_correlation(work: Path, rng: np.random.Generator, select: str
                              ) -> dict[str, Any]:
    """Stage the agriculture CSVs; gold: Spearman's rho of detrended yield with each weather
    variable over the scope's county-years, the largest |rho|, the count of county-years, and
    (for the negatives' checks) Pearson's r and the rho of the raw yields."""
    d = agriculture_dataset()
    for name in ("counties", "weather", "yields"):
        d[name].to_csv(work / f"{name}.csv", index=False)
    y = detrended_yields(select)
    rho = {w: round(float(y.resid.rank().corr(y[w].rank())), 6) for w in WEATHER}
    return {"rho": rho, "top_abs_rho": max(abs(v) for v in rho.values()),
            "n_obs": len(y),
            "pearson": {w: round(float(y.resid.corr(y[w])), 6) for w in WEATHER},
            "raw_rho": {w: round(float(y.yield_t_ha.rank().corr(y[w].rank())), 6)
                        for w in WEATHER}}



def sen_slope(x: np.ndarray, y: np.ndarray) -> float:
    """Theil-Sen slope: the median of the slopes of all pairs of points."""
    i, j = np.triu_indices(len(x), 1)
    return float(np.median((y[j] - y[i]) / (x[j] - x[i])))


def kendall_tau(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b of two samples (as SciPy's kendalltau, which the sandbox has)."""
    i, j = np.triu_indices(len(x), 1)
    sx, sy = np.sign(x[j] - x[i]), np.sign(y[j] - y[i])
    return float((sx * sy).sum() / np.sqrt((sx != 0).sum() * (sy != 0).sum()))


def yield_trends(work: Path, rng: np.random.Generator, select: str) -> dict[str, Any]:
    """Stage the agriculture CSVs; gold: per scope county the Theil-Sen slope of yield on
    year (kg/ha per year) and the Mann-Kendall statistic tau (the evaluator's
    recomputation on the staged yields), their medians, and (for the negatives' checks)
    the least-squares slopes."""
    d = agriculture_dataset()
    for name in ("counties", "weather", "yields"):
        d[name].to_csv(work / f"{name}.csv", index=False)
    ids = scope_ids(d["counties"], select, "county_id")
    y = d["yields"][d["yields"].county_id.isin(ids)]
    sen, tau, ols = {}, {}, {}
    for cid, g in y.groupby("county_id", sort=True):
        yr, val = g.year.to_numpy(float), g.yield_t_ha.to_numpy()
        sen[cid] = round(1000 * sen_slope(yr, val), 4)
        tau[cid] = round(kendall_tau(yr, val), 6)
        ols[cid] = round(1000 * float(np.polyfit(yr, val, 1)[0]), 4)
    return {"ids": ids, "count": len(ids), "sen": sen, "tau": tau, "ols": ols,
            "median_sen": round(float(np.median(list(sen.values()))), 6),
            "median_tau": round(float(np.median(list(tau.values()))), 6)}


def cross_features(f: pd.DataFrame) -> np.ndarray:
    """The cross-county yield model's design: year, a quadratic in GDD and in precipitation,
    heat days, and the soil and management attributes (its target is log yield)."""
    return np.column_stack([np.ones(len(f)), f.year - 2000, f.gdd, f.gdd ** 2, f.precip_mm,
                            f.precip_mm ** 2, f.heat_days, f.irrigated_frac, f.awc_mm,
                            f.soil_om_pct, f.n_rate_kg_ha])


def cross_county_yield(work: Path, rng: np.random.Generator, select: str) -> dict[str, Any]:
    """Stage counties.csv, weather.csv and yields.csv WITHOUT the scope's counties; gold:
    the scope's withheld yields, the pooled R2 of the reference (least squares of log yield
    on :func:`cross_features`, fit on the other counties) and (for the negatives' checks)
    of the other counties' mean yield per year. base_r2 (the stbench reference): the
    baseline, the same log-yield least squares on the weather terms alone (year, GDD, GDD^2,
    P, P^2, heat days), what an agent fits when it ignores the soil and management
    attributes that make counties differ."""
    d = agriculture_dataset()
    d["counties"].to_csv(work / "counties.csv", index=False)
    d["weather"].to_csv(work / "weather.csv", index=False)
    ids = scope_ids(d["counties"], select, "county_id")
    y = d["yields"]
    y[~y.county_id.isin(ids)].to_csv(work / "yields.csv", index=False)
    df = y.merge(d["weather"], on=["county_id", "year"]).merge(d["counties"], on="county_id")
    m = df.county_id.isin(ids)
    tr, te = df[~m], df[m]
    coef = np.linalg.lstsq(cross_features(tr), np.log(tr.yield_t_ha), rcond=None)[0]
    obs = te.yield_t_ha.to_numpy()
    ref = np.exp(cross_features(te) @ coef)
    weather = cross_features(te)[:, :7] @ np.linalg.lstsq(
        cross_features(tr)[:, :7], np.log(tr.yield_t_ha), rcond=None)[0]
    naive = te.year.map(tr.groupby("year").yield_t_ha.mean()).to_numpy()
    truth = {c: {str(k): float(v) for k, v in zip(g.year, g.yield_t_ha, strict=True)}
             for c, g in te.groupby("county_id", sort=True)}
    return {"ids": ids, "count": len(ids), "truth": truth,
            "ref_r2": round(nse(ref, obs), 6), "year_mean_r2": round(nse(naive, obs), 6),
            "mean_ref": round(float(ref.mean()), 6),
            "base_r2": round(nse(np.exp(weather), obs), 6)}
