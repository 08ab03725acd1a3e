"""The tool SDK: the one module of the core a tool folder (``envs/<tool>/``) imports.

A tool is ``envs/<tool>/`` (``tool.json``, ``adapter.py``, ``getters.py``, ``data.py``,
``snapshot/``, ``inside/``) plus ``task_specs/<tool>/``. Its code imports from the core only
what is here, besides its own folder and the folders (tools or ported benchmarks) its
``tool.json`` lists under ``"uses"``; a layout test holds this, so the core can change
behind these names without touching a tool. Everything here is public and documented; the
groups, in the order a new tool needs them:

Adapter
    :class:`ToolAdapter` (subclass it as ``Adapter`` in ``adapter.py``),
    :class:`FilesOnlyAdapter` for a program without a scripting or state channel,
    :class:`TerminalAdapter` for a code env's terminal (with :func:`xterm_argv`,
    :func:`shell_env`, :func:`ready_pattern`, :func:`run_shell_step`),
    the host protocols an adapter is handed (:class:`ProgramHost`, :class:`ChannelHost`),
    :class:`WindowInfo`, :func:`hold_focus`, :func:`wait_for`, :func:`inside_text` (the code
    a tool runs in its program, from its ``inside/`` folder), the socket-client prelude
    and request-dropping client (:data:`SOCKET_CLIENT_PRELUDE`, :data:`DROP_REQUEST_CLIENT`),
    reply tags (:class:`ChannelKey`, :class:`ReplyKey`), :class:`ConsoleLanguage` and
    :func:`no_children_argv` (a launch whose program may start threads but no process).
Getters
    :func:`register` (a getter named in task specs), :class:`FinalState` (what a getter
    reads), :class:`GetterError` (a criterion that cannot be read fails cleanly), the file
    readers (:func:`existing_file`, :func:`read_bytes`, :func:`decode_text`,
    :func:`looks_binary`, :func:`pick_key`, :func:`load_image`, :func:`read_table`,
    :func:`answer_number`, :func:`dotted_get`), OCR (:func:`ocr_region`,
    :func:`screen_text`) and :mod:`limits`, the size and shape caps every parse of an
    agent-written file checks first (its checkers, e.g. :func:`check_json`, are here too).
Sandboxed parsing
    :func:`run_sandboxed` runs a parser or a program over agent-written files in a throwaway
    sandbox, for formats whose parsers are not safe on hostile input.
Data and specs
    :mod:`crystals` (seeded crystal structures and powder patterns), :class:`Task`,
    :func:`spec_interface` and :func:`load_adapter` for spec generators, :func:`query_split`.
Tools that drive other tools
    :func:`tool_info`, :func:`load_tool_getters` and :data:`GETTERS`.
Errors
    :class:`SciAgentError` and its tool-facing subclasses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from sciagent_gym.controller.windows import WindowInfo
from sciagent_gym.datagen import crystals
from sciagent_gym.errors import (
    GetterError,
    LimitError,
    LookupFailure,
    MissingProgramError,
    ReplyTagError,
    SandboxError,
    SciAgentError,
    StepError,
    ToolScriptError,
)
from sciagent_gym.evaluation.dotted import dotted_get
from sciagent_gym.evaluation.getters import limits
from sciagent_gym.evaluation.getters.answer import answer_number, answer_numbers, answer_text
from sciagent_gym.evaluation.getters.images import load_image
from sciagent_gym.evaluation.getters.limits import (
    MAX_JSON_BYTES,
    MAX_TEXT_BYTES,
    check_fits,
    check_json,
    check_lines,
    check_size,
    check_table,
    check_wav,
    check_zip,
    file_size,
    open_image,
    tiff_layout,
)
from sciagent_gym.evaluation.getters.ocr import ocr_region, screen_text
from sciagent_gym.evaluation.getters.reading import (
    decode_text,
    existing_file,
    looks_binary,
    pick_key,
    read_bytes,
)
from sciagent_gym.evaluation.getters.registry import GETTERS, register
from sciagent_gym.evaluation.getters.tables import read_table
from sciagent_gym.evaluation.isolated import run_sandboxed
from sciagent_gym.evaluation.state import FinalState
from sciagent_gym.isolation.confinement import no_children_argv
from sciagent_gym.processes import wait_for
from sciagent_gym.tasks.oracle_interface import ConsoleLanguage, spec_interface
from sciagent_gym.tasks.queries import query_split
from sciagent_gym.tasks.task import Task
from sciagent_gym.tools.adapter import (
    DROP_REQUEST_CLIENT,
    SOCKET_CLIENT_PRELUDE,
    ToolAdapter,
    hold_focus,
    load_adapter,
)
from sciagent_gym.tools.discovery import ToolInfo, load_tool_getters, tool_info
from sciagent_gym.tools.host import ChannelHost, ProgramHost
from sciagent_gym.tools.reply_tag import ChannelKey, ReplyKey
from sciagent_gym.tools.terminal import (
    TerminalAdapter,
    ready_pattern,
    run_shell_step,
    shell_env,
    xterm_argv,
)


def inside_text(module_file: str, name: str) -> str:
    """The text of ``inside/<name>`` beside ``module_file`` (pass ``__file__``): code a tool
    runs inside its program lives in files there, never in string constants."""
    return (Path(module_file).parent / "inside" / name).read_text()


class FilesOnlyAdapter(ToolAdapter):
    """An adapter for a program with no scripting or state channel: its tasks are solved
    through the GUI and judged on what the agent leaves (files, answers, the screen).

    Set ``error`` (the tool's ToolScriptError subclass) and ``judged_on`` (a phrase: "the
    files the agent saves and the values it answers"); :meth:`run_script` and
    :meth:`dump_state` then raise it with a message saying so, instead of each tool writing
    the same two refusals. ``solved_by`` says how tasks are solved instead ("through its
    GUI")."""

    error: ClassVar[type[ToolScriptError]] = ToolScriptError
    judged_on: ClassVar[str] = "the files the agent saves and the values it answers"
    solved_by: ClassVar[str] = "through its GUI"

    @property
    def _program(self) -> str:
        return self.info.display_name

    def run_script(self, provider: ChannelHost, code: str, timeout: float = 30.0) -> str:
        raise self.error(f"{self._program} has no scripting channel; tasks are solved "
                         f"{self.solved_by}")

    def dump_state(self, provider: ChannelHost) -> dict[str, Any]:
        raise self.error(f"{self._program} has no state channel: tasks are judged on "
                         f"{self.judged_on}")


__all__ = [
    "DROP_REQUEST_CLIENT",
    "GETTERS",
    "MAX_JSON_BYTES",
    "MAX_TEXT_BYTES",
    "SOCKET_CLIENT_PRELUDE",
    "ChannelHost",
    "ChannelKey",
    "ConsoleLanguage",
    "FilesOnlyAdapter",
    "FinalState",
    "GetterError",
    "LimitError",
    "LookupFailure",
    "MissingProgramError",
    "ProgramHost",
    "ReplyKey",
    "ReplyTagError",
    "SandboxError",
    "SciAgentError",
    "StepError",
    "Task",
    "TerminalAdapter",
    "ToolAdapter",
    "ToolInfo",
    "ToolScriptError",
    "WindowInfo",
    "answer_number",
    "answer_numbers",
    "answer_text",
    "check_fits",
    "check_json",
    "check_lines",
    "check_size",
    "check_table",
    "check_wav",
    "check_zip",
    "crystals",
    "decode_text",
    "dotted_get",
    "existing_file",
    "file_size",
    "hold_focus",
    "inside_text",
    "limits",
    "load_adapter",
    "load_image",
    "load_tool_getters",
    "looks_binary",
    "no_children_argv",
    "ocr_region",
    "open_image",
    "pick_key",
    "query_split",
    "read_bytes",
    "read_table",
    "ready_pattern",
    "register",
    "run_sandboxed",
    "run_shell_step",
    "screen_text",
    "shell_env",
    "spec_interface",
    "tiff_layout",
    "tool_info",
    "wait_for",
    "xterm_argv",
]
