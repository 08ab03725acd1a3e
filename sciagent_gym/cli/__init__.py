"""The ``sciagent-gym`` command line: ``main`` parses and dispatches to the commands."""

from sciagent_gym.cli.main import main

__all__ = ["main"]
