"""KAlgebra families in the 2D Graph tab: a root read off the pointer's readout in the status
bar, and a damped oscillation with its envelope saved as SVG."""

from __future__ import annotations

from typing import Any

from sciagent_gym.envs.kalgebra.specs.criteria import (
    answer,
    answer_given,
    plotted,
    spec,
)
from sciagent_gym.envs.kalgebra.specs.steps import (
    STATUS_BAR,
    STATUS_BAR_SCREEN,
    W,
    main,
    plot,
    save_plot,
)


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
