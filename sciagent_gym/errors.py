"""Errors a user can act on."""

from __future__ import annotations


class SciAgentError(RuntimeError):
    """Base class of the package's own runtime errors."""


class MissingProgramError(SciAgentError):
    """A program the env needs is not installed; the message names the package to install."""

    def __init__(self, program: str, package: str, hint: str | None = None) -> None:
        self.program, self.package = program, package
        msg = (f"'{program}' was not found. Install it with: "
               f"{hint or f'sudo apt-get install -y {package}'}")
        super().__init__(msg)


class AppCrashedError(SciAgentError):
    """The tool's program exited during an episode."""


class SandboxError(SciAgentError):
    """The sandbox could not be started or stopped talking."""
