"""ParaView 5.11 (Debian ``paraview``): launch and readiness; tasks are judged on files.

ParaView has a Python interpreter inside its GUI (View > Python Shell, and ``--script`` at
start-up), but nothing in it answers a request from outside without a server the program zone
would have to run on the GUI thread, and the agent reaches that same interpreter through the
Python Shell. So, as for Avogadro, every task is judged on what the agent hands in: the files
it saves (CSV from File > Save Data, state files ``.pvsm`` from File > Save State, PNG from
File > Save Screenshot; read on the host by the bounded parsers of :mod:`.getters`, no program
runs on them), the values it gives with the answer action, and the final screenshot.
:meth:`Adapter.dump_state` and :meth:`Adapter.run_script` say so with a ToolScriptError.

The snapshot home (``~/.config/ParaView/ParaView5.11.0.ini``) turns off the Welcome dialog of
the first start and puts the main window at the top left at 1280x776, so that the GUI oracles'
coordinates hold.
"""

from __future__ import annotations

import os
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

MAIN_TITLE = "ParaView 5.11"
#: The start-up script (in the snapshot home) that opens a task's inputs.
OPEN_SCRIPT = ".config/ParaView/sciagent-open.py"
#: What that script writes in the program zone's /tmp once the inputs are shown.
READY_FILE = "sciagent-paraview-opened"


class ParaViewError(ToolScriptError):
    """ParaView cannot do what was asked through a channel (no channel answers)."""


def main_window(windows: list[WindowInfo]) -> WindowInfo | None:
    return next((w for w in windows if w.title.startswith(MAIN_TITLE) and w.width > 600), None)


class Adapter(FilesOnlyAdapter):
    error = ParaViewError
    judged_on = "the files the agent saves, the values it answers and the screen"
    solved_by = "through its GUI (its Python Shell included)"
    #: Python in ParaView's Python shell
    console_language = ConsoleLanguage(
        code=(r"\b[A-Z]\w+\(|^\s*(import|from|print)\b|=\s*\w+\("),
        windows=r"ParaView")
    ready_timeout = 120.0

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        work, home = provider.paths["work"], provider.paths["home"]
        files = task.spec.open if task is not None else []
        if not files:
            return ["paraview"]
        # --script excludes --data: a start-up script in the snapshot home opens and shows
        # the inputs named in its environment (as File > Open and Apply would).
        listed = os.pathsep.join(f"{work}/{name}" for name in files)
        return ["/usr/bin/env", f"SCIAGENT_OPEN={listed}",
                f"SCIAGENT_READY={provider.paths['tmp']}/{READY_FILE}", "paraview",
                f"--script={home}/{OPEN_SCRIPT}"]

    def launch_env(self, provider: ProgramHost) -> dict[str, str]:
        # Software OpenGL on the virtual display; one language for menus and numbers.
        return {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "NO_AT_BRIDGE": "1",
                "LIBGL_ALWAYS_SOFTWARE": "1", "QT_X11_NO_MITSHM": "1",
                "OMPI_MCA_plm": "isolated", "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
                "XDG_RUNTIME_DIR": provider.paths["tmp"]}

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        return main_window(windows) is not None

    def after_ready(self, provider: ProgramHost, task: Task | None) -> None:
        # The main window gets the focus and keeps it for a moment, so every episode starts
        # from the same screen (keys go to it, menus open from it).
        scale = provider.ready_scale
        if task is not None and task.spec.open:
            self._wait_opened(provider)
        deadline = time.monotonic() + 10.0 * scale
        kept_since: float | None = None
        while time.monotonic() < deadline:
            win = main_window(provider.windows())
            if win is None:
                return
            if win.active:
                kept_since = kept_since or time.monotonic()
                if time.monotonic() - kept_since >= 0.5 * scale:
                    return
            else:
                kept_since = None
                provider.activate_window(win.id)
            time.sleep(0.05)

    def _wait_opened(self, provider: ProgramHost) -> None:
        """Wait for the start-up script's signal that the task's inputs are shown."""
        path = f"{provider.paths['tmp']}/{READY_FILE}"
        deadline = time.monotonic() + self.ready_timeout * provider.ready_scale
        while time.monotonic() < deadline:
            if provider.read_file(path, remove=True) is not None:
                return
            time.sleep(0.05)
        raise ParaViewError("ParaView did not open the task's inputs within "
                            f"{self.ready_timeout * provider.ready_scale:.0f}s"
                            + (f": {provider.app_log_tail()}" if provider.app_log_tail() else ""))

