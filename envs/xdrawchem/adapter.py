"""XDrawChem 1.11 (Debian package ``xdrawchem``): launch and readiness.

XDrawChem has no scripting API and no state channel: no command port, no remote control, no
console, and it writes its settings only on exit. Every task is therefore judged on what the
agent hands in: the structures it saves (MDL molfile, CML or XDrawChem's own ``.xdc``, read on
the host by the bounded parsers of :mod:`.getters` and canonicalised by Open Babel run in a
throwaway sandbox), the pictures it exports, the values it gives with the answer action, and,
where a value lives only on screen (the Molecule Info dialog), the final screenshot.
:meth:`Adapter.dump_state` and :meth:`Adapter.run_script` say so with a ToolScriptError; no
criterion asks for app state.

Measured facts the GUI oracles rely on (1280x800 display, openbox):
- The main window, "XDrawChem 1.11.0 - untitled" (or "- <path of the open file>"), fills the
  screen; its drawing page starts at screen (317, 116) and a page point (x, y) is drawn at
  screen (317 + x, 116 + y) while the page is not scrolled.
- A molfile is read through Open Babel and placed at page = (file + 11.667) * 25 / (mean bond
  length), y not flipped; the generators of :mod:`.data` place their molecules accordingly
  and return the screen position of each atom.
- The "Did You Know?" dialog at start is off through ``DYK_TF false`` in the snapshot's
  ``~/.xdrawchemrc``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from sciagent_gym.sdk import (
    ChannelHost,
    ProgramHost,
    ToolAdapter,
    ToolScriptError,
    WindowInfo,
    hold_focus,
)

if TYPE_CHECKING:
    from sciagent_gym.sdk import Task

#: The main window's title: "XDrawChem 1.11.0 - untitled" or "XDrawChem 1.11.0 - /path".
MAIN_TITLE = re.compile(r"^XDrawChem \d+\.\d+(\.\d+)? - ")


class XDrawChemError(ToolScriptError):
    """XDrawChem cannot do what was asked through a channel (it has none)."""


def main_window(windows: list[WindowInfo]) -> WindowInfo | None:
    return next((w for w in windows if MAIN_TITLE.search(w.title) and w.width > 600), None)


class Adapter(ToolAdapter):
    ready_timeout = 60.0

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        work = provider.paths["work"]
        files = task.spec.open if task is not None else []
        return ["xdrawchem", *(f"{work}/{name}" for name in files[:1])]

    def launch_env(self, provider: ProgramHost) -> dict[str, str]:
        # One known language (menu texts, decimal points) and no accessibility bus warnings.
        return {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "NO_AT_BRIDGE": "1"}

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        win = main_window(windows)
        if win is None:
            return False
        files = task.spec.open if task is not None else []
        # The title names the file once the one given on the command line has been read.
        return not win.title.endswith(" - untitled") if files else True

    def after_ready(self, provider: ProgramHost, task: Task | None) -> None:
        # The main window gets the focus and keeps it for a moment, so every episode starts
        # from the same screen (keys go to it, menus open from it).
        hold_focus(provider, main_window)

    def run_script(self, provider: ChannelHost, code: str, timeout: float = 30.0) -> str:
        raise XDrawChemError("XDrawChem has no scripting channel; tasks are solved through "
                             "its GUI")

    def dump_state(self, provider: ChannelHost) -> dict[str, Any]:
        raise XDrawChemError("XDrawChem has no state channel: tasks are judged on the files "
                             "the agent saves, the values it answers and the screen")
