"""Keep only the screenshot, optionally resized and grey, as one image Box (and, if asked, the
instruction as a fixed-length feature vector beside it)."""

from __future__ import annotations

import re
import zlib

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from PIL import Image

from sciagent_gym.screen_space import ScreenBox


class ScreenshotObservation(gym.ObservationWrapper):
    """Observation = the screenshot as ``Box(0, 255, (H, W, C), uint8)``.

    ``size=(width, height)`` resizes (bilinear); ``grayscale=True`` gives one channel. The
    result is what stable-baselines3's ``CnnPolicy`` takes (it transposes channels itself).


    With ``instruction_features=n`` the observation is instead a ``Dict`` of that image
    (``"screenshot"``) and the instruction as ``Box(0, 1, (n,), float32)`` (``"instruction"``,
    see :func:`instruction_features`), what ``MultiInputPolicy`` takes: a pixel policy can then
    tell "turn X on" from "turn X off".
    """

    def __init__(self, env: gym.Env, size: tuple[int, int] | None = None,
                 grayscale: bool = False, instruction_features: int = 0) -> None:
        super().__init__(env)
        shape = env.observation_space["screenshot"].shape
        self.size = size
        self.grayscale = grayscale
        if instruction_features < 0:
            raise ValueError("instruction_features must be >= 0")
        self.instruction_features = int(instruction_features)
        h, w = (size[1], size[0]) if size else shape[:2]
        image = ScreenBox(0, 255, (h, w, 1 if grayscale else 3), np.uint8)
        if self.instruction_features:
            self.observation_space = spaces.Dict({
                "screenshot": image,
                "instruction": spaces.Box(0.0, 1.0, (self.instruction_features,), np.float32)})
        else:
            self.observation_space = image

    def observation(self, observation):
        image = self._image(observation["screenshot"])
        if not self.instruction_features:
            return image
        return {"screenshot": image, "instruction": instruction_features(
            observation["instruction"], self.instruction_features)}

    def _image(self, frame: np.ndarray) -> np.ndarray:
        if self.size is None and not self.grayscale:
            return frame
        img = Image.fromarray(frame)
        if self.grayscale:
            img = img.convert("L")
        if self.size is not None:
            img = img.resize(self.size, Image.BILINEAR)
        arr = np.asarray(img, dtype=np.uint8)
        return arr[:, :, None] if self.grayscale else arr


def instruction_features(text: str, n: int) -> np.ndarray:
    """The instruction's words, lower-cased, hashed (CRC-32) into ``n`` presence bits.

    Stable across processes and machines (unlike Python's ``hash``), needs no vocabulary, and
    keeps the words that matter to a toggle task ("on" / "off", "show" / "hide") apart as long
    as ``n`` is not tiny; collisions only merge words.
    """
    out = np.zeros(n, np.float32)
    for word in re.findall(r"[a-z0-9']+", text.lower()):
        out[zlib.crc32(word.encode()) % n] = 1.0
    return out
