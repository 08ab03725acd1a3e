"""Shared pieces of the earth-data generators: the dataset constants, the efficiency
metrics (one definition for the generators, the getters and the tests) and scope
selection."""

from __future__ import annotations

import math

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


def nse(sim: np.ndarray, obs: np.ndarray) -> float:
    """Nash-Sutcliffe efficiency."""
    return float(1 - np.sum((sim - obs) ** 2) / np.sum((obs - obs.mean()) ** 2))


def kge(sim: np.ndarray, obs: np.ndarray) -> float:
    """Kling-Gupta efficiency (2009): 1 - sqrt((r-1)^2 + (alpha-1)^2 + (beta-1)^2)."""
    r = float(np.corrcoef(sim, obs)[0, 1]) if np.std(sim) > 0 else 0.0
    alpha = float(np.std(sim) / np.std(obs))
    beta = float(np.mean(sim) / np.mean(obs))
    return float(1 - math.sqrt((r - 1) ** 2 + (alpha - 1) ** 2 + (beta - 1) ** 2))



def r2(sim: np.ndarray, obs: np.ndarray) -> float:
    """Coefficient of determination 1 - SSE/SST (as the getters compute it)."""
    return nse(sim, obs)


def scope_ids(table: pd.DataFrame, select: str, key: str) -> list[str]:
    """The ids of the rows a query's scope selects (pandas ``DataFrame.query``)."""
    return sorted(table.query(select)[key].tolist())


def truth_map(frame: pd.DataFrame, key: str, value: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for k, f in frame.groupby(key, sort=True):
        out[str(k)] = {str(dd): float(v) for dd, v in zip(f["date"], f[value], strict=True)}
    return out

