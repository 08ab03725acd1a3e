"""Generators run with BLAS on one thread (sciagent_gym/blas.py): a staging in a warm pool's
thread beside the main thread's numerical work once spun in OpenBLAS for minutes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_info

from sciagent_gym.tasks.spec import parse_spec
from sciagent_gym.tasks.task import Task


def _blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_a_generator_runs_on_one_blas_thread_and_the_limit_ends_with_it(tmp_path: Path):
    np.linalg.lstsq(np.ones((4, 2)), np.ones(4), rcond=None)  # BLAS loaded
    before = _blas_threads()
    seen: list[list[int]] = []

    def gen(work: Path, rng, **_):
        seen.append(_blas_threads())
        (work / "x.txt").write_text("1")
        return {"x": 1}

    spec = parse_spec({
        "id": "t/blas", "tool": "t", "title": "t", "instruction": "i", "difficulty": "easy",
        "modality": "code", "setup": {"generate": [{"fn": "g", "as": "g"}]},
        "evaluator": {"criteria": [{"name": "c", "getter": {"fn": "file_text", "path": "x.txt"},
                                    "check": {"op": "text", "expected": "1"}}]},
        "oracle": ["DONE"], "negatives": {"nothing": ["DONE"]}}, "blas.json")
    task = Task(spec, 0, {"g": gen}, {"work": "/w", "home": "/h", "tmp": "/t"})
    try:
        task.stage(tmp_path / "work")
    finally:
        task.cleanup()
    assert seen and all(n == 1 for n in seen[0]), seen
    assert _blas_threads() == before
