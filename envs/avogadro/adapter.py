"""Avogadro 1.97 (Debian package ``avogadro``, binary ``avogadro2``): launch and readiness.

Avogadro has no state channel to read from. Debian builds it with MoleQueue's JSON-RPC
listener (a QLocalServer named ``avogadro``, a socket in the program zone's private /tmp), but
1.97 answers only ``openFile``, ``loadMolecule`` and ``kill`` (refused without ``--testing``):
it can load a structure, not report one. Its Python hooks (command, charge and format scripts)
run only when the user picks them in a menu, and it writes its settings only on exit. So every
task is judged on what the agent hands in: the files it saves (``.cjson``/``.cml`` from Save
As, ``.xyz`` from Export; read on the host by the bounded parsers of :mod:`.getters`, no program
runs on them) and the values it gives with the answer action. :meth:`Adapter.dump_state` and
:meth:`Adapter.run_script` say so with a ToolScriptError; no criterion asks for app state.

The snapshot home fixes the main window at 1280x760 at the top left (so the GUI oracles'
coordinates hold) and keeps the default display types. Avogadro shows no first-run dialog.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sciagent_gym.sdk import (
    FilesOnlyAdapter,
    ProgramHost,
    ToolScriptError,
    WindowInfo,
    hold_focus,
)

if TYPE_CHECKING:
    from sciagent_gym.sdk import Task

#: The main window's title: "<name>[•] - Avogadro 1.97.0" ("Untitled" before a file loads).
MAIN_TITLE = re.compile(r" - Avogadro \d")


class AvogadroError(ToolScriptError):
    """Avogadro cannot do what was asked through a channel (it has none to read from)."""


def main_window(windows: list[WindowInfo]) -> WindowInfo | None:
    return next((w for w in windows if MAIN_TITLE.search(w.title) and w.width > 600), None)


class Adapter(FilesOnlyAdapter):
    error = AvogadroError
    judged_on = "the files the agent saves and the values it answers"
    ready_timeout = 60.0

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        work = provider.paths["work"]
        files = task.spec.open if task is not None else []
        return ["avogadro2", *(f"{work}/{name}" for name in files)]

    def launch_env(self, provider: ProgramHost) -> dict[str, str]:
        # One known language: decimal points and menu texts as the GUI oracles expect.
        return {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "NO_AT_BRIDGE": "1"}

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        win = main_window(windows)
        if win is None:
            return False
        files = task.spec.open if task is not None else []
        # The title drops "Untitled" once the file on the command line has been read.
        return not win.title.startswith("Untitled") if files else True

    def after_ready(self, provider: ProgramHost, task: Task | None) -> None:
        # The main window gets the focus and keeps it for a moment, so every episode starts
        # from the same screen (keys go to it, menus open from it).
        hold_focus(provider, main_window)

