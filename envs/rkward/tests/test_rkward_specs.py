"""Offline checks of the RKWard task specs, their data generators (gold values from the host's
Rscript over the written files), the getters and the R code run inside RKWard.

No X display needed: generators run into tmp_path; the channel's JSON encoder and the state dump
run in a plain ``Rscript`` (the same R as RKWard's), without the Tcl socket.
"""

from __future__ import annotations

import csv
import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
from helpers import requires

from sciagent_gym.evaluation import GETTERS, FinalState, GetterError, evaluate
from sciagent_gym.tasks.spec import TaskSpec
from sciagent_gym.tasks.task import Task
from sciagent_gym.tools import load_tool_getters, load_tool_specs

load_tool_getters("rkward")

from sciagent_gym.envs.rkward import adapter, data  # noqa: E402

SPECS: dict[str, TaskSpec] = load_tool_specs("rkward")
SPEC_IDS = sorted(SPECS)
needs_r = requires("Rscript", tool="rkward")
PATHS = {"work": "/home/user/work", "home": "/home/user", "tmp": "/tmp"}


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open() as fh:
        return list(csv.DictReader(fh))


def test_rkward_specs_cover_the_issue_rules():
    specs = list(SPECS.values())
    assert len(specs) >= 10
    assert {s.difficulty for s in specs} == {"easy", "medium", "hard"}
    assert all(s.modality == "gui" for s in specs)
    assert sum(s.infeasible for s in specs) >= 1
    # file dialogs: the input is generated but not open; the instruction names it
    dialog = [s for s in specs if "file-dialog" in s.tags and not s.open and not s.infeasible]
    assert len(dialog) >= 5, [s.id for s in dialog]
    for s in dialog:
        assert any(".RData" in str(g.args.get("rdata", "")) for g in s.generate)
        assert "Ctrl+O" in s.hints or "Open" in s.hints
    # the program's own console is the real work of most tasks
    assert sum("scripting" in s.tags for s in specs) >= 2
    # at least one answer read off the screen, judged on the final screenshot too
    screen = [s for s in specs if "screen-reading" in s.tags]
    assert screen
    for s in screen:
        getters = [c["getter"]["fn"] if isinstance(c["getter"], dict) else c["getter"]
                   for c in s.evaluator]
        assert any(g.startswith("screen_") for g in getters)
        assert any(isinstance(st, dict) and "read" in st for st in s.gui_oracle)


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_no_credit_without_the_work(spec_id):
    spec = SPECS[spec_id]
    assert spec.evaluator[0].get("gate")
    assert spec.cheats
    for c in spec.evaluator:
        getter = c["getter"] if isinstance(c["getter"], str) else c["getter"]["fn"]
        if c.get("gate") or getter in ("file_exists", "agent_status", "answer_given"):
            assert c["weight"] == 0, (spec_id, c["name"])
        if getter.startswith("answer_number"):
            assert "answer action" in spec.instruction


@pytest.mark.parametrize("spec_id", SPEC_IDS)
def test_gui_oracle_opens_files_through_the_dialog(spec_id):
    """A file-dialog task's GUI oracle waits for RKWard's Open dialog and types the path."""
    spec = SPECS[spec_id]
    if "file-dialog" not in spec.tags or spec.infeasible:
        return
    steps = spec.gui_oracle
    titles = [s["await_window"] for s in steps if isinstance(s, dict) and "await_window" in s]
    assert "^Open — RKWard$" in titles
    assert any(isinstance(s, str) and "{work}/" in s and ".RData" in s for s in steps)


@needs_r
@pytest.mark.parametrize("seed", range(3))
def test_trial_gold_matches_the_file(tmp_path, seed):
    gold = data.trial(tmp_path, np.random.default_rng(seed), rdata="trial.RData",
                      n_placebo=50, n_active=65, effect=7.0)
    rows = _rows(tmp_path / "trial.csv")
    assert len(rows) == gold["n"] == 115 and (tmp_path / "trial.RData").stat().st_size > 500
    w12 = {a: [float(r["sbp_w12"]) for r in rows if r["arm"] == a] for a in ("Active", "Placebo")}
    assert len(w12["Active"]) == 65
    diff = np.mean(w12["Active"]) - np.mean(w12["Placebo"])
    assert gold["diff"] == pytest.approx(diff, abs=1e-9)
    assert gold["sd_active"] == pytest.approx(np.std(w12["Active"], ddof=1), abs=1e-9)
    # Welch's df is not Student's n - 2 (unequal arms), and both t agree with numpy
    assert gold["student_df"] == 113 and abs(gold["welch_df"] - 113) > 0.05
    va, vp = np.var(w12["Active"], ddof=1) / 65, np.var(w12["Placebo"], ddof=1) / 50
    assert abs(gold["welch_t"]) == pytest.approx(abs(diff) / math.sqrt(va + vp), rel=1e-9)
    # the known effect is recovered within sampling error
    assert abs(gold["ancova_arm"] - gold["effect"]) < 6


@needs_r
@pytest.mark.parametrize("seed", range(3))
def test_trial_heterogeneous_arms_separate_welch_from_pooled(tmp_path, seed):
    """trial-welch-ttest's data: a noisier, larger Active arm, so Welch's interval (Active minus
    Placebo, centred on the difference of means) is not Student's pooled one."""
    gold = data.trial(tmp_path, np.random.default_rng(seed), n_placebo=30, n_active=100,
                      effect=8.0, sd_ratio=1.5)
    centre = (gold["welch_ap_lo"] + gold["welch_ap_hi"]) / 2
    assert centre == pytest.approx(gold["diff"], abs=1e-9)
    assert (gold["student_ap_lo"] + gold["student_ap_hi"]) / 2 == pytest.approx(centre, abs=1e-9)
    assert gold["student_ap_lo"] < gold["welch_ap_lo"] - 0.2  # pooled SE too large here
    assert gold["sd_active"] > 1.2 * gold["sd_placebo"]
    plain = data.trial(tmp_path, np.random.default_rng(seed), n_placebo=30, n_active=100,
                       effect=8.0)
    same = data.trial(tmp_path, np.random.default_rng(seed), n_placebo=30, n_active=100,
                      effect=8.0, sd_ratio=1.0)
    assert plain == same  # the default draws exactly as before


@needs_r
def test_survey_income_level_sets_the_adjusted_slope(tmp_path):
    """survey-report-workflow (issue 33): the seeded income level and spread move the
    region-adjusted income slope far beyond the answer's tolerance (0.0005)."""
    slopes = []
    for median, spread in ((8.0, 0.3), (40.0, 0.55)):
        s = data.survey(tmp_path, np.random.default_rng(2), n=240, rho=0.5,
                        income_median=median, income_spread=spread, income_region=0.1,
                        min_confounding=0.002)
        rows = _rows(tmp_path / "survey.csv")
        inc = np.array([float(r["income"]) for r in rows])
        sat = np.array([float(r["satisfaction"]) for r in rows])
        assert np.median(inc) == pytest.approx(median, rel=0.15)
        # the unadjusted slope (a negative's answer) is off by 4 x the answer's tolerance
        assert abs(np.polyfit(inc, sat, 1)[0] - s["adj_income"]) >= 0.002
        slopes.append(s["adj_income"])
    assert slopes[0] > 0 and slopes[1] > 0 and slopes[0] > 5 * slopes[1]
    params = SPECS["rkward/survey-report-workflow"].params
    assert params["income"]["float"] == [5, 40] and params["spread"]["float"] == [0.25, 0.6]
    assert params["gradient"]["float"] == [0.1, 0.3]


@needs_r
def test_survey_dose_exposure_and_survival_gold(tmp_path):
    rng = np.random.default_rng(5)
    s = data.survey(tmp_path, rng, n=200, rho=0.5)
    rows = _rows(tmp_path / "survey.csv")
    inc = np.array([float(r["income"]) for r in rows])
    sat = np.array([float(r["satisfaction"]) for r in rows])
    assert s["pearson_r"] == pytest.approx(np.corrcoef(inc, sat)[0, 1], abs=1e-9)
    assert s["anova_df1"] == 3 and s["anova_df2"] == 196 and s["anova_f"] > 0
    d = data.dose_response(tmp_path, rng, per_dose=10, slope=0.4, weight_coef=-0.1)
    rows = _rows(tmp_path / "dose.csv")
    x = np.array([[1, float(r["dose"]), float(r["weight"])] for r in rows])
    y = np.array([float(r["response"]) for r in rows])
    beta = np.linalg.lstsq(x, y, rcond=None)[0]
    assert d["b_dose"] == pytest.approx(beta[1], abs=1e-9)
    assert d["b_weight"] == pytest.approx(beta[2], abs=1e-9)
    assert abs(d["b_dose"] - 0.4) < 0.1
    e = data.exposure(tmp_path, rng, n_cases=120, n_controls=180)
    rows = _rows(tmp_path / "casecontrol.csv")
    t = np.array([[sum(r["smoking"] == a and r["status"] == b for r in rows)
                   for b in ("case", "control")] for a in ("smoker", "non-smoker")], float)
    expect = t.sum(1, keepdims=True) * t.sum(0, keepdims=True) / t.sum()
    assert e["chisq"] == pytest.approx(((t - expect) ** 2 / expect).sum(), rel=1e-9)
    assert e["n_smoker_case"] == t[0, 0]
    v = data.survival_study(tmp_path, rng, n_per_group=60, follow_up=60.0)
    assert v["n"] == 120 and 0 < v["median_control"] < v["median_treated"] + 20 < 100
    assert 0 < v["cox_hr"] < 2


def _state(tmp_path: Path, objects: dict, answer: str | None = None) -> FinalState:
    return FinalState(work_dir=tmp_path, app_state={"wd": "/w", "objects": objects},
                      agent_status="done", answer=answer)


def test_r_object_and_csv_lookup_getters(tmp_path):
    state = _state(tmp_path, {"welch": {"class": "htest", "statistic": -4.5,
                                        "estimate": {"mean in group Active": 140.0}}})
    assert GETTERS["r_object"](state, "welch", "statistic") == -4.5
    assert GETTERS["r_object"](state, "welch", "statistic", absolute=True) == 4.5
    assert GETTERS["r_object"](state, "welch", "estimate.mean in group Active") == 140.0
    with pytest.raises(GetterError):
        GETTERS["r_object"](state, "fit")
    with pytest.raises(GetterError):
        GETTERS["r_object"](state, "welch", "class", absolute=True)
    with pytest.raises(GetterError):
        GETTERS["r_object"](FinalState(work_dir=tmp_path, app_state=None), "welch")
    (tmp_path / "s.csv").write_text('"arm","n","mean","sd"\n"Active",70,140.5,11.2\n'
                                    '"Placebo",60,149.1,10.4\n')
    assert GETTERS["csv_lookup"](state, "s.csv", "arm", "Placebo", "mean") == 149.1
    with pytest.raises(GetterError):
        GETTERS["csv_lookup"](state, "s.csv", "arm", "All", "mean")



def test_group_summary_reads_the_console_and_the_dialog_layouts(tmp_path):
    state = _state(tmp_path, {})
    summary = GETTERS["group_summary"]
    (tmp_path / "s.csv").write_text('"arm","n","mean","sd"\n"Active",70,140.5,11.2\n'
                                    '"Placebo",60,149.1,10.4\n')
    assert summary(state, "s.csv", "Placebo", "sd", "sbp_w12") == 10.4
    # Descriptive Statistics, grouped, "Save results to file" (write.csv with row names)
    (tmp_path / "d.csv").write_text(
        '"","Object","mean","min","max","standard deviation","total length (N)",'
        '"number of NAs"\n"1","sbp_w12.Active",133.0,99.5,151.4,11.37,44,0\n'
        '"2","sbp_w12.Placebo",144.7,124,182.2,13.01,45,0\n')
    assert summary(state, "d.csv", "Active", "n", "sbp_w12") == 44
    assert summary(state, "d.csv", "Placebo", "mean", "sbp_w12") == 144.7
    assert summary(state, "d.csv", "Placebo", "sd", "sbp_w12") == 13.01
    with pytest.raises(GetterError):  # another variable summarised
        summary(state, "d.csv", "Active", "mean", "sbp_base")
    (tmp_path / "r.csv").write_text('"region","n","mean","sd"\n"North",50,6.1,1.2\n')
    assert summary(state, "r.csv", "North", "n", "satisfaction", key_column="region") == 50


def _output_page(*sections: tuple[str, list[str], list[list[str]]]) -> str:
    """RKWard's output page as its dialogs write it (rk.header, then rk.results)."""
    html = "<pre>RKWard output initialized</pre>\n"
    for title, params, rows in sections:
        html += (f'<h1><a id="x" name="xn" title="t">{title}</a></h1>\n<h2>Parameters</h2>\n<ul>'
                 + "".join(f"<li>{p}</li>\n" for p in params) + '</ul>\n<table border="1">\n'
                 + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>\n" for r in rows)
                 + '</table>\n<a href="rkward://runplugin/x">Run again</a><hr />\n')
    return html


CORR = ("Correlation Matrix", ["Method: Pearson's product-moment correlation",
                               "Exclude missing values: pairwise"],
        [["Coefficient", "income", "satisfaction"], ["income      ", "1.0000000", "0.2238308"],
         ["satisfaction", "0.2238308", "1.0000000"]])


def test_output_page_getters(tmp_path):
    spearman = ("Correlation Matrix", ["Method: Spearman's rho"],
                [["Coefficient", "income", "satisfaction"], ["income", "1", "0.25"]])
    state = FinalState(work_dir=tmp_path, app_state={"objects": {},
                                                     "output": _output_page(CORR, spearman)})
    cell = GETTERS["rk_output_cell"]
    assert cell(state, "Correlation Matrix", "satisfaction", row="income") == 0.25  # the latest
    pearson = {"title": "Correlation Matrix", "column": "satisfaction", "row": "income",
               "params": ["Method: Pearson's product-moment correlation"]}
    assert cell(state, **pearson) == 0.2238308
    with pytest.raises(GetterError):
        cell(state, "Correlation Matrix", "age", row="income")
    with pytest.raises(GetterError):
        cell(state, "Welch Two Sample t-test", "t")
    assert GETTERS["r_result"](state, "ct", "estimate.cor", pearson) == 0.2238308
    # an object kept under the name wins over the output page
    state.app_state["objects"]["ct"] = {"estimate": {"cor": 0.5}}
    assert GETTERS["r_result"](state, "ct", "estimate.cor", pearson) == 0.5


@needs_r
def test_welch_task_accepts_the_t_test_dialogs_output(tmp_path):
    task = _staged("rkward/trial-welch-ttest", 0, tmp_path)
    g = task.gold["trial"]
    answer = f"lower = {g['welch_ap_lo']:.3f}, upper = {g['welch_ap_hi']:.3f}"

    def page(title: str, equal: str, df: float, t: float, var: str = "sbp_w12") -> str:
        return _output_page((title, [f"Comparing: {var}", f"against: {var}",
                                     "H1: true difference in means is not equal to 0",
                                     f"Equal variances: {equal}"],
                             [["Variable Name", "estimated mean", "degrees of freedom", "t", "p"],
                              [f"{var}<br/>{var}", "134.6<br/>143.9", f"{df:.7g}", f"{t:.7g}",
                               "0.0004"]]))

    def score(output: str) -> float:
        state = FinalState(work_dir=tmp_path, agent_status="done", answer=answer,
                           app_state={"objects": {"trial": {"nrow": g["n"]}}, "output": output})
        return evaluate(task.criteria(), state).score

    assert score(page("Welch Two Sample t-test", "not assumed", g["welch_df"],
                      -g["welch_t"])) == 1.0
    assert score(page(" Two Sample t-test", "assumed", g["student_df"], -g["student_t"])) < 1.0
    assert score(page("Welch Two Sample t-test", "not assumed", g["welch_df"], -g["welch_t"],
                      var="sbp_base")) < 1.0
    assert score("") < 1.0
    task.cleanup()


def _staged(spec_id: str, seed: int, work: Path) -> Task:
    task = Task(SPECS[spec_id], seed, _generators(),
                {**PATHS, "work": str(work)})
    task.stage(work)
    return task


def _generators():
    return data.GENERATORS


@needs_r
def test_welch_task_scores_the_right_session_and_not_the_wrong_ones(tmp_path):
    task = _staged("rkward/trial-welch-ttest", 0, tmp_path)
    g = task.gold["trial"]
    good = {"trial": {"nrow": g["n"]},
            "welch": {"parameter": g["welch_df"], "statistic": -g["welch_t"]}}
    answer = f"lower = {g['welch_ap_lo']:.3f}, upper = {g['welch_ap_hi']:.3f}"
    assert evaluate(task.criteria(), _state(tmp_path, good, answer)).score == 1.0
    student = {"trial": {"nrow": g["n"]},
               "welch": {"parameter": g["student_df"], "statistic": g["student_t"]}}
    pooled = f"lower = {g['student_ap_lo']:.3f}, upper = {g['student_ap_hi']:.3f}"
    assert evaluate(task.criteria(), _state(tmp_path, student, answer)).score < 1.0
    # Student's pooled test throughout scores nothing; its interval with Welch's object half
    assert evaluate(task.criteria(), _state(tmp_path, student, pooled)).score == 0.0
    assert evaluate(task.criteria(), _state(tmp_path, good, pooled)).score == pytest.approx(2 / 3)
    flipped = f"lower = {-g['welch_ap_hi']:.3f}, upper = {-g['welch_ap_lo']:.3f}"
    assert evaluate(task.criteria(), _state(tmp_path, good, flipped)).score < 1.0
    # the difference of means alone is not the answer
    assert evaluate(task.criteria(), _state(tmp_path, good, f"{g['diff']:.3f}")).score \
        == pytest.approx(2 / 3)
    # the bounds in the other order are not the interval
    swapped = f"{g['welch_ap_hi']:.3f}, {g['welch_ap_lo']:.3f}"
    assert evaluate(task.criteria(), _state(tmp_path, good, swapped)).score < 1.0
    assert evaluate(task.criteria(), _state(tmp_path, {}, answer)).score == 0.0
    task.cleanup()


@needs_r
def test_state_dump_and_json_encoder_in_plain_r(tmp_path):
    """The channel's JSON encoder over the state dump, in Rscript: valid JSON with the
    summaries the getters read."""
    channel = (Path(adapter.__file__).parent / "inside" / "channel.R").read_text()
    start = channel.index("    jstr <- function")
    end = channel.index("    unhex <- function")
    encoder = channel[start:end]
    code = ("trial <- data.frame(arm = factor(c('A', 'B', 'A', 'B')), y = c(1, 2, 3, 5.5))\n"
            "welch <- t.test(y ~ arm, data = trial)\nfit <- lm(y ~ arm, data = trial)\n"
            "dialog_fit <- lm(trial[['y']] ~ trial[['arm']])\n"
            "av <- aov(y ~ arm, data = trial)\n"
            "s <- 'x\"y\\\\z'\n"
            f"local({{\n{encoder}\n    cat(json(eval(parse(text = readLines('dump.R')))))\n}})\n")
    (tmp_path / "dump.R").write_text(adapter.STATE_CODE)
    out = subprocess.run(["Rscript", "--vanilla", "-e", code], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60, check=True).stdout
    dump = json.loads(out)
    objects = dump["objects"]
    assert objects["trial"]["nrow"] == 4 and objects["trial"]["columns"]["y"]["mean"] == 2.875
    assert objects["trial"]["columns"]["arm"]["counts"] == {"A": 2, "B": 2}
    assert objects["welch"]["class"] == "htest" and objects["welch"]["parameter"] > 0
    assert set(objects["fit"]["coefficients"]) == {"(Intercept)", "armB"}
    # the Linear Regression dialog's terms (trial[["arm"]]B) are keyed as the console's
    assert objects["dialog_fit"]["coefficients"] == objects["fit"]["coefficients"]
    assert objects["s"]["values"] == 'x"y\\z'
    # an aov fit carries the R squared of its linear model, as the dialog's lm does
    assert objects["av"]["r_squared"] == pytest.approx(objects["fit"]["r_squared"], abs=1e-12)
    assert 0 < objects["av"]["r_squared"] < 1
    assert dump["output"] == ""  # no RKWard here: no output page


def test_long_horizon_tasks_are_staged_and_long():
    lh = [s for s in SPECS.values() if "long-horizon" in s.tags]
    assert len(lh) >= 2
    for spec in lh:
        stages = {c.get("stage") for c in spec.evaluator}
        assert len(stages) >= 3
        steps = {Task(spec, v, {}, PATHS).oracle_steps for v in range(8)}
        assert 25 <= min(steps) and max(steps) <= 100 and spec.max_steps >= 1.5 * max(steps)
        assert {"stopped-after-open", "stopped-after-analyse"} <= set(spec.negatives)


@needs_r
def test_trial_workflow_scores_partial_credit_by_stage(tmp_path):
    """The negatives that stop after stage 1 and after stage 2 score strictly between 0 and 1,
    the second above the first, and the whole workflow scores 1."""
    task = _staged("rkward/trial-analysis-workflow", 0, tmp_path)
    g = task.gold["t"]
    opened = {"trial": {"nrow": g["n"], "columns": {"sbp_w12": {"mean": g["mean_w12"]}}}}
    responder = {"counts": {"FALSE": g["n"] - g["n_resp"], "TRUE": g["n_resp"]}}
    analysed = {"trial": {"nrow": g["n"], "columns": {"sbp_w12": {"mean": g["mean_w12"]},
                                                      "responder": responder}},
                "welch": {"parameter": g["welch_df"]},
                "ancova": {"coefficients": {"age": g["ancova_age"]}},
                "resp_test": {"statistic": g["resp_chisq"]}}
    s1 = evaluate(task.criteria(), _state(tmp_path, opened)).score
    s2 = evaluate(task.criteria(), _state(tmp_path, analysed)).score
    assert 0 < s1 < s2 < 1
    (tmp_path / "arm_summary.csv").write_text(
        f"arm,n,mean,sd\nActive,{g['n_active']},{g['mean_active']},{g['sd_active']}\n"
        f"Placebo,{g['n_placebo']},{g['mean_placebo']},{g['sd_placebo']}\n")
    (tmp_path / "responders.csv").write_text(
        f"arm,n,responders,rate\nActive,1,1,{g['resp_active']}\n"
        f"Placebo,1,1,{g['resp_placebo']}\n")
    code = ("load('trial.RData'); png('sbp_box.png', width = 800, height = 600); "
            "boxplot(sbp_w12 ~ arm, data = trial, main = 'Week-12 SBP by arm', "
            "ylab = 'SBP (mmHg)'); invisible(dev.off())")
    subprocess.run(["Rscript", "--vanilla", "-e", code], cwd=tmp_path, check=True, timeout=60)
    no_ci = evaluate(task.criteria(), _state(tmp_path, analysed, f"{g['ancova_arm']:.4f}"))
    assert s2 < no_ci.score < 1.0
    (tmp_path / "ancova_ci.csv").write_text(
        f"arm,estimate,lower,upper\nActive,{g['ancova_arm']},{g['ancova_lo']},{g['ancova_hi']}\n")
    full = evaluate(task.criteria(), _state(tmp_path, analysed, f"{g['ancova_arm']:.4f}"))
    assert full.score == 1.0
    # another variable drawn is not the requested plot
    code = code.replace("sbp_w12 ~", "sbp_base ~")
    subprocess.run(["Rscript", "--vanilla", "-e", code], cwd=tmp_path, check=True, timeout=60)
    other = evaluate(task.criteria(), _state(tmp_path, analysed, f"{g['ancova_arm']:.4f}"))
    assert other.score < 1.0
    task.cleanup()


@needs_r
def test_chisq_task_accepts_the_crosstabs_dialogs_output(tmp_path):
    """The Crosstabs dialog prints its chi-square under the section "Crosstabs (n to 1)"; the
    Monte Carlo p-value comes with the uncorrected statistic, the asymptotic one (2x2) with
    Yates' correction."""
    task = _staged("rkward/casecontrol-chisq", 0, tmp_path)
    g = task.gold["e"]

    def score(stat: float, dep: str = "smoking") -> float:
        page = _output_page(("Crosstabs (n to 1)", [
            f"Dependent: {dep}", "Independent: status",
            "Method: Pearson's Chi-squared test with simulated p-value (based on 2000 "
            "replicates)"], [["Statistic", "df", "p"], [f"{stat:.7g}", "NA", "0.2"]]))
        state = FinalState(work_dir=tmp_path, agent_status="done", answer=f"{stat:.4f}",
                           app_state={"objects": {"cc": {"nrow": g["n"]}}, "output": page})
        return evaluate(task.criteria(), state).score

    assert score(g["chisq"]) == 1.0
    assert score(g["chisq_yates"]) == 0.0
    assert score(g["chisq"], dep="age_group") == 0.5
    task.cleanup()


@needs_r
def test_anova_task_accepts_the_regression_dialogs_model(tmp_path):
    task = _staged("rkward/survey-region-anova", 0, tmp_path)
    g = task.gold["s"]
    fit = {"class": ["lm"], "coefficients": {"(Intercept)": g["intercept_region"]},
           "r_squared": g["anova_r2"]}
    answer = f"{g['anova_f']:.4f}"
    ok = evaluate(task.criteria(), _state(tmp_path, {"survey": {"nrow": g["n"]}, "fit": fit},
                                          answer))
    assert ok.score == 1.0
    fit["r_squared"] = g["anova_r2"] + 0.01  # another model of the same intercept
    assert evaluate(task.criteria(), _state(tmp_path, {"survey": {"nrow": g["n"]},
                                                       "fit": fit}, answer)).score < 1.0
    task.cleanup()
