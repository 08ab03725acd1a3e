"""Seeded study data with known effects for the RKWard tasks, and their gold values.

Each generator writes a CSV file (and, when asked, the same data as an R workspace ``.RData``,
saved by the host's Rscript with the categorical columns as factors) into the work folder and
returns the generating parameters plus the statistics that R itself computes from the exact file:
``Rscript`` runs on the host over the written CSV (never inside the sandbox), so every gold
value is what a correct analysis in RKWard's R session gives, to R's own precision.

- :func:`trial`: a two-arm randomised trial of an antihypertensive (systolic blood pressure at
  baseline and week 12; a known treatment effect, age and baseline as covariates).
- :func:`survey`: a household survey (region, income, life satisfaction; known regional
  differences and a known income-satisfaction correlation).
- :func:`dose_response`: a dose-finding study (a linear response in dose and body weight with
  known coefficients).
- :func:`exposure`: a case-control study (smoking x disease as individual records with a known
  odds ratio).
- :func:`survival_study`: time-to-event data of two groups with exponential survival (known
  hazard ratio) and censoring.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

RSCRIPT_TIMEOUT = 60.0


def _rscript(code: str, work: Path) -> dict[str, Any]:
    """Run R code on the host in ``work``; it prints ``key=value`` lines (numbers or text)."""
    exe = shutil.which("Rscript")
    if exe is None:
        raise RuntimeError("Rscript is missing: install the Debian package r-base-core")
    proc = subprocess.run([exe, "--vanilla", "-e", code], cwd=work, capture_output=True,
                          text=True, timeout=RSCRIPT_TIMEOUT)
    if proc.returncode != 0:
        raise RuntimeError(f"Rscript failed: {proc.stderr[-1500:]}")
    out: dict[str, Any] = {}
    for line in proc.stdout.splitlines():
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            continue
        try:
            out[key.strip()] = float(value)
        except ValueError:
            out[key.strip()] = value.strip()
    return out


def _write_csv(path: Path, columns: dict[str, list[Any]]) -> None:
    names = list(columns)
    rows = zip(*(columns[n] for n in names), strict=True)
    lines = [",".join(names)]
    for row in rows:
        lines.append(",".join(f"{v:.6g}" if isinstance(v, float) else str(v) for v in row))
    path.write_text("\n".join(lines) + "\n")


_R_EMIT = """
emit <- function(key, value) cat(sprintf("%s=%.12g\\n", key, value))
"""


def _save_rdata(csv: str, rdata: str | None, name: str, factors: list[str]) -> str:
    """R code that reads ``csv`` as ``d`` with ``factors`` as factors and, when ``rdata`` is
    given, saves it there as the object ``name``."""
    code = f'd <- read.csv("{csv}", stringsAsFactors = FALSE)\n'
    for f in factors:
        code += f'd${f} <- factor(d${f})\n'
    if rdata:
        code += f'{name} <- d\nsave({name}, file = "{rdata}")\n'
    return code


def trial(work: Path, rng: np.random.Generator, path: str = "trial.csv",
          rdata: str | None = None, name: str = "trial", n_placebo: int = 60,
          n_active: int = 72, effect: float = 8.0, boxplot: bool = False,
          sd_ratio: float = 1.0) -> dict[str, Any]:
    """A two-arm trial: ``id, arm (Placebo/Active), sex, age, sbp_base, sbp_w12`` (mmHg).

    Week-12 SBP = 40 + 0.7 * baseline + 0.25 * (age - 55) - effect (Active) + N(0, 9²), so the
    true treatment effect on week-12 SBP (Active minus Placebo, adjusted) is ``-effect``. With
    ``sd_ratio`` the Active arm's residual SD is that many times 9 mmHg (heterogeneous response
    to treatment), so that, with unequal arm sizes, Welch's and Student's pooled t-tests give
    different statistics and confidence intervals.
    Gold: Welch and Student t-tests of sbp_w12 by arm, the ANCOVA coefficient of the arm, arm
    means, SDs and counts, and the share of responders (a drop of 10 mmHg or more). With
    ``boxplot``, also the gold render (8-bit grey, kept on the host) of
    ``png(FILE, width = 800, height = 600); boxplot(sbp_w12 ~ arm, data = trial, main =
    "Week-12 SBP by arm", ylab = "SBP (mmHg)"); dev.off()`` by the host's R."""
    n = n_placebo + n_active
    arm = np.array(["Placebo"] * n_placebo + ["Active"] * n_active)
    rng.shuffle(arm)
    sex = rng.choice(["F", "M"], size=n)
    age = np.round(rng.uniform(40, 75, size=n)).astype(int)
    base = np.round(rng.normal(152, 11, size=n), 1)
    noise = rng.normal(0, 9, size=n)
    if sd_ratio != 1.0:
        noise = noise * np.where(arm == "Active", sd_ratio, 1.0)
    w12 = 40 + 0.7 * base + 0.25 * (age - 55) - effect * (arm == "Active") + noise
    w12 = np.round(w12, 1)
    _write_csv(work / path, {"id": list(range(1, n + 1)), "arm": list(arm), "sex": list(sex),
                             "age": [int(a) for a in age], "sbp_base": [float(b) for b in base],
                             "sbp_w12": [float(w) for w in w12]})
    code = _R_EMIT + _save_rdata(path, rdata, name, ["arm", "sex"]) + """
d$arm <- relevel(d$arm, ref = "Placebo")
w <- t.test(sbp_w12 ~ arm, data = d)
s <- t.test(sbp_w12 ~ arm, data = d, var.equal = TRUE)
emit("welch_t", w$statistic); emit("welch_df", w$parameter); emit("welch_p", w$p.value)
emit("welch_lo", w$conf.int[1]); emit("welch_hi", w$conf.int[2])
emit("student_t", s$statistic); emit("student_df", s$parameter)
ya <- d$sbp_w12[d$arm == "Active"]; yp <- d$sbp_w12[d$arm == "Placebo"]
wa <- t.test(ya, yp)$conf.int; sa <- t.test(ya, yp, var.equal = TRUE)$conf.int
emit("welch_ap_lo", wa[1]); emit("welch_ap_hi", wa[2])
emit("student_ap_lo", sa[1]); emit("student_ap_hi", sa[2])
m <- tapply(d$sbp_w12, d$arm, mean); sdv <- tapply(d$sbp_w12, d$arm, sd)
emit("mean_placebo", m["Placebo"]); emit("mean_active", m["Active"])
emit("sd_placebo", sdv["Placebo"]); emit("sd_active", sdv["Active"])
emit("diff", m["Active"] - m["Placebo"])
mb <- tapply(d$sbp_base, d$arm, mean); emit("diff_base", mb["Active"] - mb["Placebo"])
ch <- d$sbp_w12 - d$sbp_base
mc <- tapply(ch, d$arm, mean); emit("diff_change", mc["Active"] - mc["Placebo"])
f <- lm(sbp_w12 ~ arm + sbp_base + age, data = d)
emit("ancova_arm", coef(f)["armActive"]); emit("ancova_base", coef(f)["sbp_base"])
emit("ancova_age", coef(f)["age"])
ci <- confint(f)["armActive", ]; emit("ancova_lo", ci[1]); emit("ancova_hi", ci[2])
f0 <- lm(sbp_w12 ~ arm, data = d); emit("crude_arm", coef(f0)["armActive"])
resp <- (d$sbp_base - d$sbp_w12) >= 10
emit("resp_placebo", mean(resp[d$arm == "Placebo"]))
emit("resp_active", mean(resp[d$arm == "Active"]))
old <- d$arm == "Active" & d$age >= 60
emit("n_old_active", sum(old)); emit("mean_old_active", mean(d$sbp_w12[old]))
emit("n_old_any", sum(d$age >= 60))
emit("n_resp", sum(resp)); emit("mean_w12", mean(d$sbp_w12))
emit("resp_diff_pp", 100 * (mean(resp[d$arm == "Active"]) - mean(resp[d$arm == "Placebo"])))
rt <- chisq.test(table(d$arm, resp), correct = FALSE); emit("resp_chisq", rt$statistic)
"""
    render = None
    if boxplot:
        render = Path(tempfile.mkdtemp(prefix="sciagent-rkward-gold-")) / "box.png"
        code += (f'png("{render}", width = 800, height = 600)\n'
                 'd$arm <- factor(as.character(d$arm))\n'  # the workspace's levels
                 'boxplot(sbp_w12 ~ arm, data = d, main = "Week-12 SBP by arm", '
                 'ylab = "SBP (mmHg)")\ninvisible(dev.off())\n')
    gold = _rscript(code, work)
    if render is not None:
        with Image.open(render) as im:
            gold["boxplot"] = np.asarray(im.convert("L"))
        shutil.rmtree(render.parent, ignore_errors=True)
    gold.update({"n": n, "n_placebo": n_placebo, "n_active": n_active, "effect": -effect})
    return gold


REGIONS = ["North", "South", "East", "West"]


def survey(work: Path, rng: np.random.Generator, path: str = "survey.csv",
           rdata: str | None = None, name: str = "survey", n: int = 240,
           rho: float = 0.45, region_shift: float = 0.8, income_median: float | None = None,
           income_spread: float = 0.45, income_region: float = 0.0,
           min_confounding: float = 0.0) -> dict[str, Any]:
    """A household survey: ``id, region, gender, age, income (k EUR a year), satisfaction
    (0-10 scale, one decimal)``. Incomes are log-normal with median ``income_median`` k EUR
    (about 36.6 when not given) and log-sd ``income_spread``, so a task can seed the
    country's income level and inequality (the income slope of satisfaction scales with
    both); ``income_region`` adds a regional income gradient (log income shifted by that
    much per region, North to West), which confounds the income slope with region.
    Satisfaction rises with income (true correlation about ``rho`` on the latent scale) and
    differs by region (regions shifted by multiples of ``region_shift``). With
    ``min_confounding`` the sample is redrawn until the income slope adjusted for region and
    the unadjusted one differ by at least that much (so answering the unadjusted slope is
    wrong in every variant). Gold: Pearson and Spearman correlations with their p-values,
    the one-way ANOVA F of satisfaction by region with its p-value, region means and
    counts."""
    for _ in range(100):
        region = rng.choice(REGIONS, size=n, p=[0.3, 0.25, 0.25, 0.2])
        gender = rng.choice(["female", "male"], size=n)
        age = np.round(rng.uniform(18, 80, size=n)).astype(int)
        z1 = rng.normal(size=n)
        z2 = rho * z1 + math.sqrt(1 - rho * rho) * rng.normal(size=n)
        log_median = 3.6 if income_median is None else math.log(float(income_median))
        step = np.array([REGIONS.index(r) for r in region])
        log_income = log_median + float(income_spread) * z1
        if income_region:
            log_income = log_income + float(income_region) * (step - 1.5)
        income = np.round(np.exp(log_income), 1)
        shift = step * region_shift
        sat = np.clip(np.round(5.2 + 1.3 * z2 + shift - 1.2, 1), 0, 10)
        if min_confounding <= 0:
            break
        dummies = [(step == k).astype(float) for k in (1, 2, 3)]
        adjusted = np.linalg.lstsq(np.column_stack([np.ones(n), income, *dummies]), sat,
                                   rcond=None)[0][1]
        plain = np.linalg.lstsq(np.column_stack([np.ones(n), income]), sat, rcond=None)[0][1]
        if abs(adjusted - plain) >= min_confounding:
            break
    else:
        raise RuntimeError("no survey sample confounds income with region enough")
    _write_csv(work / path, {"id": list(range(1, n + 1)), "region": list(region),
                             "gender": list(gender), "age": [int(a) for a in age],
                             "income": [float(v) for v in income],
                             "satisfaction": [float(v) for v in sat]})
    code = _R_EMIT + _save_rdata(path, rdata, name, ["region", "gender"]) + """
p <- cor.test(d$income, d$satisfaction)
emit("pearson_r", p$estimate); emit("pearson_p", p$p.value)
emit("pearson_lo", p$conf.int[1]); emit("pearson_hi", p$conf.int[2])
s <- suppressWarnings(cor.test(d$income, d$satisfaction, method = "spearman"))
emit("spearman_rho", s$estimate)
av <- aov(satisfaction ~ region, data = d); emit("intercept_region", coef(av)[1])
emit("anova_r2", summary.lm(av)$r.squared)
a <- summary(av)[[1]]
emit("anova_f", a[["F value"]][1]); emit("anova_p", a[["Pr(>F)"]][1])
emit("anova_df1", a[["Df"]][1]); emit("anova_df2", a[["Df"]][2])
m <- tapply(d$satisfaction, d$region, mean)
for (r in names(m)) emit(paste0("mean_", r), m[r])
k <- kruskal.test(satisfaction ~ region, data = d); emit("kruskal", k$statistic)
emit("mean_income", mean(d$income)); emit("median_income", median(d$income))
k <- table(d$region); for (r in names(k)) emit(paste0("n_", r), k[r])
sdv <- tapply(d$satisfaction, d$region, sd); for (r in names(sdv)) emit(paste0("sd_", r), sdv[r])
wt <- suppressWarnings(wilcox.test(income ~ gender, data = d)); emit("wilcox_w", wt$statistic)
emit("wilcox_p", wt$p.value)
f2 <- lm(satisfaction ~ income + region, data = d); emit("adj_income", coef(f2)["income"])
"""
    gold = _rscript(code, work)
    gold.update({"n": n, "rho": rho})
    return gold


def dose_response(work: Path, rng: np.random.Generator, path: str = "dose.csv",
                  rdata: str | None = None, name: str = "dosefind", per_dose: int = 12,
                  slope: float = 0.35, weight_coef: float = -0.12) -> dict[str, Any]:
    """A dose-finding study: ``subject, dose (mg), weight (kg), response`` (reduction of a
    biomarker, %). Response = 5 + slope * dose + weight_coef * (weight - 70) + N(0, 4²), so the
    coefficients are known. Gold: lm(response ~ dose + weight) coefficients, their standard
    errors and 95% intervals, R², and the simple-regression slope."""
    doses = [0, 10, 20, 40, 80]
    dose = np.repeat(doses, per_dose)
    n = len(dose)
    weight = np.round(rng.normal(74, 12, size=n), 1)
    resp = np.round(5 + slope * dose + weight_coef * (weight - 70) + rng.normal(0, 4, size=n), 2)
    _write_csv(work / path, {"subject": list(range(1, n + 1)), "dose": [int(v) for v in dose],
                             "weight": [float(v) for v in weight],
                             "response": [float(v) for v in resp]})
    code = _R_EMIT + _save_rdata(path, rdata, name, []) + """
f <- lm(response ~ dose + weight, data = d)
cf <- summary(f)$coefficients
emit("b0", cf[1, 1]); emit("b_dose", cf[2, 1]); emit("b_weight", cf[3, 1])
emit("se_dose", cf[2, 2]); emit("t_dose", cf[2, 3]); emit("p_weight", cf[3, 4])
ci <- confint(f); emit("dose_lo", ci[2, 1]); emit("dose_hi", ci[2, 2])
emit("r2", summary(f)$r.squared); emit("adj_r2", summary(f)$adj.r.squared)
f1 <- lm(response ~ dose, data = d); emit("simple_slope", coef(f1)[2])
emit("simple_r2", summary(f1)$r.squared)
m <- tapply(d$response, d$dose, mean)
for (k in names(m)) emit(paste0("mean_dose_", k), m[k])
ed <- (mean(d$response[d$dose == 80]) + mean(d$response[d$dose == 0])) / 2
emit("half_max_response", ed)
emit("ed50", (ed - coef(f1)[1]) / coef(f1)[2])
"""
    gold = _rscript(code, work)
    gold.update({"n": n, "slope": slope, "weight_coef": weight_coef})
    return gold


def exposure(work: Path, rng: np.random.Generator, path: str = "casecontrol.csv",
             rdata: str | None = None, name: str = "cc", n_cases: int = 150,
             n_controls: int = 200, odds_ratio: float = 2.2,
             p_exposed_controls: float = 0.3) -> dict[str, Any]:
    """A case-control study as one row per person: ``id, status (case/control), smoking
    (smoker/non-smoker), age_group``. The odds of smoking among cases are ``odds_ratio`` times
    those among controls. Gold: the 2x2 counts, Pearson's chi-square with and without Yates'
    correction, Fisher's exact odds ratio and p-value, and the sample odds ratio."""
    odds_c = p_exposed_controls / (1 - p_exposed_controls) * odds_ratio
    p_cases = odds_c / (1 + odds_c)
    status = np.array(["case"] * n_cases + ["control"] * n_controls)
    smoke = np.where(status == "case", rng.random(len(status)) < p_cases,
                     rng.random(len(status)) < p_exposed_controls)
    order = rng.permutation(len(status))
    status, smoke = status[order], smoke[order]
    smoking = np.where(smoke, "smoker", "non-smoker")
    agegrp = rng.choice(["<50", "50-64", "65+"], size=len(status))
    _write_csv(work / path, {"id": list(range(1, len(status) + 1)), "status": list(status),
                             "smoking": list(smoking), "age_group": list(agegrp)})
    code = _R_EMIT + _save_rdata(path, rdata, name, ["status", "smoking", "age_group"]) + """
t <- table(d$smoking, d$status)
emit("n_smoker_case", t["smoker", "case"]); emit("n_smoker_control", t["smoker", "control"])
emit("n_nonsmoker_case", t["non-smoker", "case"])
emit("n_nonsmoker_control", t["non-smoker", "control"])
a <- chisq.test(t, correct = FALSE); b <- chisq.test(t)
emit("chisq", a$statistic); emit("chisq_p", a$p.value); emit("chisq_yates", b$statistic)
f <- fisher.test(t); emit("fisher_or", f$estimate); emit("fisher_p", f$p.value)
emit("sample_or", (t["smoker", "case"] * t["non-smoker", "control"]) /
     (t["smoker", "control"] * t["non-smoker", "case"]))
"""
    gold = _rscript(code, work)
    gold.update({"odds_ratio": odds_ratio, "n": n_cases + n_controls})
    return gold


def survival_study(work: Path, rng: np.random.Generator, path: str = "survival.csv",
                   rdata: str | None = None, name: str = "surv", n_per_group: int = 80,
                   median_control: float = 14.0, hazard_ratio: float = 0.6,
                   follow_up: float = 36.0) -> dict[str, Any]:
    """Time-to-event data: ``id, group (control/treated), months, event (1 death, 0
    censored)``. Exponential survival with median ``median_control`` months in the control
    group and hazard ratio ``hazard_ratio`` for the treated; uniform censoring up to
    ``follow_up``. Gold: Kaplan-Meier medians per group, the log-rank chi-square and p-value,
    the Cox hazard ratio."""
    lam0 = math.log(2) / median_control
    group = np.array(["control"] * n_per_group + ["treated"] * n_per_group)
    lam = np.where(group == "treated", lam0 * hazard_ratio, lam0)
    t_event = rng.exponential(1 / lam)
    t_cens = rng.uniform(6, follow_up, size=len(group))
    months = np.round(np.minimum(t_event, t_cens), 2)
    event = (t_event <= t_cens).astype(int)
    order = rng.permutation(len(group))
    _write_csv(work / path, {"id": list(range(1, len(group) + 1)),
                             "group": list(group[order]),
                             "months": [float(v) for v in months[order]],
                             "event": [int(v) for v in event[order]]})
    code = _R_EMIT + _save_rdata(path, rdata, name, ["group"]) + """
suppressMessages(library(survival))
km <- survfit(Surv(months, event) ~ group, data = d)
med <- summary(km)$table[, "median"]
emit("median_control", med["group=control"]); emit("median_treated", med["group=treated"])
lr <- survdiff(Surv(months, event) ~ group, data = d)
emit("logrank_chisq", lr$chisq); emit("logrank_p", pchisq(lr$chisq, 1, lower.tail = FALSE))
cx <- coxph(Surv(months, event) ~ group, data = d)
emit("cox_hr", exp(coef(cx))[1])
emit("events", sum(d$event))
"""
    gold = _rscript(code, work)
    if not all(isinstance(gold.get(k), float) for k in ("median_control", "median_treated")):
        raise ValueError("a Kaplan-Meier median is not reached: lengthen follow_up")
    gold.update({"hazard_ratio": hazard_ratio, "n": 2 * n_per_group})
    return gold


GENERATORS = {"trial": trial, "survey": survey, "dose_response": dose_response,
              "exposure": exposure, "survival_study": survival_study}
