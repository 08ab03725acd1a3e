"""A recorded demonstration as a prompt agent's worked example (``run --policy vlm --demos``).

``find_demo`` picks, in a directory of ``sciagent-gym demos``, a demonstration of the same task
on another variant than the one being played (a worked example must not be the answer to the
episode at hand); ``Demo.as_text`` is what the prompt shows: the instruction and the actions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciagent_gym.runs.replay import episode_dirs, load_episode


@dataclass(frozen=True)
class Demo:
    """One recorded demonstration, as a prompt shows it: the instruction and the actions."""

    task_id: str
    variant: int
    instruction: str
    actions: list[Any]
    directory: Path

    def as_text(self) -> str:
        """The worked example: the instruction, then each step() action in order."""
        lines = [f"Instruction: {self.instruction}", "Actions, one per step:"]
        lines += [f"{i}. {a if isinstance(a, str) else json.dumps(a)}"
                  for i, a in enumerate(self.actions, 1)]
        return "\n".join(lines)


def load_demo(ep_dir: str | Path) -> Demo:
    """A recorded episode as a :class:`Demo` (its ``step()`` actions, scripted waits left out)."""
    ep_dir = Path(ep_dir)
    result, lines = load_episode(ep_dir)
    reset = next((x for x in lines if "reset" in x), {})
    actions = [x["action"] for x in lines if "action" in x and "step" in x]
    return Demo(result["task_id"], int(result["variant"]),
                reset.get("reset", {}).get("instruction", ""), actions, ep_dir)


def find_demo(demo_dir: str | Path, task_id: str, not_variant: int | None = None) -> Demo | None:
    """A successful demonstration of ``task_id`` in ``demo_dir`` on another variant than
    ``not_variant`` (a worked example must not be the answer to the episode at hand)."""
    for ep in episode_dirs(Path(demo_dir)):
        result, _ = load_episode(ep)
        if result["task_id"] != task_id or not result.get("success"):
            continue
        if not_variant is not None and int(result["variant"]) == int(not_variant):
            continue
        return load_demo(ep)
    return None
