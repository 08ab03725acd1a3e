"""feh 3.9 (Debian package ``feh``): the image viewer that shows a FigureQA figure.

feh opens the task's figure in one window of exactly the figure's size (900x700), at 100 %,
titled ``FigureQA viewer: figure.png``; the agent zooms and pans as in any viewer (Up/Down or
the keypad's +/- zoom, ``*`` back to 100 %, ``/`` fit; drag with the left button to pan, with
Ctrl to zoom; the right button opens feh's menu). A viewer has no state worth judging: every
task is judged on the answer action alone, so :meth:`Adapter.dump_state` says so.
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

TITLE = "FigureQA viewer: "
WIDTH, HEIGHT = 900, 700


class FigureQAError(ToolScriptError):
    """The viewer cannot do what was asked through a channel (it has none)."""


def viewer_window(windows: list[WindowInfo]) -> WindowInfo | None:
    return next((w for w in windows if w.title.startswith(TITLE) and w.width >= 400), None)


class Adapter(FilesOnlyAdapter):
    error = FigureQAError
    judged_on = "the answer alone"
    solved_by = "with the answer action"
    ready_timeout = 20.0

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        work = provider.paths["work"]
        files = [f"{work}/{name}" for name in (task.spec.open if task is not None else [])]
        return ["feh", "--geometry", f"{WIDTH}x{HEIGHT}", "--title", TITLE + "%n",
                "--image-bg", "white", *(files or [work])]

    def launch_env(self, provider: ProgramHost) -> dict[str, str]:
        return {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        win = viewer_window(windows)
        if win is None:
            return False
        files = task.spec.open if task is not None else []
        return all(name in win.title for name in files[:1])

    def after_ready(self, provider: ProgramHost, task: Task | None) -> None:
        # the viewer gets the focus, so keys go to it from the first step
        hold_focus(provider, viewer_window)

