"""AMIDE 1.0.6 (Debian package ``amide``): launch, readiness and its warning dialogs.

AMIDE has no state channel: no scripting language, no command port, no remote control, and
it keeps its preferences to itself. What it does have is a readable document format: a study
saved as XIF (a flat ``.xif`` file from "Save Study As", or a ``.xif`` directory from "Save As
XIF Directory") holds, as XML, every data set (its voxel size, dimensions, display thresholds,
colour table, subject fields), every ROI (type, position and size in world millimetres),
the view centre and zoom. So every task is judged on what the agent hands in: the studies it
saves (read on the host by the bounded parser of :mod:`.getters`), the ROI statistics files it
exports, the images it exports and the values it gives with the answer action.
:meth:`Adapter.dump_state` says so with a ToolScriptError; no criterion asks for app state.

A task either starts with a study open (a ``.xif`` written by the generator, given on the
command line) or with an empty study, the input waiting in the work directory for File > Import
File. Importing a NIfTI through (X)MedCon always raises an untitled "AMIDE WARNING" dialog
("(X)MedCon returned no duration information"): that is part of the task, not of the start.
"""

from __future__ import annotations

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

#: The study window: "Study: <name> (<file>) [*]"; "Study: new " before anything is loaded.
STUDY_PREFIX = "Study: "


class AmideError(ToolScriptError):
    """AMIDE cannot do what was asked through a channel (it has none)."""


def study_window(windows: list[WindowInfo]) -> WindowInfo | None:
    return next((w for w in windows if w.title.startswith(STUDY_PREFIX) and w.width > 400), None)


class Adapter(FilesOnlyAdapter):
    error = AmideError
    judged_on = "the studies, statistics and images the agent saves and the values it answers"
    ready_timeout = 40.0

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        work = provider.paths["work"]
        files = task.spec.open if task is not None else []
        return ["amide", *(f"{work}/{name}" for name in files)]

    def launch_env(self, provider: ProgramHost) -> dict[str, str]:
        # GTK 2 in one known language (decimal points in every field), no accessibility bus.
        return {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "NO_AT_BRIDGE": "1"}

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        win = study_window(windows)
        if win is None:
            return False
        files = task.spec.open if task is not None else []
        # the title names the study file once it is read ("Study: patient (/w/study.xif) ")
        return all(name in win.title for name in files)

    def after_ready(self, provider: ProgramHost, task: Task | None) -> None:
        # The study window gets the focus and keeps it for a moment, so every episode starts
        # from the same screen (keys go to it, menus open from it).
        hold_focus(provider, study_window)

