"""Step-level metrics for state-control (toggle) decisions, after StaR (Wu et al. 2025).

A sample is one recorded state of a toggle task: the screenshot shows a toggle (a checkbox, a
check menu item, a mode button) either already in the state the instruction asks for
(a *negative* instruction: the right action is to leave it and say DONE) or not (a *positive*
instruction: the right action is a click on the toggle). A policy's predicted action for the
sample is compared with that gold action:

- **TMR** (type match rate): the predicted action type (click or DONE) is the gold one;
- **AMR** (action match rate): type and parameters match; a click matches when it lands inside
  the toggle's box (pixel-exact equality of coordinates would reward nothing; the box is the
  toggle's clickable area). ``O-AMR`` over all samples, ``P-AMR`` over positive, ``N-AMR``
  over negative instructions;
- **P-FNR**: share of positive samples where the policy did not click at all (it left a state
  that had to change);
- **N-FPR**: share of negative samples where the policy clicked the toggle anyway (it changed
  a state that was already right). A click elsewhere on a negative sample is a type error but
  not a false positive: the toggle's state is unchanged.

Rates are percentages, as in the paper; a rate over an empty group is ``None``, never 0.
Task success with partial credit (several toggles in one task) is :func:`task_success`.
Coordinates are also reported normalised to [0, 1000], the paper's convention.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sciagent_gym.actions import types as A
from sciagent_gym.actions.parse import parse_action
from sciagent_gym.errors import ActionError

Box = tuple[int, int, int, int]  # x0, y0, x1, y1 in screen pixels, inclusive-exclusive


@dataclass(frozen=True)
class ToggleSample:
    """One decision point: is the toggle in ``box`` to be clicked (positive) or left alone?"""

    positive: bool
    box: Box
    screen: tuple[int, int] = (1280, 800)

    def __post_init__(self) -> None:
        x0, y0, x1, y1 = self.box
        if not (0 <= x0 < x1 <= self.screen[0] and 0 <= y0 < y1 <= self.screen[1]):
            raise ValueError(f"toggle box {self.box} is empty or off the {self.screen} screen")

    @property
    def gold_type(self) -> str:
        return "click" if self.positive else "done"


@dataclass(frozen=True)
class Decision:
    """A predicted action reduced to what the metrics look at."""

    type: str  # "click", "done" or "other" (anything else, including unparseable replies)
    point: tuple[int, int] | None = None

    def normalised(self, screen: tuple[int, int]) -> tuple[int, int] | None:
        """The click point in the paper's [0, 1000] coordinates."""
        if self.point is None:
            return None
        return (round(self.point[0] * 1000 / screen[0]), round(self.point[1] * 1000 / screen[1]))


def decision_of(action: Any, screen: tuple[int, int] = (1280, 800)) -> Decision:
    """What a policy's action (any form ``step()`` takes) decides for a toggle sample: its
    first click (left button) or DONE; anything else, or an action the env would reject,
    is ``other``."""
    try:
        parsed = parse_action(action, screen)
    except ActionError:
        return Decision("other")
    for act in parsed:
        if isinstance(act, A.Click) and act.button == "left":
            return Decision("click", (int(act.x), int(act.y)))
        if isinstance(act, A.Done):
            return Decision("done")
        if isinstance(act, A.Wait | A.Move):
            continue  # waiting or hovering first does not decide anything
        return Decision("other")
    return Decision("other")


def _inside(point: tuple[int, int], box: Box) -> bool:
    return box[0] <= point[0] < box[2] and box[1] <= point[1] < box[3]


def _rate(hits: int, total: int) -> float | None:
    return None if total == 0 else 100.0 * hits / total


def state_control_metrics(samples: Sequence[ToggleSample],
                          decisions: Sequence[Decision]) -> dict[str, Any]:
    """O-AMR, P-AMR, N-AMR, TMR, P-FNR and N-FPR (percent) with the counts behind them."""
    if len(samples) != len(decisions):
        raise ValueError(f"{len(samples)} samples but {len(decisions)} decisions")
    pos = [(s, d) for s, d in zip(samples, decisions, strict=True) if s.positive]
    neg = [(s, d) for s, d in zip(samples, decisions, strict=True) if not s.positive]

    def match(s: ToggleSample, d: Decision) -> bool:
        if s.positive:
            return d.type == "click" and d.point is not None and _inside(d.point, s.box)
        return d.type == "done"

    all_pairs = pos + neg
    return {
        "n": len(all_pairs), "n_positive": len(pos), "n_negative": len(neg),
        "O-AMR": _rate(sum(match(s, d) for s, d in all_pairs), len(all_pairs)),
        "P-AMR": _rate(sum(match(s, d) for s, d in pos), len(pos)),
        "N-AMR": _rate(sum(match(s, d) for s, d in neg), len(neg)),
        "TMR": _rate(sum(d.type == s.gold_type for s, d in all_pairs), len(all_pairs)),
        "P-FNR": _rate(sum(d.type != "click" for _, d in pos), len(pos)),
        "N-FPR": _rate(sum(d.type == "click" and d.point is not None and _inside(d.point, s.box)
                           for s, d in neg), len(neg)),
    }


def task_success(subtasks: Iterable[bool]) -> float:
    """Partial-credit success of a multi-toggle task: the share of its toggles left in the
    instructed state (half right is 0.5, not 0 or 1)."""
    results = list(subtasks)
    if not results:
        raise ValueError("a task has at least one toggle")
    return sum(bool(r) for r in results) / len(results)
