"""Demonstrations: GUI oracle episodes recorded as run directories, and finding one again.

``record_demos`` plays each task's GUI oracle (the task solved through ``step()`` alone, as an
agent must) on several seeds and records every episode as :func:`~.rollout.run_episode` does:
``trajectory.jsonl`` with the actions in pyautogui form, a PNG per observation, the final state
and ``result.json``. The demo directory is a run directory (``<task slug>-seed<k>/`` per
episode, ``summary.json`` and ``demos.json``), so ``report``, ``replay`` and ``export-minari``
read it as they read any run. A demonstration that does not reach 1.0 is not kept: its
directory is removed and it is listed under ``failed``.

:mod:`sciagent_gym.runs.worked_examples` finds one again for a prompt agent's worked example.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

from sciagent_gym.runs.rollout import EpisodeResult, run_episode
from sciagent_gym.tools import tool_info

MANIFEST = "demos.json"


@dataclass
class DemoSet:
    tool: str
    env_id: str
    directory: Path
    episodes: list[EpisodeResult] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # tasks without a GUI oracle

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "env": self.env_id, "policy": "gui-oracle",
                "episodes": [e.to_dict() for e in self.episodes], "failed": self.failed,
                "skipped": self.skipped}


def record_demos(tool: str, out: str | Path, seeds: Iterable[int] = range(3),
                 tasks: Iterable[str] | None = None,
                 progress: Callable[[str], None] | None = None,
                 env: gym.Env | None = None, **make_kwargs: Any) -> DemoSet:
    """Record the GUI oracle of every task of ``tool`` (or of ``tasks``) on ``seeds`` into
    ``out``; returns what was kept, what failed and which tasks have no GUI oracle."""
    info = tool_info(tool)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    own_env = env is None
    if own_env:
        env = gym.make(info.env_id, **make_kwargs)
    base = env.unwrapped
    demos = DemoSet(tool, info.env_id, out)
    try:
        for task_id in sorted(tasks) if tasks else base.task_ids:
            if base.specs[task_id].gui_oracle is None:
                demos.skipped.append(task_id)
                continue
            for seed in seeds:
                ep_dir = out / f"{task_id.split('/', 1)[1]}-seed{seed}"
                if progress:
                    progress(f"{task_id} seed {seed}")
                shutil.rmtree(ep_dir, ignore_errors=True)
                try:
                    result = run_episode(env, "gui-oracle", seed, task=task_id, out_dir=ep_dir)
                    error = None
                except Exception as exc:  # a broken demonstration is a finding, not a crash
                    result, error = None, f"{type(exc).__name__}: {exc}"
                if result is not None and result.success and result.score == 1.0:
                    demos.episodes.append(result)
                    continue
                shutil.rmtree(ep_dir, ignore_errors=True)
                demos.failed.append({"task_id": task_id, "seed": seed, "error": error,
                                     "score": result.score if result else None})
    finally:
        if own_env:
            env.close()
        _write_manifests(demos)
    return demos


def _write_manifests(demos: DemoSet) -> None:
    data = demos.to_dict()
    (demos.directory / MANIFEST).write_text(json.dumps(data, indent=2))
    n = max(len(demos.episodes), 1)
    summary = {"env": demos.env_id, "policy": "gui-oracle", "task": None,
               "episodes": data["episodes"],
               "mean_score": sum(e.score for e in demos.episodes) / n,
               "success_rate": sum(e.success for e in demos.episodes) / n}
    (demos.directory / "summary.json").write_text(json.dumps(summary, indent=2))
