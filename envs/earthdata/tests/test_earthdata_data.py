"""The earth-data process models (envs/earthdata/data.py): deterministic per seed, and their
built-in effects recoverable from the generated data (snowier basins peak later, yield rises
with GDD up to an optimum and with the technology trend, methane flux rises with soil
temperature by about the site's Q10 and falls as the water table drops)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import requires

pytestmark = requires(tool="earthdata")

from sciagent_gym.envs.earthdata import data  # noqa: E402


def _fresh(fn, seed):
    return fn.__wrapped__(seed)  # bypass the cache


@pytest.mark.parametrize("fn", [data.hydrology_dataset, data.agriculture_dataset,
                                data.methane_dataset, data.general_dataset])
def test_datasets_are_deterministic_per_seed(fn):
    a, b, c = _fresh(fn, 5), _fresh(fn, 5), _fresh(fn, 6)
    for name in a:
        pd.testing.assert_frame_equal(a[name], b[name])
    assert any(not a[n].equals(c[n]) for n in a)


def test_hydrology_tables_are_complete_and_physical():
    d = data.hydrology_dataset()
    b, f, q = d["basins"], d["forcing"], d["flow"]
    assert len(b) == data.N_BASINS and b.basin_id.is_unique
    assert len(f) == len(q) == data.N_BASINS * 2192
    assert (f.precip_mm >= 0).all() and (f.pet_mm >= 0).all() and (q.q_mm > 0).all()
    assert b.snow_frac.between(0, 1).all() and (b.aridity > 0).all()
    # the water balance closes roughly: runoff is a share of precipitation, lower when arid
    per = q.groupby("basin_id").q_mm.sum() / f.groupby("basin_id").precip_mm.sum()
    assert per.between(0.01, 1.0).all()
    arid = b.set_index("basin_id").aridity
    rank = pd.Series(arid.loc[per.index].to_numpy()).rank().corr(pd.Series(per.to_numpy()).rank())
    assert rank < -0.3


def test_snowier_basins_peak_later():
    d = data.hydrology_dataset()
    q = d["flow"].assign(doy=pd.to_datetime(d["flow"].date).dt.day_of_year)
    peak = q.groupby(["basin_id", "doy"]).q_mm.mean().unstack().idxmax(axis=1)
    snow = d["basins"].set_index("basin_id").snow_frac.loc[peak.index]
    assert np.corrcoef(snow, peak)[0, 1] > 0.4
    assert peak[snow > 0.5].median() > peak[snow < 0.2].median() + 20


def test_yield_rises_with_gdd_up_to_an_optimum_and_with_the_trend():
    assert data.crop_yield(6, 2010, 2700, 600, 0, 200, 0) > data.crop_yield(
        6, 2010, 2200, 600, 0, 200, 0) > data.crop_yield(6, 2010, 1800, 600, 0, 200, 0)
    assert data.crop_yield(6, 2010, 3400, 600, 0, 200, 0) < data.crop_yield(
        6, 2010, 2700, 600, 0, 200, 0)
    d = data.agriculture_dataset()
    y = d["yields"].merge(d["weather"], on=["county_id", "year"])
    # recoverable from the noisy data: a concave GDD response with its peak near 2700
    fit = np.polyfit(y.gdd, y.yield_t_ha / (1 + 0.08 * (y.year - 2000) / 6), 2)
    assert fit[0] < 0 and 2300 < -fit[1] / (2 * fit[0]) < 3100
    # the technology trend: within counties, later years yield more
    rel = y.yield_t_ha / y.groupby("county_id").yield_t_ha.transform("mean")
    assert np.polyfit(y.year, rel, 1)[0] > 0.005
    # irrigation offsets water deficits, and a wet season needs none
    assert data.crop_yield(6, 2010, 2700, 200, 0, 150, 0.8) > 1.5 * data.crop_yield(
        6, 2010, 2700, 200, 0, 150, 0.0)
    assert data.crop_yield(6, 2010, 2700, 700, 0, 150, 0.8) == pytest.approx(
        data.crop_yield(6, 2010, 2700, 700, 0, 150, 0.0))


def test_methane_flux_rises_by_about_q10_and_falls_with_the_water_table():
    d = data.methane_dataset()
    sites = d["sites"].set_index("site_id")
    f = d["fluxes"]
    for sid in ("S01", "S03", "S08", "S14"):
        g = f[(f.site_id == sid) & (f.soil_temp_c > 2)]
        x = np.column_stack([np.ones(len(g)), g.soil_temp_c, np.maximum(g.wtd_cm, 0)])
        coef, *_ = np.linalg.lstsq(x, np.log(g.ch4_flux), rcond=None)
        q10 = float(np.exp(10 * coef[1]))
        assert q10 == pytest.approx(sites.loc[sid, "_q10"], rel=0.2), sid
        assert coef[2] < 0  # deeper water table, less methane
    frozen = f[f.soil_temp_c < -2].ch4_flux
    warm = f[f.soil_temp_c > 15].ch4_flux
    assert frozen.median() < 0.2 * warm.median()
    assert 0.15 < f.gap.mean() < 0.3


def test_noise_free_models():
    ts = np.array([0.5, 10.0, 20.0, -5.0])
    got = data.methane_flux(ts, np.zeros(4), 50.0, 3.0, 10.0)
    assert got[2] / got[1] == pytest.approx(3.0) and got[3] == pytest.approx(1.5)
    assert data.methane_flux(np.array([10.0]), np.array([10.0]), 50, 3, 10)[0] == \
        pytest.approx(50 * np.exp(-1))
    obs = np.array([1.0, 2.0, 3.0, 4.0])
    assert data.nse(obs, obs) == 1.0 and data.kge(obs, obs) == pytest.approx(1.0)
    assert data.nse(np.full(4, obs.mean()), obs) == 0.0
