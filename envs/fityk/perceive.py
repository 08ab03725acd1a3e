"""Perceivers: the arithmetic a scientist does on what Fityk's functions panel shows.

Fityk's sidebar (functions tab) lists, under the function list, the selected function's
properties as its own ``info`` computes them: ``Center: ...``, ``Area: ...``, ``Height: ...``,
``FWHM: ...``, ``I.Breadth: ...``. A person who does not script reads them there and works
out the quantity the task asks for (Bragg's law, the Scherrer equation) by hand.
:func:`panel_formula` does that: it reads the panel's pixels with OCR and evaluates the
task's formula (``args.expr``, in the panel's property names) on the numbers it shows. The
formula is the instruction's physics, fixed per task; every number in it comes off the screen
(or from the instruction: the wavelength, the Miller indices). :func:`list_formula` does the
same on the function list itself, with its Area column shown (right-click the list's header),
for quantities that take several functions (an area share, a ratio of two bands).
"""

from __future__ import annotations

import ast
import math
import operator
import re
from typing import Any

import numpy as np

from sciagent_gym.sdk import StepError

#: The property lines of the panel, as Fityk writes them (``I.Breadth`` read as ``IBreadth``).
PROPS = ("Center", "Area", "Height", "FWHM", "IBreadth")
_LINE = re.compile(r"^\s*(Center|Area|Height|FWHM|I\.?\s?Breadth)\s*[:;.,]\s*"
                   r"([-+]?[0-9]+(?:[.,][0-9]+)?(?:[eE][-+]?[0-9]+)?)", re.M)
_FUNCS = {"sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin,
          "sqrt": math.sqrt, "radians": math.radians, "degrees": math.degrees}
_CONSTS = {"pi": math.pi}
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv, ast.Pow: operator.pow}


def panel_values(rgb: np.ndarray) -> dict[str, float]:
    """The property lines the panel's pixels show (OCR), by name."""
    from sciagent_gym.sdk import ocr_region

    text = ocr_region(rgb, psm=6, scale=3)
    values = {}
    for name, number in _LINE.findall(text):
        key = re.sub(r"[.\s]", "", name)
        values.setdefault(key, float(number.replace(",", ".")))
    if not values:
        raise StepError(f"perceive: no function properties in the panel; OCR saw {text!r}")
    return values


def _evaluate(node: ast.AST, names: dict[str, float]) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body, names)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        if node.id in _CONSTS:
            return _CONSTS[node.id]
        raise StepError(f"perceive: the panel does not show {node.id!r} (it shows "
                        f"{sorted(names)})")
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_evaluate(node.left, names), _evaluate(node.right, names))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand, names)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in _FUNCS and len(node.args) == 1 and not node.keywords:
        return _FUNCS[node.func.id](_evaluate(node.args[0], names))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in ("min", "max") and node.args and not node.keywords:
        pick = min if node.func.id == "min" else max
        return pick(_evaluate(a, names) for a in node.args)
    raise ValueError(f"not an arithmetic formula: {ast.dump(node)[:80]}")


def panel_formula(rgb: np.ndarray, expr: str, digits: int = 4, **_: Any) -> str:
    """``expr`` (arithmetic on Center, Area, Height, FWHM, IBreadth, pi, sin, cos, sqrt,
    radians, min, max) evaluated on the selected function's properties the panel shows, with
    ``digits`` decimals."""
    value = _evaluate(ast.parse(expr, mode="eval"), panel_values(rgb))
    return f"{value:.{int(digits)}f}"


#: A number as the list shows it.
_NUM = re.compile(r"[-+]?[0-9]+(?:[.,][0-9]+)?(?:[eE][-+]?[0-9]+)?")


def list_values(rgb: np.ndarray) -> list[tuple[float, float]]:
    """(centre, area) of every peak row the function list shows, sorted by centre: ``rgb``
    holds the list's Center and Area columns (OCR of its dark text; the grid lines and
    colours are light and dropped); rows without a centre (a Linear background: ``-``) are
    left out."""
    from sciagent_gym.sdk import ocr_region

    gray = np.asarray(rgb, float)[..., :3].mean(axis=2)
    ink = np.where(gray < 150, 0, 255).astype(np.uint8)
    text = ocr_region(np.dstack([ink] * 3), psm=6, scale=3)
    rows = []
    for line in text.splitlines():
        numbers = _NUM.findall(line)
        if len(numbers) == 2:
            rows.append(tuple(float(n.replace(",", ".")) for n in numbers))
    if not rows:
        raise StepError(f"perceive: no peak rows with centre and area in the function list; "
                        f"OCR saw {text!r}")
    return sorted(rows)


def list_formula(rgb: np.ndarray, expr: str, digits: int = 4, rows: int | None = None,
                 **_: Any) -> str:
    """``expr`` on the function list's peak rows (Center and Area columns shown), sorted by
    centre: C1, A1 the lowest-centred peak's centre and area, C2, A2 the next... ``rows``:
    how many peak rows the list must show (the task's model), else the screen is not read."""
    found = list_values(rgb)
    if rows is not None and len(found) != int(rows):
        raise StepError(f"perceive: the function list shows {len(found)} peak rows, "
                        f"expected {rows}: {found}")
    names = {}
    for i, (center, area) in enumerate(found, 1):
        names[f"C{i}"], names[f"A{i}"] = center, area
    value = _evaluate(ast.parse(expr, mode="eval"), names)
    return f"{value:.{int(digits)}f}"


PERCEIVERS = {"panel_formula": panel_formula, "list_formula": list_formula}
