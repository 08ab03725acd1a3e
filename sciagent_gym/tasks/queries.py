"""Query pools: a task family with a fixed list of scoped queries instead of unbounded seeds.

ST-Bench expands each of its tasks into ~20 queries by attaching dataset scopes (snow basins,
arid basins, ...) and splits every task's pool into train, val and test in fixed proportions
(1,184 / 391 / 492 of 2,067 queries), so that a workflow tuned on a task's training queries is
tested on held-out queries of the same task. A spec with ``"queries"`` works the same way:
its variants are the query indices 0..n-1 (``reset(options={"query": "<id>"})`` or
``{"variant": i}``), each query's ``params`` override the spec's, ``{query}`` and ``{scope}``
name it in the instruction, and a query's split is fixed by its id, not drawn per seed.

Schema of one entry: ``{"id": "<slug>", "scope": "<text for the instruction>", "params": {...}}``
(params: literal values only, so that a query is one fixed episode definition).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from sciagent_gym.tasks.step_schema import _require

#: ST-Bench's query split: counts of its 2,067 queries, applied as proportions within each task.
QUERY_SPLITS = {"train": 1184, "val": 391, "test": 492}
#: Fewest queries a pool may have: with fewer, rounding leaves val or test empty.
MIN_QUERIES = 5
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def check_queries(queries: Any, source: str) -> tuple[dict[str, Any], ...]:
    """Validate a spec's ``queries`` (raises TaskSpecError naming the entry)."""
    _require(isinstance(queries, list) and len(queries) >= MIN_QUERIES, source, "queries",
             f"must be a list of at least {MIN_QUERIES} queries")
    seen: set[str] = set()
    for i, q in enumerate(queries):
        where = f"queries[{i}]"
        _require(isinstance(q, dict) and {"id", "scope"} <= set(q)
                 and not set(q) - {"id", "scope", "params"}, source, where,
                 "a query is {id, scope, params (optional)}")
        _require(isinstance(q["id"], str) and bool(_ID.match(q["id"])) and q["id"] not in seen,
                 source, where + ".id", "must be a unique lower-case slug")
        seen.add(q["id"])
        _require(isinstance(q["scope"], str) and q["scope"].strip() != "", source,
                 where + ".scope", "must be a non-empty string")
        params = q.get("params", {})
        _require(isinstance(params, dict)
                 and all(not isinstance(v, dict) for v in params.values())
                 and not {"query", "scope"} & set(params), source, where + ".params",
                 "must map names to literal values (not 'query' or 'scope')")
    return tuple(queries)


def split_sizes(n: int) -> dict[str, int]:
    """How many of a pool of ``n`` queries each split gets (ST-Bench's proportions, rounded;
    test takes the remainder)."""
    total = sum(QUERY_SPLITS.values())
    train = round(n * QUERY_SPLITS["train"] / total)
    val = round(n * QUERY_SPLITS["val"] / total)
    return {"train": train, "val": val, "test": n - train - val}


def query_order(task_id: str, queries: tuple[dict[str, Any], ...]) -> list[int]:
    """The pool's indices in a fixed pseudo-random order (a hash of task and query id), which
    the splits cut in turn: the same on every machine, whatever order the spec lists them in."""
    return sorted(range(len(queries)), key=lambda i: hashlib.sha256(
        f"{task_id}?{queries[i]['id']}".encode()).digest())


def query_split(task_id: str, queries: tuple[dict[str, Any], ...], index: int) -> str:
    """The split query ``index`` of this pool belongs to."""
    rank = query_order(task_id, queries).index(index)
    sizes = split_sizes(len(queries))
    if rank < sizes["train"]:
        return "train"
    return "val" if rank < sizes["train"] + sizes["val"] else "test"


def query_index(task_id: str, queries: tuple[dict[str, Any], ...], query: str | int) -> int:
    """The variant index of a query given by id (or index); ValueError naming the known ids."""
    ids = [q["id"] for q in queries]
    if isinstance(query, int) and not isinstance(query, bool) and 0 <= query < len(ids):
        return query
    if query in ids:
        return ids.index(query)
    raise ValueError(f"{task_id} has no query {query!r} (queries: {', '.join(ids)})")


def query_params(queries: tuple[dict[str, Any], ...], index: int, task_id: str
                 ) -> dict[str, Any]:
    """What query ``index`` adds to the sampled params: its own, its id and its scope."""
    if not 0 <= index < len(queries):
        raise ValueError(f"{task_id} has {len(queries)} queries: variant {index} is none of "
                         f"them (use 0..{len(queries) - 1} or options={{'query': '<id>'}})")
    q = queries[index]
    return {**q.get("params", {}), "query": q["id"], "scope": q["scope"]}
