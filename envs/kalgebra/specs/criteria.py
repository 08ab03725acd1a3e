"""The criteria the KAlgebra families share (an answer, a value in an exported console log, a
loaded script, a curve in a saved plot) and the spec frame every builder fills in."""

from __future__ import annotations

from typing import Any


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
