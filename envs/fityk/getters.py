"""Fityk-specific getters: fitted peaks in the session, peak tables and saved session scripts.

The session state (``app_state``, from :mod:`sciagent_gym.envs.fityk.adapter`) lists per
dataset the functions of its model ``F`` with Fityk's own centre, height, area and FWHM of each
(``info peaks``). Peaks are found by where they are, never by name: the agent names its
functions as it likes (``%_1``, ``%g``).

Imported by :func:`sciagent_gym.tools.load_tool_getters` as ``sciagent_gym.envs.fityk.getters``.
Every failure on a missing or malformed file is a GetterError (a failed criterion).
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciagent_gym.sdk import (
    MAX_TEXT_BYTES,
    GetterError,
    check_lines,
    decode_text,
    existing_file,
    looks_binary,
    pick_key,
    read_bytes,
    register,
)

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState

REPLAY = Path(__file__).parent / "inside" / "replay.py"
KEYS = ("center", "height", "area", "fwhm")
#: Largest session script replayed (one embeds every data point: ~100 bytes a point).
MAX_SESSION_BYTES = 16 * 1024 * 1024


def _dataset(state: dict[str, Any], dataset: int, label: str) -> dict[str, Any]:
    for ds in state.get("datasets", []):
        if ds.get("index") == dataset:
            return ds
    raise GetterError(f"{label}: there is no dataset @{dataset}")


def _peaks(ds: dict[str, Any], types: list[str] | None) -> list[dict[str, Any]]:
    """The dataset's functions in F that have a centre (peaks, not baselines)."""
    out = [p for p in ds.get("peaks", []) if p.get("center") is not None
           and (not types or p.get("type") in types)]
    return sorted(out, key=lambda p: p["center"])


def _types(type: str | list[str] | None) -> list[str] | None:  # noqa: A002 (spec field name)
    return [type] if isinstance(type, str) else type


def _near(peaks: list[dict[str, Any]], near: float, window: float, label: str
          ) -> dict[str, Any]:
    found = [p for p in peaks if abs(p["center"] - float(near)) <= float(window)]
    if not found:
        centres = ", ".join(f"{p['center']:g}" for p in peaks[:8]) or "none"
        raise GetterError(f"{label}: no fitted peak within {window:g} of {near:g} "
                          f"(peak centres: {centres})")
    return min(found, key=lambda p: abs(p["center"] - float(near)))


def _app(state: FinalState) -> dict[str, Any]:
    if state.app_state is None:
        raise GetterError(f"app state unavailable: {state.app_state_error or 'no reason given'}")
    return state.app_state


def _select(session: dict[str, Any], label: str, dataset: int, near: float | None,
            window: float, type: str | list[str] | None, key: str | None) -> Any:  # noqa: A002
    peaks = _peaks(_dataset(session, dataset, label), _types(type))
    if near is None:
        if key is None:
            return peaks
        return [p.get(key) for p in peaks]
    return pick_key(label, _near(peaks, near, window, label), key)


@register("fityk_peak")
def fityk_peak(state: FinalState, near: float | None = None, window: float = 0.5,
               type: str | list[str] | None = None, dataset: int = 0,  # noqa: A002
               key: str | None = None) -> Any:
    """The fitted function of dataset ``dataset`` (of ``type``) whose centre is nearest to
    ``near`` and within ``window`` of it (``key``: one of center, height, area, fwhm, type,
    params); with ``near`` None, the list of ``key`` over all its peaks sorted by centre."""
    return _select(_app(state), "Fityk session", dataset, near, window, type, key)


@register("fityk_peak_count")
def fityk_peak_count(state: FinalState, type: str | list[str] | None = None,  # noqa: A002
                     dataset: int = 0) -> int:
    """How many peak functions (with a centre) of ``type`` the dataset's model F has."""
    return len(_peaks(_dataset(_app(state), dataset, "Fityk session"), _types(type)))


@register("fityk_function_types")
def fityk_function_types(state: FinalState, dataset: int = 0) -> list[str]:
    """The types of every function in the dataset's model F (baselines included)."""
    ds = _dataset(_app(state), dataset, "Fityk session")
    return [str(p.get("type")) for p in ds.get("peaks", [])]


@register("fityk_dataset")
def fityk_dataset(state: FinalState, dataset: int = 0, key: str | None = None) -> Any:
    """Dataset ``dataset``: points, active, active_min/max, x_min/max, sum_y, F (names)."""
    return pick_key("Fityk session", _dataset(_app(state), dataset, "Fityk session"), key)


def parse_peak_table(text: str, label: str = "peak table") -> list[dict[str, Any]]:
    """Rows of Fityk's ``info peaks`` output (as ``info peaks > 'file'`` writes it): one
    function a line, ``%name  Type<TAB>center<TAB>height<TAB>area<TAB>fwhm<TAB> params``;
    ``x`` where a function has no such property (a baseline)."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("%"):
            continue
        cols = line.split("\t")
        head = cols[0].split()
        if len(head) != 2 or len(cols) < 5:
            raise GetterError(f"{label}: not an 'info peaks' line: {line[:60]!r}")
        row: dict[str, Any] = {"name": head[0].lstrip("%"), "type": head[1]}
        for key, value in zip(KEYS, cols[1:5], strict=True):
            value = value.strip().split("+-")[0].strip()
            if value == "x":
                row[key] = None
                continue
            try:
                row[key] = float(value)
            except ValueError:
                raise GetterError(f"{label}: {key} {value!r} is not a number") from None
        rows.append(row)
    if not rows:
        raise GetterError(f"{label}: no peak lines (expected the output of 'info peaks')")
    return rows


@register("fityk_peak_table")
def fityk_peak_table(state: FinalState, path: str, type: str | list[str] | None = None,  # noqa: A002
                     key: str | None = "center", near: float | None = None,
                     window: float = 0.5) -> Any:
    """A saved ``info peaks`` table: ``key`` of its peaks (of ``type``) sorted by centre, or of
    the one nearest to ``near``."""
    data = read_bytes(state, path, MAX_TEXT_BYTES)
    if looks_binary(data):
        raise GetterError(f"{path}: binary data, not a text table")
    text = decode_text(data)
    check_lines(text, path)
    types = _types(type)
    peaks = sorted((r for r in parse_peak_table(text, path)
                    if r["center"] is not None and (not types or r["type"] in types)),
                   key=lambda r: r["center"])
    if near is not None:
        return pick_key(path, _near(peaks, near, window, path), key)
    return [r[key] for r in peaks] if key else peaks


def replay_session(host_file: Path, label: str) -> dict[str, Any]:
    """Run a saved Fityk session script in ``cfityk`` in a throwaway sandbox; its state."""
    from sciagent_gym.sdk import run_sandboxed

    token = secrets.token_hex(8)
    inside = "/input/session.fit"
    run = run_sandboxed(["/usr/bin/python3", "-I", "-S", "-c", REPLAY.read_text(),
                         f"exec:{inside}", "[]", "-", token],
                        files={inside: host_file}, timeout=60.0)
    if run.timed_out:
        raise GetterError(f"{label}: replaying the session took too long")
    mark = f"@@{token} RESULT "
    lines = [line for line in run.output.splitlines() if line.startswith(mark)]
    if not lines:
        raise GetterError(f"{label}: the session could not be replayed: {run.output[-300:]}")
    try:
        reply = json.loads(lines[-1][len(mark):])
    except json.JSONDecodeError as exc:
        raise GetterError(f"{label}: unreadable replay result ({exc})") from None
    if not reply.get("ok"):
        raise GetterError(f"{label}: replaying the session failed: {reply.get('error')}")
    return reply["state"]


@register("fityk_session")
def fityk_session(state: FinalState, path: str, near: float | None = None,
                  window: float = 0.5, type: str | list[str] | None = None,  # noqa: A002
                  dataset: int = 0, key: str | None = None, what: str = "peak") -> Any:
    """A saved session script (Session > Save Session, ``info state > 'file'``) replayed in a
    sandbox: with ``what`` "peak" as :func:`fityk_peak` on that session, with "dataset" the
    dataset's summary (``key`` of it)."""
    p = existing_file(state, path)
    size = p.stat().st_size
    if size > MAX_SESSION_BYTES:
        raise GetterError(f"{path}: too large ({size} bytes, limit {MAX_SESSION_BYTES})")
    if looks_binary(p.read_bytes()[:8192]):
        raise GetterError(f"{path}: binary data, not a Fityk script")
    session = replay_session(p, path)
    if what == "dataset":
        return pick_key(path, _dataset(session, dataset, path), key)
    return _select(session, path, dataset, near, window, type, key)


def _numeric_rows(text: str, label: str) -> list[list[float]]:
    """The numeric rows of a text table (``#`` lines skipped); ragged rows are an error."""
    rows: list[list[float]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            rows.append([float(v) for v in line.replace(",", " ").split()])
        except ValueError:
            raise GetterError(f"{label}: not a numeric row: {line[:60]!r}") from None
        if len(rows[-1]) != len(rows[0]):
            raise GetterError(f"{label}: rows of {len(rows[0])} and {len(rows[-1])} columns")
    if not rows:
        raise GetterError(f"{label}: no numeric rows")
    return rows


@register("fityk_points")
def fityk_points(state: FinalState, path: str, reference_path: str, column: int = 2,
                 key: str | None = None) -> Any:
    """An exported points file (Data > Export Points: x, y, the model F(x), as ``print all:
    x, y, F(x) > 'file'`` writes it) compared with the noiseless curve the data was made from
    (``reference_path``: a host-side array, row 0 x and row 1 the curve).

    Keys: "rows", "columns"; "x_offset", the largest distance of the file's x from the
    reference's (None when the row counts differ); "model_error", the RMS difference of
    column ``column`` from the curve over the curve's span (None when x does not match): a
    fitted model is within a few tenths of a percent, the noisy data itself about 1 %."""
    import numpy as np
    import tifffile

    data = read_bytes(state, path, MAX_TEXT_BYTES)
    if looks_binary(data):
        raise GetterError(f"{path}: binary data, not a text table")
    text = decode_text(data)
    check_lines(text, path)
    table = np.asarray(_numeric_rows(text, path), float)
    try:
        ref = np.asarray(tifffile.imread(str(reference_path)), float)
    except Exception as exc:  # tifffile raises several types on a bad path
        raise GetterError(f"reference {reference_path}: cannot read: {exc}") from None
    info: dict[str, Any] = {"rows": int(table.shape[0]), "columns": int(table.shape[1]),
                            "x_offset": None, "model_error": None}
    if table.shape[0] == ref.shape[1] and table.shape[1] > int(column):
        info["x_offset"] = float(np.max(np.abs(table[:, 0] - ref[0])))
        if info["x_offset"] < 1e-6 * max(1.0, float(np.max(np.abs(ref[0])))):
            span = float(ref[1].max() - ref[1].min()) or 1.0
            info["model_error"] = float(np.sqrt(np.mean((table[:, int(column)] - ref[1]) ** 2))
                                        / span)
    return pick_key(path, info, key)
