"""Which tools a CI run proves in full, once proving all of them no longer fits its budget.

Every tool's full audit (oracle, GUI oracle, no-op, negatives, cheats, cross-task F1) takes
4-10 minutes of one worker; CI must stay under 30 minutes on 2 cores. So a run audits at most
``SCIAGENT_AUDIT_BUDGET`` tools (default 3: with 4, CI took 37-40 minutes once 19 tools had
long-horizon tasks; five took it to 34 minutes when there were fewer): one of the tools whose
folders changed most recently (in the last 30 commits: what a submission touched is proven
first), then the others in turn, a window that moves on with every commit, so consecutive
runs cover every tool.
``SCIAGENT_AUDIT_ALL=1`` audits every tool (the full table of a closing note:
``SCIAGENT_AUDIT_ALL=1 make test``, or ``sciagent-gym audit``). A tool left out of a run is
reported as skipped, with the reason.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Tools with a full audit per CI run.
AUDIT_BUDGET = int(os.environ.get("SCIAGENT_AUDIT_BUDGET", "3"))
#: Commits looked back for tools a submission changed.
RECENT_COMMITS = 30
#: Slots of a run kept for the rotation, whatever changed (so no tool waits forever).
ROTATING_SLOTS = 2


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout if out.returncode == 0 else None


def rotation_key() -> int:
    """``SCIAGENT_ROTATION`` if set, else the number of commits on HEAD (0 without git)."""
    if os.environ.get("SCIAGENT_ROTATION"):
        return int(os.environ["SCIAGENT_ROTATION"])
    count = _git("rev-list", "--count", "HEAD")
    return int(count.strip()) if count and count.strip().isdigit() else 0


def recently_changed(tools: list[str], commits: int = RECENT_COMMITS) -> list[str]:
    """The tools whose ``envs/<tool>/`` or ``task_specs/<tool>/`` changed in the last
    ``commits`` commits, most recent first."""
    log = _git("log", f"-{commits}", "--name-only", "--format=")
    found: list[str] = []
    for path in (log or "").split():
        parts = path.split("/")
        if len(parts) > 2 and parts[0] in ("envs", "task_specs") and parts[1] in tools:
            if parts[1] not in found:
                found.append(parts[1])
    return found


def audit_sample(tools: list[str], budget: int | None = None, key: int | None = None,
                 fresh: list[str] | None = None) -> list[str]:
    """The tools this run audits in full, in ``tools`` order (see the module docstring)."""
    budget = AUDIT_BUDGET if budget is None else budget
    if os.environ.get("SCIAGENT_AUDIT_ALL") == "1" or len(tools) <= budget:
        return list(tools)
    fresh = [t for t in (recently_changed(tools) if fresh is None else fresh) if t in tools]
    chosen = set(fresh[:max(budget - ROTATING_SLOTS, 0)])
    rest = [t for t in tools if t not in chosen]
    slots = budget - len(chosen)
    if slots and rest:
        key = rotation_key() if key is None else key
        start = (key * slots) % len(rest)
        chosen |= {rest[(start + i) % len(rest)] for i in range(min(slots, len(rest)))}
    return [t for t in tools if t in chosen]
