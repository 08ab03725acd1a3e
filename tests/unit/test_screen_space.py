"""ScreenBox: a screenshot Box whose bounds cost bytes, not 12 MB, and behaves as the Box."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector.utils import batch_space

from sciagent_gym.screen_space import ScreenBox

SHAPE = (800, 1280, 3)


def _bound_bytes(space: spaces.Box) -> int:
    """Bytes the four bound arrays own (a broadcast view owns its base's only)."""
    total = 0
    for name in ("low", "high", "bounded_below", "bounded_above"):
        arr = getattr(space, name)
        base = arr if arr.base is None else arr.base
        total += base.nbytes
    return total


def test_bounds_take_bytes_not_megabytes():
    assert _bound_bytes(spaces.Box(0, 255, SHAPE, np.uint8)) > 12_000_000
    assert _bound_bytes(ScreenBox(0, 255, SHAPE, np.uint8)) < 64


def test_same_answers_as_the_box():
    box, screen = spaces.Box(0, 255, SHAPE, np.uint8), ScreenBox(0, 255, SHAPE, np.uint8)
    assert screen == box and box == screen
    assert screen.shape == SHAPE and screen.dtype == np.uint8 and screen.is_bounded()
    frame = np.full(SHAPE, 7, np.uint8)
    assert screen.contains(frame) and box.contains(frame)
    assert not screen.contains(np.zeros((800, 1280, 1), np.uint8))
    assert not screen.contains(frame.astype(np.float64) + 300)
    sample = ScreenBox(0, 255, (4, 5, 3), np.uint8, seed=1).sample()
    assert sample.shape == (4, 5, 3) and sample.dtype == np.uint8
    assert np.array_equal(sample, spaces.Box(0, 255, (4, 5, 3), np.uint8, seed=1).sample())
    assert spaces.flatdim(screen) == spaces.flatdim(box)
    assert repr(screen) == repr(box)


def test_bounds_are_read_only():
    screen = ScreenBox(0, 255, (2, 2, 3))
    with pytest.raises(ValueError):
        screen.low[0, 0, 0] = 3


def test_pickles_small_and_round_trips():
    screen = ScreenBox(0, 255, SHAPE, np.uint8, seed=3)
    blob = pickle.dumps(screen)
    assert len(blob) < 10_000, len(blob)
    again = pickle.loads(blob)
    assert isinstance(again, ScreenBox) and again == screen and _bound_bytes(again) < 64


def test_batches_for_vector_envs():
    batched = batch_space(ScreenBox(0, 255, (4, 5, 3)), 3)
    assert batched.shape == (3, 4, 5, 3) and batched.contains(np.zeros((3, 4, 5, 3), np.uint8))


def test_rejects_array_bounds():
    with pytest.raises(TypeError):
        ScreenBox(np.zeros(3), 255, (3,))


def test_the_env_uses_it():
    env = gym.make("SciGUI-ImageJ-v0", provider="fake")
    try:
        assert isinstance(env.observation_space["screenshot"], ScreenBox)
    finally:
        env.close()
