"""Re-executing a recorded episode and checking that it reaches the same score.

A run directory's episode (``trajectory.jsonl`` + ``result.json``, as rollouts write them) is
replayed on a fresh env: the same task and seed, then every recorded line in order: actions go
through ``env.step`` exactly as recorded (strings as given, structured actions in their JSON
form), scripted steps (macros, shell commands, waits for a window) through the task runner. A
replay that scores differently means the episode depended on timing or on state outside the
task (or that the program or the evaluators changed since the run).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

from sciagent_gym.actions.human import parse_action_dict
from sciagent_gym.tasks.steps import run_steps


@dataclass
class ReplayResult:
    episode: str
    task_id: str
    seed: int
    recorded_score: float
    replayed_score: float | None
    recorded_success: bool
    replayed_success: bool | None
    steps: int
    error: str | None = None

    @property
    def same(self) -> bool:
        return (self.error is None and self.replayed_score is not None
                and abs(self.replayed_score - self.recorded_score) < 1e-9
                and self.replayed_success == self.recorded_success)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "same": self.same}


def episode_dirs(run_dir: Path) -> list[Path]:
    """The episode directories of a run (or the run itself if it is one episode)."""
    run_dir = Path(run_dir)
    if (run_dir / "trajectory.jsonl").is_file():
        return [run_dir]
    found = sorted(p.parent for p in run_dir.glob("*/trajectory.jsonl")
                   if (p.parent / "result.json").is_file())
    if not found:
        raise FileNotFoundError(f"{run_dir}: no episode (trajectory.jsonl + result.json) found")
    return found


def load_episode(ep_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(result.json, trajectory lines) of one recorded episode."""
    result = json.loads((ep_dir / "result.json").read_text())
    lines = []
    for n, raw in enumerate((ep_dir / "trajectory.jsonl").read_text().splitlines(), 1):
        if raw.strip():
            try:
                lines.append(json.loads(raw))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{ep_dir}/trajectory.jsonl line {n}: {exc}") from None
    return result, lines


def _as_action(recorded: Any, screen: tuple[int, int]) -> Any:
    """A recorded action back in a form ``env.step`` takes."""
    if isinstance(recorded, list) and all(isinstance(a, dict) for a in recorded):
        actions = []
        for item in recorded:
            actions.extend(parse_action_dict(item, screen))
        return actions
    return recorded


def replay_episode(env: gym.Env, ep_dir: Path) -> ReplayResult:
    """Replay one episode on ``env`` (made for the episode's tool)."""
    result, lines = load_episode(ep_dir)
    base = env.unwrapped
    out = ReplayResult(episode=str(ep_dir), task_id=result["task_id"], seed=result["seed"],
                       recorded_score=result["score"], replayed_score=None,
                       recorded_success=result["success"], replayed_success=None, steps=0)
    try:
        env.reset(seed=result["seed"], options={"task": result["task_id"]})
        screen = (base.width, base.height)
        for line in lines:
            if base.evaluation is not None:
                break
            if "scripted" in line:
                run_steps(env, [line["scripted"]])
            elif "action" in line:
                env.step(_as_action(line["action"], screen))
                out.steps += 1
        if base.evaluation is None:  # the recorded episode ended by truncation
            env.step("DONE")
            out.steps += 1
    except Exception as exc:  # a bad line, a failed script or program: report, keep going
        out.error = f"{type(exc).__name__}: {exc}"
        return out
    out.replayed_score = base.evaluation.score
    out.replayed_success = base.evaluation.success
    return out


def replay_run(run_dir: Path, make_env=None, progress=None) -> list[ReplayResult]:
    """Replay every episode of a run; envs are made per tool (``make_env(env_id)``)."""
    import sciagent_gym  # noqa: F401  (registers the env ids)
    from sciagent_gym.tools import tool_info

    make_env = make_env or (lambda env_id: gym.make(env_id, pool_size=0))
    envs: dict[str, gym.Env] = {}
    results = []
    try:
        for ep_dir in episode_dirs(run_dir):
            result, _ = load_episode(ep_dir)
            env_id = tool_info(result["task_id"].split("/", 1)[0]).env_id
            if env_id not in envs:
                envs[env_id] = make_env(env_id)
            results.append(replay_episode(envs[env_id], ep_dir))
            if progress is not None:
                progress(results[-1])
    finally:
        for env in envs.values():
            env.close()
    return results
