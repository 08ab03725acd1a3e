"""Keep only the screenshot, optionally resized and grey, as one image Box."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from PIL import Image


class ScreenshotObservation(gym.ObservationWrapper):
    """Observation = the screenshot as ``Box(0, 255, (H, W, C), uint8)``.

    ``size=(width, height)`` resizes (bilinear); ``grayscale=True`` gives one channel. The
    result is what stable-baselines3's ``CnnPolicy`` takes (it transposes channels itself).
    """

    def __init__(self, env: gym.Env, size: tuple[int, int] | None = None,
                 grayscale: bool = False) -> None:
        super().__init__(env)
        shape = env.observation_space["screenshot"].shape
        self.size = size
        self.grayscale = grayscale
        h, w = (size[1], size[0]) if size else shape[:2]
        self.observation_space = spaces.Box(0, 255, (h, w, 1 if grayscale else 3), np.uint8)

    def observation(self, observation) -> np.ndarray:
        frame = observation["screenshot"]
        if self.size is None and not self.grayscale:
            return frame
        img = Image.fromarray(frame)
        if self.grayscale:
            img = img.convert("L")
        if self.size is not None:
            img = img.resize(self.size, Image.BILINEAR)
        arr = np.asarray(img, dtype=np.uint8)
        return arr[:, :, None] if self.grayscale else arr
