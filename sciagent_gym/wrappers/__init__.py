"""Wrappers that give the envs the spaces RL libraries expect."""

from sciagent_gym.wrappers.discrete import DiscreteActions
from sciagent_gym.wrappers.last_action import LastAction
from sciagent_gym.wrappers.observation import ScreenshotObservation

__all__ = ["DiscreteActions", "LastAction", "ScreenshotObservation"]
