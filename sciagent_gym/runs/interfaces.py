"""Which tasks are proven through menus and dialogs (issue 33, item 4): the interface each GUI
oracle uses, derived from its steps and the tool's console language, and the share of feasible
``gui`` tasks proven through ``menus`` per tool (the README's env table, the closing notes)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sciagent_gym.tasks.oracle_interface import InterfaceUse, count_use
from sciagent_gym.tasks.spec import TaskSpec
from sciagent_gym.tools import load_adapter

#: The share of feasible ``gui`` tasks a tool should prove through ``menus`` (issue 33).
MENUS_TARGET = 0.70


def interface_use(spec: TaskSpec) -> InterfaceUse | None:
    """What the spec's GUI oracle types, runs and opens; None without a GUI oracle."""
    steps = spec.gui_oracle
    if steps is None:
        return None
    return count_use(steps, load_adapter(spec.tool, getters=False).console_language)


def derived_interface(spec: TaskSpec) -> str | None:
    """``menus``, ``console`` or ``mixed`` from the GUI oracle; None without one."""
    use = interface_use(spec)
    return use.interface if use is not None else None


@dataclass(frozen=True)
class ToolInterfaces:
    """A tool's feasible ``gui`` tasks by the interface their GUI oracles declare."""

    tool: str
    menus: int
    mixed: int
    console: int
    without: int  # feasible gui tasks with no GUI oracle (nothing to classify)

    @property
    def total(self) -> int:
        return self.menus + self.mixed + self.console + self.without

    @property
    def share(self) -> float:
        return self.menus / self.total if self.total else 1.0


def tool_interfaces(tool: str, specs: Iterable[TaskSpec]) -> ToolInterfaces:
    """Count the declared interfaces of a tool's feasible ``gui`` tasks."""
    counts = {"menus": 0, "mixed": 0, "console": 0, None: 0}
    for spec in specs:
        if spec.modality == "gui" and not spec.infeasible:
            counts[spec.oracle_interface] += 1
    return ToolInterfaces(tool, counts["menus"], counts["mixed"], counts["console"], counts[None])
