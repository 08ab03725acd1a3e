"""The run directory, as rollouts write it and reports read it: one episode per directory,
each holding its ``result.json`` (score, breakdown, task, timings).

Standard library only and below everything that writes or reads runs, so a ported
benchmark's report reads a run without importing the rollout machinery.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RESULT = "result.json"


def find_episodes(run_dir: str | Path) -> list[Path]:
    """Episode directories (those holding a result.json) under ``run_dir``, sorted."""
    return sorted(p.parent for p in Path(run_dir).rglob(RESULT))


def load_results(run_dir: str | Path) -> list[dict[str, Any]]:
    """Every episode's result under ``run_dir``, in :func:`find_episodes` order."""
    return [json.loads((ep / RESULT).read_text()) for ep in find_episodes(run_dir)]
