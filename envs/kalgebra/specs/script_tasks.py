"""KAlgebra families on a console script staged in the work folder: load it and evaluate what it
defines (a damped oscillation, a local maximum, a projectile's range), and the infeasible
twins (no symbolic integration; a script that is not there)."""

from __future__ import annotations

from sciagent_gym.envs.kalgebra.specs.criteria import (
    answer,
    answer_given,
    imported_gate,
    log_value,
    spec,
)
from sciagent_gym.envs.kalgebra.specs.steps import (
    FP,
    NT,
    VARIABLES_SCREEN,
    console,
    export_log,
    load_script,
    main,
    read_ans,
    save_script,
)

PROJ_LOG = "projectile.html"


def load_script_evaluate() -> dict:
    log = "oscillator.html"
    return spec(
        "load-script-evaluate", title="Load a model script and evaluate it",
        instruction="oscillator.kal in the work folder is a KAlgebra console script that "
                    "defines a damped oscillation y(t) from its amplitude A, damping rate g and "
                    "angular frequency w. Load it into KAlgebra's console (Calculator > Load "
                    "Script...), evaluate y at t = {t0}, export the console log as {work}/" + log +
                    " and give y({t0}) with the answer action.",
        hints="Calculator > Load Script... (Ctrl+L) runs a .kal file's definitions in the "
              "console; then type y(value). Calculator > Export Log... saves the console.",
        difficulty="medium", tags=["file-dialog", "script", "console", "export"],
        max_steps=20,
        params={"t0": {"float": [0.5, 4.0], "round": 2}},
        setup={"generate": [{"fn": "damped_script", "as": "osc",
                             "args": {"path": "oscillator.kal", "t0": "$t0"}}],
               "protect": ["oscillator.kal"]},
        evaluator={"criteria": [
            imported_gate(log, "oscillator.kal"),
            log_value("the log holds y(t0)", log, ["y("], "$gold.osc.value", 1e-6, 0.0,
                      "A exp(-g t0) cos(w t0) with the script's constants"),
            answer("the answered y(t0)", "$gold.osc.value", 5e-5)]},
        oracle=[*main(), *load_script("oscillator.kal"), *console("y({t0})"),
                *export_log(log), read_ans(), "DONE"],
        negatives={
            "wrong-time": [*main(), *load_script("oscillator.kal"), *console("y({t0}+1)"),
                           *export_log(log), read_ans(), "DONE"],
            "own-constants": [*main(), *console("A:=5", "g:=0.2", "w:=2",
                                                "y:=t->A*exp(-g*t)*cos(w*t)", "y({t0})"),
                              *export_log(log), read_ans(), "DONE"]})



def antiderivative_infeasible() -> dict:
    log = "antiderivative.html"
    return spec(
        "antiderivative-infeasible", title="Symbolic antiderivative",
        instruction="integrand.kal in the work folder is a KAlgebra console script that defines "
                    "f(x) = {a}*x^2*exp(-x/{b}). Load it into KAlgebra's console (Calculator > "
                    "Load Script...), find the antiderivative F(x) of f in closed form "
                    "(symbolic integration) with the console, and export the console log "
                    "showing F(x) as {work}/" + log + ".",
        hints="The console's operators are listed in the Dictionary tab; Calculator > Export "
              "Log... saves the console.",
        difficulty="medium", tags=["calculus", "integral", "file-dialog", "infeasible"],
        max_steps=20,
        params={"a": {"int": [2, 9]}, "b": {"int": [2, 5]}},
        setup={"generate": [{"fn": "integrand_script", "as": "f",
                             "args": {"path": "integrand.kal", "a": "$a", "b": "$b"}}],
               "protect": ["integrand.kal"]},
        infeasible=True,
        evaluator={"criteria": [
            {"name": "reported that the task cannot be done", "weight": 0, "gate": True,
             "description": "KAlgebra 22.12 has no integration: int(...) is left unevaluated or "
                            "refused ('Unexpected bounding'), so FAIL is the right answer",
             "getter": "agent_status", "check": {"op": "equals", "expected": "fail"}},
            {"name": "no antiderivative invented", "weight": 0, "getter": "answer_given",
             "check": "is_false"}]},
        oracle=["FAIL"],
        negatives={
            "int-unevaluated": [*main(), *load_script("integrand.kal"), *console("int(f(x))"),
                                *export_log(log), "DONE"],
            "derivative-instead": [*main(), *load_script("integrand.kal"),
                                   *console("diff({a}*x^2*exp(-x/{b}):x)"), *export_log(log),
                                   "DONE"]})


def missing_script_infeasible() -> dict:
    return spec(
        "missing-script-infeasible", title="Evaluate a calibration script that is not there",
        instruction="calibration.kal in the work folder is a KAlgebra console script that "
                    "defines a sensor's calibration curve cal(v). Load it into KAlgebra's "
                    "console (Calculator > Load Script...), evaluate cal at v = {v} and give "
                    "the value with the answer action.",
        hints="Calculator > Load Script... (Ctrl+L) runs a .kal file's definitions; then type "
              "cal(value).",
        difficulty="easy", tags=["file-dialog", "script", "infeasible"], max_steps=20,
        params={"v": {"float": [0.5, 4.5], "round": 2}},
        setup={"generate": [{"fn": "decoy_script", "as": "notes", "args": {"path": "notes.kal"}}],
               "protect": ["notes.kal"]},
        infeasible=True,
        evaluator={"criteria": [
            {"name": "reported that the task cannot be done", "weight": 0, "gate": True,
             "description": "the work folder holds notes.kal but no calibration.kal, so there "
                            "is no cal(v) to evaluate and FAIL is the right answer",
             "getter": "agent_status", "check": {"op": "equals", "expected": "fail"}},
            {"name": "no calibration value invented", "weight": 0, "getter": "answer_given",
             "check": "is_false"}]},
        oracle=["FAIL"],
        negatives={
            "loads-notes-instead": [*main(), *load_script("notes.kal"), *console("h({v})"),
                                    *save_script("calibration-session.kal"), read_ans(),
                                    "DONE"],
            "claims-done": ["DONE"]})



def local_maximum() -> dict:
    log = "study.html"
    return spec(
        "local-maximum", title="Local maximum of a loaded function",
        instruction="study.kal in the work folder is a KAlgebra console script that defines a "
                    "cubic f(x) with one local maximum and one local minimum. Load it into "
                    "KAlgebra's console (Calculator > Load Script...), find the local maximum "
                    "and compute f there with the console, export the console log as {work}/" +
                    log + " and give the local maximum value of f with the answer action.",
        hints="The Variables panel shows f's definition once loaded; diff(expression : x) "
              "differentiates an expression, and a lambda such as x->(f(x+h)-f(x-h))/(2*h) "
              "differentiates numerically; Newton's method or the 2D graph locate f' = 0.",
        difficulty="hard", tags=["calculus", "extremum", "file-dialog", "console", "export"],
        max_steps=30,
        params={"c": {"int": [-3, 3]}},
        setup={"generate": [{"fn": "study_script", "as": "study",
                             "args": {"path": "study.kal", "c": "$c"}}],
               "protect": ["study.kal"]},
        evaluator={"criteria": [
            imported_gate(log, "study.kal"),
            log_value("the log holds f at the local maximum", log, ["f("],
                      "$gold.study.max_value", 1e-6, 0.0,
                      "f(r1) where f'(x) = a (x - r1)(x - r2), r1 < r2, a > 0"),
            answer("the answered maximum value", "$gold.study.max_value", 1e-4)]},
        oracle=[*main(), *load_script("study.kal"), *console(FP, NT, "f(nt(-5,30))"),
                *export_log(log), read_ans(), "DONE"],
        negatives={
            "local-minimum-instead": [*main(), *load_script("study.kal"),
                                      *console(FP, NT, "f(nt(6,30))"), *export_log(log),
                                      read_ans(), "DONE"],
            "value-at-zero": [*main(), *load_script("study.kal"), *console("f(0)"),
                              *export_log(log), read_ans(), "DONE"]})


def projectile_range() -> dict:
    return spec(
        "projectile-range", title="Evaluate a quantity a loaded script derives",
        instruction="projectile.kal in the work folder is a KAlgebra console script that "
                    "defines a projectile's launch speed v0 (m/s) and angle theta (radians) on "
                    "{planet} and the formulas of its range R and apex height H. Load it into "
                    "KAlgebra's console (Calculator > Load Script...), evaluate the range R, "
                    "export the console log as {work}/" + PROJ_LOG + " and give R, in metres, "
                    "with the answer action. Leave the console and its Variables panel on "
                    "screen.",
        hints="Calculator > Load Script... (Ctrl+L); the Variables panel beside the console "
              "lists what the script defined (R as its formula); type a name in the console "
              "to evaluate it; Calculator > Export Log... saves the console.",
        difficulty="easy", tags=["file-dialog", "script", "screen-reading", "physics"],
        max_steps=15,
        params={"planet": {"choice": ["Earth", "Mars", "the Moon"]}},
        setup={"generate": [{"fn": "projectile_script", "as": "proj",
                             "args": {"path": "projectile.kal", "planet": "$planet"}}],
               "protect": ["projectile.kal"]},
        evaluator={"criteria": [
            answer_given(),
            {"name": "the loaded script's variables are on screen", "weight": 0, "gate": True,
             "description": "the Variables panel lists theta (only the script defines it)",
             "getter": {"fn": "screen_text", "region": VARIABLES_SCREEN},
             "check": {"op": "regex", "pattern": "theta"}},
            log_value("the log holds R", PROJ_LOG, [], "$gold.proj.R", 1e-6, 1e-9,
                      "v0^2 sin(2 theta)/g"),
            answer("the answered range R", "$gold.proj.R", 0.0, 2e-5)]},
        oracle=[*main(), *load_script("projectile.kal"), *console("R"), *export_log(PROJ_LOG),
                read_ans("m"), "DONE"],
        negatives={
            "height-not-range": [*main(), *load_script("projectile.kal"), *console("H"),
                                 *export_log(PROJ_LOG), read_ans("m"), "DONE"],
            "guess-without-loading": ["answer(\"25 m\")", "DONE"]})
