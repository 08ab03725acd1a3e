"""ImageJ 1.x (Debian package ``imagej``): launch, readiness and the macro channel.

The channel is ImageJ's own single-instance port: ``ij.ImageJ -port1 -eval MACRO`` started inside
the same sandbox hands the macro to the running GUI over RMI. The RMI endpoint listens on every
interface, which is why the program runs in a sandbox with no network, and why the client has to
run in that sandbox too (it finds the instance through a stub file in the sandbox's private /tmp).
Answers come back through a file the macro writes and renames when it is complete.
"""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from sciagent_gym.sdk import (
    ChannelHost,
    ConsoleLanguage,
    ProgramHost,
    ReplyKey,
    ReplyTagError,
    ToolAdapter,
    ToolScriptError,
    WindowInfo,
    inside_text,
    wait_for,
)

if TYPE_CHECKING:
    from sciagent_gym.sdk import Task

IJ_JAR = "/usr/share/java/ij.jar"
STATE_MACRO = inside_text(__file__, "state.ijm")
RESTORE_MACRO = inside_text(__file__, "restore.ijm")
ERROR_TITLES = ("Macro Error", "Exception")


def _help_menu_drawn(frame: np.ndarray, window: WindowInfo) -> bool:
    """Whether the right-aligned Help label is in the menu bar strip (dark text in the rightmost
    15% of the window's first 26 rows; a half-built bar leaves that part empty)."""
    left = window.x + int(window.width * 0.85)
    strip = frame[max(window.y, 0):max(window.y + 26, 0), max(left, 0):window.x + window.width]
    return bool(strip.size) and bool((strip.max(axis=2) < 100).any())


def _titled(provider: ProgramHost, title: str) -> WindowInfo | None:
    """The window whose title is exactly ``title`` (ImageJ names image windows by file)."""
    return next((w for w in provider.windows() if w.title == title), None)


def _wait_closed(provider: ChannelHost, ids: set[int], within: float = 3.0) -> None:
    """Wait (a bounded time) until the windows ``ids`` are gone: closing goes through the
    window manager, and the caller's next look at the screen must not see them."""
    deadline = time.monotonic() + within * provider.ready_scale
    while time.monotonic() < deadline and any(w.id in ids for w in provider.windows()):
        time.sleep(0.02)


def _argfile_quote(arg: str) -> str:
    """``arg`` as one quoted token of a java launcher argument file (``java @file``)."""
    escaped = (arg.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
               .replace("\r", "\\r").replace("\t", "\\t"))
    return f'"{escaped}"'


class MacroError(ToolScriptError):
    """An ImageJ macro failed or did not finish."""


class Adapter(ToolAdapter):
    #: ImageJ macro code (the Command Finder's search text is a menu command, not code)
    console_language = ConsoleLanguage(
        code=(r"run\(\"|;\s*$"),
        windows=r"ImageJ|Results")
    channel_files = ("sciagent-macro-{n}.out",)
    ready_timeout = 40.0
    _main_at: tuple[int, int, int, int] | None = None  # the main window's geometry at launch

    def _java(self, provider: ProgramHost) -> list[str]:
        return [*self._jvm(provider), *self._imagej_args(provider)]

    @staticmethod
    def _jvm(provider: ProgramHost) -> list[str]:
        paths = provider.paths
        # java.io.tmpdir: ImageJ's single-instance stub (ImageJ-<user>-<display>-<port>.stub)
        # goes in the sandbox's tmp, not the host's /tmp (the control server left it there).
        return ["java", f"-Duser.home={paths['home']}", f"-Djava.io.tmpdir={paths['tmp']}",
                "-Xmx1024m", "-Djava.awt.headless=false"]

    @staticmethod
    def _imagej_args(provider: ProgramHost) -> list[str]:
        return ["-cp", IJ_JAR, "ij.ImageJ", "-ijpath", f"{provider.paths['home']}/.imagej",
                "-port1"]

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        work = provider.paths["work"]
        files = task.spec.open if task is not None else []
        return [*self._java(provider), *(f"{work}/{name}" for name in files)]

    def open_inputs(self, provider: ProgramHost, task: Task) -> None:
        work = provider.paths["work"]
        # One macro: each -eval call is a JVM start (seconds in an emulated VM). The status
        # bar is cleared as after_ready does after a launch.
        opens = "".join(f'open("{work}/{name}");\n' for name in task.spec.open)
        self.run_script(provider, opens + 'showStatus("");', timeout=60.0)

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        titles = {w.title for w in windows if w.width > 1 and w.height > 1}
        files = task.spec.open if task is not None else []
        return "ImageJ" in titles and all(name in titles for name in files)

    def after_ready(self, provider: ProgramHost, task: Task | None) -> None:
        # ImageJ prints how long opening the image took ("0.03 seconds (9.3 MB/sec)") in its
        # status bar; that text differs between otherwise identical resets. The macro also
        # proves ImageJ has finished starting up: its window can appear with the menu bar
        # half built (only "File"), or laid out before the Help menu was registered.
        self.run_script(provider, 'showStatus("");', timeout=15.0)
        self._lay_out_menu_bar(provider)
        self._focus_last_image(provider, task)
        main = _titled(provider, "ImageJ")
        self._main_at = (main.x, main.y, main.width, main.height) if main else None

    def restore_in_place(self, provider: ProgramHost, task: Task) -> bool:
        """Close every image (unsaved changes dropped) and the Results, Log and ROI Manager
        windows, set back the tool and colours a launch starts with, reopen the task's
        restaged inputs and give the last one the focus (see inside/restore.ijm). Refused
        (nothing changed) with any other window open (a dialog, a plot, a Threshold panel, a
        tool's options) or the main window moved or resized."""
        main = _titled(provider, "ImageJ")
        if main is None or (self._main_at is not None
                            and (main.x, main.y, main.width, main.height) != self._main_at):
            return False
        work = provider.paths["work"]
        # an image window's title says its zoom when not 100%: "cell.tif (150%)"
        others = [re.sub(r" \(\d+(\.\d+)?%\)$", "", w.title) for w in provider.windows()
                  if w.title != "ImageJ"]
        if any("\n" in t or '"' in t or "\\" in t for t in others):
            return False
        sep = "\\n"  # the macro language's escape: split() there cuts at newlines
        shown, opens = sep.join(others), sep.join(f"{work}/{n}" for n in task.spec.open)
        macro = f'WINDOWS = "{shown}";\nOPEN = "{opens}";\n{RESTORE_MACRO}'
        if self.run_script(provider, macro, timeout=60.0) != "ok":
            return False
        try:
            wait_for(lambda: self.is_ready(provider.windows(), task),
                               10.0 * provider.ready_scale, interval=0.02,
                               what="the inputs' windows")
        except TimeoutError:
            return False  # the env restarts the program
        self._focus_last_image(provider, task)
        return True

    @staticmethod
    def _focus_last_image(provider: ProgramHost, task: Task | None, timeout: float = 3.0) -> None:
        """Give the focus to the image opened last, as ImageJ does on most starts. Under load
        the main window sometimes kept it instead, and the start screen then differed in its
        title-bar colours (and in where typed keys go) between identical resets."""
        names = task.spec.open if task is not None else []
        if not names:
            return

        def focused() -> bool:
            window = _titled(provider, names[-1])
            if window is None or window.active:
                return True
            provider.activate_window(window.id)
            return False

        try:
            wait_for(focused, timeout * provider.ready_scale, interval=0.05,
                               what=f"{names[-1]} to take the focus")
        except TimeoutError:
            pass  # the window manager refused; the screen then shows the other focus

    @staticmethod
    def _lay_out_menu_bar(provider: ProgramHost, attempts: int = 10) -> None:
        """Resize the main window by a pixel until its menu bar shows the Help menu at the
        right edge. One resize made AWT redo a half-built layout most of the time; under load
        the menus could be registered only after it, and the window then kept showing only
        "File" through later steps (which broke the determinism of identical resets)."""
        for _ in range(attempts):
            window = _titled(provider, "ImageJ")
            if window is None:
                return
            provider.nudge_window(window.id)
            # Plain grabs, no settle: the reset settles the whole screen afterwards anyway.
            deadline = time.monotonic() + 0.5
            while time.monotonic() < deadline:
                if _help_menu_drawn(provider.screenshot(), window):
                    return
                time.sleep(0.05)

    def run_script(self, provider: ChannelHost, code: str, timeout: float = 30.0) -> str:
        """Run an ImageJ macro in the running GUI; returns what it left in ``__out__``.

        A macro that fails makes ImageJ open a "Macro Error" dialog instead of answering: that
        dialog is closed again and reported as a MacroError with its message.
        """
        tmp = provider.paths["tmp"]
        n = self.next_request_id()
        part, done = f"{tmp}/sciagent-macro-{n}.part", f"{tmp}/sciagent-macro-{n}.out"
        # The reply is a file any process of the zone could replace before it is read (a shell
        # the macro console's exec() starts): it carries a one-time tag under keys that exist
        # only in this request (ReplyKey; the macro language has only doubles, hence Horner's
        # rule modulo a prime below 2**26).
        key = ReplyKey.new()
        wrapped = (f'__out__ = "";\n{code}\n'
                   f'__s = "" + __out__; __h = 0;\n'
                   f'for (__i = 0; __i < lengthOf(__s); __i++) '
                   f'__h = (__h * {key.k1} + charCodeAt(__s, __i) + 1) % {key.P};\n'
                   f'File.saveString(d2s((__h * {key.k1} + {key.k2}) % {key.P}, 0) + "\\n" + __s, '
                   f'"{part}");\n'
                   f'dummy = File.rename("{part}", "{done}");\n')

        def check() -> None:
            errors = [w for w in provider.windows() if w.title in ERROR_TITLES]
            if errors:
                for w in errors:
                    provider.close_window(w.id)
                _wait_closed(provider, {w.id for w in errors})
                raise MacroError("ImageJ rejected the macro (it showed a 'Macro Error' "
                                 "dialog, now closed)")

        # The macro names its answer file, so it goes to the client JVM as an argument file
        # on stdin (``@/dev/stdin``), not on the command line other processes can read.
        argfile = " ".join(_argfile_quote(a) for a in
                           [*self._imagej_args(provider), "-eval", wrapped])
        # user.dir: the client sends its own to the running ImageJ, whose file dialogs then
        # open there; the client itself runs in the zone's /tmp, outside the work directory.
        jvm = [*self._jvm(provider), f"-Duser.dir={provider.paths['work']}"]
        tagged = self.run_client(provider, f"macro-client-{n}", done,
                                 argv=[*jvm, "@/dev/stdin"], stdin=argfile,
                                 timeout=timeout, error=MacroError, check=check)
        try:
            return key.verify(tagged)
        except ReplyTagError as exc:
            raise MacroError(f"ImageJ's reply refused: {exc}") from None

    def dump_state(self, provider: ChannelHost) -> dict[str, Any]:
        raw = self.run_script(provider, STATE_MACRO, timeout=20.0)
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise MacroError(f"state dump is not JSON ({exc}): {raw[:300]}") from None
