"""Seeded process models of the earth-data tasks (ST-Bench's three domains) and their gold values.

Each domain's dataset is generated from a fixed dataset seed (:data:`DATASET_SEED`), so every
query of a task family analyses the same shared files (as ST-Bench's queries share their
Parquet files) and differs only in its scope, a pandas ``DataFrame.query`` expression over the
domain's attribute table. Files are CSV (Debian 12's python3 has no pyarrow). What the
evaluator needs but the agent must not see (withheld test-period streamflow, the true fluxes in
gaps) is returned as gold and never written into the work directory.

Models (all daily unless said otherwise):

- **hydrology** (CAMELS-like), :func:`hydrology_dataset`: basins with area, elevation,
  latitude, aridity (PET/P), snow fraction (share of precipitation on days below 0 °C), forest
  fraction and soil depth; forcing of precipitation (wet-day occurrence and exponential
  amounts), temperature (seasonal cycle plus AR(1) anomalies, lapse rate 6.5 K/km) and PET
  (temperature-driven); streamflow from a degree-day snow pack (3 mm/°C/d), a soil bucket
  (capacity from soil depth and forest cover; ET = PET * S/Smax; saturation-excess quickflow
  (S/Smax)^2; percolation to a groundwater store draining linearly) and a linear routing
  reservoir, with 10 % multiplicative log-normal noise. 2008-2011 is the calibration period
  (observed streamflow staged), 2012-2013 the test period (withheld).
- **agriculture** (CropBench-like), :func:`agriculture_dataset`: counties drawn from four
  agro-climatic regions (latitude, soil organic matter, available water capacity, irrigated
  share, nitrogen rate); per growing season GDD (base 10 °C), growing-season precipitation and
  heat days (> 32 °C); yield = (base + 0.08 t/ha/yr technology trend) * a quadratic GDD
  response peaking at 2700 °C d * a water response (irrigation offsets deficits) * a heat
  penalty (1.2 % per heat day), plus 5 % noise.
- **wetland methane** (MethaneWet-like), :func:`methane_dataset`: sites (bog, fen, marsh;
  some on permafrost) with daily soil temperature and water-table depth (cm below the surface,
  negative when flooded); CH4 flux (mg CH4 m-2 d-1) = Fref * Q10^((Ts - 10)/10) *
  exp(-max(WTD, 0)/lambda) above 0 °C and 3 % of Fref in frozen soil, with 20 % multiplicative
  noise; gaps in runs of 1-20 days (about 20 % of the record) whose true values are withheld.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

DATASET_SEED = 2026
HYDRO_START, HYDRO_END, HYDRO_TEST = "2008-01-01", "2013-12-31", "2012-01-01"
N_BASINS = 48
N_COUNTIES = 90
YEARS = list(range(2000, 2020))
N_SITES = 32
CH4_START, CH4_END = "2016-01-01", "2018-12-31"
DDF = 3.0  # mm per °C per day, degree-day melt factor of the hydrology model


# -- hydrology -----------------------------------------------------------------------------------

@cache
def hydrology_dataset(seed: int = DATASET_SEED) -> dict[str, pd.DataFrame]:
    """basins (attributes), forcing (all days) and flow (true streamflow, all days)."""
    rng = np.random.default_rng([seed, 1])
    n = N_BASINS
    dates = pd.date_range(HYDRO_START, HYDRO_END, freq="D")
    nd = len(dates)
    ids = [f"B{i:03d}" for i in range(1, n + 1)]
    elev = np.round(rng.uniform(100, 3000, n), 0)
    lat = np.round(rng.uniform(33, 49, n), 2)
    area = np.round(np.exp(rng.uniform(np.log(40), np.log(4000), n)), 1)
    forest = np.round(rng.beta(2, 2, n), 3)
    soil = np.round(rng.uniform(0.3, 2.0, n), 2)
    wet_target = rng.uniform(0.4, 2.6, n)  # intended aridity
    tmean = 16.0 - 0.0065 * elev - 0.45 * (lat - 33)
    amp = 9.0 + 0.25 * (lat - 33)
    doy = dates.day_of_year.to_numpy()
    season = np.sin(2 * np.pi * (doy - 110) / 365.25)
    anom = np.zeros((nd, n))
    for t in range(1, nd):
        anom[t] = 0.7 * anom[t - 1] + rng.normal(0, 2.0, n)
    temp = tmean[None, :] + amp[None, :] * season[:, None] + anom
    pet = 0.35 * np.maximum(temp + 4.0, 0.0) * (1.0 + 0.15 * season[:, None])
    pet_annual = pet.sum(0) / (nd / 365.25)
    p_annual = pet_annual / wet_target
    pwet = np.clip(0.25 + 0.15 * (1.5 - wet_target) / 1.1, 0.12, 0.45)
    wet = rng.random((nd, n)) < pwet[None, :]
    mean_amount = p_annual / (365.25 * pwet)
    precip = np.where(wet, rng.exponential(1.0, (nd, n)) * mean_amount[None, :], 0.0)
    temp, pet, precip = np.round(temp, 2), np.round(pet, 2), np.round(precip, 2)
    flow = _bucket(precip, temp, pet, soil, forest, rng)
    cold = temp < 0
    basins = pd.DataFrame({
        "basin_id": ids, "area_km2": area, "elev_m": elev, "lat": lat,
        "aridity": np.round(pet.sum(0) / precip.sum(0), 3),
        "snow_frac": np.round((precip * cold).sum(0) / precip.sum(0), 3),
        "forest_frac": forest, "soil_depth_m": soil})
    day = np.tile(dates.strftime("%Y-%m-%d").to_numpy(), n)
    bid = np.repeat(ids, nd)
    forcing = pd.DataFrame({"basin_id": bid, "date": day, "precip_mm": precip.T.ravel(),
                            "tmean_c": temp.T.ravel(), "pet_mm": pet.T.ravel()})
    flows = pd.DataFrame({"basin_id": bid, "date": day,
                          "q_mm": np.round(flow.T.ravel(), 3)})
    return {"basins": basins, "forcing": forcing, "flow": flows}


def _bucket(precip: np.ndarray, temp: np.ndarray, pet: np.ndarray, soil: np.ndarray,
            forest: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The rainfall-runoff model (module docstring), vectorised over basins."""
    nd, n = precip.shape
    smax = 80.0 + 120.0 * soil * (0.6 + 0.8 * forest)
    snow = np.zeros(n)
    s = 0.5 * smax
    g = np.full(n, 20.0)
    r = np.zeros(n)
    out = np.zeros((nd, n))
    for t in range(nd):
        cold = temp[t] < 0
        snow = snow + np.where(cold, precip[t], 0.0)
        rain = np.where(cold, 0.0, precip[t])
        melt = np.minimum(snow, DDF * np.maximum(temp[t], 0.0))
        snow = snow - melt
        water = rain + melt
        frac = s / smax
        quick = water * frac ** 2
        s = s + water - quick
        et = np.minimum(pet[t] * frac, s)
        s = s - et
        over = np.maximum(s - smax, 0.0)
        s = s - over
        perc = 0.02 * s
        s = s - perc
        g = g + perc
        base = 0.03 * g
        g = g - base
        r = r + quick + over
        routed = 0.5 * r
        r = r - routed
        out[t] = routed + base
    return out * np.exp(rng.normal(0, 0.1, out.shape))


def hydro_features(forcing: pd.DataFrame) -> pd.DataFrame:
    """The reference pipeline's features per basin-day: a degree-day snow pack (3 mm/°C/d)
    splits precipitation into liquid input, then lags and running sums of it, of PET and of
    the pack (the sandbox's oracle script computes the same)."""
    parts = []
    for bid, f in forcing.groupby("basin_id", sort=True):
        p, t, e = (f[c].to_numpy() for c in ("precip_mm", "tmean_c", "pet_mm"))
        pack, w, packs = 0.0, np.zeros(len(p)), np.zeros(len(p))
        for i in range(len(p)):
            if t[i] < 0:
                pack += p[i]
                liquid = 0.0
            else:
                liquid = p[i]
            m = min(pack, DDF * max(t[i], 0.0))
            pack -= m
            w[i], packs[i] = liquid + m, pack
        ws = pd.Series(w)
        es = pd.Series(e)
        cols = {"basin_id": bid, "date": f["date"].to_numpy(), "w0": w}
        for k in (1, 2, 3):
            cols[f"w{k}"] = ws.shift(k).fillna(0).to_numpy()
        for k in (7, 30, 90, 180):
            cols[f"ws{k}"] = ws.rolling(k, min_periods=1).sum().to_numpy()
            cols[f"es{k}"] = es.rolling(k, min_periods=1).sum().to_numpy()
        cols["pack"] = packs
        parts.append(pd.DataFrame(cols))
    return pd.concat(parts, ignore_index=True)


def nse(sim: np.ndarray, obs: np.ndarray) -> float:
    """Nash-Sutcliffe efficiency."""
    return float(1 - np.sum((sim - obs) ** 2) / np.sum((obs - obs.mean()) ** 2))


def kge(sim: np.ndarray, obs: np.ndarray) -> float:
    """Kling-Gupta efficiency (2009): 1 - sqrt((r-1)^2 + (alpha-1)^2 + (beta-1)^2)."""
    r = float(np.corrcoef(sim, obs)[0, 1]) if np.std(sim) > 0 else 0.0
    alpha = float(np.std(sim) / np.std(obs))
    beta = float(np.mean(sim) / np.mean(obs))
    return float(1 - math.sqrt((r - 1) ** 2 + (alpha - 1) ** 2 + (beta - 1) ** 2))


def hydro_reference(select: str, seed: int = DATASET_SEED) -> pd.DataFrame:
    """The reference pipeline: per scope basin, least squares of streamflow on
    :func:`hydro_features` over the calibration period; simulated flow for every day."""
    d = hydrology_dataset(seed)
    ids = scope_ids(d["basins"], select, "basin_id")
    forcing = d["forcing"][d["forcing"].basin_id.isin(ids)]
    feats = hydro_features(forcing)
    flow = d["flow"].set_index(["basin_id", "date"]).q_mm
    out = []
    for bid, f in feats.groupby("basin_id", sort=True):
        x = np.column_stack([np.ones(len(f)), f.drop(columns=["basin_id", "date"]).to_numpy()])
        y = flow.loc[bid].reindex(f["date"]).to_numpy()
        cal = (f["date"] < HYDRO_TEST).to_numpy()
        coef, *_ = np.linalg.lstsq(x[cal], y[cal], rcond=None)
        out.append(pd.DataFrame({"basin_id": bid, "date": f["date"],
                                 "q_sim": np.maximum(x @ coef, 0.0)}))
    return pd.concat(out, ignore_index=True)


def scope_ids(table: pd.DataFrame, select: str, key: str) -> list[str]:
    """The ids of the rows a query's scope selects (pandas ``DataFrame.query``)."""
    return sorted(table.query(select)[key].tolist())


def _truth_map(frame: pd.DataFrame, key: str, value: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for k, f in frame.groupby(key, sort=True):
        out[str(k)] = {str(dd): float(v) for dd, v in zip(f["date"], f[value], strict=True)}
    return out


def streamflow_prediction(work: Path, rng: np.random.Generator, select: str) -> dict[str, Any]:
    """Stage basins.csv, forcing.csv and streamflow.csv (calibration period only); gold:
    the scope's basin ids, the true flow of the scope basins (calibration and test periods,
    for recomputing reported and test metrics) and the reference pipeline's test NSE/KGE."""
    d = hydrology_dataset()
    d["basins"].to_csv(work / "basins.csv", index=False)
    d["forcing"].to_csv(work / "forcing.csv", index=False)
    flow = d["flow"]
    flow[flow.date < HYDRO_TEST].to_csv(work / "streamflow.csv", index=False)
    ids = scope_ids(d["basins"], select, "basin_id")
    mine = flow[flow.basin_id.isin(ids)]
    ref = hydro_reference(select).merge(mine, on=["basin_id", "date"])
    test = ref[ref.date >= HYDRO_TEST]
    nses = [nse(f.q_sim.to_numpy(), f.q_mm.to_numpy()) for _, f in test.groupby("basin_id")]
    kges = [kge(f.q_sim.to_numpy(), f.q_mm.to_numpy()) for _, f in test.groupby("basin_id")]
    return {"ids": ids, "count": len(ids),
            "calib": _truth_map(mine[mine.date < HYDRO_TEST], "basin_id", "q_mm"),
            "test": _truth_map(mine[mine.date >= HYDRO_TEST], "basin_id", "q_mm"),
            "ref_nse": round(float(np.median(nses)), 4),
            "ref_kge": round(float(np.median(kges)), 4)}


def empty_scope_streamflow(work: Path, rng: np.random.Generator, select: str
                           ) -> dict[str, Any]:
    """Stage the hydrology files for a query whose scope selects no basin (an infeasible
    query: FAIL is the right answer); raises when the scope is not empty."""
    d = hydrology_dataset()
    ids = scope_ids(d["basins"], select, "basin_id")
    if ids:
        raise ValueError(f"scope {select!r} selects {len(ids)} basins: the query is feasible")
    d["basins"].to_csv(work / "basins.csv", index=False)
    d["forcing"].to_csv(work / "forcing.csv", index=False)
    flow = d["flow"]
    flow[flow.date < HYDRO_TEST].to_csv(work / "streamflow.csv", index=False)
    return {"count": 0}


# -- agriculture ---------------------------------------------------------------------------------

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
    pipeline's silhouette (k-means, k = 2..6, the best)."""
    d = agriculture_dataset()
    for name in ("counties", "weather", "yields"):
        d[name].to_csv(work / f"{name}.csv", index=False)
    prof = agro_profile(select)
    x = prof.to_numpy()
    gen = np.random.default_rng(0)
    scores = {k: silhouette(x, kmeans(x, k, gen)) for k in range(2, 7)}
    k = max(scores, key=scores.get)
    return {"ids": list(prof.index), "count": len(prof),
            "features": {i: [float(v) for v in row] for i, row in zip(prof.index, x,
                                                                         strict=True)},
            "ref_silhouette": round(scores[k], 4), "ref_k": k}


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


# -- wetland methane -----------------------------------------------------------------------------

@cache
def methane_dataset(seed: int = DATASET_SEED) -> dict[str, pd.DataFrame]:
    """sites (attributes) and fluxes (every day, true flux, and whether the day is a gap)."""
    rng = np.random.default_rng([seed, 3])
    dates = pd.date_range(CH4_START, CH4_END, freq="D")
    doy = dates.day_of_year.to_numpy()
    season = np.sin(2 * np.pi * (doy - 120) / 365.25)
    kinds = ["bog", "fen", "marsh"]
    srows, frames = [], []
    for i in range(N_SITES):
        sid = f"S{i + 1:02d}"
        kind = kinds[i % 3]
        permafrost = bool(rng.random() < 0.3)
        lat = round(rng.uniform(62, 72) if permafrost else rng.uniform(40, 60), 2)
        tmean = (-4.0 if permafrost else 14.0 - 0.3 * (lat - 40)) + rng.normal(0, 1)
        amp = 11.0 if permafrost else 8.0 + 0.1 * (lat - 40)
        q10 = round(float(rng.uniform(2.0, 4.0)), 2)
        fref = {"bog": 40.0, "fen": 80.0, "marsh": 140.0}[kind] * math.exp(rng.normal(0, 0.3))
        lam = rng.uniform(8, 20)
        wt_mean = {"bog": 15.0, "fen": 6.0, "marsh": -3.0}[kind] + rng.normal(0, 3)
        anom = np.zeros(len(dates))
        wanom = np.zeros(len(dates))
        for t in range(1, len(dates)):
            anom[t] = 0.8 * anom[t - 1] + rng.normal(0, 1.0)
            wanom[t] = 0.93 * wanom[t - 1] + rng.normal(0, 1.6)
        ts = np.round(tmean + amp * season + anom, 2)
        wtd = np.round(wt_mean + 8.0 * season + wanom, 1)
        flux = methane_flux(ts, wtd, fref, q10, lam) * np.exp(rng.normal(0, 0.2, len(ts)))
        gap = np.zeros(len(ts), dtype=bool)
        while gap.mean() < 0.2:
            start = int(rng.integers(0, len(ts)))
            gap[start:start + int(rng.integers(1, 21))] = True
        srows.append({"site_id": sid, "wetland_type": kind, "lat": lat,
                      "permafrost": int(permafrost), "mean_soil_temp_c": round(float(ts.mean()), 2),
                      "mean_wtd_cm": round(float(wtd.mean()), 1), "_q10": q10})
        frames.append(pd.DataFrame({"site_id": sid, "date": dates.strftime("%Y-%m-%d"),
                                    "soil_temp_c": ts, "wtd_cm": wtd,
                                    "ch4_flux": np.round(flux, 3), "gap": gap}))
    return {"sites": pd.DataFrame(srows), "fluxes": pd.concat(frames, ignore_index=True)}


def methane_flux(ts: np.ndarray, wtd: np.ndarray, fref: float, q10: float, lam: float
                 ) -> np.ndarray:
    """The flux model without noise (mg CH4 m-2 d-1; module docstring)."""
    warm = fref * q10 ** ((ts - 10.0) / 10.0) * np.exp(-np.maximum(wtd, 0.0) / lam)
    return np.where(ts > 0, warm, 0.03 * fref)


def ch4_reference(frame: pd.DataFrame) -> np.ndarray:
    """The reference gap filler of one site: least squares of log flux on soil temperature
    (above 0 °C), positive water-table depth and a frozen-soil indicator over the observed
    days, back-transformed with the residual variance."""
    ts, wtd = frame.soil_temp_c.to_numpy(), frame.wtd_cm.to_numpy()
    x = np.column_stack([np.ones(len(ts)), np.maximum(ts, 0), np.maximum(wtd, 0), ts <= 0])
    obs = ~frame.gap.to_numpy()
    y = np.log(frame.ch4_flux.to_numpy()[obs])
    coef, *_ = np.linalg.lstsq(x[obs], y, rcond=None)
    resid = y - x[obs] @ coef
    return np.exp(x @ coef + resid.var() / 2)


def r2(sim: np.ndarray, obs: np.ndarray) -> float:
    """Coefficient of determination 1 - SSE/SST (as the getters compute it)."""
    return nse(sim, obs)


def flux_gap_filling(work: Path, rng: np.random.Generator, select: str) -> dict[str, Any]:
    """Stage sites.csv and fluxes.csv (ch4_flux empty on gap days); gold: the scope's site
    ids, the observed and the withheld true fluxes of the scope sites and the reference
    filler's gap RMSE, NRMSE (RMSE / standard deviation of the true gap fluxes) and R2, each
    the median over the scope's sites (as the task scores them)."""
    d = methane_dataset()
    d["sites"].drop(columns=["_q10"]).to_csv(work / "sites.csv", index=False)
    f = d["fluxes"]
    staged = f.drop(columns=["gap"]).copy()
    staged.loc[f.gap, "ch4_flux"] = np.nan
    staged.to_csv(work / "fluxes.csv", index=False)
    ids = scope_ids(d["sites"], select, "site_id")
    mine = f[f.site_id.isin(ids)]
    sims = np.concatenate([ch4_reference(g) for _, g in mine.groupby("site_id", sort=True)])
    mine = mine.sort_values(["site_id", "date"]).assign(sim=sims)
    gaps = mine[mine.gap]
    per = [(float(np.sqrt(np.mean((g.sim - g.ch4_flux) ** 2))), float(g.ch4_flux.std(ddof=0)),
            r2(g.sim.to_numpy(), g.ch4_flux.to_numpy())) for _, g in gaps.groupby("site_id")]
    return {"ids": ids, "count": len(ids),
            "observed": _truth_map(mine[~mine.gap], "site_id", "ch4_flux"),
            "gaps": _truth_map(gaps, "site_id", "ch4_flux"),
            "ref_rmse": round(float(np.median([p[0] for p in per])), 4),
            "ref_nrmse": round(float(np.median([p[0] / p[1] for p in per])), 4),
            "ref_r2": round(float(np.median([p[2] for p in per])), 4)}


def q10_reference(frame: pd.DataFrame) -> float:
    """The reference Q10 of one site: exp(10 b) of the least squares of log flux on soil
    temperature and positive water-table depth over observed days above 0 °C."""
    w = frame[(~frame.gap) & (frame.soil_temp_c > 0)]
    x = np.column_stack([np.ones(len(w)), w.soil_temp_c, np.maximum(w.wtd_cm, 0)])
    coef, *_ = np.linalg.lstsq(x, np.log(w.ch4_flux.to_numpy()), rcond=None)
    return float(np.exp(10 * coef[1]))


def q10_estimation(work: Path, rng: np.random.Generator, select: str) -> dict[str, Any]:
    """Stage sites.csv and fluxes.csv as for gap filling; gold: the scope's site ids, their
    true (generating) Q10 and the reference estimate's median relative error."""
    flux_gap_filling(work, rng, "site_id == site_id")
    d = methane_dataset()
    ids = scope_ids(d["sites"], select, "site_id")
    true = d["sites"].set_index("site_id")._q10
    f = d["fluxes"]
    errs = [abs(q10_reference(f[f.site_id == i]) - true[i]) / true[i] for i in ids]
    return {"ids": ids, "count": len(ids), "q10": {i: float(true[i]) for i in ids},
            "ref_mape": round(float(np.median(errs)), 4)}


GENERATORS = {
    "q10_estimation": q10_estimation,
    "streamflow_prediction": streamflow_prediction,
    "empty_scope_streamflow": empty_scope_streamflow,
    "county_clustering": county_clustering,
    "yield_weather_correlation": yield_weather_correlation,
    "flux_gap_filling": flux_gap_filling,
}
