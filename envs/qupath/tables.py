"""QuPath's measurement tables, parsed into columns and rows (:func:`parse_measurement_table`).

Every malformed, partial or binary file raises GetterError, which the evaluator turns into a
failed criterion. The format, as QuPath v0.5.1 writes it (sources in
envs/qupath/tests/fixtures/README.md):

``saveAnnotationMeasurements`` / Measure > Show measurements > Save
(SummaryMeasurementTableCommand.getTableModelStrings, ObservableMeasurementTableData.java):
one header line and one line per object joined by the table delimiter (tab by default),
fields containing the delimiter in double quotes, numbers as text, "NaN" for missing. Columns
start with Image, Object ID (v0.4+), Object type, Name, Classification ("Class" before v0.4),
Parent, ROI, Centroid X µm / px, Centroid Y µm / px, then measurements.
"""

from __future__ import annotations

import re
from typing import Any

from sciagent_gym.envs.qupath.number_text import parse_number

from sciagent_gym.sdk import GetterError, check_lines, check_table, decode_text, looks_binary


def normalize_column(name: str) -> str:
    """Column names compared loosely: µ (U+00B5), μ (U+03BC) and "u" before "m" are one; case
    and spacing ignored; the pre-v0.4 "Class" column is "Classification"."""
    text = " ".join(name.split()).casefold().replace("\u03bc", "\u00b5")
    text = re.sub(r"(?<![a-z])um(?=\b|\^)", "\u00b5m", text)
    return "classification" if text == "class" else text


def _split_line(line: str, delim: str) -> list[str]:
    """getTableModelStrings quotes a field only when it contains the delimiter."""
    if '"' not in line:
        return line.split(delim)
    out, cur, quoted = [], [], False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif ch == delim and not quoted:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if quoted:
        raise GetterError("unbalanced quotes")
    out.append("".join(cur))
    return out


def _cell(text: str) -> Any:
    number = parse_number(text)
    return text.strip() if number is None else number


def parse_measurement_table(data: bytes | str, label: str = "table") -> dict[str, Any]:
    """A QuPath measurement table as {"columns", "n_rows", "rows": [{column: value}],
    "names", "classifications", "object_types", "delimiter"}; values are floats (NaN for
    "NaN") or strings ("" for an empty cell). Tab-separated as QuPath writes by default; a
    comma or semicolon header (the tableDelimiter preference changed) is read too."""
    if isinstance(data, bytes):
        if not data.strip():
            raise GetterError(f"{label}: empty file")
        if looks_binary(data):
            raise GetterError(f"{label}: binary data, not a measurement table")
        text = decode_text(data)
    else:
        text = data
    check_lines(text, label)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise GetterError(f"{label}: empty file")
    header_line = lines[0]
    delim = "\t" if "\t" in header_line else "," if "," in header_line else ";" \
        if ";" in header_line else "\t"
    try:
        header = [h.strip() for h in _split_line(header_line, delim)]
    except GetterError as exc:
        raise GetterError(f"{label}: header: {exc}") from None
    known = {normalize_column(h) for h in header}
    if not known & {"object type", "name", "image", "classification", "roi"}:
        raise GetterError(f"{label}: not a QuPath measurement table (header "
                          f"{header_line[:80]!r} has none of Image, Object type, Name, "
                          "Classification, ROI)")
    if len(set(header)) != len(header):
        raise GetterError(f"{label}: duplicate column names in the header")
    check_table(label, len(lines) - 1, (len(lines) - 1) * len(header))
    rows = []
    for i, line in enumerate(lines[1:], start=2):
        try:
            fields = _split_line(line, delim)
        except GetterError as exc:
            raise GetterError(f"{label}: line {i}: {exc}") from None
        if len(fields) != len(header):
            raise GetterError(f"{label}: line {i} has {len(fields)} fields, header has "
                              f"{len(header)} (truncated or malformed)")
        rows.append({h: _cell(f) for h, f in zip(header, fields, strict=True)})

    def col(name: str) -> list[Any]:
        idx = [h for h in header if normalize_column(h) == name]
        return [r[idx[0]] for r in rows] if idx else []

    types: dict[str, int] = {}
    for t in col("object type"):
        types[str(t)] = types.get(str(t), 0) + 1
    return {"columns": header, "n_rows": len(rows), "rows": rows, "names": col("name"),
            "classifications": col("classification"), "object_types": types,
            "delimiter": delim}


def find_column(table: dict[str, Any], column: str, label: str) -> str:
    """The table's own spelling of ``column`` (see :func:`normalize_column`)."""
    want = normalize_column(column)
    found = [h for h in table["columns"] if normalize_column(h) == want]
    if not found:
        raise GetterError(f"{label}: no column {column!r} (columns: "
                          f"{', '.join(table['columns'])})")
    return found[0]

