"""ST-Bench's general control set: synthetic data with documented process models, so the
analysis skill is measured without domain knowledge (the model: the docstrings below).

One table of 40 synthetic groups (``groups.csv``: group_id, regime, noise, n_train, skew,
phi, season_k, prevalence) drives four generators; scopes select groups by these attributes.

- **transfer** (transfer learning): y = x @ beta + offset_g + noise_g * 2 * eps over eight
  standard-normal features; beta is shared by every group, offsets are N(0, 2); each group has
  only n_train (9-13) labelled rows and 40 unlabelled test rows whose y is withheld.
- **sampling**: each group is a population of 300-600 units of size x (log-normal, sd skew)
  and value y = b_g * x * (1 + 0.15 eps); units enter the sample independently with
  probability pi = min(1, 40 x / sum x) (Poisson sampling); the unsampled y are withheld.
- **series** (forecasting): weekly y = m + 0.01 t + A sin(2 pi t / 52 + ph) + u_t with AR(1)
  u (phi, unit innovations) and A^2 / 2 = season_k * var(u); 520 weeks given, the next 52
  withheld.
- **imbalanced** (data augmentation): 400 training and 400 test rows per group, the minority
  class (share ``prevalence``, 3-8 %) shifted by 1.3 in each of four standard-normal features;
  test labels withheld.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sciagent_gym.envs.earthdata.datasets.common import DATASET_SEED, nse, scope_ids

N_GROUPS = 40
N_FEAT = 8
BETA = np.array([1.5, -1.0, 0.8, 0.5, -0.6, 1.2, -0.4, 0.7])
HIST, HORIZON = 520, 52
CLS_SHIFT = 1.3


@cache
def general_dataset(seed: int = DATASET_SEED) -> dict[str, pd.DataFrame]:
    """groups (attributes) and the four synthetic data sets (full truth; staging withholds)."""
    rng = np.random.default_rng([seed, 4])
    regimes = np.array(["alpha", "beta", "gamma", "delta"])
    g = pd.DataFrame({
        "group_id": [f"G{i + 1:02d}" for i in range(N_GROUPS)],
        "regime": regimes[rng.integers(0, 4, N_GROUPS)],
        "noise": np.round(rng.uniform(0.3, 1.0, N_GROUPS), 3),
        "n_train": rng.integers(9, 14, N_GROUPS),
        "skew": np.round(rng.uniform(0.5, 1.5, N_GROUPS), 3),
        "phi": np.round(rng.uniform(0.2, 0.9, N_GROUPS), 3),
        "season_k": np.round(rng.uniform(2.0, 5.0, N_GROUPS), 3),
        "prevalence": np.round(rng.uniform(0.03, 0.08, N_GROUPS), 4),
    })
    tr, pop, ser, cls = [], [], [], []
    for r in g.itertuples():
        off = rng.normal(0, 2)
        for split, n in (("train", int(r.n_train)), ("test", 40)):
            x = rng.normal(size=(n, N_FEAT))
            y = x @ BETA + off + r.noise * 2 * rng.normal(size=n)
            f = pd.DataFrame(np.round(x, 4), columns=[f"x{k + 1}" for k in range(N_FEAT)])
            tr.append(f.assign(group_id=r.group_id, split=split,
                               row=np.arange(n) + (100 if split == "test" else 0),
                               y=np.round(y, 4)))
        n_pop = int(rng.integers(300, 601))
        size = np.round(np.exp(rng.normal(3, r.skew, n_pop)), 3)
        b = rng.uniform(0.5, 2.0)
        val = np.round(b * size * (1 + 0.15 * rng.normal(size=n_pop)), 4)
        pi = np.minimum(1.0, 40 * size / size.sum())
        pop.append(pd.DataFrame({"group_id": r.group_id, "unit_id": np.arange(n_pop),
                                 "x": size, "y": val, "pi": np.round(pi, 6),
                                 "sampled": rng.random(n_pop) < pi}))
        t = np.arange(HIST + HORIZON)
        u = np.zeros(len(t))
        e = rng.normal(size=len(t))
        u[0] = e[0] / np.sqrt(1 - r.phi ** 2)
        for k in range(1, len(t)):
            u[k] = r.phi * u[k - 1] + e[k]
        amp = np.sqrt(2 * r.season_k / (1 - r.phi ** 2))
        y = rng.uniform(5, 20) + 0.01 * t + amp * np.sin(2 * np.pi * t / 52
                                                          + rng.uniform(0, 2 * np.pi)) + u
        ser.append(pd.DataFrame({"group_id": r.group_id, "week": t, "y": np.round(y, 4)}))
        for split in ("train", "test"):
            lab = (rng.random(400) < r.prevalence).astype(int)
            x = rng.normal(size=(400, 4)) + CLS_SHIFT * lab[:, None]
            f = pd.DataFrame(np.round(x, 4), columns=[f"f{k + 1}" for k in range(4)])
            cls.append(f.assign(group_id=r.group_id, split=split,
                                row=np.arange(400) + (1000 if split == "test" else 0),
                                label=lab))
    return {"groups": g, "transfer": pd.concat(tr, ignore_index=True),
            "population": pd.concat(pop, ignore_index=True),
            "series": pd.concat(ser, ignore_index=True),
            "imbalanced": pd.concat(cls, ignore_index=True)}


def _rows(frame: pd.DataFrame, ids: list[str], value: str) -> dict[str, dict[str, float]]:
    return {i: {str(k): float(v) for k, v in zip(f["row"], f[value], strict=True)}
            for i, f in frame[frame.group_id.isin(ids)].groupby("group_id", sort=True)}


def transfer_reference(tr: pd.DataFrame) -> pd.Series:
    """Shared slopes and per-group intercepts, least squares on every group's labelled rows;
    returns the predictions of the test rows (in ``tr``'s test order)."""
    cols = [f"x{k + 1}" for k in range(N_FEAT)]
    dummies = pd.get_dummies(tr.group_id).to_numpy(float)
    x = np.column_stack([tr[cols].to_numpy(), dummies])
    lab = (tr.split == "train").to_numpy()
    coef = np.linalg.lstsq(x[lab], tr.y.to_numpy()[lab], rcond=None)[0]
    return pd.Series(x[~lab] @ coef, index=tr.index[~lab])


def transfer_learning(work: Path, rng: np.random.Generator, select: str) -> dict[str, Any]:
    """Stage groups.csv, train.csv (labelled rows of every group) and test.csv (features
    only); gold: the scope's true test y, the reference's median R2 and (for the negatives'
    checks) the per-group least-squares fit's median R2; base_r2 (the stbench reference): the
    baseline, one pooled least squares over every group's labelled rows (shared slopes and a
    single intercept), which ignores the group offsets."""
    d = general_dataset()
    d["groups"].to_csv(work / "groups.csv", index=False)
    tr = d["transfer"]
    tr[tr.split == "train"].drop(columns="split").to_csv(work / "train.csv", index=False)
    tr[tr.split == "test"].drop(columns=["split", "y"]).to_csv(work / "test.csv", index=False)
    ids = scope_ids(d["groups"], select, "group_id")
    pred = transfer_reference(tr)
    test = tr[tr.split == "test"].assign(pred=pred)
    cols = [f"x{k + 1}" for k in range(N_FEAT)]
    lab = tr[tr.split == "train"]
    pooled = np.linalg.lstsq(np.column_stack([np.ones(len(lab)), lab[cols].to_numpy()]),
                             lab.y.to_numpy(), rcond=None)[0]
    ref, own, base = [], [], []
    for i in ids:
        t, a = test[test.group_id == i], tr[(tr.group_id == i) & (tr.split == "train")]
        ref.append(nse(t.pred.to_numpy(), t.y.to_numpy()))
        base.append(nse(np.column_stack([np.ones(len(t)), t[cols].to_numpy()]) @ pooled,
                        t.y.to_numpy()))
        xa = np.column_stack([np.ones(len(a)), a[cols].to_numpy()])
        c = np.linalg.lstsq(xa, a.y.to_numpy(), rcond=None)[0]
        own.append(nse(np.column_stack([np.ones(len(t)), t[cols].to_numpy()]) @ c,
                       t.y.to_numpy()))
    return {"ids": ids, "count": len(ids), "truth": _rows(test, ids, "y"),
            "fit": _rows(tr[tr.split == "train"], ids, "y"),
            "median_r2": round(float(np.median(ref)), 6),
            "own_fit_r2": round(float(np.median(own)), 6),
            "base_median_r2": round(float(np.median(base)), 6)}


def sampling_estimates(p: pd.DataFrame) -> pd.DataFrame:
    """Per group: the true total, the ratio (x-calibrated Horvitz-Thompson) estimate, the
    Horvitz-Thompson estimate and the unweighted N * sample mean."""
    rows = []
    for gid, g in p.groupby("group_id", sort=True):
        s = g[g.sampled]
        ht_y, ht_x = (s.y / s.pi).sum(), (s.x / s.pi).sum()
        rows.append({"group_id": gid, "true": g.y.sum(), "ratio": ht_y / ht_x * g.x.sum(),
                     "ht": ht_y, "naive": len(g) * s.y.mean()})
    return pd.DataFrame(rows).set_index("group_id")


def population_total(work: Path, rng: np.random.Generator, select: str) -> dict[str, Any]:
    """Stage groups.csv, frame.csv (every unit's size) and sample.csv (sampled units with pi
    and y); gold: the scope's true totals of y, the reference's median relative error (%) and
    (for the negatives' checks) the Horvitz-Thompson and naive estimates; base_error_pct (the
    stbench reference): the median relative error (%) of the baseline, the plain
    Horvitz-Thompson estimate, which uses the inclusion probabilities but not the known size
    total."""
    d = general_dataset()
    d["groups"].to_csv(work / "groups.csv", index=False)
    p = d["population"]
    p[["group_id", "unit_id", "x"]].to_csv(work / "frame.csv", index=False)
    p[p.sampled][["group_id", "unit_id", "pi", "y"]].to_csv(work / "sample.csv", index=False)
    ids = scope_ids(d["groups"], select, "group_id")
    est = sampling_estimates(p).loc[ids]
    err = (est.ratio - est.true).abs() / est.true
    ht = (est.ht - est.true).abs() / est.true
    return {"ids": ids, "count": len(ids), "total": {i: round(float(est.true[i]), 4)
                                                      for i in ids},
            "ht": {i: float(est.ht[i]) for i in ids}, "naive": {i: float(est.naive[i])
                                                                for i in ids},
            "ref_error_pct": round(100 * float(err.median()), 4),
            "base_error_pct": round(100 * float(ht.median()), 4)}


def series_reference(y: np.ndarray) -> np.ndarray:
    """Harmonic regression (annual sine and cosine, linear trend) plus an AR(1) of its
    residuals, iterated over the horizon."""
    t = np.arange(len(y) + HORIZON)
    x = np.column_stack([np.ones(len(t)), t, np.sin(2 * np.pi * t / 52),
                         np.cos(2 * np.pi * t / 52)])
    coef = np.linalg.lstsq(x[:len(y)], y, rcond=None)[0]
    res = y - x[:len(y)] @ coef
    phi = float(np.dot(res[1:], res[:-1]) / np.dot(res[:-1], res[:-1]))
    return x[len(y):] @ coef + res[-1] * phi ** np.arange(1, HORIZON + 1)


def series_forecast(work: Path, rng: np.random.Generator, select: str) -> dict[str, Any]:
    """Stage groups.csv and series.csv (weeks 0-519); gold: the scope's weeks 520-571, the
    reference's median NSE, (for the negatives' checks) persistence's median NSE and
    base_median_nse (the stbench reference): the baseline, the seasonal naive forecast (each
    withheld week repeats the same week of the last observed year)."""
    d = general_dataset()
    d["groups"].to_csv(work / "groups.csv", index=False)
    s = d["series"]
    s[s.week < HIST].to_csv(work / "series.csv", index=False)
    ids = scope_ids(d["groups"], select, "group_id")
    ref, last, seasonal, truth, fit = [], [], [], {}, {}
    for i in ids:
        y = s[s.group_id == i].sort_values("week").y.to_numpy()
        obs = y[HIST:]
        truth[i] = {str(HIST + k): float(v) for k, v in enumerate(obs)}
        fit[i] = {str(k): float(v) for k, v in enumerate(y[:HIST])}
        ref.append(nse(series_reference(y[:HIST]), obs))
        last.append(nse(np.full(HORIZON, y[HIST - 1]), obs))
        seasonal.append(nse(y[HIST - 52:HIST], obs))
    return {"ids": ids, "count": len(ids), "truth": truth, "fit": fit,
            "median_nse": round(float(np.median(ref)), 6),
            "persistence_nse": round(float(np.median(last)), 6),
            "base_median_nse": round(float(np.median(seasonal)), 6)}


def balanced_accuracy(pred: np.ndarray, lab: np.ndarray) -> float:
    """The mean of the recalls of the two classes."""
    return float((np.mean(pred[lab == 1] == 1) + np.mean(pred[lab == 0] == 0)) / 2)


def imbalanced_classification(work: Path, rng: np.random.Generator, select: str
                              ) -> dict[str, Any]:
    """Stage groups.csv, train.csv (labelled) and test.csv (features only); gold: the scope's
    test labels and the median balanced accuracy of the reference (class-balanced logistic
    regression, computed here by the prior-shift of the LDA boundary, which equals it for
    the two Gaussian classes) and of the unweighted rule (the Bayes rule of the unweighted
    fit: the baseline, whose value base_median_bal_acc is the stbench reference; it is what
    a classifier fit without any rebalancing converges to)."""
    d = general_dataset()
    d["groups"].to_csv(work / "groups.csv", index=False)
    c = d["imbalanced"]
    c[c.split == "train"].drop(columns="split").to_csv(work / "train.csv", index=False)
    c[c.split == "test"].drop(columns=["split", "label"]).to_csv(work / "test.csv",
                                                                    index=False)
    ids = scope_ids(d["groups"], select, "group_id")
    test = c[(c.split == "test") & c.group_id.isin(ids)]
    bal, raw = [], []
    for _, g in test.groupby("group_id"):
        score = g[["f1", "f2", "f3", "f4"]].sum(axis=1).to_numpy() * CLS_SHIFT
        mid = 4 * CLS_SHIFT ** 2 / 2
        prev = float(d["groups"].set_index("group_id").prevalence[g.group_id.iloc[0]])
        lab = g.label.to_numpy()
        bal.append(balanced_accuracy((score > mid).astype(int), lab))
        raw.append(balanced_accuracy((score > mid + np.log((1 - prev) / prev)).astype(int),
                                     lab))
    return {"ids": ids, "count": len(ids), "truth": _rows(test, ids, "label"),
            "fit": _rows(c[c.split == "train"], ids, "label"),
            "median_bal_acc": round(float(np.median(bal)), 6),
            "unweighted_bal_acc": round(float(np.median(raw)), 6),
            "base_median_bal_acc": round(float(np.median(raw)), 6)}


B4 = np.array([1.2, -0.8, 0.6, 0.9])


def teacher_signal(x: np.ndarray) -> np.ndarray:
    """The distillation task's true function of x1-x4 (what the teacher approximates)."""
    return x @ B4 + 0.8 * np.sin(2 * x[:, 0]) + 0.8 * x[:, 1] * x[:, 2]


@cache
def distill_dataset(seed: int = DATASET_SEED) -> pd.DataFrame:
    """Per group (groups.csv): 15 labelled rows (y = signal + 2 * noise * eps), 300 pool rows
    with the teacher's output (signal + 0.1 eps) and 100 test rows whose teacher output is
    withheld; rows 0-14 labelled, 100-399 pool, 1000-1099 test."""
    rng = np.random.default_rng([seed, 5])
    parts = []
    for r in general_dataset(seed)["groups"].itertuples():
        for split, n, first in (("labelled", 15, 0), ("pool", 300, 100), ("test", 100, 1000)):
            x = np.round(rng.normal(size=(n, 4)), 4)
            sig = teacher_signal(x)
            f = pd.DataFrame(x, columns=["x1", "x2", "x3", "x4"])
            parts.append(f.assign(group_id=r.group_id, split=split, row=np.arange(n) + first,
                                  y=np.round(sig + 2 * r.noise * rng.normal(size=n), 4),
                                  teacher=np.round(sig + 0.1 * rng.normal(size=n), 4)))
    return pd.concat(parts, ignore_index=True)


def quadratic_design(x: np.ndarray) -> np.ndarray:
    """The student: an intercept, x1-x4, their squares and pairwise products (15 terms)."""
    i, j = np.triu_indices(x.shape[1])
    return np.column_stack([np.ones(len(x)), x, x[:, i] * x[:, j]])


def model_distillation(work: Path, rng: np.random.Generator, select: str) -> dict[str, Any]:
    """Stage groups.csv, labelled.csv (y), pool.csv (teacher output) and test.csv (features
    only); gold: the scope's withheld teacher outputs of the test rows, the pool outputs (the
    fit gate's truth), the reference student's median test R2 and (for the negatives'
    checks) the medians of the same student and of a linear one fit on the labelled rows;
    base_median_r2 (the stbench reference): the baseline, a linear student fit to the pool's
    teacher outputs (distillation with the simplest student, which misses the interaction
    and the sine)."""
    general_dataset()["groups"].to_csv(work / "groups.csv", index=False)
    d = distill_dataset()
    cols = ["group_id", "row", "x1", "x2", "x3", "x4"]
    d[d.split == "labelled"][[*cols, "y"]].to_csv(work / "labelled.csv", index=False)
    d[d.split == "pool"][[*cols, "teacher"]].to_csv(work / "pool.csv", index=False)
    d[d.split == "test"][cols].to_csv(work / "test.csv", index=False)
    ids = scope_ids(general_dataset()["groups"], select, "group_id")
    ref, quad, lin, base = [], [], [], []
    for i in ids:
        g = d[d.group_id == i]
        xs = {s: g[g.split == s][["x1", "x2", "x3", "x4"]].to_numpy() for s in
              ("labelled", "pool", "test")}
        obs = g[g.split == "test"].teacher.to_numpy()
        lab = g[g.split == "labelled"].y.to_numpy()
        c = np.linalg.lstsq(quadratic_design(xs["pool"]), g[g.split == "pool"].teacher,
                            rcond=None)[0]
        ref.append(nse(quadratic_design(xs["test"]) @ c, obs))
        c = np.linalg.lstsq(quadratic_design(xs["labelled"]), lab, rcond=None)[0]
        quad.append(nse(quadratic_design(xs["test"]) @ c, obs))
        c = np.linalg.lstsq(np.column_stack([np.ones(300), xs["pool"]]),
                            g[g.split == "pool"].teacher, rcond=None)[0]
        base.append(nse(np.column_stack([np.ones(100), xs["test"]]) @ c, obs))
        one = np.column_stack([np.ones(15), xs["labelled"]])
        c = np.linalg.lstsq(one, lab, rcond=None)[0]
        lin.append(nse(np.column_stack([np.ones(100), xs["test"]]) @ c, obs))
    test = d[(d.split == "test") & d.group_id.isin(ids)]
    return {"ids": ids, "count": len(ids), "truth": _rows(test, ids, "teacher"),
            "fit": _rows(d[d.split == "pool"], ids, "teacher"),
            "median_r2": round(float(np.median(ref)), 6),
            "labelled_quadratic_r2": round(float(np.median(quad)), 6),
            "labelled_linear_r2": round(float(np.median(lin)), 6),
            "base_median_r2": round(float(np.median(base)), 6)}
