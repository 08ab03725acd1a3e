"""The previous action as part of the observation, for POMDP work.

A screenshot alone often does not say what the agent just did (a click on a control that did
not visibly change, a key press absorbed by a dialog). Agents with no memory of their own can
be given the last action instead, the standard trick of POMDP baselines (e.g. in RL^2 and
recurrent PPO set-ups), without changing what the env shows.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class LastAction(gym.Wrapper):
    """Observation = ``Dict(obs=<inner observation>, last_action=Discrete(n + 1))``.

    Needs a ``Discrete(n)`` action space (wrap :class:`DiscreteActions` first). ``last_action``
    is the index of the previous action, or ``n`` right after reset ("none yet"). If the inner
    observation is already a Dict, ``last_action`` is added as one more key instead. The
    result is what stable-baselines3's ``MultiInputPolicy`` takes.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        if not isinstance(env.action_space, spaces.Discrete):
            raise TypeError("LastAction needs a Discrete action space (wrap DiscreteActions "
                            f"first), got {env.action_space}")
        self.none = int(env.action_space.n)
        inner = env.observation_space
        last = spaces.Discrete(self.none + 1)
        if isinstance(inner, spaces.Dict):
            if "last_action" in inner.spaces:
                raise ValueError("the observation already has a 'last_action' key")
            self._nested = False
            self.observation_space = spaces.Dict({**inner.spaces, "last_action": last})
        else:
            self._nested = True
            self.observation_space = spaces.Dict({"obs": inner, "last_action": last})

    def _wrap(self, obs, last: int):
        value = np.int64(last)
        if self._nested:
            return {"obs": obs, "last_action": value}
        return {**obs, "last_action": value}

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        return self._wrap(obs, self.none), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._wrap(obs, int(action)), reward, terminated, truncated, info
