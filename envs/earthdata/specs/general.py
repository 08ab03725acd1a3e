"""Spec builders of ST-Bench's general control set (synthetic data with documented process
models, envs/earthdata/datasets/general.py): transfer learning and sampling, and the helpers
the set's other families (learning_workflows.py) share; written by make_specs.py."""

from __future__ import annotations

from collections.abc import Callable

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

GEN_QUERIES = [
    ("alpha", "the alpha regime", "regime == 'alpha'"),
    ("beta", "the beta regime", "regime == 'beta'"),
    ("gamma", "the gamma regime", "regime == 'gamma'"),
    ("delta", "the delta regime", "regime == 'delta'"),
    ("not-delta", "every regime but delta", "regime != 'delta'"),
    ("alpha-beta", "the alpha and beta regimes", "regime in ['alpha', 'beta']"),
    ("mid-noise", "groups of moderate noise", "noise >= 0.5 and noise < 0.85"),
    ("high-noise", "high-noise groups", "noise >= 0.7"),
    ("few-labels", "groups with at most 10 labelled rows", "n_train <= 10"),
    ("more-labels", "groups with at least 12 labelled rows", "n_train >= 12"),
    ("low-skew", "groups of weakly skewed unit sizes", "skew < 0.9"),
    ("high-skew", "groups of strongly skewed unit sizes", "skew >= 1.1"),
    ("persistent", "groups with persistent anomalies", "phi >= 0.6"),
    ("short-memory", "groups with short-memory anomalies", "phi < 0.5"),
    ("strong-season", "groups with a strong seasonal cycle", "season_k >= 3.5"),
    ("weak-season", "groups with a weak seasonal cycle", "season_k < 3.2"),
    ("rare-class", "groups whose minority class is rarest", "prevalence < 0.05"),
    ("common-class", "groups whose minority class is least rare", "prevalence >= 0.06"),
    ("gamma-delta-noisy", "noisy groups of the gamma and delta regimes",
     "regime in ['gamma', 'delta'] and noise >= 0.6"),
    ("alpha-beta-persistent", "persistent groups of the alpha and beta regimes",
     "regime in ['alpha', 'beta'] and phi >= 0.5"),
]

DATA = ("The work directory holds synthetic data of ST-Bench's general control set as CSV: "
        "groups.csv lists 40 synthetic groups (group_id, regime alpha/beta/gamma/delta, "
        "noise, n_train, skew, phi, season_k, prevalence). The terminal's python3 has "
        "pandas, NumPy, SciPy and scikit-learn. Scope ({query}): {scope}, i.e. the groups "
        "of groups.csv matching the pandas query `{select}`. ")
HEAD = '''import json
import numpy as np
import pandas as pd
SEL = "@SEL@"
ids = sorted(pd.read_csv("groups.csv").query(SEL).group_id)
'''


def _code(body: str, model: str, sel: str) -> str:
    return variant(HEAD + body, model, sel)


def _fit_gate(key: str, truth: str, path: str, value: str, row: str, metric: str) -> dict:
    return reported(key, 0.01, path=path, metric=metric, truth=truth, group="group_id",
                    value=value, per_group=True, row_key=row)


def _scored(path: str, value: str, row: str, metric: str, truth: str) -> dict:
    return {"fn": "earth_metric", "path": path, "metric": metric, "truth": truth,
            "group": "group_id", "value": value, "per_group": True, "key": row}


def _spec(slug: str, title: str, text: str, hints: str, difficulty: str, tag: list[str],
          fn: str, protect: list[str], criteria: list[dict], code: Callable[[], str],
          negatives: dict, cheats: dict, heldout: bool = False) -> dict:
    """A general-control-set family: its data beside groups.csv, gold under ``g``, the scopes
    of GEN_QUERIES; a held-out family's flag comes last in these files."""
    spec = code_spec(slug, title=title, instruction=DATA + text, hints=hints,
                     difficulty=difficulty, tag=tag, generate=(fn, "g"),
                     protect=["groups.csv", *protect], criteria=criteria, code=code,
                     negatives=negatives, cheats=cheats, scopes=GEN_QUERIES)
    if heldout:
        spec["heldout"] = True
    return spec


# -- transfer learning: shared slopes from every group, few labels per group ---------------------

TRANSFER = '''tr = pd.read_csv("train.csv")
te = pd.read_csv("test.csv")
cols = ["x%d" % k for k in range(1, 9)]
gs = sorted(tr.group_id.unique())
def design(f):
    dummies = np.column_stack([(f.group_id == g).to_numpy() for g in gs])
    return np.column_stack([f[cols].to_numpy(), dummies.astype(float)])
coef = np.linalg.lstsq(design(tr), tr.y.to_numpy(), rcond=None)[0]
rows, r2s = [], []
for gid in ids:
    a = tr[tr.group_id == gid]
    b = te[te.group_id == gid]
    fa, fb = design(a) @ coef, design(b) @ coef
@MODEL@    ya = a.y.to_numpy()
    r2s.append(1 - np.sum((ya - fa) ** 2) / np.sum((ya - ya.mean()) ** 2))
    rows.append(pd.DataFrame(dict(group_id=gid, row=a.row, y_pred=fa)))
    rows.append(pd.DataFrame(dict(group_id=gid, row=b.row, y_pred=fb)))
out = pd.concat(rows)
out.to_csv("predictions.csv", index=False)
json.dump(dict(fit_r2=float(np.median(r2s))), open("metrics.json", "w"))
print(out.describe())
'''
OWN_FIT = ('''    xa = np.column_stack([np.ones(len(a)), a[cols].to_numpy()])
    c = np.linalg.lstsq(xa, a.y.to_numpy(), rcond=None)[0]
    fa, fb = xa @ c, np.column_stack([np.ones(len(b)), b[cols].to_numpy()]) @ c
''')


def transfer_code(model: str = "", sel: str = "@SEL@") -> str:
    return _code(TRANSFER, model, sel)


def transfer_spec() -> dict:
    fabricated = transfer_code().replace("fit_r2=float(np.median(r2s))", "fit_r2=0.99")
    return _spec(
        "general-transfer", "Transfer learning across synthetic groups with few labels each "
        "(general control set)",
        "train.csv holds, for every group, its few labelled rows (group_id, row, x1-x8, y; "
        "n_train of them) and test.csv the features of 40 more rows per group whose y is "
        "withheld. Predict y for every labelled and test row of every group in scope. Write "
        "predictions.csv with the columns group_id,row,y_pred (the scope's groups only) and "
        "metrics.json, a JSON object with fit_r2: the median over the scope's groups of R2 = "
        "1 - SSE/SST of y_pred on the group's labelled rows. Your test predictions are "
        "scored against the withheld y (median over groups of R2, target >= 0.55).",
        "The groups follow one linear law in x1-x8 and differ only in their level; eight "
        "features and an intercept from 9-13 rows per group overfit, while the other groups' "
        "rows pin the shared slopes down.",
        "hard", tags("general", "transfer-learning", "hard", "modeling", "modeling",
                     "predictive", "decomposition"),
        "transfer_learning", ["train.csv", "test.csv"],
        [realistic(["fit_r2"]),
         covers("predictions.csv", "group_id", "groups", "$gold.g.ids"),
         _fit_gate("fit_r2", "$gold.g.fit", "predictions.csv", "y_pred", "row", "r2"),
         target("r2", _scored("predictions.csv", "y_pred", "row", "r2", "$gold.g.truth"),
                ">= 0.55", "$gold.g.base_median_r2", True)],
        transfer_code,
        {"own-fit-per-group": scripted(transfer_code(OWN_FIT)),
         "wrong-scope-all-groups": scripted(transfer_code(sel="group_id == group_id")),
         "fabricated-fit-r2": scripted(fabricated)},
        {"metrics-only": metrics_json({"fit_r2": 0.9, "r2": 0.9}),
         "defensive-zeros": metrics_json({"fit_r2": 0, "r2": 0}),
         "zero-predictions": agent_script(transfer_code(
             "    fa, fb = 0 * fa, 0 * fb\n"))},
        heldout=True)


# -- sampling: a population total from an unequal-probability sample -----------------------------

SAMPLING = '''frame = pd.read_csv("frame.csv")
s = pd.read_csv("sample.csv")
rows = []
for gid in ids:
    f = frame[frame.group_id == gid]
    g = s[s.group_id == gid].merge(f, on=["group_id", "unit_id"])
    total = (g.y / g.pi).sum() / (g.x / g.pi).sum() * f.x.sum()
@MODEL@    rows.append(dict(group_id=gid, total_y=round(total, 4), n_sampled=len(g)))
t = pd.DataFrame(rows)
t.to_csv("totals.csv", index=False)
json.dump(dict(median_total=float(t.total_y.median())), open("metrics.json", "w"))
print(t.describe())
'''


def sampling_code(model: str = "", sel: str = "@SEL@") -> str:
    return _code(SAMPLING, model, sel)


def sampling_spec() -> dict:
    table = {"path": "totals.csv", "id_column": "group_id", "value_column": "total_y"}
    fabricated = sampling_code().replace("median_total=float(t.total_y.median())",
                                         "median_total=5000.0")
    return _spec(
        "general-sampling", "Population totals from unequal-probability samples (general "
        "control set)",
        "Each group is a finite population: frame.csv lists every unit (group_id, unit_id) "
        "with its size x; sample.csv holds the units that entered the sample, each "
        "independently with its inclusion probability pi (given), and their value y. The y "
        "of unsampled units is withheld. Estimate every scope group's population total of "
        "y. Write totals.csv with the columns group_id,total_y (one row per scope group) and "
        "metrics.json, a JSON object with median_total (the median of total_y over the "
        "scope's groups). The totals are scored against the true population totals (median "
        "relative error in %, target < 4).",
        "Large units were sampled with higher probability, so the sample mean is biased; "
        "weight by 1/pi (Horvitz-Thompson), and since y is nearly proportional to the size "
        "x, known for every unit, a ratio estimator calibrated on the total of x removes most "
        "of the sampling noise.",
        "medium", tags("general", "sampling", "medium", "optimization", "data-preparation",
                       "descriptive", "synthesis"),
        "population_total", ["frame.csv", "sample.csv"],
        [realistic(["median_total"]),
         covers("totals.csv", "group_id", "groups", "$gold.g.ids"),
         reported_median("median_total", "$gold.g.ids", table),
         target("total_error_pct", {"fn": "earth_relative_error", "truth": "$gold.g.total",
                                    "percent": True, **table},
                "< 4", "$gold.g.base_error_pct", False)],
        sampling_code,
        {"unweighted-mean": scripted(sampling_code("    total = len(f) * g.y.mean()\n")),
         "horvitz-thompson-only": scripted(sampling_code("    total = (g.y / g.pi).sum()\n")),
         "wrong-scope-all-groups": scripted(sampling_code(sel="group_id == group_id")),
         "fabricated-median": scripted(fabricated)},
        {"metrics-only": metrics_json({"median_total": 5000}),
         "defensive-zeros": metrics_json({"median_total": 0}),
         "sample-sum": agent_script(sampling_code("    total = g.y.sum()\n"))})
