"""The program of a code env: an xterm whose shell is the agent's own, in the agent zone.

A code env (scripts, data and a shell rather than a desktop program) shows a terminal: xterm
runs in the agent zone (``program_zone = "agent"``), with the same uid, /tmp and network
namespace as the agent's ``run()`` commands, and starts in the work directory. Its shell reports
its state in the window title: ``<title>: running`` while a command runs (bash's ``PS0``) and
``<title>: ready N`` at the N-th prompt after the first (``PROMPT_COMMAND``), which is what an
agent, and a GUI oracle, waits for before reading output. There is no state channel: the env's
state is what the agent wrote into the work directory and answered, and an oracle's script
step is a shell command run where the terminal's shell runs.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar

from sciagent_gym.errors import ToolScriptError
from sciagent_gym.tasks.oracle_interface import ConsoleLanguage
from sciagent_gym.tools.adapter import ToolAdapter

if TYPE_CHECKING:
    from sciagent_gym.controller.windows import WindowInfo
    from sciagent_gym.tasks.task import Task
    from sciagent_gym.tools.host import ChannelHost, ProgramHost

#: Shell and Python typed into such a terminal (what tells a GUI oracle's console lines).
TERMINAL_CONSOLE = ConsoleLanguage(
    code=(r"^\s*(cat|python3|clear|ls|cd|head|tail|grep|echo|cp|mv)\b|<<|^EOF$"
          r"|^\s*(import|from|def|for|with|print|return|if)\b"
          r"|^\s*[A-Za-z_][\w.\[\]\'\"]*\s*[-+]?=|^\s*[A-Za-z_][\w.]*\("),
    windows=r"terminal")


def xterm_argv(title: str) -> list[str]:
    """xterm titled ``title``: DejaVu Sans Mono 14 pt, 110 x 32 cells (about 1210 x 740 px)
    at (0, 0), black on white, no scroll bar, titles settable by the shell, an interactive bash
    with no startup files."""
    return ["xterm", "-T", title, "-n", title, "-fa", "DejaVu Sans Mono", "-fs", "14",
            "-geometry", "110x32+0+0", "-bg", "white", "-fg", "black", "-cr", "black", "+sb",
            "-sl", "5000", "-ut", "+bc", "-xrm", "XTerm*allowTitleOps: true",
            "-xrm", "XTerm*selectToClipboard: true", "-e", "/bin/bash", "--norc",
            "--noprofile", "-i"]


def shell_env(title: str) -> dict[str, str]:
    """The shell's prompt and the title reports (running / ready N) for ``title``."""
    return {"PS1": r"\w$ ", "PS0": rf"\e]0;{title}: running\a",
            "PROMPT_COMMAND": rf'printf "\033]0;{title}: ready %d\007" "$((__sag_n++))"',
            "TERM": "xterm"}


def ready_pattern(title: str) -> re.Pattern[str]:
    """A window title that says the shell waits at a prompt."""
    return re.compile(rf"^{re.escape(title)}: ready \d+$")


class TerminalAdapter(ToolAdapter):
    """The adapter of a code env (see the module docstring). Set ``title`` (the window's
    title, e.g. "Materials terminal") and ``judged_on``; ``extra_env`` adds to the shell's
    environment; override :meth:`before_command` for what an oracle's shell step needs first
    (a server started again)."""

    title: ClassVar[str] = "terminal"
    judged_on: ClassVar[str] = "the work directory's files"
    extra_env: ClassVar[dict[str, str]] = {}
    console_language = TERMINAL_CONSOLE
    program_zone = "agent"
    ready_timeout = 60.0

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        return xterm_argv(self.title)

    def launch_env(self, provider: ProgramHost) -> dict[str, str]:
        return {**shell_env(self.title), **self.extra_env}

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        ready = ready_pattern(self.title)
        return any(ready.match(w.title) and w.width > 1 and w.height > 1 for w in windows)

    def dump_state(self, provider: ChannelHost) -> dict[str, Any]:
        raise ToolScriptError(f"the {self.title} has no state channel: its results are "
                              f"{self.judged_on}")

    def before_command(self, provider: ChannelHost) -> None:
        """Called before each oracle shell step (:meth:`run_script`)."""

    def run_script(self, provider: ChannelHost, code: str, timeout: float = 60.0) -> str:
        """Run shell ``code`` where the terminal's shell runs (the agent zone), as a task
        author's oracle step; returns its output. Fails on a non-zero exit."""
        if getattr(provider, "run_command", None) is None:
            raise ToolScriptError("this provider cannot run shell commands")
        self.before_command(provider)
        return run_shell_step(provider, code, timeout)


def run_shell_step(provider: ChannelHost, code: str, timeout: float = 60.0) -> str:
    """An oracle's shell step, run where the agent's commands run; its output. Raises
    ToolScriptError on a non-zero exit or a timeout (and where the provider runs no shell)."""
    run = getattr(provider, "run_command", None)
    if run is None:
        raise ToolScriptError("this provider cannot run shell commands")
    result = run(code, timeout=timeout)
    if result.returncode != 0 or result.timed_out:
        raise ToolScriptError(f"oracle command failed ({result.returncode}): "
                              f"{result.output[-800:]}")
    return result.output
