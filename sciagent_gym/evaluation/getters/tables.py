"""Getters for CSV/TSV tables as ImageJ writes them.

ImageJ's Results table saved as .csv has a header whose first column is a blank name (" ")
holding 1-based row numbers; .xls/.txt files it saves are tab-separated. That row-number column
is treated as an index: it is not listed by ``table_columns`` and not returned as data.
"""

from __future__ import annotations

import csv
import io
import math
import re
import statistics
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from .limits import MAX_TEXT_BYTES, check_table
from .reading import decode_text, looks_binary, read_bytes
from .registry import GetterError, register

if TYPE_CHECKING:
    from ..state import FinalState

Cell = float | str

_NUMBER = re.compile(
    r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:nan|inf|infinity)", re.IGNORECASE
)
_TAB_SUFFIXES = {".tsv", ".tab", ".xls", ".txt"}
AGGREGATES = ("mean", "sum", "min", "max", "count", "median")


@dataclass
class Table:
    """A parsed table: column names (index column removed) and rows of converted cells."""

    path: str
    columns: list[str]
    rows: list[list[Cell]]

    def column_index(self, column: str | int) -> int:
        """Exact name first, then a unique case-insensitive match, else a GetterError."""
        if isinstance(column, int) and not isinstance(column, bool):
            if -len(self.columns) <= column < len(self.columns):
                return column % len(self.columns)
            raise GetterError(
                f"{self.path}: column index {column} out of range "
                f"(table has {len(self.columns)} columns)"
            )
        name = str(column).strip()
        if name in self.columns:
            return self.columns.index(name)
        folded = [i for i, c in enumerate(self.columns) if c.casefold() == name.casefold()]
        if len(folded) == 1:
            return folded[0]
        shown = ", ".join(repr(c) for c in self.columns) or "none"
        raise GetterError(f"{self.path}: no column {name!r} (columns: {shown})")


def _convert(cell: str) -> Cell:
    """Numeric-looking cells become floats ("NaN" included); others stay stripped strings."""
    text = cell.strip()
    return float(text) if _NUMBER.fullmatch(text) else text


def _delimiter(first_line: str, path: str) -> str:
    """Pick the delimiter from the header line; fall back on the file extension."""
    for cand in ("\t", ",", ";"):
        if cand in first_line:
            return cand
    return "\t" if PurePosixPath(path).suffix.lower() in _TAB_SUFFIXES else ","


def read_table(state: FinalState, path: str) -> Table:
    """Parse ``path``; ragged rows, binary data, empty files and tables beyond the limits of
    :func:`.limits.check_table` are GetterErrors."""
    data = read_bytes(state, path, MAX_TEXT_BYTES)
    if not data.strip():
        raise GetterError(f"{path}: empty file")
    if looks_binary(data):
        raise GetterError(f"{path}: binary data, not a text table")
    text = decode_text(data)
    # the header line decides the delimiter; never split the whole file just to find it
    first = next((ln for ln in text[:1 << 20].splitlines() if ln.strip()), "")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_delimiter(first, path))
    header: list[str] | None = None
    rows: list[list[Cell]] = []
    drop_trailing = False
    records = cells = 0
    try:
        for raw in reader:
            records += 1
            cells += len(raw)
            check_table(path, records, cells)
            if not raw or (len(raw) == 1 and not raw[0].strip()):
                continue
            if header is None:
                header = [h.strip() for h in raw]
                if len(header) > 1 and header[-1] == "":
                    header, drop_trailing = header[:-1], True
                continue
            if drop_trailing and len(raw) == len(header) + 1 and not raw[-1].strip():
                raw = raw[:-1]
            if len(raw) != len(header):
                raise GetterError(
                    f"{path}: line {reader.line_num} has {len(raw)} fields, "
                    f"header has {len(header)}"
                )
            rows.append([_convert(c) for c in raw])
    except csv.Error as exc:
        raise GetterError(f"{path}: not a valid table near line {reader.line_num}: {exc}") from None
    if header is None:
        raise GetterError(f"{path}: empty file")
    if len(header) > 1 and header[0] == "":
        header = header[1:]
        rows = [r[1:] for r in rows]
    return Table(path=path, columns=header, rows=rows)


def _aggregate(values: list[Cell], agg: str, table: Table, column: str | int) -> float | int:
    if agg == "count":
        return sum(1 for v in values if v != "")
    nums: list[float] = []
    for i, v in enumerate(values):
        if v == "":
            continue
        if isinstance(v, str):
            raise GetterError(
                f"{table.path}: column {column!r} row {i} is not numeric ({v!r}), cannot {agg}"
            )
        nums.append(v)
    if agg == "sum":
        return math.fsum(nums) if all(math.isfinite(x) for x in nums) else float(sum(nums))
    if not nums:
        raise GetterError(f"{table.path}: column {column!r} has no numeric values to {agg}")
    if any(math.isnan(x) for x in nums):
        return math.nan
    if agg == "mean":
        total = math.fsum(nums) if all(math.isfinite(x) for x in nums) else sum(nums)
        return total / len(nums)
    if agg == "min":
        return min(nums)
    if agg == "max":
        return max(nums)
    return float(statistics.median(nums))


@register("table_rows")
def table_rows(state: FinalState, path: str) -> int:
    """Number of data rows (header excluded)."""
    return len(read_table(state, path).rows)


@register("table_columns")
def table_columns(state: FinalState, path: str) -> list[str]:
    """Column names, whitespace-stripped, without ImageJ's blank row-number column."""
    return list(read_table(state, path).columns)


@register("table_column")
def table_column(
    state: FinalState, path: str, column: str | int, agg: str | None = None
) -> list[Cell] | float | int:
    """All cells of ``column``, or one aggregate of them (mean, sum, min, max, count, median).

    NaN cells make mean/min/max/median NaN (so a numeric check fails visibly); blank cells are
    skipped; ``count`` counts non-blank cells.
    """
    if agg is not None and agg not in AGGREGATES:
        raise GetterError(f"unknown aggregate {agg!r} (known: {', '.join(AGGREGATES)})")
    table = read_table(state, path)
    idx = table.column_index(column)
    values = [r[idx] for r in table.rows]
    return values if agg is None else _aggregate(values, agg, table, column)


@register("table_cell")
def table_cell(state: FinalState, path: str, row: int, column: str | int) -> Cell:
    """One cell; ``row`` is a 0-based data-row index (ImageJ's row number minus 1), -1 = last."""
    table = read_table(state, path)
    idx = table.column_index(column)
    n = len(table.rows)
    if isinstance(row, bool) or not isinstance(row, int):
        raise GetterError(f"{path}: row must be an integer, got {row!r}")
    if not -n <= row < n:
        raise GetterError(f"{path}: row {row} out of range (table has {n} data rows)")
    return table.rows[row][idx]


@register("table_records")
def table_records(
    state: FinalState, path: str, columns: list[str] | None = None
) -> list[dict[str, Cell]]:
    """Rows as dicts (column -> cell), optionally only ``columns``; feeds the table_equal check."""
    table = read_table(state, path)
    names = table.columns if columns is None else list(columns)
    idxs = [table.column_index(c) for c in names]
    return [{table.columns[i]: r[i] for i in idxs} for r in table.rows]
