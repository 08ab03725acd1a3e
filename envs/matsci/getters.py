"""Getters of the materials workstation: one program's state, or two programs' states compared.

The state dump is ``{"jmol": ..., "fityk": ..., "veusz": ..., "errors": {...}}``
(:meth:`sciagent_gym.envs.matsci.adapter.Adapter.dump_state`). :func:`in_program` runs any
getter of the single-tool envs (``jmol_distance``, ``fityk_peak``, ``veusz_plot``...) on one
program's part, as that tool's env would; the cross-program getters compare what one program
holds with what another one shows (Fityk's fitted peaks against the data Veusz plots, Jmol's
cell against the database entry). Every failure is a GetterError (a failed criterion).
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import TYPE_CHECKING, Any

from sciagent_gym.sdk import GETTERS, GetterError, load_tool_getters, pick_key, register

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState

PROGRAMS = ("jmol", "fityk", "veusz")
for _tool in PROGRAMS:
    load_tool_getters(_tool)


def _part(state: FinalState, program: str) -> dict[str, Any]:
    if program not in PROGRAMS:
        raise GetterError(f"no program {program!r} on the workstation")
    if state.app_state is None:
        raise GetterError(f"app state unavailable: {state.app_state_error or 'no reason given'}")
    part = state.app_state.get(program)
    if not isinstance(part, dict):
        why = (state.app_state.get("errors") or {}).get(program, "no state")
        raise GetterError(f"{program}'s state is unavailable: {why}")
    return part


def _as(state: FinalState, program: str) -> FinalState:
    """``state`` as the single-tool env of ``program`` sees it."""
    return dataclasses.replace(state, app_state=_part(state, program), windows=state.windows,
                               commands=state.commands)


@register("in_program")
def in_program(state: FinalState, program: str, getter: str, **args: Any) -> Any:
    """Getter ``getter`` of a single-tool env (with ``args``) on ``program``'s part of the
    state."""
    fn = GETTERS.get(getter)
    if fn is None:
        raise GetterError(f"no getter {getter!r}")
    return fn(_as(state, program), **args)


@register("matsci_jmol_cell")
def matsci_jmol_cell(state: FinalState, key: str = "lengths") -> Any:
    """The cell Jmol shows: ``lengths`` (a, b, c sorted, A), ``volume`` (A^3, from the
    lengths and angles), ``atoms``, ``file`` (the loaded file's name, no folder)."""
    st = _part(state, "jmol")
    cell = st.get("cell")
    if not cell:
        raise GetterError("Jmol shows no crystal with a unit cell")
    a, b, c = (float(cell[k]) for k in ("a", "b", "c"))
    al, be, ga = (math.radians(float(cell[k])) for k in ("alpha", "beta", "gamma"))
    volume = a * b * c * math.sqrt(max(0.0, 1 - math.cos(al) ** 2 - math.cos(be) ** 2
                                       - math.cos(ga) ** 2
                                       + 2 * math.cos(al) * math.cos(be) * math.cos(ga)))
    out = {"lengths": sorted([a, b, c]), "volume": volume, "atoms": st.get("atoms"),
           "file": str(st.get("file") or "").rsplit("/", 1)[-1], "counts": st.get("counts")}
    return pick_key("Jmol's cell", out, key)


def _summary(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "mean": sum(values) / len(values), "min": min(values),
            "max": max(values)}


def _close(got: Any, want: float, abs_tol: float) -> bool:
    return isinstance(got, (int, float)) and not isinstance(got, bool) \
        and abs(float(got) - want) <= abs_tol


def _same_column(summary: Any, want: dict[str, float], abs_tol: float) -> bool:
    return isinstance(summary, dict) and summary.get("n") == want["n"] and all(
        _close(summary.get(k), want[k], abs_tol) for k in ("mean", "min", "max"))


@register("fityk_peaks_in_veusz")
def fityk_peaks_in_veusz(state: FinalState, x: str = "center", y: str | None = None,
                         xerr: str | None = None, xerr_scale: float = 1.0,
                         min_peaks: int = 2, abs_tol: float = 0.01, rel_tol: float = 0.01,
                         key: str = "ok") -> Any:
    """Whether a Veusz xy plot shows Fityk's fitted peaks of dataset 0: its x data are the
    peaks' ``x`` (center, height, area, fwhm) within ``abs_tol``, its y data (``y``) within
    ``rel_tol`` of their size, its symmetric x errors the peaks' ``xerr`` times
    ``xerr_scale`` (e.g. fwhm and 0.5: the half width) within ``abs_tol``. The columns are
    compared as Veusz summarises them (count, mean, min, max).

    Keys: ok, peaks (Fityk's peak count), plots (xy widgets looked at), x, y, xerr (whether
    some plot matched that far)."""
    fityk = _part(state, "fityk")
    veusz = _part(state, "veusz")
    datasets = fityk.get("datasets") or []
    peaks = sorted((p for p in (datasets[0].get("peaks", []) if datasets else [])
                    if p.get("center") is not None and p.get(x) is not None),
                   key=lambda p: p["center"])
    out = {"ok": False, "peaks": len(peaks), "plots": 0, "x": False, "y": False,
           "xerr": False}
    if len(peaks) < min_peaks:
        return pick_key("Fityk's peaks in Veusz", out, key)
    want_x = _summary([float(p[x]) for p in peaks])
    want_y = _summary([float(p[y]) for p in peaks]) if y else None
    want_e = (_summary([float(p[xerr]) * xerr_scale for p in peaks])
              if xerr and all(p.get(xerr) is not None for p in peaks) else None)
    for path, w in (veusz.get("widgets") or {}).items():
        if not isinstance(w, dict) or w.get("type") != "xy":
            continue
        out["plots"] += 1
        data = w.get("data") or {}
        xs, ys = data.get("xData") or {}, data.get("yData") or {}
        if not _same_column(xs, want_x, abs_tol):
            continue
        out["x"] = True
        y_ok = want_y is None or _same_column(
            ys, want_y, rel_tol * max(abs(want_y["max"]), abs(want_y["min"]), 1e-9))
        out["y"] = out["y"] or y_ok
        e_ok = want_e is None or _same_column(xs.get("serr"), want_e, abs_tol)
        out["xerr"] = out["xerr"] or e_ok
        if y_ok and e_ok:
            out["ok"] = True
            out["path"] = path
            break
    return pick_key("Fityk's peaks in Veusz", out, key)


@register("answer_entry_id")
def answer_entry_id(state: FinalState) -> str:
    """The one database id (``sag-N``) the answer names; several different ids are ambiguous."""
    if state.answer is None:
        raise GetterError("no answer was given")
    ids = {m.lower() for m in re.findall(r"(?i)\bsag-\d+\b", state.answer)}
    if len(ids) != 1:
        raise GetterError(f"the answer names {len(ids)} database ids, expected one: "
                          f"{state.answer[:80]!r}")
    return ids.pop()
