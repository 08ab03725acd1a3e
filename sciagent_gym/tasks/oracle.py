"""Running a task's scripted steps (its oracle or a negative) through a live env."""

from __future__ import annotations

from typing import Any

from sciagent_gym.errors import SciAgentError


class StepError(SciAgentError):
    """A scripted step could not be performed."""


def run_steps(env, steps: list[Any]) -> int:
    """Perform ``steps`` in ``env`` (an env or a wrapper of one); returns the env steps taken.

    Action strings and ``{"action": ...}`` go through ``env.step`` exactly as an agent's would;
    ``{"script": ...}`` runs in the program's own scripting channel and ``{"run": ...}`` as a
    shell command in the sandbox (privileges of the task author, not of the agent).
    """
    base = env.unwrapped
    taken = 0
    for i, step in enumerate(steps):
        if isinstance(step, str) or "action" in step:
            action = step if isinstance(step, str) else step["action"]
            _, _, terminated, truncated, info = env.step(action)
            taken += 1
            if info.get("action_error"):
                raise StepError(f"step {i} ({action!r}): {info['action_error']}")
            if terminated or truncated:
                break
        elif "script" in step:
            base.adapter.run_script(base.provider, step["script"])
        elif "run" in step:
            result = base.provider.run_command(step["run"])
            if result.returncode != 0:
                raise StepError(f"step {i} (run {step['run']!r}) failed: {result.output[-500:]}")
        else:
            raise StepError(f"step {i}: unknown step {step!r}")
    return taken
