"""A small discrete action set: click the centre of a grid cell, press a key, or say DONE."""

from __future__ import annotations

import gymnasium as gym
from gymnasium import spaces

from sciagent_gym.actions import types as A
from sciagent_gym.actions.keys import normalize_key


class DiscreteActions(gym.ActionWrapper):
    """``Discrete(cols * rows + len(keys) + 1)``: grid clicks, then key presses, then DONE.

    Cell ``i`` (row-major) is clicked at its centre, so a 16x10 grid on a 1280x800 screen
    clicks on an 80-pixel lattice. Stable-baselines3 accepts the resulting space.
    """

    def __init__(self, env: gym.Env, grid: tuple[int, int] = (16, 10),
                 keys: tuple[str, ...] = ("enter", "escape", "tab"), done: bool = True) -> None:
        super().__init__(env)
        self.cols, self.rows = grid
        self.keys = tuple(normalize_key(k) for k in keys)
        self.with_done = done
        base = env.unwrapped
        self._cell_w, self._cell_h = base.width / self.cols, base.height / self.rows
        self.action_space = spaces.Discrete(self.cols * self.rows + len(self.keys) + int(done))

    def action(self, action) -> list[A.Action]:
        index = int(action)
        if not 0 <= index < self.action_space.n:
            raise ValueError(f"action {index} is outside Discrete({self.action_space.n})")
        cells = self.cols * self.rows
        if index < cells:
            row, col = divmod(index, self.cols)
            return [A.Click(int((col + 0.5) * self._cell_w), int((row + 0.5) * self._cell_h))]
        index -= cells
        if index < len(self.keys):
            return [A.Press(self.keys[index])]
        return [A.Done()]
