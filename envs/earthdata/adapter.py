"""The earth-data code env: an xterm in the agent zone, over the staged CSV files.

The program is a terminal whose shell is the agent's own: xterm runs in the agent zone
(``program_zone = "agent"``), with the same uid and /tmp as the agent's ``run()`` commands, and
starts in the work directory, where the task's CSV files are staged. The sandbox's
``/usr/bin/python3`` has pandas, NumPy, SciPy and scikit-learn (Debian 12's packages). Nothing
else runs: there is no server and no state channel; the env's state is what the agent wrote
into the work directory, and every gold value (withheld test-period streamflow, the true
fluxes in gaps, the reference pipeline's metrics) stays on the host.

The shell shows its state in the window title: ``EarthData terminal: running`` while a command
runs (bash's ``PS0``) and ``EarthData terminal: ready N`` at the N-th prompt after the first
(``PROMPT_COMMAND``), which is what an agent (and a GUI oracle) waits for before reading output.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from sciagent_gym.sdk import (
    ChannelHost,
    ConsoleLanguage,
    ProgramHost,
    ToolAdapter,
    ToolScriptError,
    WindowInfo,
)

if TYPE_CHECKING:
    from sciagent_gym.sdk import Task

TITLE = "EarthData terminal"
READY = re.compile(rf"^{TITLE}: ready \d+$")
#: Font and geometry: DejaVu Sans Mono 14 pt, 110 x 32 cells (about 1210 x 740 px) at (0, 0).
XTERM = ["xterm", "-T", TITLE, "-n", TITLE, "-fa", "DejaVu Sans Mono", "-fs", "14",
         "-geometry", "110x32+0+0", "-bg", "white", "-fg", "black", "-cr", "black", "+sb",
         "-sl", "5000", "-ut", "+bc", "-xrm", "XTerm*allowTitleOps: true",
         "-xrm", "XTerm*selectToClipboard: true", "-e", "/bin/bash", "--norc", "--noprofile",
         "-i"]
SHELL_ENV = {
    "PS1": r"\w$ ",
    "PS0": rf"\e]0;{TITLE}: running\a",
    "PROMPT_COMMAND": rf'printf "\033]0;{TITLE}: ready %d\007" "$((__sag_n++))"',
    "TERM": "xterm",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
}


class Adapter(ToolAdapter):
    #: shell and Python typed into the terminal
    console_language = ConsoleLanguage(
        code=(r"^\s*(cat|python3|clear|ls|cd|head|tail|grep|echo|cp|mv)\b|<<|^EOF$"
              r"|^\s*(import|from|def|for|with|print|return|if)\b"
              r"|^\s*[A-Za-z_][\w.\[\]\'\"]*\s*[-+]?=|^\s*[A-Za-z_][\w.]*\("),
        windows=r"terminal")
    program_zone = "agent"
    ready_timeout = 60.0

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        return list(XTERM)

    def launch_env(self, provider: ProgramHost) -> dict[str, str]:
        return dict(SHELL_ENV)

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        return any(READY.match(w.title) and w.width > 1 and w.height > 1 for w in windows)

    def dump_state(self, provider: ChannelHost) -> dict[str, Any]:
        raise ToolScriptError("the earth-data terminal has no state channel: its results are "
                              "the work directory's files")

    def run_script(self, provider: ChannelHost, code: str, timeout: float = 60.0) -> str:
        """Run shell ``code`` where the terminal's shell runs (the agent zone), as a task
        author's oracle step; returns its output. Fails on a non-zero exit."""
        run = getattr(provider, "run_command", None)
        if run is None:
            raise ToolScriptError("this provider cannot run shell commands")
        result = run(code, timeout=timeout)
        if result.returncode != 0 or result.timed_out:
            raise ToolScriptError(f"oracle command failed ({result.returncode}): "
                                  f"{result.output[-800:]}")
        return result.output
