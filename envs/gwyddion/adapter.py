"""Gwyddion 2.62 (Debian package ``gwyddion``): launch, readiness and opening files.

Gwyddion has no state channel to read from outside. Debian builds it without pygwy (its Python
2 console), it offers no command port, and its only remote control is ``gwyddion
--remote-existing FILES``, which loads files into the instance running on the same X display
and answers nothing. The program also keeps its settings to itself until a clean exit.
So every task is judged on what the agent hands in: the ``.gwy`` files it saves (read on the
host with the bounded reader of :mod:`.gwyfmt`; Gwyddion writes each channel's processing log
into them too) and the values it gives with the answer action. :meth:`Adapter.dump_state`
says so with a ToolScriptError, which the evaluator records as "app state unavailable"; no
criterion asks for app state.

``--remote-existing`` serves :meth:`Adapter.open_inputs` (a restored VM snapshot): the client
runs in the program's sandbox, whose X display only this env's Gwyddion uses.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from sciagent_gym.sdk import (
    FilesOnlyAdapter,
    ProgramHost,
    ToolScriptError,
    WindowInfo,
)

if TYPE_CHECKING:
    from sciagent_gym.sdk import Task

TOOLBOX_TITLE = "Gwyddion"


class GwyddionError(ToolScriptError):
    """Gwyddion cannot do what was asked through a channel (it has none but file loading)."""


def data_window(name: str, windows: list[WindowInfo]) -> WindowInfo | None:
    """The data window of the file ``name`` (titled "name [channel] 1:1 (Gwyddion)")."""
    return next((w for w in windows if w.title.startswith(name + " [")
                 and w.title.endswith("(Gwyddion)") and w.width > 1), None)


class Adapter(FilesOnlyAdapter):
    error = GwyddionError
    judged_on = "the files the agent saves and the values it answers"
    solved_by = "through its GUI (Debian builds it without pygwy)"
    ready_timeout = 30.0

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        work = provider.paths["work"]
        files = task.spec.open if task is not None else []
        return ["gwyddion", "--no-splash", "--new-instance",
                *(f"{work}/{name}" for name in files)]

    def launch_env(self, provider: ProgramHost) -> dict[str, str]:
        # GTK 2 and its file chooser in one known language and without accessibility bus
        # warnings; GWYDDION_LOGFILE keeps the log inside the sandbox's home.
        return {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "NO_AT_BRIDGE": "1",
                "GWYDDION_LOGFILE": f"{provider.paths['home']}/.gwyddion/gwyddion.log"}

    def open_inputs(self, provider: ProgramHost, task: Task) -> None:
        work = provider.paths["work"]
        files = [f"{work}/{name}" for name in task.spec.open]
        if not files:
            return
        name = f"gwyddion-remote-{self.next_request_id()}"
        provider.spawn_in_sandbox(name, ["gwyddion", "--remote-existing", *files])
        try:
            deadline = time.monotonic() + 30.0 * provider.ready_scale
            while not self.is_ready(provider.windows(), task):
                if time.monotonic() > deadline:
                    raise GwyddionError("Gwyddion did not open the task's files within "
                                        f"{30.0 * provider.ready_scale:.0f}s")
                time.sleep(0.05)
        finally:
            provider.kill_in_sandbox(name)

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        if not any(w.title == TOOLBOX_TITLE and w.width > 100 for w in windows):
            return False
        files = task.spec.open if task is not None else []
        return all(data_window(name, windows) is not None for name in files)

    def after_ready(self, provider: ProgramHost, task: Task | None) -> None:
        # Gwyddion gives the focus to the data window opened last on some starts and keeps
        # it on the toolbox on others, and the window manager may move it there a moment after
        # the data window is mapped: the toolbox (where the menus are) gets it and must keep it
        # for a while, so every episode starts from the same screen.
        scale = provider.ready_scale
        deadline = time.monotonic() + 8.0 * scale
        kept_since: float | None = None
        while time.monotonic() < deadline:
            toolbox = next((w for w in provider.windows() if w.title == TOOLBOX_TITLE), None)
            if toolbox is None:
                return
            if toolbox.active:
                kept_since = kept_since or time.monotonic()
                if time.monotonic() - kept_since >= 0.4 * scale:
                    return
            else:
                kept_since = None
                provider.activate_window(toolbox.id)
            time.sleep(0.05)

