"""Baseline rollouts (random, oracle, GUI oracle, no-op) and their run directories.

A run directory holds, per episode, ``trajectory.jsonl`` (one line per step: the action as given,
reward, termination, action errors, timings and, on the last step, the evaluation), one PNG per
observation, the saved final state (what the evaluator read) and ``result.json``; the run's
``summary.json`` lists every episode.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from PIL import Image

from sciagent_gym.actions.human import action_to_dict
from sciagent_gym.actions.space import ACTION_TYPES, from_space_sample
from sciagent_gym.actions.validate import ACTION_CLASSES
from sciagent_gym.runs.worked_examples import find_demo
from sciagent_gym.tasks.steps import run_steps

POLICIES = ("random", "oracle", "gui-oracle", "noop", "vlm")
#: Policies that play a task's scripted steps (their episodes end "script").
SCRIPTED = {"oracle": "oracle", "gui-oracle": "gui_oracle"}
# Random exploration never ends the episode itself, holds nothing down and runs no shell.
_RANDOM_TYPES = [ACTION_TYPES.index(t) for t in (
    "click", "double_click", "right_click", "move", "drag", "scroll", "type", "key", "hotkey")]


class RandomPolicy:
    """Uniform over GUI action types, then a sample of the structured action space."""

    def __init__(self, env: gym.Env, seed: int | None = None) -> None:
        self.space = env.action_space
        self.space.seed(seed)
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs: dict[str, Any]) -> dict[str, Any]:
        sample = self.space.sample()
        sample["action_type"] = int(self.rng.choice(_RANDOM_TYPES))
        return sample


@dataclass
class EpisodeResult:
    task_id: str
    variant: int
    seed: int
    policy: str
    score: float
    success: bool
    steps: int
    terminated: bool
    truncated: bool
    #: How the episode ended: "agent" (the policy said DONE or FAIL), "budget" (the step
    #: budget ran out, or the runner sent DONE on the policy's last allowed step), "crash"
    #: (the program exited), "limit" (a sandbox zone passed its memory budget and was
    #: stopped) or "script" (an oracle or no-op run).
    end: str
    seconds: float
    reset_seconds: float
    criteria: list[dict] = field(default_factory=list)
    directory: str | None = None
    split: str = ""
    paths: dict[str, str] = field(default_factory=dict)
    agent: dict[str, Any] = field(default_factory=dict)  # a model agent's usage
    modality: str = ""  # what the agent could use: gui, gui+cli or code
    oracle_steps: int | None = None  # the GUI oracle's step count on this variant (Steps* ref)
    demo: str | None = None  # the demonstration a prompt agent was shown (its directory)
    query: str | None = None  # the query's id, for a task with a query pool
    #: The episode reports of the final step (``evaluation.rewards``: a ported benchmark's
    #: breakdown, e.g. ST-Bench's per-metric reward), by key; result.json has them at its top
    #: level, where the benchmark's report reads them.
    reports: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(out.pop("reports"))
        return out


class _Recorder:
    def __init__(self, directory: Path | None) -> None:
        self.dir = directory
        self.count = 0
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)
            self._fh = (directory / "trajectory.jsonl").open("w")

    def frame(self, obs: dict[str, Any]) -> str | None:
        if self.dir is None:
            return None
        name = f"step_{self.count:03d}.png"
        Image.fromarray(obs["screenshot"]).save(self.dir / name, compress_level=1)
        self.count += 1
        return name

    def line(self, record: dict[str, Any]) -> None:
        if self.dir is not None:
            self._fh.write(json.dumps(record, default=_jsonable) + "\n")
            self._fh.flush()

    def close(self) -> None:
        if self.dir is not None:
            self._fh.close()


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return dict(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    return str(obj)


def _describe(action: Any, screen: tuple[int, int]) -> Any:
    """The action as JSON that :func:`parse_action` reads back (for replays)."""
    if isinstance(action, dict) and "action_type" in action:
        return [action_to_dict(a) for a in from_space_sample(action, screen)]
    if isinstance(action, ACTION_CLASSES):
        return [action_to_dict(action)]
    if isinstance(action, list | tuple) and all(isinstance(a, ACTION_CLASSES) for a in action):
        return [action_to_dict(a) for a in action]
    return action


class _RecordingEnv(gym.Wrapper):
    """Logs every ``step`` of the wrapped env to a recorder."""

    def __init__(self, env: gym.Env, recorder: _Recorder) -> None:
        super().__init__(env)
        self.recorder = recorder
        self.last: tuple | None = None
        self.note: dict[str, Any] = {}  # merged into the next step's line (e.g. a reply)

    def step(self, action):
        out = self.env.step(action)
        obs, reward, terminated, truncated, info = out
        screen = (self.env.unwrapped.width, self.env.unwrapped.height)
        self.recorder.line({
            "step": info.get("steps"), "action": _describe(action, screen),
            "parsed": info.get("parsed"), "reward": reward,
            "terminated": terminated, "truncated": truncated,
            "action_error": info.get("action_error"), "app_crashed": info.get("app_crashed"),
            "timings": info.get("timings"), "evaluation": info.get("evaluation"),
            "terminal": obs["terminal"][-2000:], "screenshot": self.recorder.frame(obs),
            **self.note,
        })
        self.note = {}
        self.last = out
        return out


def _makes_actions(step: dict) -> bool:
    """Whether a scripted step sends actions through step() (an answer, windowed actions)."""
    return "action" in step or "answer" in step or "in_window" in step


def info_split(base) -> str:
    from sciagent_gym.tasks.task import episode_split

    return episode_split(base.task.spec, base.task.seed)


def run_episode(env: gym.Env, policy: str, seed: int, task: str | None = None,
                out_dir: Path | None = None, max_steps: int | None = None,
                agent=None, demos: str | Path | None = None,
                options: dict[str, Any] | None = None) -> EpisodeResult:
    """One episode of ``policy`` on ``env`` (a made env), recorded into ``out_dir`` if given.

    ``policy="vlm"`` needs ``agent``, a :class:`sciagent_gym.agents.PromptAgent` (or anything
    with its ``reset(instruction, screen, example)`` / ``act(obs, feedback) -> (action,
    reply)`` / ``usage`` shape); its replies and usage are recorded with each step. With
    ``demos`` (a directory of ``sciagent-gym demos``), the agent is shown one demonstration of
    the same task on another variant as a worked example (none if the directory has none).
    ``options`` go to ``reset`` beside the task (e.g. ``{"query": "<id>"}`` pins one query of
    a query pool).
    """
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r} (choose from {', '.join(POLICIES)})")
    if policy == "vlm" and agent is None:
        raise ValueError("policy 'vlm' needs an agent (e.g. sciagent_gym.agents.PromptAgent)")
    base = env.unwrapped
    t0 = time.monotonic()
    reset_options = {**(options or {}), **({"task": task} if task else {})}
    obs, info = env.reset(seed=seed, options=reset_options or None)
    reset_seconds = time.monotonic() - t0
    recorder = _Recorder(out_dir)
    recorder.line({"reset": {k: info[k] for k in ("task_id", "variant", "instruction",
                                                    "timings")},
                   "screenshot": recorder.frame(obs)})
    wrapped = _RecordingEnv(env, recorder)
    budget = min(max_steps or base.max_steps, base.max_steps)
    forced = False
    demo_used = None
    try:
        if policy in SCRIPTED:
            # One step at a time, so that scripted steps (macros, shell commands, waits for a
            # window) sit in the trajectory between the actions, where a replay needs them.
            # The GUI oracle's steps reach step() as an agent's actions would: a demonstration.
            for step in base.task.steps(SCRIPTED[policy]):
                if base.evaluation is not None:
                    break
                if isinstance(step, dict) and not _makes_actions(step):
                    recorder.line({"scripted": step})
                elif isinstance(step, dict) and "action" not in step:
                    # its actions are recorded as they reach step(); the line says where they
                    # came from (a replay skips it)
                    recorder.line({"derived_from": step})
                run_steps(wrapped, [step])
        elif policy == "noop":
            wrapped.step("DONE")
        elif policy == "vlm":
            example = ""
            if demos is not None:
                demo = find_demo(demos, base.task.id, not_variant=base.task.seed)
                if demo is not None:
                    example, demo_used = demo.as_text(), str(demo.directory)
                    recorder.line({"demo": demo_used})
            agent.reset(info["instruction"], (base.width, base.height), example=example)
            feedback = None
            for _ in range(budget):
                action, reply = agent.act(obs, feedback)
                wrapped.note = {"reply": reply, "usage": agent.usage.to_dict()}
                obs, _, terminated, truncated, step_info = wrapped.step(action)
                feedback = step_info.get("action_error")
                if terminated or truncated:
                    break
        else:
            act = RandomPolicy(env, seed)
            for i in range(budget):
                forced = i == budget - 1  # the runner, not the policy, ends it: budget spent
                obs, _, terminated, truncated, _ = wrapped.step("DONE" if forced else act(obs))
                if terminated or truncated:
                    break
        if base.evaluation is None:  # a runner budget below the env's, or an oracle that
            forced = True            # forgot DONE: the episode still gets scored
            wrapped.step("DONE")
    finally:
        recorder.close()
    _, _, terminated, truncated, info = wrapped.last
    evaluation = base.evaluation
    if info.get("end") == "crashed":
        end = "crash"
    elif info.get("end") == "limit":
        end = "limit"
    elif policy in (*SCRIPTED, "noop"):
        end = "script"
    elif info.get("end") == "truncated" or forced:
        end = "budget"
    else:
        end = "agent"
    if out_dir is not None:
        base.final_state.save(out_dir / "final_state")
    result = EpisodeResult(
        task_id=base.task.id, variant=base.task.seed, seed=seed, policy=policy,
        score=evaluation.score, success=evaluation.success, steps=info["steps"],
        terminated=terminated, truncated=truncated, end=end, seconds=time.monotonic() - t0,
        reset_seconds=reset_seconds, criteria=evaluation.to_dict()["criteria"],
        directory=str(out_dir) if out_dir else None, split=info_split(base),
        paths=dict(base.provider.paths),
        agent=agent.usage.to_dict() if policy == "vlm" else {},
        modality=base.modality, oracle_steps=base.task.oracle_steps, demo=demo_used,
        query=base.task.params.get("query") if base.task.spec.queries else None,
        reports=dict(base.episode_reports),
    )
    if out_dir is not None:
        (out_dir / "result.json").write_text(json.dumps(result.to_dict(), indent=2,
                                                        default=_jsonable))
    return result
