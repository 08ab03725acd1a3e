"""Writes ``task_specs/kalgebra/*.json`` (run ``python -m sciagent_gym.envs.kalgebra.make_specs``).

The specs share their GUI steps (the console line, the file dialogs, the 2D Graph's fields),
so they are written from here rather than by hand; the JSON files are what the package loads.
Coordinates are relative to the main window's client area (``in_window``), measured on
KAlgebra 22.12 under openbox at 1280x800.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sciagent_gym.sdk import load_adapter, spec_interface

OUT = Path(__file__).resolve().parents[2] / "task_specs" / "kalgebra"
W = "^KAlgebra$"
LOAD_DIALOG = "^Choose a script"
SAVE_DIALOG = "^Save As"
PLOT_DIALOG = "^Select where to put the rendered plot"
TAB_CALC, TAB_2D = (42, 34), (125, 34)
INPUT_LINE = (310, 451)
ADD_TAB, ADD_FIELD = (682, 464), (756, 58)
#: the 2D Graph's status bar (the coordinates of the curve point under the pointer)
STATUS_BAR = [0, 482, 300, 18]
STATUS_BAR_SCREEN = [190, 639, 300, 18]
#: the Variables panel beside the console (name and value columns)
VARIABLES = [645, 40, 255, 440]
VARIABLES_SCREEN = [835, 197, 255, 440]
NUMBER = "(-?[0-9]+(?:[.,][0-9]{{1,6}})?)"


def main() -> list[dict]:
    return [{"await_window": W, "focused": True}]


def click(x: int, y: int) -> dict:
    return {"in_window": W, "do": [f"pyautogui.click({x}, {y})"]}


def enter(expr: str) -> str:
    """One console (or field) entry: type it and press Enter."""
    assert "'" not in expr
    return f"pyautogui.write('{expr}')\npyautogui.press('enter')"


def console(*exprs: str) -> list[Any]:
    return [click(*INPUT_LINE), *(enter(e) for e in exprs)]


def read_ans(unit: str = "") -> dict:
    """Read the newest result off the Variables panel's ``ans`` row (six significant digits).

    Not off the console: that is a QtWebEngine view, which Chromium's renderer paints late (or
    blank for a moment) on a loaded machine, while the panel is a Qt view. Every oracle reads
    after a file dialog has opened and closed: KAlgebra opens it only once it has evaluated
    everything typed before, so the panel is up to date (a screen that has stopped changing
    proves nothing while the program is still busy). OCR sometimes sees the column gap as
    "=", "=:", ")" or "(", so the pattern skips up to four such marks (never a minus sign)."""
    pattern = "(?m)^\\s*ans[^\\w\\n-]{{0,4}}" + NUMBER
    return {"read": {"region": VARIABLES, "window": W, "pattern": pattern, "number": True},
            "answer": "{output}" + (f" {unit}" if unit else "")}


def dialog(hotkey: str, title: str, path: str) -> list[Any]:
    return [f"pyautogui.hotkey('ctrl', '{hotkey}')", {"await_window": title, "focused": True},
            enter(path), {"await_window": title, "gone": True}]


def load_script(name: str) -> list[Any]:
    return dialog("l", LOAD_DIALOG, "{work}/" + name)


def export_log(name: str) -> list[Any]:
    return dialog("s", SAVE_DIALOG, "{work}/" + name)


def save_script(name: str) -> list[Any]:
    return dialog("g", SAVE_DIALOG, "{work}/" + name)


def save_plot(name: str) -> list[Any]:
    return dialog("s", PLOT_DIALOG, "{work}/" + name)


def plot(*exprs: str) -> list[Any]:
    """Open the 2D Graph tab and add each function through the Add tab's expression field."""
    steps: list[Any] = [click(*TAB_2D)]
    for i, e in enumerate(exprs):
        if i:
            steps.append(click(*ADD_TAB))
        steps += [click(*ADD_FIELD), enter(e)]
    return steps


def answer_given() -> dict:
    return {"name": "an answer was given", "weight": 0, "gate": True,
            "getter": "answer_given", "check": "is_true"}


def answer(name: str, expected: str, abs_tol: float, rel_tol: float = 0.0,
           desc: str = "") -> dict:
    check = {"op": "numeric", "expected": expected, "abs_tol": abs_tol}
    if rel_tol:
        check["rel_tol"] = rel_tol
    out = {"name": name, "weight": 1, "getter": "answer_number", "check": check}
    if desc:
        out["description"] = desc
    return out


def log_gate(path: str) -> dict:
    return {"name": f"{path} is a KAlgebra console log with results", "weight": 0, "gate": True,
            "getter": {"fn": "kalgebra_log", "path": path, "key": "n_results"},
            "check": {"op": "in_range", "min": 1}}


def log_value(name: str, path: str, contains: list[str], expected: str, abs_tol: float,
              rel_tol: float = 0.0, desc: str = "") -> dict:
    check = {"op": "numeric", "expected": expected, "abs_tol": abs_tol}
    if rel_tol:
        check["rel_tol"] = rel_tol
    out = {"name": name, "weight": 1,
           "getter": {"fn": "kalgebra_log", "path": path, "key": "closest",
                      "contains": contains, "target": expected}, "check": check}
    if desc:
        out["description"] = desc
    return out


def imported_gate(path: str, script: str) -> dict:
    return {"name": f"{script} was loaded (the log of {path} says so)", "weight": 0,
            "gate": True, "getter": {"fn": "kalgebra_log", "path": path, "key": "imported"},
            "check": {"op": "contains", "item": script}}


def spec(slug: str, **fields: Any) -> dict:
    out = {"id": f"kalgebra/{slug}", "tool": "kalgebra"}
    out.update(fields)
    out.setdefault("modality", "gui")
    return out


def is_log_gate(path: str) -> dict:
    return {"name": f"{path} is a KAlgebra console log", "weight": 0, "gate": True,
            "getter": {"fn": "kalgebra_log", "path": path, "key": "is_log"}, "check": "is_true"}


def imported(path: str, script: str) -> dict:
    return {"name": f"{script} was loaded", "weight": 1,
            "description": f"the log of {path} records the script's import",
            "getter": {"fn": "kalgebra_log", "path": path, "key": "imported"},
            "check": {"op": "contains", "item": script}}


def plot_gate(path: str, n: int) -> dict:
    return {"name": f"{path} is a KAlgebra plot with {n} curves or more", "weight": 0,
            "gate": True, "getter": {"fn": "kalgebra_plot", "path": path, "key": "n_curves"},
            "check": {"op": "in_range", "min": n}}


def plotted(name: str, path: str, function: str, desc: str) -> dict:
    return {"name": name, "weight": 1, "description": desc,
            "getter": {"fn": "kalgebra_plot", "path": path, "key": "error",
                       "function": function},
            "check": {"op": "in_range", "max": 0.004}}


# -- the tasks ---------------------------------------------------------------------------------

POLY = "{a}*x^3-{b}*x^2+{c}*x-{d}"
DERIV_LOG, SUM_LOG, PROJ_LOG = "derivative.html", "partial-sum.html", "projectile.html"


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


def root_from_plot() -> dict:
    svg = "root.svg"

    def hover_and_read(px: str) -> list[Any]:
        # the save dialog opens once KAlgebra has drawn the curve and traced the pointer
        return [*main(), *plot("(x{side.op}{h})^3+{p}*(x{side.op}{h})-{q}"),
                {"in_window": W, "do": [f"pyautogui.moveTo({px}, {{gold.f.py}})"]},
                *save_plot(svg),
                {"read": {"region": STATUS_BAR, "window": W,
                          "pattern": "x=\\s*(-?[0-9]+[.,][0-9]{{1,2}})", "psm": 7, "scale": 3,
                          "number": True}, "answer": "{output}"},
                "DONE"]

    return spec(
        "root-from-plot", title="Read a root off the 2D graph",
        instruction="Plot f(x) = (x {side.op} {h})^3 + {p}*(x {side.op} {h}) - {q} in KAlgebra's "
                    "2D Graph tab (default view) and "
                    "read its real root off the graph: the status bar shows the coordinates of "
                    "the point of the curve under the mouse pointer. Save the plot as {work}/" +
                    svg + ", give the root (to two decimals) with the answer action and leave "
                    "the 2D graph on screen.",
        hints="2D Graph tab > Add: type the expression in x and press Enter; hover the curve "
              "where it crosses the x axis and read x=... in the status bar; 2D Graph > Save "
              "with a .svg name.",
        difficulty="medium", tags=["plot", "root", "screen-reading"], max_steps=20,
        params={"p": {"float": [0.5, 3.0], "round": 1}, "q": {"float": [2.0, 12.0], "round": 1},
                "h": {"float": [0.5, 10.5], "round": 1},
                "side": {"choice": [{"op": "-", "sign": 1}, {"op": "+", "sign": -1}]}},
        setup={"generate": [{"fn": "depressed_cubic", "as": "f",
                             "args": {"p": "$p", "q": "$q", "h": "$h",
                                      "sign": "$side.sign"}}]},
        evaluator={"criteria": [
            answer_given(),
            {"name": "the 2D graph's pointer readout is on screen", "weight": 0, "gate": True,
             "description": "the status bar of the 2D Graph shows x=... y=... (the start state "
                            "shows Ready)",
             "getter": {"fn": "screen_text", "region": STATUS_BAR_SCREEN, "psm": 7, "scale": 3},
             "check": {"op": "regex", "pattern": "x=\\s*-?[0-9]"}},
            plotted("the saved plot shows f", svg, "$gold.f.spec", "(x -+ h)^3 + p (x -+ h) - q"),
            answer("the root", "$gold.f.root", 0.06, 0.0,
                   "the real root of u^3 + p u - q, u = x -+ h (Cardano), within about "
                   "one pixel")]},
        oracle=hover_and_read("{gold.f.px}"),
        negatives={
            "hover-elsewhere": hover_and_read("{gold.f.px_far}"),
            "guess-without-plot": ["answer(\"-1\")", "DONE"]})


def plot_save_svg() -> dict:
    out = "damped.svg"
    damped, upper, lower = "{A}*exp(-{g}*x)*cos({w}*x)", "{A}*exp(-{g}*x)", "-{A}*exp(-{g}*x)"
    return spec(
        "plot-save-svg", title="Plot a damped oscillation with its envelope and save it as SVG",
        instruction="Plot the damped oscillation y = {A}*exp(-{g}*x)*cos({w}*x) together with "
                    "its envelope curves y = {A}*exp(-{g}*x) and y = -{A}*exp(-{g}*x) in "
                    "KAlgebra's 2D Graph tab (default view) and save the plot as an SVG image at "
                    "{work}/" + out + ".",
        hints="2D Graph tab > Add: type the expression in x and press Enter; the Add tab again "
              "for each further curve; 2D Graph > Save (Ctrl+S) and a file name ending in .svg.",
        difficulty="medium", tags=["plot", "export", "svg"], max_steps=30,
        params={"A": {"float": [2.0, 6.0], "round": 1}, "g": {"float": [0.1, 0.4], "round": 2},
                "w": {"float": [1.5, 4.0], "round": 1}},
        setup={"generate": [{"fn": "damped", "as": "y",
                             "args": {"A": "$A", "g": "$g", "w": "$w"}}]},
        evaluator={"criteria": [
            {"name": out + " is a KAlgebra plot with a curve", "weight": 0, "gate": True,
             "getter": {"fn": "kalgebra_plot", "path": out, "key": "n_curves"},
             "check": {"op": "in_range", "min": 1}},
            {"name": "a saved curve is the damped oscillation", "weight": 1,
             "description": "median distance of the curve's points from A exp(-g x) cos(w x), "
                            "as a fraction of the view's height (one pixel is about 0.0023)",
             "getter": {"fn": "kalgebra_plot", "path": out, "key": "error",
                        "function": "$gold.y.spec"},
             "check": {"op": "in_range", "max": 0.004}},
            {"name": "a saved curve is the upper envelope", "weight": 0.5,
             "description": "A exp(-g x), drawn over at least 80 % of the x range where it is "
                            "in view",
             "getter": {"fn": "kalgebra_plot", "path": out, "key": "error",
                        "function": "$gold.y.envelope_spec"},
             "check": {"op": "in_range", "max": 0.004}},
            {"name": "a saved curve is the lower envelope", "weight": 0.5,
             "description": "-A exp(-g x)",
             "getter": {"fn": "kalgebra_plot", "path": out, "key": "error",
                        "function": "$gold.y.lower_envelope_spec"},
             "check": {"op": "in_range", "max": 0.004}}]},
        oracle=[*main(), *plot(damped, upper, lower), *save_plot(out), "DONE"],
        negatives={
            "undamped": [*main(), *plot("{A}*cos({w}*x)"), *save_plot(out), "DONE"],
            "no-envelope": [*main(), *plot(damped), *save_plot(out), "DONE"],
            "png-not-svg": [*main(), *plot(damped, upper, lower), *save_plot("damped.png"),
                            "DONE"]})


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


# numeric calculus in the console language: a central-difference derivative of a loaded f and
# Newton's method on it (the oracle's way; an agent may differentiate symbolically instead)
FP = "fp:=x->(f(x+0.000001)-f(x-0.000001))/0.000002"
FPP = "fpp:=x->(fp(x+0.0001)-fp(x-0.0001))/0.0002"
NT = "nt:=(x,n)->piecewise{{n=0?x, ?nt(x-fp(x)/((fp(x+0.0001)-fp(x-0.0001))/0.0002),n-1)}}"


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


TASKS = [derivative_at_point, partial_sum, wallis_product, load_script_evaluate, root_from_plot,
         plot_save_svg, newton_fixed_point, antiderivative_infeasible,
         missing_script_infeasible, logistic_script, local_maximum, projectile_range,
         function_study, oscillator_report]


def build(make) -> dict:
    """One task's spec as written: what ``make`` returns, with the interface its GUI oracle
    works through (menus, console, mixed) declared."""
    data = make()
    data["oracle_interface"] = spec_interface(
        data, load_adapter("kalgebra", getters=False).console_language)
    return data


def write_all() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for make in TASKS:
        data = build(make)
        path = OUT / (data["id"].split("/", 1)[1] + ".json")
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    write_all()
