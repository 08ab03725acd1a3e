"""Getters of the earth-data tasks: metrics the evaluator recomputes from the agent's artifacts.

Imported by :func:`sciagent_gym.tools.load_tool_getters` as
``sciagent_gym.envs.earthdata.getters``. A self-reported metric can be fabricated, so every
scored metric is recomputed here from what the agent produced (a predictions table, filled-in
fluxes, cluster labels) against values the sandbox never saw (the withheld truth, passed in as
gold), and the reported metric only has to agree with its recomputation (a weight-0 gate).

CSV files are parsed with the csv module within size limits; a table that misses a row the
metric needs, names a row twice, or holds a value that is not a finite number is a GetterError
(a failed criterion), as is a JSON report that is not an object of numbers.
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import TYPE_CHECKING

import numpy as np
from sciagent_gym.envs.earthdata.data import kge, nse, silhouette

import sciagent_gym.benchmarks.stbench  # noqa: F401  registers stbench_*, which the specs use
from sciagent_gym.sdk import GetterError, decode_text, looks_binary, read_bytes, register

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState

#: Largest table read (a 48-basin, 6-year daily prediction table is about 5 MB).
MAX_TABLE_BYTES = 32 << 20
MAX_ROWS = 400_000
MAX_REPORT_BYTES = 1 << 16


def read_table(state: FinalState, path: str, columns: list[str]) -> list[dict[str, str]]:
    """The rows of CSV ``path`` with (at least) ``columns``, headers matched case- and
    space-insensitively."""
    data = read_bytes(state, path, MAX_TABLE_BYTES)
    if looks_binary(data):
        raise GetterError(f"{path}: binary data, not a CSV text file")
    reader = csv.reader(io.StringIO(decode_text(data)))
    try:
        header = [h.strip().casefold() for h in next(reader)]
    except (StopIteration, csv.Error):
        raise GetterError(f"{path}: no header row") from None
    where = {}
    for col in columns:
        if col.casefold() not in header:
            raise GetterError(f"{path}: no column {col!r} (columns: {', '.join(header)[:200]})")
        where[col] = header.index(col.casefold())
    rows = []
    try:
        for i, row in enumerate(reader):
            if i >= MAX_ROWS:
                raise GetterError(f"{path}: more than {MAX_ROWS} rows")
            if not row:
                continue
            if len(row) < len(header):
                raise GetterError(f"{path}: row {i + 2} has {len(row)} fields, not "
                                  f"{len(header)}")
            rows.append({c: row[j].strip() for c, j in where.items()})
    except csv.Error as exc:
        raise GetterError(f"{path}: not valid CSV: {exc}") from None
    return rows


def _number(text: str, path: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise GetterError(f"{path}: {text[:30]!r} is not a number") from None
    if not math.isfinite(value):
        raise GetterError(f"{path}: {text[:30]!r} is not a finite number")
    return value


def _values(state: FinalState, path: str, group: str, value: str, key: str = "date"
            ) -> dict[str, dict[str, float]]:
    """{group id: {key: value}} of a long table with columns group, key (a date, a row or
    week number), value."""
    out: dict[str, dict[str, float]] = {}
    for row in read_table(state, path, [group, key, value]):
        per = out.setdefault(row[group], {})
        if row[key] in per:
            raise GetterError(f"{path}: {row[group]} {row[key]} appears twice")
        per[row[key]] = _number(row[value], path)
    return out


@register("earth_groups")
def earth_groups(state: FinalState, path: str, column: str) -> list[str]:
    """The distinct ids in ``column`` of CSV ``path`` (which basins, sites or counties the
    artifact covers), sorted."""
    return sorted({row[column] for row in read_table(state, path, [column])})


def _paired(state: FinalState, path: str, group: str, value: str,
            truth: dict[str, dict[str, float]], key: str = "date"
            ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    got = _values(state, path, group, value, key)
    out = {}
    for gid, days in truth.items():
        mine = got.get(gid)
        if mine is None:
            raise GetterError(f"{path}: no rows for {gid}")
        missing = [d for d in days if d not in mine]
        if missing:
            raise GetterError(f"{path}: {gid} has no value for {len(missing)} of its "
                              f"{len(days)} days (first {missing[0]})")
        out[gid] = (np.array([mine[d] for d in days]), np.array(list(days.values())))
    if not out:
        raise GetterError("earth_metric: no truth to compare with")
    return out


def _score(metric: str, sim: np.ndarray, obs: np.ndarray) -> float:
    if metric in ("nse", "r2"):
        return nse(sim, obs)
    if metric == "kge":
        return kge(sim, obs)
    if metric == "rmse":
        return float(np.sqrt(np.mean((sim - obs) ** 2)))
    if metric == "nrmse":
        return float(np.sqrt(np.mean((sim - obs) ** 2)) / np.std(obs))
    if metric == "balanced_accuracy":  # 0/1 labels: the mean of the two classes' recalls
        if not np.isin(sim, (0, 1)).all():
            raise GetterError("earth_metric: predicted labels must be 0 or 1")
        return float((np.mean(sim[obs == 1] == 1) + np.mean(sim[obs == 0] == 0)) / 2)
    raise GetterError(f"earth_metric: unknown metric {metric!r} (nse, kge, r2, rmse, nrmse, "
                      "balanced_accuracy)")


@register("earth_metric")
def earth_metric(state: FinalState, path: str, metric: str, truth: dict[str, dict[str, float]],
                 group: str, value: str, per_group: bool = False, key: str = "date") -> float:
    """A metric of the values in CSV ``path`` (columns ``group``, ``key``, ``value``) against
    ``truth`` {group id: {date: true value}}: the median over groups of the per-group metric
    (``per_group``: ST-Bench's per-basin NSE/KGE) or the metric of all rows pooled. Every
    (group, date) of the truth must have a finite value; rows the truth lacks are ignored."""
    pairs = _paired(state, path, group, value, truth, key)
    if per_group:
        return round(float(np.median([_score(metric, s, o) for s, o in pairs.values()])), 6)
    sim = np.concatenate([s for s, _ in pairs.values()])
    obs = np.concatenate([o for _, o in pairs.values()])
    return round(_score(metric, sim, obs), 6)


def _reported(state: FinalState, path: str, key: str) -> float:
    data = read_bytes(state, path, MAX_REPORT_BYTES)
    try:
        doc = json.loads(decode_text(data))
    except (ValueError, RecursionError):
        raise GetterError(f"{path}: not valid JSON") from None
    if not isinstance(doc, dict) or key not in doc:
        raise GetterError(f"{path}: a JSON object with the key {key!r} is expected")
    value = doc[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value):
        raise GetterError(f"{path}: {key} is {str(value)[:40]!r}, not a finite number")
    return float(value)


@register("earth_reported_gap")
def earth_reported_gap(state: FinalState, report: str, key: str, path: str, metric: str,
                       truth: dict[str, dict[str, float]], group: str, value: str,
                       per_group: bool = False, row_key: str = "date") -> float:
    """How far the metric ``key`` reported in JSON ``report`` is from its recomputation by
    :func:`earth_metric` from the artifact (absolute difference)."""
    got = _reported(state, report, key)
    return round(abs(got - earth_metric(state, path, metric, truth, group, value, per_group,
                                        row_key)), 6)


@register("earth_silhouette")
def earth_silhouette(state: FinalState, path: str, features: dict[str, list[float]],
                     id_column: str, label_column: str = "cluster",
                     key: str = "silhouette") -> float:
    """The silhouette of the labels in CSV ``path`` (``id_column``, ``label_column``) in the
    feature space ``features`` {id: vector}; with ``key="n_clusters"``, the cluster count.
    Every id must have exactly one label; ids outside ``features`` are ignored."""
    labels: dict[str, str] = {}
    for row in read_table(state, path, [id_column, label_column]):
        if row[id_column] in labels:
            raise GetterError(f"{path}: {row[id_column]} is labelled twice")
        labels[row[id_column]] = row[label_column]
    missing = [i for i in features if i not in labels]
    if missing:
        raise GetterError(f"{path}: {len(missing)} of {len(features)} ids have no label "
                          f"(first {missing[0]})")
    ids = list(features)
    lab = np.array([labels[i] for i in ids])
    if key == "n_clusters":
        return float(len(set(lab.tolist())))
    try:
        return round(silhouette(np.array([features[i] for i in ids]), lab), 6)
    except ValueError as exc:
        raise GetterError(f"{path}: {exc}") from None


@register("earth_reported_silhouette_gap")
def earth_reported_silhouette_gap(state: FinalState, report: str, key: str, path: str,
                                  features: dict[str, list[float]], id_column: str,
                                  label_column: str = "cluster") -> float:
    """How far ``key`` of JSON ``report`` (the silhouette, or ``n_clusters``) is from its
    recomputation from the labels (absolute difference)."""
    got = _reported(state, report, key)
    which = "n_clusters" if key == "n_clusters" else "silhouette"
    return round(abs(got - earth_silhouette(state, path, features, id_column, label_column,
                                            which)), 6)


def _correlations(state: FinalState, path: str, key_column: str, value_column: str
                  ) -> dict[str, float]:
    out: dict[str, float] = {}
    for row in read_table(state, path, [key_column, value_column]):
        name = row[key_column].strip().casefold()
        if name in out:
            raise GetterError(f"{path}: {row[key_column]} appears twice")
        value = _number(row[value_column], path)
        if not -1.0 <= value <= 1.0:
            raise GetterError(f"{path}: {row[key_column]} = {value:g} is no correlation")
        out[name] = value
    return out


@register("earth_correlations")
def earth_correlations(state: FinalState, path: str, expected: dict[str, float],
                       tol: float = 0.01, key_column: str = "feature",
                       value_column: str = "spearman_rho") -> float:
    """The largest |correlation| in CSV ``path`` (one row per feature), provided every
    ``expected`` feature's value is within ``tol`` of the evaluator's recomputation on the
    staged data; a GetterError naming the first that is not."""
    got = _correlations(state, path, key_column, value_column)
    for name, want in expected.items():
        mine = got.get(name.casefold())
        if mine is None:
            raise GetterError(f"{path}: no row for {name}")
        if abs(mine - want) > tol:
            raise GetterError(f"{path}: {name} is {mine:.4f}, recomputed {want:.4f}")
    return round(max(abs(got[n.casefold()]) for n in expected), 6)


@register("earth_reported_correlation_gap")
def earth_reported_correlation_gap(state: FinalState, report: str, key: str, path: str,
                                   features: list[str], key_column: str = "feature",
                                   value_column: str = "spearman_rho") -> float:
    """How far ``key`` of JSON ``report`` is from the largest |correlation| of ``features``
    in CSV ``path`` (absolute difference)."""
    got = _reported(state, report, key)
    table = _correlations(state, path, key_column, value_column)
    missing = [f for f in features if f.casefold() not in table]
    if missing:
        raise GetterError(f"{path}: no row for {missing[0]}")
    return round(abs(got - max(abs(table[f.casefold()]) for f in features)), 6)


def _per_id(state: FinalState, path: str, id_column: str, value_column: str
            ) -> dict[str, float]:
    out: dict[str, float] = {}
    for row in read_table(state, path, [id_column, value_column]):
        if row[id_column] in out:
            raise GetterError(f"{path}: {row[id_column]} appears twice")
        out[row[id_column]] = _number(row[value_column], path)
    return out


@register("earth_relative_error")
def earth_relative_error(state: FinalState, path: str, truth: dict[str, float],
                         id_column: str, value_column: str, percent: bool = False) -> float:
    """The median over ``truth``'s ids of |value - true| / |true| of CSV ``path``'s
    ``value_column`` (one row per id; every id needed); in % with ``percent``."""
    got = _per_id(state, path, id_column, value_column)
    missing = [i for i in truth if i not in got]
    if missing:
        raise GetterError(f"{path}: no row for {missing[0]}")
    err = float(np.median([abs(got[i] - t) / abs(t) for i, t in truth.items()]))
    return round(100 * err if percent else err, 6)


@register("earth_reported_median_gap")
def earth_reported_median_gap(state: FinalState, report: str, key: str, path: str,
                              ids: list[str], id_column: str, value_column: str) -> float:
    """How far ``key`` of JSON ``report`` is from the median of CSV ``path``'s
    ``value_column`` over ``ids`` (absolute difference)."""
    got = _reported(state, report, key)
    table = _per_id(state, path, id_column, value_column)
    missing = [i for i in ids if i not in table]
    if missing:
        raise GetterError(f"{path}: no row for {missing[0]}")
    return round(abs(got - float(np.median([table[i] for i in ids]))), 6)


@register("earth_checked_median")
def earth_checked_median(state: FinalState, path: str, expected: dict[str, float],
                         id_column: str, value_column: str, tol: float) -> float:
    """The median of CSV ``path``'s ``value_column`` over ``expected``'s ids, provided every
    id's value is within ``tol`` of the evaluator's recomputation on the staged data (a
    per-id statistic with one definition: a signature, a trend, an AIC difference); a
    GetterError naming the first that is not."""
    got = _per_id(state, path, id_column, value_column)
    for i, want in expected.items():
        if i not in got:
            raise GetterError(f"{path}: no row for {i}")
        if abs(got[i] - want) > tol:
            raise GetterError(f"{path}: {i} {value_column} is {got[i]:.5g}, recomputed "
                              f"{want:.5g}")
    return round(float(np.median([got[i] for i in expected])), 6)


@register("earth_reported_mean_gap")
def earth_reported_mean_gap(state: FinalState, report: str, key: str, path: str,
                            truth: dict[str, dict[str, float]], group: str, value: str,
                            key_column: str = "date") -> float:
    """How far ``key`` of JSON ``report`` is from the mean of CSV ``path``'s ``value`` over
    the rows of ``truth`` (a long table as :func:`earth_metric` reads it)."""
    got = _reported(state, report, key)
    pairs = _paired(state, path, group, value, truth, key_column)
    return round(abs(got - float(np.concatenate([s for s, _ in pairs.values()]).mean())), 6)
