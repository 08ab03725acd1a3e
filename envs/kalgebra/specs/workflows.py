"""The long-horizon KAlgebra families, scored in stages: a cubic's curve sketching (turning
points, inflection, values, plot, session script) and a damped oscillator's report
(measurements, a plot with its envelope, the session script)."""

from __future__ import annotations

from sciagent_gym.envs.kalgebra.specs.criteria import (
    answer,
    imported,
    is_log_gate,
    log_value,
    plot_gate,
    plotted,
    spec,
)
from sciagent_gym.envs.kalgebra.specs.steps import (
    FP,
    FPP,
    NT,
    TAB_CALC,
    click,
    console,
    export_log,
    load_script,
    main,
    plot,
    read_ans,
    save_plot,
    save_script,
)


def function_study() -> dict:
    log, svg, script = "study-report.html", "study.svg", "study-session.kal"
    steps = [*main(), *load_script("study.kal"),
             *console(FP, NT, "x1:=nt(-5,30)", "x2:=nt(6,30)",
                      "(fp(x1+0.001)-fp(x1-0.001))/0.002", "(fp(x2+0.001)-fp(x2-0.001))/0.002",
                      FPP, "x3:=(x1+x2)/2", "f(x3)", "f(x2)", "f(x1)"),
             *save_script(script), read_ans()]
    plots = [*plot("f(x)", "fp(x)", "fpp(x)"), *save_plot(svg), click(*TAB_CALC)]
    return spec(
        "function-study", title="Curve sketching: turning points, values and plot",
        instruction="study.kal in the work folder is a KAlgebra console script that defines a "
                    "cubic f(x). Study it with KAlgebra: load the script (Calculator > Load "
                    "Script...); in the console, locate both turning points of f (where f'(x) = "
                    "0) to at least four decimals, classify them with the second derivative and "
                    "evaluate f at each; locate the inflection point (where f''(x) = 0) and "
                    "evaluate f there; plot f, its derivative f' and its second derivative f'' "
                    "together in the 2D Graph tab and save that plot as {work}/" + svg +
                    "; finally save the console as a "
                    "script {work}/" + script + " and export the console log as {work}/" + log +
                    ". Give the local maximum value of f with the answer action.",
        hints="The Variables panel shows f's definition; diff(expression : x) differentiates an "
              "expression and x->(f(x+h)-f(x-h))/(2*h) numerically; a recursive lambda with "
              "piecewise { n=0 ? x, ? ... } iterates Newton's method. 2D Graph > Add for each "
              "curve, 2D Graph > Save with a .svg name; Calculator > Save Script... and Export "
              "Log....",
        difficulty="hard", tags=["calculus", "extremum", "file-dialog", "console", "plot",
                                 "export", "long-horizon"],
        max_steps=50,
        params={"c": {"int": [-3, 3]}},
        setup={"generate": [{"fn": "study_script", "as": "study",
                             "args": {"path": "study.kal", "c": "$c"}}],
               "protect": ["study.kal"]},
        evaluator={"stages": [
            {"name": "open", "criteria": [is_log_gate(log), imported(log, "study.kal")]},
            {"name": "turning-points", "blocks_from": ["open"], "criteria": [
                log_value("the log locates the local maximum", log, [], "$gold.study.r1", 1e-4,
                          0.0, "f'(r1) = 0, r1 < r2"),
                log_value("the log locates the local minimum", log, [], "$gold.study.r2", 1e-4,
                          0.0, "f'(r2) = 0")]},
            {"name": "inflection", "blocks_from": ["open"], "criteria": [
                log_value("the log locates the inflection point", log, [],
                          "$gold.study.inflection", 1e-4, 0.0, "f''(x) = 0: (r1 + r2)/2"),
                log_value("the log holds f at the inflection point", log, ["f("],
                          "$gold.study.f_inflection", 1e-5, 0.0,
                          "f((r1 + r2)/2), the mean of f at the turning points; 1e-5 because "
                          "f' is not 0 there, so the turning points' own error shows")]},
            {"name": "values", "blocks_from": ["turning-points"], "criteria": [
                log_value("the log holds f at the maximum", log, ["f("],
                          "$gold.study.max_value", 1e-6),
                log_value("the log holds f at the minimum", log, ["f("],
                          "$gold.study.min_value", 1e-6),
                answer("the answered maximum value", "$gold.study.max_value", 1e-4)]},
            {"name": "plot", "blocks_from": ["open"], "criteria": [
                plot_gate(svg, 2),
                plotted("the plot shows f", svg, "$gold.study.spec", "the cubic of study.kal"),
                plotted("the plot shows f'", svg, "$gold.study.derivative_spec",
                        "a (x - r1)(x - r2)"),
                plotted("the plot shows f''", svg, "$gold.study.second_derivative_spec",
                        "a (2x - r1 - r2)")]},
            {"name": "session-script", "blocks_from": ["values"], "criteria": [
                {"name": "the saved session script evaluates f at a turning point", "weight": 1,
                 "getter": {"fn": "file_text", "path": script},
                 "check": {"op": "regex", "pattern": "(?m)^\\s*f\\("}}]}]},
        oracle=[*steps, *plots, *export_log(log), "DONE"],
        negatives={
            "stop-after-open": [*main(), *load_script("study.kal"), *export_log(log), "DONE"],
            "stop-after-turning-points": [*main(), *load_script("study.kal"),
                                          *console(FP, NT, "x1:=nt(-5,30)", "x2:=nt(6,30)"),
                                          *export_log(log), "DONE"],
            "no-plot": [*steps, *export_log(log), "DONE"],
            "no-second-derivative-plot": [*steps, *plot("f(x)", "fp(x)"), *save_plot(svg),
                                          click(*TAB_CALC), *export_log(log), "DONE"]})


def oscillator_report() -> dict:
    log, svg, script = "oscillator-report.html", "oscillator.svg", "oscillator-session.kal"
    measure = console("y({t0})", "A*exp(-g*{t0})", "pi/(2*w)", "y(pi/(2*w))", "2*pi/w")
    return spec(
        "oscillator-report", title="Damped oscillator: measure, plot with envelope, report",
        instruction="oscillator.kal in the work folder is a KAlgebra console script that "
                    "defines a damped oscillation y(t) = A*exp(-g*t)*cos(w*t) with its constants. "
                    "Analyse it in KAlgebra: load the script (Calculator > Load Script...); in the "
                    "console evaluate y({t0}), the envelope A*exp(-g*t) at t = {t0}, the first "
                    "zero crossing pi/(2w) (check y there) and the period 2*pi/w; plot y together "
                    "with its envelope curves A*exp(-g*x) and -A*exp(-g*x) in the 2D Graph tab and "
                    "save the plot as {work}/" + svg + "; save the console as a script {work}/" +
                    script + " and export the console log as {work}/" + log + ". Give the "
                    "period with the answer action.",
        hints="Calculator > Load Script... (Ctrl+L); the script's names (A, g, w, y) can be "
              "used in the console and in the 2D Graph (y(x)); 2D Graph > Add for each curve, "
              "2D Graph > Save with a .svg name; Calculator > Save Script... and Export Log....",
        difficulty="hard", tags=["physics", "oscillation", "file-dialog", "console", "plot",
                                 "export", "long-horizon"],
        max_steps=45,
        params={"t0": {"float": [0.5, 4.0], "round": 2}},
        setup={"generate": [{"fn": "damped_script", "as": "osc",
                             "args": {"path": "oscillator.kal", "t0": "$t0"}}],
               "protect": ["oscillator.kal"]},
        evaluator={"stages": [
            {"name": "open", "criteria": [is_log_gate(log), imported(log, "oscillator.kal")]},
            {"name": "measure", "blocks_from": ["open"], "criteria": [
                log_value("the log holds y(t0)", log, [], "$gold.osc.value", 1e-6),
                log_value("the log holds the envelope at t0", log, [], "$gold.osc.envelope",
                          1e-6),
                log_value("the log holds the first zero crossing", log, [],
                          "$gold.osc.first_zero", 1e-6),
                log_value("the log holds the period", log, [], "$gold.osc.period", 1e-6)]},
            {"name": "plot", "blocks_from": ["open"], "criteria": [
                plot_gate(svg, 2),
                plotted("the plot shows y", svg, "$gold.osc.spec", "A exp(-g x) cos(w x)"),
                plotted("the plot shows the envelope", svg, "$gold.osc.envelope_spec",
                        "A exp(-g x)")]},
            {"name": "report", "blocks_from": ["measure"], "criteria": [
                answer("the answered period", "$gold.osc.period", 1e-4),
                {"name": "the saved session script computes the period", "weight": 1,
                 "getter": {"fn": "file_text", "path": script},
                 "description": "KAlgebra saves inputs in its own form: 2*pi/w as (2*pi)/w",
                 "check": {"op": "regex",
                           "pattern": "\\(?\\s*2\\s*\\*\\s*pi\\s*\\)?\\s*/\\s*w"}}]}]},
        oracle=[*main(), *load_script("oscillator.kal"), *measure, *save_script(script),
                read_ans(), *plot("y(x)", "A*exp(-g*x)", "-A*exp(-g*x)"), *save_plot(svg),
                click(*TAB_CALC), *export_log(log), "DONE"],
        negatives={
            "stop-after-open": [*main(), *load_script("oscillator.kal"), *export_log(log),
                                "DONE"],
            "stop-after-measure": [*main(), *load_script("oscillator.kal"), *measure,
                                   *export_log(log), "DONE"],
            "envelope-missing": [*main(), *load_script("oscillator.kal"), *measure,
                                 *save_script(script), read_ans(), *plot("y(x)"),
                                 *save_plot(svg), click(*TAB_CALC), *export_log(log),
                                 "DONE"]})
