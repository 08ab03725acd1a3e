"""Every exception of the package, in one place.

The base is :class:`SciAgentError` for runtime failures a user can act on (a program missing or
crashed, a sandbox or VM that would not start); the ``ValueError`` subclasses are bad input (an
action, a task spec, a check's parameters) whose message names the offending field. Tool
folders subclass :class:`ToolScriptError` for their state channel's failures. Standard library
only: the control server imports this inside a bare guest.
"""

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


class ToolScriptError(SciAgentError):
    """A tool's state channel (macro, script, console) failed; subclassed per tool."""


class ReplyTagError(ToolScriptError):
    """A reply a program wrote into a file whose one-time tag is missing or does not match
    (:class:`sciagent_gym.tools.ReplyKey`): another process wrote it, not the program."""


# -- actions ---------------------------------------------------------------------------------------


class ActionError(ValueError):
    """A malformed or impossible action. The message names the offending token."""


# -- tasks -----------------------------------------------------------------------------------------


class TaskSpecError(ValueError):
    """A broken task spec; the message names the file and the field."""

    def __init__(self, source: str, field_name: str, message: str) -> None:
        self.source, self.field = source, field_name
        super().__init__(f"{source}: {field_name}: {message}")


class StepError(SciAgentError):
    """A scripted step could not be performed."""


class ManifestError(ValueError):
    """A tool's ``tool.json`` is not a valid manifest: ``path`` names the file and ``field``
    the key (empty for the whole file)."""

    def __init__(self, path: str, field: str, message: str) -> None:
        super().__init__(f"{path}: {field + ': ' if field else ''}{message}")
        self.path = path
        self.field = field
        self.message = message


# -- evaluation ------------------------------------------------------------------------------------


class SpecError(ValueError):
    """An invalid evaluator spec; ``field`` is the dotted location, e.g. criteria[2].check.op."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class ParamError(ValueError):
    """A check parameter is invalid; ``param`` names it so the spec error can point at it."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(f"{param}: {message}")
        self.param = param
        self.message = message


class GetterError(Exception):
    """A value could not be read; the message says what was wrong (shown to the task author)."""


class LimitError(GetterError):
    """A file declares more than the evaluator will parse (a GetterError like any other)."""


class LookupFailure(Exception):
    """A dotted path did not lead anywhere; callers wrap it in their own error type."""


# -- providers -------------------------------------------------------------------------------------


class ResetHookError(SciAgentError):
    """The reset hook (command or URL) failed."""


class FakeProviderError(SciAgentError):
    """Something the fake provider (unit tests) cannot do; it never pretends it did."""


class QemuError(SciAgentError):
    """QEMU refused a command or the VM failed; the message carries QEMU's own words."""


class ImageBuildError(SciAgentError):
    """A guest image cannot be built; the message says what to install or do."""


# -- control server --------------------------------------------------------------------------------


class ControlError(SciAgentError):
    """The control server refused a request, could not be reached or answered out of shape."""


class TreeTooLarge(ValueError):
    """A directory or archive beyond the size, count or depth limits."""


class PathRefused(ValueError):
    """A path outside the roots, through a symlink, or not a regular file where one is read."""


class HTTPError(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


# -- agents ----------------------------------------------------------------------------------------


class AgentError(SciAgentError):
    """The model endpoint failed for good (bad credentials, bad request, retries spent)."""
