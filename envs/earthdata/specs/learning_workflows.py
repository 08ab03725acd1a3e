"""Spec builders of the general control set's learning workflows
(envs/earthdata/datasets/general.py): a seasonal time-series forecast, class-imbalance
augmentation and model distillation; written by make_specs.py."""

from __future__ import annotations

from sciagent_gym.envs.earthdata.specs.common import (
    agent_script,
    covers,
    metrics_json,
    realistic,
    scripted,
    tags,
    target,
)
from sciagent_gym.envs.earthdata.specs.general import _code, _fit_gate, _scored, _spec

# -- forecasting a weekly series a year ahead --------------------------------------------------

SERIES = '''s = pd.read_csv("series.csv")
rows, nses = [], []
for gid in ids:
    y = s[s.group_id == gid].sort_values("week").y.to_numpy()
    t = np.arange(len(y) + 52)
    w = 2 * np.pi * t / 52
    x = np.column_stack([np.ones(len(t)), t, np.sin(w), np.cos(w)])
    coef = np.linalg.lstsq(x[:len(y)], y, rcond=None)[0]
    fit = x[:len(y)] @ coef
    res = y - fit
    phi = np.dot(res[1:], res[:-1]) / np.dot(res[:-1], res[:-1])
    fc = x[len(y):] @ coef + res[-1] * phi ** np.arange(1, 53)
@MODEL@    nses.append(1 - np.sum((y - fit) ** 2) / np.sum((y - y.mean()) ** 2))
    yh = np.concatenate([fit, fc])
    rows.append(pd.DataFrame(dict(group_id=gid, week=t, y_hat=yh)))
out = pd.concat(rows)
out.to_csv("forecast.csv", index=False)
json.dump(dict(fit_nse=float(np.median(nses))), open("metrics.json", "w"))
print(out.describe())
'''


def series_code(model: str = "", sel: str = "@SEL@") -> str:
    return _code(SERIES, model, sel)


def series_spec() -> dict:
    fabricated = series_code().replace("fit_nse=float(np.median(nses))", "fit_nse=0.95")
    return _spec(
        "general-forecast", "A year-ahead forecast of weekly synthetic series (general "
        "control set)",
        "series.csv holds a weekly series per group (group_id, week 0-519, y); weeks "
        "520-571 are withheld. Forecast weeks 520-571 of every group in scope. Write "
        "forecast.csv with the columns group_id,week,y_hat: one row per scope group and "
        "week 0-571 (weeks 0-519 your model's fitted values), for the scope's groups only, "
        "and metrics.json, a JSON object with fit_nse: the median over the scope's groups of "
        "the Nash-Sutcliffe efficiency (1 - SSE/SST) of y_hat on weeks 0-519. Your forecast "
        "is scored against the withheld weeks (median over groups of NSE, target >= 0.5).",
        "The series carry a trend, an annual cycle and autocorrelated anomalies; a constant "
        "forecast (the last value, last year's mean) scores NSE <= 0 over the year.",
        "medium", tags("general", "forecasting", "medium", "modeling", "modeling",
                       "predictive", "long-horizon-planning"),
        "series_forecast", ["series.csv"],
        [realistic(["fit_nse"]),
         covers("forecast.csv", "group_id", "groups", "$gold.g.ids"),
         _fit_gate("fit_nse", "$gold.g.fit", "forecast.csv", "y_hat", "week", "nse"),
         target("nse", _scored("forecast.csv", "y_hat", "week", "nse", "$gold.g.truth"),
                ">= 0.5", "$gold.g.base_median_nse", True)],
        series_code,
        {"persistence": scripted(series_code("    fc = np.full(52, y[-1])\n")),
         "last-year-mean": scripted(series_code("    fc = np.full(52, y[-52:].mean())\n")),
         "wrong-scope-all-groups": scripted(series_code(sel="group_id == group_id")),
         "fabricated-fit-nse": scripted(fabricated)},
        {"metrics-only": metrics_json({"fit_nse": 0.9, "nse": 0.9}),
         "defensive-zeros": metrics_json({"fit_nse": 0, "nse": 0}),
         "zero-forecast": agent_script(series_code("    fc = 0 * fc\n"))})


# -- data augmentation: a rare class ---------------------------------------------------------------

IMBALANCED = '''from sklearn.linear_model import LogisticRegression
tr = pd.read_csv("train.csv")
te = pd.read_csv("test.csv")
cols = ["f1", "f2", "f3", "f4"]
rows, accs = [], []
for gid in ids:
    a = tr[tr.group_id == gid]
    b = te[te.group_id == gid]
    clf = LogisticRegression(class_weight="balanced")
@MODEL@    clf.fit(a[cols], a.label)
    pa, pb = clf.predict(a[cols]), clf.predict(b[cols])
    lab = a.label.to_numpy()
    accs.append((np.mean(pa[lab == 1] == 1) + np.mean(pa[lab == 0] == 0)) / 2)
    rows.append(pd.DataFrame(dict(group_id=gid, row=a.row, label=pa)))
    rows.append(pd.DataFrame(dict(group_id=gid, row=b.row, label=pb)))
out = pd.concat(rows)
out.to_csv("labels.csv", index=False)
json.dump(dict(train_balanced_accuracy=float(np.median(accs))), open("metrics.json", "w"))
print(out.label.value_counts())
'''


def imbalanced_code(model: str = "", sel: str = "@SEL@") -> str:
    return _code(IMBALANCED, model, sel)


def imbalanced_spec() -> dict:
    key = "train_balanced_accuracy"
    fabricated = imbalanced_code().replace(f"{key}=float(np.median(accs))", f"{key}=0.97")
    return _spec(
        "general-imbalanced", "A rare class in synthetic groups: classification with "
        "class-balancing augmentation (general control set)",
        "train.csv holds 400 labelled rows per group (group_id, row, f1-f4, label 0/1; the "
        "minority class 1 is 3-8 % of the rows) and test.csv 400 more rows per group whose "
        "label is withheld. Classify every labelled and test row of every group in scope. "
        "Write labels.csv with the columns group_id,row,label (0 or 1; the scope's groups "
        "only) and metrics.json, a JSON object with train_balanced_accuracy: the median "
        "over the scope's groups of the balanced accuracy (mean of the two classes' "
        "recalls) on the labelled rows. Your test labels are scored against the withheld "
        "ones (median over groups of balanced accuracy, target >= 0.84).",
        "With so few minority rows a classifier fit as is favours the majority class; "
        "oversample or augment the minority class (or weight the classes inversely to "
        "their frequency) before fitting.",
        "easy", tags("general", "data-augmentation", "easy", "robustness", "data-preparation",
                     "predictive", "error-recovery"),
        "imbalanced_classification", ["train.csv", "test.csv"],
        [realistic([key]),
         covers("labels.csv", "group_id", "groups", "$gold.g.ids"),
         _fit_gate(key, "$gold.g.fit", "labels.csv", "label", "row", "balanced_accuracy"),
         target("balanced_accuracy", _scored("labels.csv", "label", "row",
                                              "balanced_accuracy", "$gold.g.truth"),
                ">= 0.84", "$gold.g.base_median_bal_acc", True)],
        imbalanced_code,
        {"unweighted-fit": scripted(imbalanced_code("    clf = LogisticRegression()\n")),
         "wrong-scope-all-groups": scripted(imbalanced_code(sel="group_id == group_id")),
         "fabricated-accuracy": scripted(fabricated)},
        {"metrics-only": metrics_json({key: 0.9}),
         "defensive-zeros": metrics_json({key: 0}),
         "all-majority": agent_script(imbalanced_code(
             "    clf = LogisticRegression(class_weight={0: 1, 1: 1e-6})\n"))})


# -- model distillation: a compact student fit to a teacher's outputs --------------------------

DISTILL = '''lab = pd.read_csv("labelled.csv")
pool = pd.read_csv("pool.csv")
te = pd.read_csv("test.csv")
cols = ["x1", "x2", "x3", "x4"]
i, j = np.triu_indices(4)
def design(f):
    x = f[cols].to_numpy()
    return np.column_stack([np.ones(len(x)), x, x[:, i] * x[:, j]])
rows, r2s = [], []
for gid in ids:
    p = pool[pool.group_id == gid]
    b = te[te.group_id == gid]
    coef = np.linalg.lstsq(design(p), p.teacher.to_numpy(), rcond=None)[0]
@MODEL@    fp, fb = design(p) @ coef, design(b) @ coef
    t = p.teacher.to_numpy()
    r2s.append(1 - np.sum((t - fp) ** 2) / np.sum((t - t.mean()) ** 2))
    rows.append(pd.DataFrame(dict(group_id=gid, row=p.row, y_student=fp)))
    rows.append(pd.DataFrame(dict(group_id=gid, row=b.row, y_student=fb)))
out = pd.concat(rows)
out.to_csv("student.csv", index=False)
json.dump(dict(pool_r2=float(np.median(r2s))), open("metrics.json", "w"))
print(out.describe())
'''
ON_LABELS = '''    a = lab[lab.group_id == gid]
    coef = np.linalg.lstsq(design(a), a.y.to_numpy(), rcond=None)[0]
'''


def distill_code(model: str = "", sel: str = "@SEL@") -> str:
    return _code(DISTILL, model, sel)


def distill_spec() -> dict:
    fabricated = distill_code().replace("pool_r2=float(np.median(r2s))", "pool_r2=0.99")
    linear = ("    x4 = np.column_stack([np.ones(len(p)), p[cols]])\n"
              "    c1 = np.linalg.lstsq(x4, p.teacher.to_numpy(), rcond=None)[0]\n"
              "    coef = np.concatenate([c1, np.zeros(10)])\n")
    return _spec(
        "general-distillation", "Distilling a teacher model into a compact quadratic "
        "student (general control set)",
        "Per group, labelled.csv holds 15 rows with a noisy measured y (group_id, row, "
        "x1-x4, y), pool.csv 300 rows with the output of a large teacher model (teacher) "
        "and test.csv 100 rows of features only. Distil the teacher into a compact student, "
        "a regression on x1-x4, their squares and pairwise products (15 terms), one per "
        "scope group, and apply it to the pool and test rows. Write student.csv with the "
        "columns group_id,row,y_student (every pool and test row of the scope's groups "
        "only) and metrics.json, a JSON object with pool_r2: the median over the scope's "
        "groups of R2 = 1 - SSE/SST of y_student against the teacher on the pool rows. "
        "The test rows are scored against the teacher's withheld outputs (median over "
        "groups of R2, target >= 0.85).",
        "15 noisy labels cannot pin down 15 terms; the teacher's outputs on the pool are "
        "plentiful and nearly noise-free. A linear student misses the teacher's "
        "interaction.",
        "medium", tags("general", "model-distillation", "medium", "modeling", "modeling",
                       "predictive", "parallel-search"),
        "model_distillation", ["labelled.csv", "pool.csv", "test.csv"],
        [realistic(["pool_r2"]),
         covers("student.csv", "group_id", "groups", "$gold.g.ids"),
         _fit_gate("pool_r2", "$gold.g.fit", "student.csv", "y_student", "row", "r2"),
         target("r2", _scored("student.csv", "y_student", "row", "r2", "$gold.g.truth"),
                ">= 0.85", "$gold.g.base_median_r2", True)],
        distill_code,
        {"fit-on-labels": scripted(distill_code(ON_LABELS)),
         "linear-student": scripted(distill_code(linear)),
         "wrong-scope-all-groups": scripted(distill_code(sel="group_id == group_id")),
         "fabricated-pool-r2": scripted(fabricated)},
        {"metrics-only": metrics_json({"pool_r2": 0.95, "r2": 0.95}),
         "defensive-zeros": metrics_json({"pool_r2": 0, "r2": 0}),
         "zero-student": agent_script(distill_code("    coef = 0 * coef\n"))},
        heldout=True)
