"""Wrappers that give the envs the spaces RL libraries expect."""

from sciagent_gym.wrappers.discrete import DiscreteActions
from sciagent_gym.wrappers.last_action import LastAction
from sciagent_gym.wrappers.observation import ScreenshotObservation, instruction_features
from sciagent_gym.wrappers.targets import TargetActions

__all__ = ["DiscreteActions", "LastAction", "ScreenshotObservation", "TargetActions",
           "instruction_features"]
