"""RKWard getters: objects of the live R session (through the state channel's dump), results
that RKWard's dialogs printed to its output page, and rows of CSV tables that R wrote.

Imported by :func:`sciagent_gym.tools.load_tool_getters` as ``sciagent_gym.envs.rkward.getters``.
A missing object, key or row raises GetterError, which fails the criterion.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any

from sciagent_gym.sdk import GetterError, LookupFailure, dotted_get, read_table, register

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState


def _objects(state: FinalState) -> dict[str, Any]:
    if state.app_state is None:
        raise GetterError(f"R session state unavailable: {state.app_state_error or 'no reason'}")
    objects = state.app_state.get("objects")
    if not isinstance(objects, dict):
        raise GetterError("the R session dump has no object list")
    return objects


@register("r_object")
def r_object(state: FinalState, name: str, key: str | None = None,
             absolute: bool = False) -> Any:
    """The summary of the R object ``name`` in RKWard's global environment (see
    ``inside/state_dump.R``), or the value at dotted ``key`` in it ("columns.age.mean",
    "coefficients.dose"); ``absolute`` gives a number's absolute value (a t statistic whose
    sign only says which group R took first)."""
    objects = _objects(state)
    if name not in objects:
        shown = ", ".join(sorted(objects)[:20]) or "none"
        raise GetterError(f"no R object {name!r} in the session (objects: {shown})")
    value = objects[name]
    if key is not None:
        try:
            value = dotted_get(value, key)
        except LookupFailure as exc:
            raise GetterError(f"R object {name!r}, {key!r}: {exc}") from None
    if absolute:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise GetterError(f"R object {name!r}, {key!r}: not a number ({value!r})")
        value = abs(value)
    return value


class _OutputPage(HTMLParser):
    """The sections of RKWard's output page: each ``<h1>`` a dialog's (or ``rk.header``'s)
    title, then its ``Parameters`` list items and its tables (rows of cell texts)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[dict[str, Any]] = []
        self._text: list[str] | None = None
        self._where = ""
        self._row: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "h1":
            self.sections.append({"title": "", "params": [], "tables": []})
            self._where, self._text = "title", []
        elif not self.sections:
            return
        elif tag == "li":
            self._where, self._text = "param", []
        elif tag == "table":
            self.sections[-1]["tables"].append([])
        elif tag == "tr" and self.sections[-1]["tables"]:
            self._row = []
            self.sections[-1]["tables"][-1].append(self._row)
        elif tag in ("td", "th") and self._row is not None:
            self._where, self._text = "cell", []

    def handle_endtag(self, tag: str) -> None:
        if self._text is None or not self.sections:
            return
        text = " ".join("".join(self._text).split())
        if tag == "h1" and self._where == "title":
            self.sections[-1]["title"] = text
        elif tag == "li" and self._where == "param":
            self.sections[-1]["params"].append(text)
        elif tag in ("td", "th") and self._where == "cell" and self._row is not None:
            self._row.append(text)
        else:
            return
        self._text, self._where = None, ""

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)


def output_sections(state: FinalState) -> list[dict[str, Any]]:
    """The sections of RKWard's output page in the final state (oldest first)."""
    if state.app_state is None:
        raise GetterError(f"R session state unavailable: {state.app_state_error or 'no reason'}")
    parser = _OutputPage()
    parser.feed(str(state.app_state.get("output") or ""))
    parser.close()
    return parser.sections


def _number(text: str) -> float:
    try:
        return float(text.strip())
    except ValueError:
        raise GetterError(f"output cell {text!r} is not a number") from None


@register("rk_output_cell")
def rk_output_cell(state: FinalState, title: str, column: str, row: str | None = None,
                   params: list[str] | None = None, absolute: bool = False) -> float:
    """A number a dialog printed to RKWard's output page: in the latest section whose title
    matches the regular expression ``title`` and whose ``Parameters`` list has an item
    matching each of ``params``, the first table with a header cell matching ``column``, in
    its first data row or the row whose first cell matches ``row`` (regular expressions,
    matched in full but for case). ``absolute`` gives the absolute value."""
    def full(pattern: str, text: str) -> bool:
        return re.fullmatch(pattern, text.strip(), re.I) is not None

    for section in reversed(output_sections(state)):
        if not full(title, section["title"]):
            continue
        if not all(any(full(p, item) for item in section["params"]) for p in params or []):
            continue
        for table in section["tables"]:
            if not table:
                continue
            cols = [i for i, cell in enumerate(table[0]) if full(column, cell)]
            if not cols:
                continue
            rows = [r for r in table[1:] if row is None or (r and full(row, r[0]))]
            if not rows or len(rows[0]) <= cols[0]:
                continue
            value = _number(rows[0][cols[0]])
            return abs(value) if absolute else value
    shown = "; ".join(s["title"] for s in output_sections(state)) or "nothing"
    raise GetterError(f"no result {title!r} / {column!r} on RKWard's output page "
                      f"(its sections: {shown})")


@register("r_result")
def r_result(state: FinalState, name: str, key: str, output: dict[str, Any],
             absolute: bool = False) -> Any:
    """A result kept as the R object ``name`` (its ``key``, as :func:`r_object`) or, without
    that object, the same result as an Analysis dialog printed it on the output page
    (:func:`rk_output_cell` with the arguments in ``output``): a console user keeps the
    object, a dialog user reads the output."""
    if name in _objects(state):
        return r_object(state, name, key, absolute=absolute)
    return rk_output_cell(state, absolute=absolute, **output)


@register("r_object_names")
def r_object_names(state: FinalState) -> list[str]:
    """Names of the objects in RKWard's global environment."""
    return sorted(_objects(state))


@register("csv_lookup")
def csv_lookup(state: FinalState, path: str, key_column: str, key: str, column: str) -> Any:
    """The cell of ``column`` in the one row of the CSV table ``path`` whose ``key_column``
    reads ``key`` (R's ``write.csv`` quotes text and may add a row-name column)."""
    table = read_table(state, path)
    k = table.column_index(key_column)
    c = table.column_index(column)
    rows = [r for r in table.rows if str(r[k]).strip().strip('"') == key]
    if len(rows) != 1:
        raise GetterError(f"{path}: {len(rows)} rows with {key_column} = {key!r} (want one)")
    return rows[0][c]


@register("plot_difference")
def plot_difference(state: FinalState, path: str, reference_path: str) -> float:
    """How much a saved plot differs from the gold render of the same R code (an absolute host
    path): the share of the ink (pixels darker than light grey in either image) whose grey
    level differs by more than 64. The same code over the same data gives 0; another variable,
    another grouping or another size moves boxes, points and labels. Both are compared as
    8-bit grey: R's png device writes palette images whose palette order depends on the
    drawing."""
    from pathlib import Path

    import numpy as np

    from sciagent_gym.sdk import existing_file, open_image

    def grey(p: Path, label: str) -> np.ndarray:
        with open_image(p, label) as im:
            return np.asarray(im.convert("L"), dtype=np.int16)

    ref_path = Path(str(reference_path))
    if not ref_path.is_absolute() or not ref_path.is_file():
        raise GetterError(f"reference {reference_path!r}: not an existing absolute host path")
    got = grey(existing_file(state, path), path)
    ref = grey(ref_path, f"reference {ref_path}")
    if got.shape != ref.shape:
        raise GetterError(f"{path}: {got.shape[1]}x{got.shape[0]} pixels, the requested plot "
                          f"is {ref.shape[1]}x{ref.shape[0]}")
    ink = (got < 200) | (ref < 200)
    if not ink.any():
        raise GetterError(f"{path}: a blank image")
    return float(np.count_nonzero(np.abs(got - ref)[ink] > 64) / np.count_nonzero(ink))


#: The Descriptive Statistics dialog's columns ("Save results to file") for each quantity.
_DESCRIPTIVE = {"n": "total length (N)", "mean": "mean", "sd": "standard deviation"}


@register("group_summary")
def group_summary(state: FinalState, path: str, group: str, quantity: str,
                  variable: str, key_column: str = "arm") -> Any:
    """``quantity`` (n, mean or sd) of ``group`` in the summary table ``path``, in either of
    two layouts: a table written in the console with the columns ``<key_column>, n, mean,
    sd`` (one row per group; the cell of the row whose ``key_column`` reads ``group``), or the
    table RKWard's Descriptive Statistics dialog writes with "Save results to file" when
    grouped (one row per variable and group, its ``Object`` ``<variable>.<group>``, and the
    columns ``total length (N)``, ``mean``, ``standard deviation``)."""
    table = read_table(state, path)
    if "object" not in {str(c).strip().casefold() for c in table.columns}:
        return csv_lookup(state, path, key_column, group, quantity)
    k = table.column_index("Object")
    c = table.column_index(_DESCRIPTIVE[quantity])
    want = f"{variable}.{group}"
    rows = [r for r in table.rows if str(r[k]).strip().strip('"') == want]
    if len(rows) != 1:
        raise GetterError(f"{path}: {len(rows)} rows with Object = {want!r} (want one)")
    return rows[0][c]
