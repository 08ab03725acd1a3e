"""KAlgebra getters: the console logs (HTML), scripts (.kal) and plots (SVG) the agent saved.

Imported by :func:`sciagent_gym.tools.load_tool_getters` as ``sciagent_gym.envs.kalgebra.getters``.
Every file is read with a size limit and parsed with bounded regular expressions (no XML
parser, no entity expansion); a missing, oversized or malformed file raises GetterError,
which the evaluator turns into a failed criterion.

The log KAlgebra exports (Calculator > Export Log...) holds one ``<p>`` a console entry: the
input and its result as ``kalgebra:/query?id=copy&func=...`` links, errors as
``<ul class='error'>Error: <b>input</b>``, a loaded script as ``Imported: file://path``.
The plot it saves as SVG (2D Graph > Save) draws each function as 3-px polylines in the
function's colour (drawn at random), the axes in #6464ff with the view's bounds as text
labels at their ends.
"""

from __future__ import annotations

import html
import math
import re
from typing import TYPE_CHECKING, Any

import numpy as np
from sciagent_gym.envs.kalgebra.data import evaluate

from sciagent_gym.sdk import GetterError, decode_text, read_bytes, register

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState

MAX_LOG_BYTES = 4 * 1024 * 1024
MAX_SVG_BYTES = 16 * 1024 * 1024
MAX_ENTRIES = 5000
MAX_CHAINS = 20000
_FUNC = re.compile(r"href='kalgebra:/query\?id=copy&func=([^']{0,5000})'")
_ERROR = re.compile(r"<ul class='error'>Error: <b>([^<]{0,5000})</b>")
_IMPORTED = re.compile(r"^Imported: (?:file://)?(\S{1,4000})$")
_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def parse_log(text: str) -> dict[str, Any]:
    """The entries of an exported console log: ``entries`` [{"input", "result"} or {"input",
    "error"}] and ``imported`` [basename of each loaded script]."""
    if "<html" not in text[:200].lower():
        raise GetterError("not a KAlgebra log (no <html> header)")
    entries: list[dict[str, str]] = []
    imported: list[str] = []
    # split, not one regex over the whole text: linear in its size whatever it holds
    for chunk in text.split("<p>")[1:]:
        if len(entries) + len(imported) >= MAX_ENTRIES:
            raise GetterError(f"more than {MAX_ENTRIES} console entries")
        body = chunk.split("</p>", 1)[0][:20000]
        err = _ERROR.search(body)
        if err:
            entries.append({"input": html.unescape(err.group(1)).strip(), "error": "yes"})
            continue
        funcs = _FUNC.findall(body)
        if len(funcs) == 2:
            entries.append({"input": html.unescape(funcs[0]).strip(),
                            "result": html.unescape(funcs[1]).strip()})
            continue
        plain = re.sub(r"<[^>]{0,200}>", "", body).strip()
        found = _IMPORTED.match(plain)
        if found:
            imported.append(found.group(1).rsplit("/", 1)[-1])
    return {"entries": entries, "imported": imported}


def as_number(result: str) -> float | None:
    """A console result that is one real number (KAlgebra prints no exponent), else None."""
    text = result.strip()
    if not _NUMBER.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def _compact(text: str) -> str:
    return re.sub(r"\s+", "", text)


@register("kalgebra_log")
def kalgebra_log(state: FinalState, path: str, key: str = "entries",
                 contains: list[str] | None = None, target: float | None = None) -> Any:
    """An exported console log: ``is_log`` (True once it parses), ``entries``, ``imported``
    (basenames of loaded scripts),
    ``n_results`` (successful entries), or ``closest``: of the entries whose input holds every
    string of ``contains`` (spaces ignored) and whose result is one number, the result closest
    to ``target`` (GetterError when there is none)."""
    text = decode_text(read_bytes(state, path, MAX_LOG_BYTES))
    log = parse_log(text)
    if key == "is_log":
        return True
    if key == "entries":
        return log["entries"]
    if key == "imported":
        return log["imported"]
    if key == "n_results":
        return sum("result" in e for e in log["entries"])
    if key == "closest":
        if target is None:
            raise GetterError("closest needs a target")
        needles = [_compact(c) for c in contains or []]
        values = [as_number(e["result"]) for e in log["entries"] if "result" in e
                  and all(n in _compact(e["input"]) for n in needles)]
        values = [v for v in values if v is not None]
        if not values:
            raise GetterError(f"no console entry with {contains or 'any input'} gave a number")
        return min(values, key=lambda v: abs(v - float(target)))
    raise GetterError(f"unknown key {key!r} (is_log, entries, imported, n_results, closest)")


# -- SVG plots ----------------------------------------------------------------------------------

_ATTR = re.compile(r'([\w-]{1,40})="([^"]{0,200})"')
_POLY = re.compile(r'<polyline[^>]{0,200}points="([^"]{0,200000})"')
_TEXT = re.compile(
    r'<text[^>]{0,1000}x="(-?[\d.]+)" y="(-?[\d.]+)"[^>]{0,1000}>([^<]{0,40})</text>', re.S)
AXIS_COLOUR = "#6464ff"
GRID_COLOURS = {"#cacaca", "#000000", AXIS_COLOUR}


def parse_plot(text: str) -> dict[str, Any]:
    """A saved 2D plot: ``view`` [xmin, xmax, ymin, ymax] from the axis labels, ``size``
    [w, h] in SVG units from the axes, and ``curves``: each continuous stroke (a run of
    segments, each starting where the last ended, in one colour) as [[x, y] in world units].

    Curves are told apart by continuity, not by colour: KAlgebra picks each function's colour
    at random, and two functions may get the same one."""
    if "<svg" not in text[:500]:
        raise GetterError("not an SVG file")
    labels: list[tuple[float, float, float]] = []
    for x, y, body in _TEXT.findall(text):
        body = html.unescape(body).strip()
        if _NUMBER.fullmatch(body):
            labels.append((float(x), float(y), float(body)))
    chains: list[list[tuple[float, float]]] = []
    last_colour = ""
    axes: list[tuple[float, float, float, float]] = []
    for chunk in text.split("<g ")[1:]:
        # a group's own polylines come before its end or its first nested group
        attrs, _, body = chunk.partition(">")
        body = body.split("</g>", 1)[0]
        a = dict(_ATTR.findall(attrs[:4000]))
        colour = a.get("stroke", "").lower()
        for pts in _POLY.findall(body):
            nums = [float(v) for v in re.findall(r"-?[\d.]+(?:e-?\d+)?", pts)]
            pairs = list(zip(nums[0::2], nums[1::2], strict=False))
            if colour == AXIS_COLOUR and len(pairs) == 2:
                axes.append((*pairs[0], *pairs[1]))
            elif pairs and colour not in GRID_COLOURS and a.get("stroke-width") not in (None, "1"):
                if chains and colour == last_colour and chains[-1][-1] == pairs[0]:
                    chains[-1].extend(pairs[1:])
                else:
                    chains.append(list(pairs))
                last_colour = colour
                if len(chains) > MAX_CHAINS:
                    raise GetterError(f"more than {MAX_CHAINS} separate strokes in the plot")
    horizontal = [s for s in axes if s[1] == s[3] and s[0] != s[2]]
    vertical = [s for s in axes if s[0] == s[2] and s[1] != s[3]]
    if not horizontal or not vertical or len(labels) < 4:
        raise GetterError("no axes with bound labels in the plot")
    width = max(max(s[0], s[2]) for s in horizontal)
    height = max(max(s[1], s[3]) for s in vertical)
    y_axis_px = vertical[0][0]
    x_axis_py = horizontal[0][1]
    # the x bounds are the labels at the x axis's height, the y bounds those at the y axis
    on_x = sorted((lab for lab in labels if abs(lab[1] - (x_axis_py - 5)) < 12),
                  key=lambda lab: lab[0])
    on_y = sorted((lab for lab in labels if abs(lab[0] - y_axis_px) < 12 and lab not in on_x),
                  key=lambda lab: lab[1])
    if len(on_x) < 2 or len(on_y) < 2:
        raise GetterError("the plot's bound labels are not where KAlgebra puts them")
    xmin, xmax = on_x[0][2], on_x[-1][2]
    ymax, ymin = on_y[0][2], on_y[-1][2]
    if not (xmax > xmin and ymax > ymin and width > 0 and height > 0):
        raise GetterError("the plot's view is empty")
    curves = []
    for pairs in chains:
        arr = np.asarray(pairs, float)
        wx = xmin + arr[:, 0] / width * (xmax - xmin)
        wy = ymax - arr[:, 1] / height * (ymax - ymin)
        curves.append(np.column_stack([wx, wy]).tolist())
    return {"view": [xmin, xmax, ymin, ymax], "size": [width, height], "curves": curves}


def curve_error(curves: list[np.ndarray], spec: dict[str, Any], view: list[float]) -> float:
    """How far the drawn curves that follow the function ``spec`` are from it: the median
    distance in y of their points inside the view, as a fraction of the view's height.

    A stroke follows the function when its own median distance is under 1 % of the height;
    inf when none does or the ones that do cover less than 80 % of the x range where the
    function is in view (a stub drawn over part of it does not count)."""
    xmin, xmax, ymin, ymax = view
    height = ymax - ymin
    grid = np.linspace(xmin, xmax, 2001)
    values = evaluate(spec, grid)
    seen = grid[(values >= ymin) & (values <= ymax)]
    if len(seen) < 2:
        return math.inf
    residuals: list[np.ndarray] = []
    spans: list[tuple[float, float]] = []
    for pts in curves:
        pts = np.asarray(pts, float).reshape(-1, 2)
        inside = pts[(pts[:, 0] >= xmin) & (pts[:, 0] <= xmax)
                     & (pts[:, 1] >= ymin) & (pts[:, 1] <= ymax)]
        if len(inside) < 5:
            continue
        res = np.abs(inside[:, 1] - evaluate(spec, inside[:, 0])) / height
        if float(np.median(res)) < 0.01:
            residuals.append(res)
            spans.append((float(inside[:, 0].min()), float(inside[:, 0].max())))
    if not residuals:
        return math.inf
    step = (xmax - xmin) / 2000
    covered = np.zeros(len(seen), bool)
    for lo, hi in spans:
        covered |= (seen >= lo - step) & (seen <= hi + step)
    if covered.mean() < 0.8:
        return math.inf
    return float(np.median(np.concatenate(residuals)))


@register("kalgebra_plot")
def kalgebra_plot(state: FinalState, path: str, key: str = "n_curves",
                  function: dict[str, Any] | None = None) -> Any:
    """A 2D plot saved as SVG: ``n_curves`` (strokes of 10 points or more), ``view``, or
    ``error``: :func:`curve_error` of its curves against ``function`` (0 for the function
    itself; one pixel of the default view is about 0.0023)."""
    text = decode_text(read_bytes(state, path, MAX_SVG_BYTES))
    plot = parse_plot(text)
    if key == "n_curves":
        return sum(len(c) >= 10 for c in plot["curves"])
    if key == "view":
        return plot["view"]
    if key == "error":
        if function is None:
            raise GetterError("error needs a function")
        if not plot["curves"]:
            raise GetterError("the plot holds no curve")
        return curve_error(plot["curves"], function, plot["view"])
    raise GetterError(f"unknown key {key!r} (n_curves, view, error)")
