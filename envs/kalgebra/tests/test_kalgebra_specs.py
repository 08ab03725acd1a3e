"""KAlgebra's tasks offline: the generators' gold against KAlgebra's own interpreter (calgebra,
the same Analitza library, run on the host), the console-log and SVG-plot readers on files in
the formats KAlgebra 22.12 writes, and each file task's criteria on what an oracle and a wrong
attempt would leave. The long-horizon tasks' staged scores are replayed here too.

KAlgebra itself is not needed: logs and plots are written here in its formats (measured from
files it saved: one ``<p>`` a console entry with ``kalgebra:/query?id=copy&func=`` links; SVG
polylines in pixel units with the view's bounds as axis labels).
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from sciagent_gym.evaluation import FinalState, evaluate
from sciagent_gym.tasks.task import Task
from sciagent_gym.tools import load_adapter, load_tool_getters, load_tool_specs

load_tool_getters("kalgebra")

from sciagent_gym.envs.kalgebra import data, make_specs  # noqa: E402
from sciagent_gym.envs.kalgebra.getters import (  # noqa: E402
    GetterError,
    curve_error,
    parse_log,
    parse_plot,
)

SPECS = load_tool_specs("kalgebra")
WIDTH, HEIGHT, XSPAN = 604, 429, data.XSPAN


def _stage(task_id: str, tmp_path: Path, seed: int = 0) -> tuple[Task, Path]:
    work = tmp_path / "work"
    task = Task(SPECS[task_id], seed, load_adapter("kalgebra").generators,
                {"work": str(work), "home": "/h", "tmp": "/t"})
    task.stage(work)
    return task, work


def _score(task: Task, work: Path, answer: str | None = None, status: str = "done"):
    return evaluate(task.criteria(), FinalState(work_dir=work, app_state=None,
                                                agent_status=status, answer=answer))


def log_html(entries: list[tuple[str, str]], imported: list[str] = ()) -> str:
    """A console log as KAlgebra exports it: (input, result) pairs, result None for an error."""
    parts = ["<html>\n<head><style type=\"text/css\">\n</style>\n</head>\n<body>"]
    for path in imported:
        parts.append(f"<p>Imported: file://{path}</p>")
    for expr, result in entries:
        if result is None:
            parts.append(f"<p><ul class='error'>Error: <b>{expr}</b><li>Unexpected</li></ul></p>")
        else:
            parts.append(
                f"<p><a title='Paste to Input' href='kalgebra:/query?id=copy&func={expr}'>"
                f"<span class='exp'>{expr}</span></a><br />= <a title='kalgebra:Paste to Input' "
                f"href='kalgebra:/query?id=copy&func={result}'><span class='result'>"
                f"<span class='num'>{result}</span></span></a></p>")
    parts.append("</body>\n</html>\n")
    return "\n".join(parts)


def plot_svg(curves: list[np.ndarray], xspan: float = XSPAN) -> str:
    """A 2D plot as KAlgebra saves it: axes in #6464ff with bound labels, each curve a run of
    two-point polylines of width 3 in pixel units (y down)."""
    head = ('<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<svg width="213mm" '
            'height="151mm" xmlns="http://www.w3.org/2000/svg" version="1.2">\n<g fill="none">\n')
    axis = ('<g fill="none" stroke="#6464ff" stroke-opacity="1" stroke-width="1">\n'
            f'<polyline fill="none" points="0,{HEIGHT / 2} {WIDTH},{HEIGHT / 2} " />\n'
            f'<polyline fill="none" points="{WIDTH / 2},0 {WIDTH / 2},{HEIGHT} " />\n</g>\n')
    labels = ('<g fill="#6464ff" stroke="#6464ff">\n'
              f'<text fill="#6464ff" x="8" y="{HEIGHT / 2 - 5}" font-size="9"\n >-{xspan}</text>\n'
              f'<text fill="#6464ff" x="565" y="{HEIGHT / 2 - 5}" font-size="9"\n >{xspan}</text>\n'
              f'<text fill="#6464ff" x="{WIDTH / 2 + 3}" y="13" font-size="9"\n >10</text>\n'
              f'<text fill="#6464ff" x="{WIDTH / 2 + 3}" y="{HEIGHT - 5}" font-size="9"\n >-10'
              '</text>\n</g>\n')
    body = []
    colours = ["#ff8000", "#00b7ff", "#40c000"]
    scale = WIDTH / (2 * xspan)
    for colour, xy in zip(colours, curves, strict=False):
        px = WIDTH / 2 + xy[:, 0] * scale
        py = HEIGHT / 2 - xy[:, 1] * scale
        body.append(f'<g fill="none" stroke="{colour}" stroke-opacity="1" stroke-width="3">')
        for i in range(len(px) - 1):
            body.append(f'<polyline fill="none" points="{px[i]:g},{py[i]:g} '
                        f'{px[i + 1]:g},{py[i + 1]:g} " />')
        body.append("</g>")
    return head + axis + labels + "\n".join(body) + "\n</g>\n</svg>\n"


def curve(spec: dict, lo: float = -XSPAN, hi: float = XSPAN, n: int = 800) -> np.ndarray:
    x = np.linspace(lo, hi, n)
    return np.column_stack([x, data.evaluate(spec, x)])


# -- the specs file is what make_specs writes ---------------------------------------------------


def test_spec_files_are_what_make_specs_writes():
    for make in make_specs.TASKS:
        want = make_specs.build(make)
        path = make_specs.OUT / (want["id"].split("/", 1)[1] + ".json")
        assert json.loads(path.read_text()) == want, f"run make_specs: {path.name} is stale"
    assert len(SPECS) == len(make_specs.TASKS)


def test_issue_19_mix_of_tasks():
    specs = list(SPECS.values())
    file_dialog = [s for s in specs if "file-dialog" in s.tags and not s.open]
    assert len(file_dialog) >= 5
    assert any("screen-reading" in s.tags for s in specs)
    infeasible = [s for s in specs if s.infeasible]
    assert len(infeasible) >= 2
    long = [s for s in specs if "long-horizon" in s.tags]
    for s in long:
        steps = Task(s, 0, {}, {"work": "/w", "home": "/h", "tmp": "/t"}).oracle_steps
        assert 25 <= steps <= 60 and s.max_steps >= 1.5 * steps, (s.id, steps)


# -- gold values against KAlgebra's own interpreter --------------------------------------------

CALGEBRA = shutil.which("calgebra")


def calgebra(*lines: str) -> list[str]:
    """Results of console lines in calgebra (KAlgebra's Analitza, without the GUI)."""
    done = subprocess.run([CALGEBRA], input="\n".join(lines) + "\n", capture_output=True,
                          text=True, timeout=60)
    # calgebra echoes each input after a ">>> " prompt on stdout; its results go to stderr
    return [ln.strip() for ln in done.stderr.splitlines()
            if ln.strip() and ln.strip() != "Exit."]


@pytest.mark.skipif(CALGEBRA is None, reason="calgebra (Debian kalgebra) is not installed")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gold_matches_kalgebra(seed, tmp_path):
    def staged(task_id):
        task, work = _stage(task_id, tmp_path / task_id.split("/")[1], seed)
        return task, work, task.params, task.gold

    _, _, p, gold = staged("kalgebra/derivative-at-point")
    poly = make_specs.POLY.format(**p)
    [got] = calgebra(f"(diff({poly}:x))({p['x0']})")
    assert float(got) == pytest.approx(gold["f"]["slope"], abs=1e-9)

    _, _, p, gold = staged("kalgebra/partial-sum")
    [got] = calgebra(f"sum(1/(k^2+{p['c']}):k=1..{p['n']})")
    assert float(got) == pytest.approx(gold["s"]["value"], abs=1e-10)

    _, _, p, gold = staged("kalgebra/wallis-product")
    [got] = calgebra(f"product(k^2/(k^2-{p['z']}^2):k=1..{p['n']})")
    assert float(got) == pytest.approx(gold["s"]["value"], abs=1e-10)
    wallis, sine = calgebra("product(4*k^2/(4*k^2-1):k=1..20)",
                            "product(k^2/(k^2-0.5^2):k=1..20)")  # z = 1/2 is Wallis's
    expected = data.series(None, None, "wallis", 20)["value"]
    assert float(wallis) == pytest.approx(expected, abs=1e-10)
    assert float(sine) == pytest.approx(expected, abs=1e-10)

    _, work, p, gold = staged("kalgebra/load-script-evaluate")
    lines = (work / "oscillator.kal").read_text().splitlines()
    got = calgebra(*lines, f"y({p['t0']})")[-1]
    assert float(got) == pytest.approx(gold["osc"]["value"], abs=1e-9)

    _, _, p, gold = staged("kalgebra/newton-fixed-point")
    got = calgebra(f"f:=x->cos(x)-x/{p['c']}", f"fp:=x->-sin(x)-1/{p['c']}",
                   "nt:=(x,n)->piecewise{n=0?x, ?nt(x-f(x)/fp(x),n-1)}", "nt(1,10)")[-1]
    assert float(got) == pytest.approx(gold["r"]["root"], abs=1e-10)

    _, _, p, gold = staged("kalgebra/logistic-script")
    got = calgebra(f"K:={p['K']}", f"P0:={p['P0']}", f"r:={p['r']}",
                   "P:=t->K/(1+(K-P0)/P0*exp(-r*t))", f"P({p['t1']})")[-1]
    assert float(got) == pytest.approx(gold["m"]["value"], rel=1e-9)

    _, _, p, gold = staged("kalgebra/root-from-plot")
    root, op = gold["f"]["root"], p["side"]["op"]
    [got] = calgebra(f"(x->(x{op}{p['h']})^3+{p['p']}*(x{op}{p['h']})-{p['q']})({root!r})")
    assert float(got) == pytest.approx(0, abs=1e-9)
    assert np.polyval(gold["f"]["spec"]["coeffs"], root) == pytest.approx(0, abs=1e-9)


@pytest.mark.skipif(CALGEBRA is None, reason="calgebra (Debian kalgebra) is not installed")
def test_kalgebra_cannot_integrate():
    """The antiderivative task is infeasible because Analitza leaves int(...) unevaluated or
    refuses a bounded one (measured with KAlgebra 22.12 / calgebra)."""
    out = calgebra("int(3*x^2*exp(-x/2))", "int(x^2:x=0..3)")
    assert out[0].replace(" ", "") == "int(3*x^2*exp(-x/2))"
    assert any("Unexpected bounding" in line for line in out)


# -- the readers ---------------------------------------------------------------------------------


def test_log_reader_finds_inputs_results_errors_and_imports():
    text = log_html([("diff(x^3-2*x:x)", "x->3*x^2-2"), ("sum(k^2:k=1..10)", "385"),
                     ("int(x^2:x=0..3)", None)], imported=["/home/user/work/model.kal"])
    log = parse_log(text)
    assert log["imported"] == ["model.kal"]
    assert log["entries"][1] == {"input": "sum(k^2:k=1..10)", "result": "385"}
    assert log["entries"][2]["error"] == "yes"


@pytest.mark.parametrize("junk", [b"", b"plain text", b"<html>" + b"<p>" * 100000,
                                  b"\x00\xff" * 1000])
def test_log_reader_refuses_or_bounds_junk(junk, tmp_path):
    (tmp_path / "log.html").write_bytes(junk)
    from sciagent_gym.envs.kalgebra.getters import kalgebra_log

    state = FinalState(work_dir=tmp_path, app_state=None, agent_status="done", answer=None)
    try:
        assert kalgebra_log(state, "log.html", key="n_results") == 0
    except GetterError:
        pass


def test_plot_reader_recovers_the_function_and_rejects_another():
    spec = {"kind": "damped", "A": 4.0, "g": 0.2, "w": 2.5}
    plot = parse_plot(plot_svg([curve(spec)]))
    assert plot["view"] == [-XSPAN, XSPAN, -10.0, 10.0]
    curves = plot["curves"]
    assert curve_error(curves, spec, plot["view"]) < 1e-4
    assert curve_error(curves, {**spec, "g": 0.0}, plot["view"]) > 0.004
    assert curve_error(curves, {**spec, "w": 2.7}, plot["view"]) > 0.004
    # a curve drawn over a small part of the range the function is in view does not count
    part = parse_plot(plot_svg([curve(spec, -1, 1)]))
    assert math.isinf(curve_error(part["curves"], spec, part["view"]))


def test_plot_reader_tells_same_coloured_curves_apart():
    """KAlgebra draws each function in a random colour: two may share one."""
    f = {"kind": "damped", "A": 4.0, "g": 0.2, "w": 2.5}
    env = {"kind": "envelope", "A": 4.0, "g": 0.2}
    text = plot_svg([curve(f), curve(env)]).replace("#00b7ff", "#ff8000")
    plot = parse_plot(text)
    assert len(plot["curves"]) == 2
    assert curve_error(plot["curves"], f, plot["view"]) < 1e-4
    assert curve_error(plot["curves"], env, plot["view"]) < 1e-4
    assert math.isinf(curve_error(plot["curves"], {"kind": "poly", "coeffs": [1, 0]},
                                  plot["view"]))


def test_plot_reader_refuses_non_plots():
    for text in ("", "<svg></svg>", "<html>not a plot</html>"):
        with pytest.raises(GetterError):
            parse_plot(text)


# -- criteria on oracle-like and wrong files ---------------------------------------------------


def test_wallis_log_and_answer(tmp_path):
    task, work = _stage("kalgebra/wallis-product", tmp_path)
    n, z, value = task.params["n"], task.params["z"], task.gold["s"]["value"]
    expr = f"product(k^2/(k^2-{z}^2):k=1..{n})"
    (work / "wallis.html").write_text(log_html([(expr, f"{value:.12g}")]))
    assert _score(task, work, f"{value:.5f}").success
    assert _score(task, work, None).score == 0.5  # the log is right, the answer missing
    short = task.gold["s"]["short"]
    (work / "wallis.html").write_text(log_html([(expr, f"{short:.12g}")]))
    assert not _score(task, work, f"{short:.5f}").success


def test_load_script_needs_the_import(tmp_path):
    task, work = _stage("kalgebra/load-script-evaluate", tmp_path)
    t0, value = task.params["t0"], task.gold["osc"]["value"]
    entries = [(f"y({t0})", f"{value:.12g}")]
    (work / "oscillator.html").write_text(log_html(entries, [f"{work}/oscillator.kal"]))
    assert _score(task, work, f"{value:.5f}").success
    (work / "oscillator.html").write_text(log_html(entries))
    assert _score(task, work, f"{value:.5f}").score == 0


def test_plot_task_scores_the_saved_curve(tmp_path):
    task, work = _stage("kalgebra/plot-save-svg", tmp_path)
    y = task.gold["y"]
    (work / "damped.svg").write_text(plot_svg([curve(y["spec"]), curve(y["envelope_spec"]),
                                               curve(y["lower_envelope_spec"])]))
    assert _score(task, work).success
    (work / "damped.svg").write_text(plot_svg([curve(y["spec"])]))
    assert _score(task, work).score == 0.5  # the oscillation without its envelope
    (work / "damped.svg").write_text(plot_svg([curve(y["spec"]), curve(y["envelope_spec"])]))
    assert _score(task, work).score == 0.75
    (work / "damped.svg").write_text(plot_svg([curve(y["undamped_spec"])]))
    assert _score(task, work).score == 0


def test_logistic_script_regex(tmp_path):
    task, work = _stage("kalgebra/logistic-script", tmp_path)
    p, value = task.params, task.gold["m"]["value"]
    (work / "logistic.html").write_text(log_html([(f"P({p['t1']})", f"{value:.12g}")]))
    (work / "logistic.kal").write_text(
        f"K:={p['K']}\nP0:={p['P0']}\nr:={p['r']}\nP:=t->K/(1+(K-P0)/P0*exp(-r*t))\n"
        f"P({p['t1']})\n")
    assert _score(task, work, f"{value:.4f}").success
    (work / "logistic.kal").write_text(f"K:={p['K']}\n")
    assert not _score(task, work, f"{value:.4f}").success


# -- the long-horizon tasks' stages --------------------------------------------------------------


def test_function_study_stages_give_partial_credit(tmp_path):
    """Stopping after the script is loaded, or after the turning points, scores strictly
    between 0 and the full oracle's 1.0 (the negatives stop-after-open and
    stop-after-turning-points play exactly these states)."""
    task, work = _stage("kalgebra/function-study", tmp_path)
    g = task.gold["study"]
    script = f"{work}/study.kal"
    log = work / "study-report.html"
    log.write_text(log_html([], [script]))
    first = _score(task, work).score
    log.write_text(log_html([("x1:=nt(-5,30)", f"{g['r1'] + 1e-9:.12g}"),
                             ("x2:=nt(6,30)", f"{g['r2'] - 1e-9:.12g}")], [script]))
    second = _score(task, work).score
    values = [("x1:=nt(-5,30)", f"{g['r1']:.12g}"), ("x2:=nt(6,30)", f"{g['r2']:.12g}"),
              ("f(x2)", f"{g['min_value']:.12g}"), ("f(x1)", f"{g['max_value']:.12g}")]
    log.write_text(log_html(values, [script]))
    (work / "study-session.kal").write_text("x1:=nt(-5,30)\nf(x1)\n")
    svg = work / "study.svg"
    svg.write_text(plot_svg([curve(g["spec"]), curve(g["derivative_spec"])]))
    third = _score(task, work, f"{g['max_value']:.5f}").score
    log.write_text(log_html([*values, ("x3:=(x1+x2)/2", f"{g['inflection']:.12g}"),
                             ("f(x3)", f"{g['f_inflection']:.12g}")], [script]))
    svg.write_text(plot_svg([curve(g["spec"]), curve(g["derivative_spec"]),
                             curve(g["second_derivative_spec"])]))
    full = _score(task, work, f"{g['max_value']:.5f}")
    assert 0 < first < second < third < 1 and full.success, (first, second, third, full)
    assert first == pytest.approx(1 / 12) and second == pytest.approx(3 / 12)
    assert third == pytest.approx(9 / 12)


def test_oscillator_report_stages_give_partial_credit(tmp_path):
    task, work = _stage("kalgebra/oscillator-report", tmp_path)
    g, t0 = task.gold["osc"], task.params["t0"]
    script = f"{work}/oscillator.kal"
    log = work / "oscillator-report.html"
    log.write_text(log_html([], [script]))
    first = _score(task, work).score
    measured = [(f"y({t0})", f"{g['value']:.12g}"), (f"A*exp(-g*{t0})", f"{g['envelope']:.12g}"),
                ("pi/(2*w)", f"{g['first_zero']:.12g}"), ("2*pi/w", f"{g['period']:.12g}")]
    log.write_text(log_html(measured, [script]))
    second = _score(task, work).score
    (work / "oscillator-session.kal").write_text("pi/(2*w)\n(2*pi)/w\n")
    (work / "oscillator.svg").write_text(plot_svg([curve(g["spec"]), curve(g["envelope_spec"])]))
    full = _score(task, work, f"{g['period']:.5f}")
    assert 0 < first < second < 1 and full.success, (first, second, full)
    assert first == pytest.approx(1 / 9) and second == pytest.approx(5 / 9)
