"""KAlgebra 22.12 (Debian package ``kalgebra``): launch and readiness; no state channel.

KAlgebra has no scripting interface a client could reach: no D-Bus object of its own, no
command port, no batch mode in the GUI binary (``calgebra`` is a separate console
interpreter of the same Analitza language). So tasks are judged on what the agent hands in:
the console log it exports (Calculator > Export Log..., HTML with every input and result),
the console scripts it saves (Calculator > Save Script..., one expression a line), the plots it
renders (2D Graph > Save, PNG or SVG: the SVG keeps every curve as polylines and the axis
labels, so the plotted function can be checked point by point), the values it answers and the
final screenshot (the console, the Variables panel and the 2D graph's status bar show values
only on screen). :meth:`Adapter.dump_state` says so with a ToolScriptError.

The console is a QtWebEngine view: Chromium's own sandbox cannot start inside the program
zone's unprivileged user namespace, so it is turned off (the zone itself is the sandbox) and
the GPU process with it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from sciagent_gym.sdk import (
    ConsoleLanguage,
    FilesOnlyAdapter,
    ProgramHost,
    ToolScriptError,
    WindowInfo,
)

if TYPE_CHECKING:
    from sciagent_gym.sdk import Task

MAIN_TITLE = "KAlgebra"


class KAlgebraError(ToolScriptError):
    """KAlgebra cannot do what was asked through a channel (it has none)."""


def main_window(windows: list[WindowInfo]) -> WindowInfo | None:
    return next((w for w in windows if w.title == MAIN_TITLE and w.width > 300), None)


class Adapter(FilesOnlyAdapter):
    error = KAlgebraError
    judged_on = "the logs, scripts and plots the agent saves, its answers and the screen"
    #: MathML-like expressions in KAlgebra's console (its main tab)
    console_language = ConsoleLanguage(
        code=(r":=|->|\(|\^|[-+*/]"),
        windows=r"KAlgebra")
    ready_timeout = 45.0

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        # Tasks start with nothing loaded: inputs are opened through the program's dialogs.
        return ["kalgebra"]

    def launch_env(self, provider: ProgramHost) -> dict[str, str]:
        return {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "NO_AT_BRIDGE": "1",
                "QTWEBENGINE_DISABLE_SANDBOX": "1",
                "QTWEBENGINE_CHROMIUM_FLAGS": "--no-sandbox --disable-gpu"}

    def open_inputs(self, provider: ProgramHost, task: Task) -> None:
        if task.spec.open:
            raise KAlgebraError("KAlgebra cannot be told to open a file from outside; its "
                                "tasks open their inputs through Calculator > Load Script")

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        return main_window(windows) is not None

    def after_ready(self, provider: ProgramHost, task: Task | None) -> None:
        # The console is a web view that finishes loading after the window maps; the main
        # window gets the focus (its input line has it) so every episode starts alike.
        deadline = time.monotonic() + 8.0 * provider.ready_scale
        while time.monotonic() < deadline:
            window = main_window(provider.windows())
            if window is None:
                return
            if window.active:
                return
            provider.activate_window(window.id)
            time.sleep(0.1)

