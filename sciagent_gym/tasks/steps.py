"""Running a task's scripted steps (its oracle or a negative) through a live env."""

from __future__ import annotations

import re
import time
from typing import Any

from sciagent_gym.errors import (
    StepError,
)


def run_steps(env, steps: list[Any], refused_ok: bool = False) -> int:
    """Perform ``steps`` in ``env`` (an env or a wrapper of one); returns the env steps taken.

    Action strings and ``{"action": ...}`` go through ``env.step`` exactly as an agent's would;
    ``{"script": ...}`` runs in the program's own scripting channel and ``{"run": ...}`` as a
    shell command in the sandbox (privileges of the task author, not of the agent).
    ``{"script": ..., "answer": "<template>"}`` then gives the script's output, put into the
    template's ``{output}``, through the answer action. An action the env refuses raises
    StepError unless ``refused_ok`` (cheats: a refused shell command is the defence working).
    """
    base = env.unwrapped
    taken = 0
    for i, step in enumerate(steps):
        if isinstance(step, dict) and "answer" in step:
            output = base.adapter.run_script(base.provider, step["script"]) or ""
            step = {"action": {"type": "answer",
                               "text": step["answer"].replace("{output}", output.strip())}}
        if isinstance(step, str) or "action" in step:
            action = step if isinstance(step, str) else step["action"]
            _, _, terminated, truncated, info = env.step(action)
            taken += 1
            if info.get("action_error") and not refused_ok:
                raise StepError(f"step {i} ({action!r}): {info['action_error']}")
            if terminated or truncated:
                break
        elif "script" in step:
            base.adapter.run_script(base.provider, step["script"])
        elif "await_window" in step:
            await_window(base.provider, step["await_window"], gone=step.get("gone", False),
                         focused=step.get("focused", False), timeout=step.get("timeout", 20.0))
        elif "run" in step:
            result = base.provider.run_command(step["run"])
            if result.returncode != 0:
                raise StepError(f"step {i} (run {step['run']!r}) failed: {result.output[-500:]}")
        else:
            raise StepError(f"step {i}: unknown step {step!r}")
    return taken


def await_window(provider, title: str, gone: bool = False, focused: bool = False,
                 timeout: float = 20.0) -> None:
    """Wait until a window whose title matches ``title`` is open (and, with ``focused``, the
    window manager's active window) or, with ``gone``, until none is open; then until the screen
    settles. Raises StepError on timeout."""
    pattern = re.compile(title)
    deadline = time.monotonic() + timeout
    while True:
        matching = [w for w in provider.windows() if pattern.search(w.title)]
        if gone:
            done = not matching
        else:
            done = any(w.active or not focused for w in matching)
        if done:
            break
        if time.monotonic() > deadline:
            state = "still open" if gone else ("not focused" if matching else "not open")
            titles = [w.title for w in provider.windows()]
            raise StepError(f"window {title!r} {state} after {timeout:g} s (windows: {titles})")
        time.sleep(0.05)
    provider.wait_settled()
