"""KAlgebra families worked by typing into the console: a derivative at a point, a partial sum,
Euler's sine product, Newton's method and a logistic model saved as a script."""

from __future__ import annotations

from sciagent_gym.envs.kalgebra.specs.criteria import (
    answer,
    log_gate,
    log_value,
    spec,
)
from sciagent_gym.envs.kalgebra.specs.steps import (
    console,
    export_log,
    main,
    read_ans,
    save_script,
)

POLY = "{a}*x^3-{b}*x^2+{c}*x-{d}"
DERIV_LOG, SUM_LOG = "derivative.html", "partial-sum.html"


def derivative_at_point() -> dict:
    return spec(
        "derivative-at-point", title="Slope of a cubic at a point",
        instruction="Let f(x) = {a}*x^3 - {b}*x^2 + {c}*x - {d}. Use KAlgebra's console (the "
                    "Calculator tab) to differentiate f and evaluate the derivative at x = {x0}; "
                    "export the console log as {work}/" + DERIV_LOG + " and give the slope "
                    "f'({x0}) with the answer action.",
        hints="In the Calculator tab, diff(expression : x) returns the derivative as a function "
              "of x (a lambda such as x->3*x^2-2); put the point in brackets after it to "
              "evaluate it: (diff(...:x))(value). Calculator > Export Log... saves the console "
              "as HTML.",
        difficulty="easy", tags=["calculus", "derivative", "console", "screen-reading"],
        max_steps=15,
        params={"a": {"int": [2, 6]}, "b": {"int": [1, 9]}, "c": {"int": [1, 12]},
                "d": {"int": [1, 9]}, "x0": {"float": [1.2, 3.8], "round": 1}},
        setup={"generate": [{"fn": "polynomial", "as": "f", "args": {
            "coeffs": ["$a", "$b", "$c", "$d"], "signs": [1, -1, 1, -1], "x0": "$x0"}}]},
        evaluator={"criteria": [
            log_gate(DERIV_LOG),
            log_value("the log holds the slope", DERIV_LOG, [], "$gold.f.slope", 1e-9, 0.0,
                      "3a x0^2 - 2b x0 + c, computed on the host"),
            answer("the answered slope f'(x0)", "$gold.f.slope", 0.001, 1e-5)]},
        oracle=[*main(), *console(f"(diff({POLY}:x))({{x0}})"), *export_log(DERIV_LOG),
                read_ans(), "DONE"],
        negatives={
            "value-not-slope": [*main(), *console("{a}*{x0}^3-{b}*{x0}^2+{c}*{x0}-{d}"),
                                *export_log(DERIV_LOG), read_ans(), "DONE"],
            "slope-elsewhere": [*main(), *console(f"(diff({POLY}:x))({{x0}}+1)"),
                                *export_log(DERIV_LOG), read_ans(), "DONE"]})


def partial_sum() -> dict:
    return spec(
        "partial-sum", title="Partial sum of a series",
        instruction="With KAlgebra's console (the Calculator tab), compute the partial sum "
                    "S = sum over k = 1 .. {n} of 1/(k^2 + {c}), export the console log as "
                    "{work}/" + SUM_LOG + " and give S with the answer action, to at least five "
                    "decimals.",
        hints="sum(term : k=first..last) adds a term over an integer range, e.g. "
              "sum(1/k^2 : k=1..10); Calculator > Export Log... saves the console.",
        difficulty="easy", tags=["series", "sum", "console", "screen-reading"], max_steps=15,
        params={"n": {"int": [10, 120]}, "c": {"float": [0.5, 20.0], "round": 1}},
        setup={"generate": [{"fn": "series", "as": "s",
                             "args": {"kind": "basel", "n": "$n", "c": "$c"}}]},
        evaluator={"criteria": [
            log_gate(SUM_LOG),
            log_value("the log holds the sum", SUM_LOG, ["sum("], "$gold.s.value", 1e-9, 0.0,
                      "sum of 1/(k^2+c) for k = 1..n, computed on the host"),
            answer("the answered sum", "$gold.s.value", 5e-5)]},
        oracle=[*main(), *console("sum(1/(k^2+{c}):k=1..{n})"), *export_log(SUM_LOG),
                read_ans(), "DONE"],
        negatives={
            "starts-at-two": [*main(), *console("sum(1/(k^2+{c}):k=2..{n})"),
                              *export_log(SUM_LOG), read_ans(), "DONE"],
            "no-shift": [*main(), *console("sum(1/k^2:k=1..{n})"), *export_log(SUM_LOG),
                         read_ans(), "DONE"]})


def wallis_product() -> dict:
    log = "wallis.html"
    term = "k^2/(k^2-{z}^2)"
    return spec(
        "wallis-product", title="Euler's sine product (Wallis's generalised), logged",
        instruction="Euler's sine product, the product over k = 1 .. n of k^2/(k^2 - z^2), "
                    "tends to pi z / sin(pi z) as n grows (z = 1/2 gives the Wallis product, "
                    "whose limit is pi/2). Compute the partial product for z = {z} and n = {n} "
                    "in KAlgebra's console, export the console log as {work}/" + log + " and "
                    "give the product's value with the answer action.",
        hints="product(term : k=1..n) multiplies a term over an integer range; Calculator > "
              "Export Log... saves the console as HTML.",
        difficulty="medium", tags=["series", "product", "console", "export"], max_steps=20,
        params={"z": {"float": [0.15, 0.88], "round": 2}, "n": {"int": [10, 60]}},
        setup={"generate": [{"fn": "series", "as": "s",
                             "args": {"kind": "sine", "n": "$n", "c": "$z"}}]},
        evaluator={"criteria": [
            log_gate(log),
            log_value("the log holds the product to n", log, ["product("], "$gold.s.value",
                      1e-9, 0.0, "a product(...) entry whose result is the partial product"),
            answer("the answered product", "$gold.s.value", 5e-5)]},
        oracle=[*main(), *console(f"product({term}:k=1..{{n}})"), *export_log(log),
                read_ans(), "DONE"],
        negatives={
            "starts-at-two": [*main(), *console(f"product({term}:k=2..{{n}})"),
                              *export_log(log), read_ans(), "DONE"],
            "answer-without-log": [*main(), *console(f"product({term}:k=1..{{n}})"),
                                   *save_script("wallis.kal"), read_ans(), "DONE"]})



def newton_fixed_point() -> dict:
    log = "newton.html"
    return spec(
        "newton-fixed-point", title="Newton's method in the console language",
        instruction="Find the root of cos(x) = x/{c} to six decimal places with KAlgebra's "
                    "console. KAlgebra has no equation solver: define the function and its "
                    "derivative and iterate Newton's method (for instance as a recursive "
                    "function). Export the console log as {work}/" + log + " and give the root "
                    "with the answer action.",
        hints="Functions are lambdas: f := x->...; piecewise { condition ? value, ? otherwise } "
              "chooses a branch, so a function can call itself n times; Calculator > Export "
              "Log... saves the console.",
        difficulty="hard", tags=["root-finding", "newton", "console", "scripting", "export"],
        max_steps=25,
        params={"c": {"float": [1.0, 3.0], "round": 2}},
        setup={"generate": [{"fn": "fixed_point", "as": "r", "args": {"c": "$c"}}]},
        evaluator={"criteria": [
            log_gate(log),
            log_value("the log holds the root to 1e-7", log, [], "$gold.r.root", 1e-7, 0.0,
                      "a console result within 1e-7 of the root (bisection on the host)"),
            answer("the answered root", "$gold.r.root", 2e-5)]},
        oracle=[*main(), *console("f:=x->cos(x)-x/{c}", "fp:=x->-sin(x)-1/{c}",
                                  "nt:=(x,n)->piecewise{{n=0?x, ?nt(x-f(x)/fp(x),n-1)}}",
                                  "nt(1,10)"),
                *export_log(log), read_ans(), "DONE"],
        negatives={
            "one-iteration": [*main(), *console("f:=x->cos(x)-x/{c}", "fp:=x->-sin(x)-1/{c}",
                                                "nt:=(x,n)->piecewise{{n=0?x, "
                                                "?nt(x-f(x)/fp(x),n-1)}}", "nt(1,1)"),
                              *export_log(log), read_ans(), "DONE"],
            "answer-without-log": [*main(), *console("f:=x->cos(x)-x/{c}",
                                                     "fp:=x->-sin(x)-1/{c}",
                                                     "nt:=(x,n)->piecewise{{n=0?x, "
                                                     "?nt(x-f(x)/fp(x),n-1)}}", "nt(1,10)"),
                                   *save_script("newton.kal"), read_ans(), "DONE"]})



def logistic_script() -> dict:
    log, script = "logistic.html", "logistic.kal"
    defs = ("K:={K}", "P0:={P0}", "r:={r}", "P:=t->K/(1+(K-P0)/P0*exp(-r*t))", "P({t1})")
    return spec(
        "logistic-script", title="Logistic growth model as a console script",
        instruction="Model logistic population growth in KAlgebra's console: define K = {K}, "
                    "P0 = {P0}, r = {r} and the function P(t) = K/(1 + (K - P0)/P0*exp(-r*t)), "
                    "and evaluate P({t1}). Save the console as a script {work}/" + script +
                    " (Calculator > Save Script...), export the console log as {work}/" + log +
                    " and give P({t1}) with the answer action.",
        hints="Variables are assigned with :=, functions are lambdas (P := t->...); Calculator > "
              "Save Script... writes the console's inputs, Export Log... its inputs and results.",
        difficulty="medium", tags=["modelling", "console", "scripting", "export"], max_steps=25,
        heldout=True,
        params={"K": {"int": [200, 900]}, "P0": {"int": [5, 40]},
                "r": {"float": [0.2, 0.8], "round": 2}, "t1": {"int": [5, 15]}},
        setup={"generate": [{"fn": "logistic", "as": "m", "args": {
            "K": "$K", "P0": "$P0", "r": "$r", "t1": "$t1"}}]},
        evaluator={"criteria": [
            log_gate(log),
            log_value("the log holds P(t1)", log, ["P("], "$gold.m.value", 1e-6, 1e-9,
                      "K/(1 + (K-P0)/P0 exp(-r t1)) computed on the host"),
            {"name": "the saved script defines P and evaluates it", "weight": 1,
             "getter": {"fn": "file_text", "path": script},
             "check": {"op": "regex", "pattern": "(?m)^\\s*P\\s*:=.*exp[\\s\\S]*^\\s*P\\("}},
            answer("the answered P(t1)", "$gold.m.value", 1e-3, 1e-6)]},
        oracle=[*main(), *console(*defs), *save_script(script), *export_log(log), read_ans(),
                "DONE"],
        negatives={
            "wrong-rate": [*main(), *console("K:={K}", "P0:={P0}", "r:={r}+0.1", *defs[3:]),
                           *save_script(script), *export_log(log), read_ans(), "DONE"],
            "no-script-saved": [*main(), *console(*defs), *export_log(log), read_ans(),
                                "DONE"]})
