"""A few named GUI operations as the whole action space, for small RL experiments."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import gymnasium as gym
from gymnasium import spaces

from sciagent_gym.actions import types as A


class TargetActions(gym.ActionWrapper):
    """``Discrete(len(targets) + 1)``: action ``i`` clicks the points of the ``i``-th named
    target in order; the last action is DONE.

    A target of several points is a macro (e.g. open a button bar's section, then press one of
    its buttons): each click is its own env step, so the screen settles before the next click
    (a click sent before the program has redrawn lands on whatever was there before), and the
    env's step budget counts clicks. Rewards of the clicks are summed; the macro stops early if
    the episode ends. It is still mouse input through the env's own ``step()``; only the choice
    of where to click is fixed, so a policy learns *whether* to act, the decision state-control
    tasks test. ``names`` lists the targets in action order.
    """

    def __init__(self, env: gym.Env, targets: Mapping[str, Sequence[tuple[int, int]]],
                 done: bool = True) -> None:
        super().__init__(env)
        if not targets:
            raise ValueError("TargetActions needs at least one target")
        base = env.unwrapped
        self._clicks: list[list[A.Action]] = []
        for name, points in targets.items():
            if not points:
                raise ValueError(f"target {name!r} has no points")
            clicks = []
            for x, y in points:
                if not (0 <= x < base.width and 0 <= y < base.height):
                    raise ValueError(f"target {name!r}: point ({x}, {y}) is off the "
                                     f"{base.width}x{base.height} screen")
                clicks.append(A.Click(int(x), int(y)))
            self._clicks.append(clicks)
        self.names = (*targets, *(("DONE",) if done else ()))
        self.action_space = spaces.Discrete(len(self.names))

    def step(self, action):
        *first, last = self.action(action)
        total = 0.0
        for click in first:
            obs, reward, terminated, truncated, info = self.env.step(click)
            total += float(reward)
            if terminated or truncated:
                return obs, total, terminated, truncated, info
        obs, reward, terminated, truncated, info = self.env.step(last)
        return obs, total + float(reward), terminated, truncated, info

    def action(self, action) -> list[A.Action]:
        index = int(action)
        if not 0 <= index < self.action_space.n:
            raise ValueError(f"action {index} is outside Discrete({self.action_space.n})")
        if index < len(self._clicks):
            return list(self._clicks[index])
        return [A.Done()]

    def encode(self, actions: Sequence) -> list[tuple[int, int]]:
        """A demonstration in this action space: ``actions`` (recorded ``step()`` actions, in
        any form the env accepts) as ``(target index, index of its first action)`` pairs, so
        that a behaviour-cloning dataset pairs each decision with the frame seen before it.

        Each target's clicks must appear in order, one action each; DONE maps to the last
        index. Raises ValueError on an action no target explains (the demonstration does
        something this action space cannot)."""
        from sciagent_gym.actions.parse import parse_action

        base = self.env.unwrapped
        flat: list[tuple[A.Action, int]] = []
        for i, raw in enumerate(actions):
            flat += [(a, i) for a in parse_action(raw, (base.width, base.height))]
        out, k = [], 0
        while k < len(flat):
            action, first = flat[k]
            if isinstance(action, A.Done) and self.names[-1] == "DONE":
                out.append((len(self.names) - 1, first))
                k += 1
                continue
            for index, clicks in enumerate(self._clicks):
                if [a for a, _ in flat[k:k + len(clicks)]] == clicks:
                    out.append((index, first))
                    k += len(clicks)
                    break
            else:
                raise ValueError(f"action {k} ({action}) starts no target of "
                                 f"{list(self.names)}")
        return out
