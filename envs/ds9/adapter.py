"""SAOImage DS9 8.x (Debian ``saods9`` + ``xpa-tools``): launch, readiness and an XPA channel.

DS9 serves XPA, its own command protocol (``xpaset -p NAME cmd args``, ``xpaget NAME cmd``).
The channel is kept inside the env's sandbox:

- DS9 and every client run with ``XPA_METHOD=local``: access points are unix sockets (no TCP
  port at all) in ``XPA_TMPDIR``, a directory in the sandbox's private /tmp; the name server
  ``xpans`` that DS9 starts listens there too. DS9's IRAF (IIS) listener, by default TCP port
  5137 on all interfaces, is switched off. The sandbox also has its own network namespace
  (bubblewrap ``--unshare-all``), so not even a loopback port would be shared.
- The access point has a private name (:data:`XPA_NAME`, DS9's ``-title``), not DS9's default
  ``ds9``, so a client that does reach a directory by mistake never talks to the wrong program.
- Clients (``xpaget``/``xpaset``) are started inside the same sandbox by a shell
  (``call_client``, in the sandbox's /tmp); their answers come back on its stdout, through the
  sandbox helper, never through a file.

Scripts (:meth:`Adapter.run_script`, used by oracles) are XPA commands, one per line::

    # a comment; blank lines are skipped
    scale log                   -> xpaset -p NAME scale log
    set cmap heat               -> the same ("set " is optional)
    regions command "circle 100 120 5"
    get scale                   -> xpaget NAME scale; its answer is returned
    get data image 10 20 1 1 yes > peak.txt   -> the answer is written to peak.txt (relative
                                                 to the work directory)

The first failing command stops the script and raises :class:`DS9ScriptError` with DS9's
message (``XPA$ERROR ...``). XPA errors never open dialogs in DS9; errors from GUI actions do
(a Tk message box): a script run closes any that appear and reports them.
"""

from __future__ import annotations

import json
import time
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from sciagent_gym.envs.ds9.restore import FRESH, fresh_commands
from sciagent_gym.envs.ds9.state import QUERIES, build_state
from sciagent_gym.envs.ds9.xpa import (
    UNLISTED_RETRY,
    XPA_NAME,
    parse_answers,
    parse_script,
    unlisted,
)

from sciagent_gym.sdk import (
    ChannelHost,
    ConsoleLanguage,
    ProgramHost,
    ToolAdapter,
    ToolScriptError,
    WindowInfo,
    inside_text,
)

if TYPE_CHECKING:
    from sciagent_gym.sdk import Task

MAIN_TITLE = f"SAOImage {XPA_NAME}"
# The image canvas; with DS9's panels, button bar and colour bar the window is 1000x717 at
# (0, 0) (plus openbox's title bar): it fits the 1280x800 screen with room to spare.
CANVAS = (1000, 480)

# DS9 in the sandbox: XPA over unix sockets in a private directory.
_LAUNCH = 'mkdir -p "$XPA_TMPDIR" && exec ds9 "$@"'

# The client (inside/xpa_client.sh; call_client: its stdout is the reply): $1 XPA dir, $2 name,
# $3 "stop"|"all", $4 the work directory (relative "> file" targets), then one command per
# argument.
_CLIENT = inside_text(__file__, "xpa_client.sh")



class DS9ScriptError(ToolScriptError):
    """An XPA command failed or DS9 did not answer."""


def is_error_dialog(window: WindowInfo) -> bool:
    """DS9's message boxes are Tk dialogs (class Dialog), not the main window."""
    return (not window.title.startswith("SAOImage") and "dialog" in window.wm_class.lower()
            and window.width > 50 and window.height > 30)


class Adapter(ToolAdapter):
    #: a region file with no region (the placeholder cheat's file)
    placeholders = MappingProxyType({".reg": b"# Region file format: DS9 version 4.1\nfk5\n"})
    #: Tcl typed into DS9's Tcl console
    console_language = ConsoleLanguage(
        code=(r"\$|\[.*\]|;|^\s*(set|lassign|foreach|puts|proc)\b"),
        windows=r"SAOImage")
    ready_timeout = 30.0
    # DS9 runs Tcl it is given (its ``tcl`` command; File > Source from the GUI): redefine the
    # procedure that answers ``get cmap``, so the dump reports a colour map DS9 does not show
    # (the dump is answered by DS9's own Tcl: issue 32, finding 4)
    console_rebind = ('tcl {proc ProcessSendCmapCmd {proc id param {sock {}} {fn {}}} '
                      '{$proc $id "forged\\n"}}')

    @staticmethod
    def xpa_dir(provider: ProgramHost) -> str:
        return f"{provider.paths['tmp']}/xpa"

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        work = provider.paths["work"]
        files = task.spec.open if task is not None else []
        opens: list[str] = []
        for i, name in enumerate(files):
            opens += (["-frame", "new"] if i else []) + [f"{work}/{name}"]
        # -port 0 -fifo none -unix none: no IRAF (IIS) listener, which by default is a TCP
        # port (5137) on all interfaces; XPA is the only way in.
        return ["sh", "-c", _LAUNCH, "ds9", "-title", XPA_NAME, "-port", "0", "-fifo", "none",
                "-unix", "none", "-geometry", "+0+0",
                "-width", str(CANVAS[0]), "-height", str(CANVAS[1]), *opens]

    def launch_env(self, provider: ProgramHost) -> dict[str, str]:
        return {"XPA_METHOD": "local", "XPA_TMPDIR": self.xpa_dir(provider)}

    def open_inputs(self, provider: ProgramHost, task: Task) -> None:
        work = provider.paths["work"]
        lines = []
        for i, name in enumerate(task.spec.open):
            lines += (["frame new"] if i else []) + [f"fits {work}/{name}"]
        self.run_script(provider, "\n".join(lines), timeout=60.0)

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        return any(w.title == MAIN_TITLE and w.width > 1 and w.height > 1 for w in windows)

    def after_ready(self, provider: ProgramHost, task: Task | None) -> None:
        # The window shows before DS9 serves XPA and before it has read the task's files: an
        # answer naming the last file proves both.
        work = provider.paths["work"]
        want = f"{work}/{task.spec.open[-1]}" if task is not None and task.spec.open else None
        deadline = time.monotonic() + self.ready_timeout
        last = None
        while True:
            try:
                last = self._run(provider, ["get file"], "stop", timeout=2.0)[0][2].strip()
                if want is None or last == want:
                    return
            except DS9ScriptError as exc:
                last = str(exc)
            if time.monotonic() > deadline:
                raise DS9ScriptError(f"DS9 did not serve XPA with its file loaded within "
                                     f"{self.ready_timeout:.0f} s (last answer: {last!r})")
            time.sleep(0.05)

    def restore_in_place(self, provider: ProgramHost, task: Task) -> bool:
        """Set back what a restart would (see :data:`FRESH`) and reload the task's one input
        file into frame 1 (the file is restaged; loading it re-centres pan and crosshair).
        Refused with any other window open (a dialog, a torn-off menu), with more than one
        frame, or for tasks that open no file or several."""
        if len(task.spec.open) != 1 or any(w.title != MAIN_TITLE for w in provider.windows()):
            return False
        answers = self._run(provider, ["get frame all", *[f"get {q}" for q, _, _ in FRESH]],
                            "all", 20.0)
        if len(answers) != 1 + len(FRESH) or any(rc != 0 for _, rc, _ in answers) \
                or answers[0][2].split() != ["1"]:
            return False
        work = provider.paths["work"]
        self.run_script(provider, "\n".join(
            [*fresh_commands([text for _, _, text in answers[1:]]),
             f"fits {work}/{task.spec.open[0]}"]), timeout=60.0)
        return True

    def _run(self, provider: ProgramHost, commands: list[str], mode: str,
             timeout: float) -> list[tuple[int, int, str]]:
        n = self.next_request_id()
        before = {w.id for w in provider.windows() if is_error_dialog(w)}

        def check() -> None:
            errors = [w for w in provider.windows() if is_error_dialog(w) and w.id not in before]
            if errors:
                time.sleep(0.05)
                for w in errors:
                    provider.close_window(w.id)
                raise DS9ScriptError("DS9 showed an error message (now closed) instead of "
                                     "answering")

        deadline = time.monotonic() + UNLISTED_RETRY
        while True:
            text = self.call_client(provider, f"ds9-xpa-{n}",
                                    argv=["sh", "-c", _CLIENT, "xpa", self.xpa_dir(provider),
                                          XPA_NAME, mode, provider.paths["work"], *commands],
                                    timeout=timeout, error=DS9ScriptError, check=check)
            try:
                answers = parse_answers(text)
            except ValueError:
                raise DS9ScriptError(f"unreadable answer from the XPA client: {text[:300]!r}") \
                    from None
            if not unlisted(answers, mode) or time.monotonic() > deadline:
                return answers
            time.sleep(0.05)

    def run_script(self, provider: ChannelHost, code: str, timeout: float = 30.0) -> str:
        """Run XPA commands (see the module docstring); returns the ``get`` answers, one per
        line. Raises DS9ScriptError at the first failing command."""
        commands = parse_script(code)
        if not commands:
            return ""
        answers = self._run(provider, commands, "stop", timeout)
        for n, rc, text in answers:
            if rc != 0:
                message = text.replace("XPA$ERROR", "").strip()
                raise DS9ScriptError(f"DS9 rejected command {n} ({commands[n - 1]!r}): "
                                     f"{message or f'exit code {rc}'}")
        if len(answers) != len(commands):
            raise DS9ScriptError(f"only {len(answers)} of {len(commands)} commands ran")
        gets = [text for n, _, text in answers
                if commands[n - 1].startswith("get ") and " > " not in commands[n - 1]]
        return "\n".join(gets)

    def dump_state(self, provider: ChannelHost) -> dict[str, Any]:
        keys = list(QUERIES)
        answers = self._run(provider, [f"get {QUERIES[k]}" for k in keys], "all", 20.0)
        if len(answers) != len(keys):
            raise DS9ScriptError(f"state dump incomplete: {len(answers)} of {len(keys)} answers")
        raw = {keys[n - 1]: (text if rc == 0 else None) for n, rc, text in answers}
        return json.loads(json.dumps(build_state(raw)))
