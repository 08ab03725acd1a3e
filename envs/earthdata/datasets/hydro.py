"""The hydrology (CAMELS-like) dataset, its reference pipeline and its task generators
(the model: envs/earthdata/data.py)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sciagent_gym.envs.earthdata.datasets.common import (
    DATASET_SEED,
    DDF,
    HYDRO_END,
    HYDRO_START,
    HYDRO_TEST,
    N_BASINS,
    kge,
    nse,
    scope_ids,
    truth_map,
)


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


def hydro_baseline(select: str, seed: int = DATASET_SEED) -> pd.DataFrame:
    """The baseline pipeline (the stbench reference value of the streamflow families): per
    scope basin, the day-of-year climatology of the calibration period (mean flow of each
    calendar day over 2008-2011) as the prediction for every day. It is hydrology's seasonal
    benchmark (Schaefli and Gupta 2007), what an agent without a rainfall-runoff model would
    submit; it ignores the weather of the test years."""
    d = hydrology_dataset(seed)
    ids = scope_ids(d["basins"], select, "basin_id")
    flow = d["flow"][d["flow"].basin_id.isin(ids)]
    out = []
    for bid, f in flow.groupby("basin_id", sort=True):
        day = f["date"].str[5:].to_numpy()
        cal = (f["date"] < HYDRO_TEST).to_numpy()
        clim = pd.Series(f.q_mm.to_numpy()[cal]).groupby(day[cal]).mean()
        out.append(pd.DataFrame({"basin_id": bid, "date": f["date"],
                                 "q_sim": clim.reindex(day).to_numpy()}))
    return pd.concat(out, ignore_index=True)


def basin_scores(sim: pd.DataFrame, flow: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """Per basin of ``sim`` (basin_id, date, q_sim), the test-period (NSE, KGE) against
    ``flow``."""
    both = sim.merge(flow, on=["basin_id", "date"])
    both = both[both.date >= HYDRO_TEST]
    return {str(b): (nse(f.q_sim.to_numpy(), f.q_mm.to_numpy()),
                     kge(f.q_sim.to_numpy(), f.q_mm.to_numpy()))
            for b, f in both.groupby("basin_id", sort=True)}


def streamflow_prediction(work: Path, rng: np.random.Generator, select: str) -> dict[str, Any]:
    """Stage basins.csv, forcing.csv and streamflow.csv (calibration period only); gold:
    the scope's basin ids, the true flow of the scope basins (calibration and test periods,
    for recomputing reported and test metrics) and the median test NSE/KGE of the reference
    pipeline (ref_*, checked against the targets) and of the baseline
    (:func:`hydro_baseline`, base_*: the stbench reference)."""
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
    base = basin_scores(hydro_baseline(select), mine)
    return {"ids": ids, "count": len(ids),
            "calib": truth_map(mine[mine.date < HYDRO_TEST], "basin_id", "q_mm"),
            "test": truth_map(mine[mine.date >= HYDRO_TEST], "basin_id", "q_mm"),
            "ref_nse": round(float(np.median(nses)), 4),
            "ref_kge": round(float(np.median(kges)), 4),
            **{f"base_{m}": round(float(np.median([v[j] for v in base.values()])), 4)
               for j, m in enumerate(("nse", "kge"))}}


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



LH_ALPHA = 0.925  # Lyne-Hollick filter parameter of the signature family


def lyne_hollick_bfi(q: np.ndarray, alpha: float = LH_ALPHA) -> float:
    """Baseflow index of daily flow ``q``: one forward pass of the Lyne-Hollick filter
    (quickflow f_t = alpha f_(t-1) + (1 + alpha)/2 (q_t - q_(t-1)), f_0 = 0, clamped to
    [0, q_t]), then the sum of baseflow q - f over the sum of q."""
    f = np.zeros(len(q))
    for t in range(1, len(q)):
        f[t] = min(max(alpha * f[t - 1] + (1 + alpha) / 2 * (q[t] - q[t - 1]), 0.0), q[t])
    return float((q - f).sum() / q.sum())


def signatures(select: str, seed: int = DATASET_SEED) -> pd.DataFrame:
    """Per scope basin, the calibration period's baseflow index and runoff ratio (sum of
    streamflow over the sum of precipitation, 2008-2011)."""
    d = hydrology_dataset(seed)
    ids = scope_ids(d["basins"], select, "basin_id")
    cal_q = d["flow"][(d["flow"].date < HYDRO_TEST) & d["flow"].basin_id.isin(ids)]
    cal_p = d["forcing"][(d["forcing"].date < HYDRO_TEST) & d["forcing"].basin_id.isin(ids)]
    rows = []
    for bid, g in cal_q.groupby("basin_id", sort=True):
        q = g.sort_values("date").q_mm.to_numpy()
        p = cal_p[cal_p.basin_id == bid].precip_mm.sum()
        rows.append({"basin_id": bid, "bfi": round(lyne_hollick_bfi(q), 6),
                     "runoff_ratio": round(float(q.sum() / p), 6)})
    return pd.DataFrame(rows)


def streamflow_signatures(work: Path, rng: np.random.Generator, select: str
                          ) -> dict[str, Any]:
    """Stage the hydrology files (as for prediction); gold: the scope's basin ids and each
    basin's baseflow index and runoff ratio (the evaluator's recomputation on the staged
    files) and their medians."""
    empty_scope_streamflow_files(work)
    sig = signatures(select)
    return {"ids": list(sig.basin_id), "count": len(sig),
            "bfi": dict(zip(sig.basin_id, sig.bfi, strict=True)),
            "runoff_ratio": dict(zip(sig.basin_id, sig.runoff_ratio, strict=True)),
            "median_bfi": round(float(sig.bfi.median()), 6),
            "median_runoff_ratio": round(float(sig.runoff_ratio.median()), 6)}


def empty_scope_streamflow_files(work: Path) -> None:
    """Write basins.csv, forcing.csv and the calibration period's streamflow.csv."""
    d = hydrology_dataset()
    d["basins"].to_csv(work / "basins.csv", index=False)
    d["forcing"].to_csv(work / "forcing.csv", index=False)
    flow = d["flow"]
    flow[flow.date < HYDRO_TEST].to_csv(work / "streamflow.csv", index=False)


SNOWY = 0.4  # snow_frac at or above which a basin is in the snow stratum


def stratified_streamflow(work: Path, rng: np.random.Generator, select: str
                          ) -> dict[str, Any]:
    """Streamflow prediction (as :func:`streamflow_prediction`) scored per stratum: gold adds
    the calibration and test truth of the scope's snow (snow_frac >= 0.4) and rain basins and
    the median test NSE in each of the reference pipeline (ref_nse_*) and of the baseline
    (:func:`hydro_baseline`, base_nse_*)."""
    gold = streamflow_prediction(work, rng, select)
    basins = hydrology_dataset()["basins"].set_index("basin_id")
    ref = hydro_reference(select).merge(hydrology_dataset()["flow"], on=["basin_id", "date"])
    test = ref[ref.date >= HYDRO_TEST]
    base = basin_scores(hydro_baseline(select), hydrology_dataset()["flow"])
    for name, want in (("snow", True), ("rain", False)):
        ids = [i for i in gold["ids"] if (basins.snow_frac[i] >= SNOWY) == want]
        gold[f"ids_{name}"] = ids
        gold[f"calib_{name}"] = {i: gold["calib"][i] for i in ids}
        gold[f"test_{name}"] = {i: gold["test"][i] for i in ids}
        nses = [nse(f.q_sim.to_numpy(), f.q_mm.to_numpy())
                for i, f in test.groupby("basin_id") if i in ids]
        gold[f"ref_nse_{name}"] = round(float(np.median(nses)), 4)
        gold[f"base_nse_{name}"] = round(float(np.median([base[i][0] for i in ids])), 4)
    return gold
