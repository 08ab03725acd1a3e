"""Praat 6.x (Debian package ``praat``): launch, readiness and the script channel.

The channel is Praat's own ``praat --send script.praat``: the client finds the running instance
through ``~/.praat-dir/pid`` in HOME, writes the command to ``~/.praat-dir/message`` and signals
it. Every env's sandbox has its own home (and its own pid namespace), so the client is run inside
the same sandbox and can only ever reach this env's Praat. A script answers by leaving text in
``out$``; the wrapper writes it to a file in the sandbox's /tmp and then a second "done" file, so
a half-written answer is never read.

A script that fails makes Praat show an untitled error dialog instead of answering: the adapter
closes that dialog again and raises a PraatScriptError.
"""

from __future__ import annotations

import json
import secrets
import time
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from sciagent_gym.sdk import (
    ChannelHost,
    ProgramHost,
    ToolAdapter,
    ToolScriptError,
    WindowInfo,
    inside_text,
    no_children_argv,
)

if TYPE_CHECKING:
    from sciagent_gym.sdk import Task

STATE_SCRIPT = inside_text(__file__, "state.praat")
MAIN_TITLE = "Praat Objects"
_LAUNCH = 'rm -f "$HOME/.praat-dir/pid"; exec "$@"'
# The client (inside/send.sh). ``praat --send`` signals the pid in ~/.praat-dir/pid with
# SIGUSR1. Praat writes that file before it installs its handler, and a signal that arrives
# earlier kills it; without the file the client would start a second Praat instead. So the
# client sends only once the file exists and the process it names catches SIGUSR1 (bit 0x200
# of SigCgt in /proc/PID/status). Its stdin is the script file's path, a newline, then the
# script (never on a command line).
_SEND = inside_text(__file__, "send.sh")


class PraatScriptError(ToolScriptError):
    """A Praat script failed or did not finish."""


def _quote(text: str) -> str:
    """A Praat string literal (double quotes doubled)."""
    return '"' + text.replace('"', '""') + '"'


def is_error_dialog(window: WindowInfo) -> bool:
    """Praat's error and warning messages are untitled top-level windows of class praat."""
    return (window.title == "" and "praat" in window.wm_class.lower()
            and window.width > 50 and window.height > 30)


class Adapter(ToolAdapter):
    channel_files = ("sciagent-praat-{n}.out", "sciagent-praat-{n}.done")
    #: a TextGrid with no tier (the placeholder cheat's file)
    placeholders = MappingProxyType({".textgrid": (
        b'File type = "ooTextFile"\nObject class = "TextGrid"\n\n'
        b"xmin = 0\nxmax = 1\ntiers? <exists>\nsize = 0\nitem []:\n")})
    ready_timeout = 30.0

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        # A stale pid file (a killed Praat) makes a new instance refuse to serve --send.
        work = provider.paths["work"]
        files = task.spec.open if task is not None else []
        opens = ["--open", *(f"{work}/{name}" for name in files)] if files else []
        # Praat's work needs no child process, but its console runs shell commands
        # (runSystem, runSubprocess): a loop started so would run beside Praat in its zone and
        # could replace the answer files its scripts write for the state channel, which no tag
        # can protect (the script, keys included, is a file of the zone). So Praat may start
        # threads but no process.
        return ["sh", "-c", _LAUNCH, "praat", *no_children_argv(["praat", *opens])]

    def open_inputs(self, provider: ProgramHost, task: Task) -> None:
        work = provider.paths["work"]
        reads = "".join(f"Read from file: {_quote(f'{work}/{name}')}\n" for name in task.spec.open)
        self.run_script(provider, reads + 'out$ = "ok"', timeout=60.0)

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        return any(w.title == MAIN_TITLE and w.width > 1 and w.height > 1 for w in windows)

    def after_ready(self, provider: ProgramHost, task: Task | None) -> None:
        # A script round trip proves Praat serves --send: its window is up before it has
        # written its pid file and installed its message handler, and a message sent earlier
        # is lost. The script also selects the last object, as a click in the list would, so
        # that every episode starts with the object's commands shown.
        want = len(task.spec.open) if task is not None else 0
        probe = ("select all\nout$ = string$ (numberOfSelected ())\n"
                 "if numberOfSelected () > 0\n  selectObject: selected (numberOfSelected ())\n"
                 "endif")
        deadline = time.monotonic() + 20.0
        while True:
            try:
                if int(self.run_script(provider, probe, timeout=1.0) or 0) >= want:
                    break
            except PraatScriptError:
                pass
            if time.monotonic() > deadline:
                raise PraatScriptError("Praat did not answer scripts within 20 s of showing "
                                       "its window")
            time.sleep(0.05)
        # The Picture window opens last, on top of the Objects list: the Objects window is where
        # work starts, so it is raised and focused.
        for window in provider.windows():
            if window.title == MAIN_TITLE:
                provider.activate_window(window.id)
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline and not any(
                w.title == MAIN_TITLE and w.active for w in provider.windows()):
            time.sleep(0.02)

    def console_shell(self, command: str) -> str:
        # what a person types in Praat's script window (New Praat script, Run)
        return f"runSystem_nocheck: {_quote(command)}\nout$ = \"ok\""

    def run_script(self, provider: ChannelHost, code: str, timeout: float = 30.0) -> str:
        """Run a Praat script in the running GUI; returns what it left in ``out$``."""
        tmp = provider.paths["tmp"]
        n = self.next_request_id()
        base = f"{tmp}/sciagent-praat-{n}"
        out, done = f"{base}.out", f"{base}.done"
        # ``praat --send`` shows the script's path on its command line: a name of its own,
        # so that line does not tell where the answer will be written
        script = f"{tmp}/sciagent-praat-{secrets.token_hex(8)}.praat"
        wrapped = (f'out$ = ""\nsciagent_scratch$ = {_quote(base + ".scratch")}\n{code}\n'
                   f"writeFile: {_quote(out)}, out$\n"
                   f'writeFile: {_quote(done)}, "done"\n')
        before = {w.id for w in provider.windows() if is_error_dialog(w)}

        def check() -> None:
            errors = [w for w in provider.windows() if is_error_dialog(w) and w.id not in before]
            if errors:
                time.sleep(0.05)
                for w in errors:
                    provider.close_window(w.id)
                raise PraatScriptError("Praat rejected the script (it showed an error "
                                       "message, now closed)")

        self.run_client(provider, f"praat-send-{n}", done, argv=["sh", "-c", _SEND],
                        stdin=f"{script}\n{wrapped}", timeout=timeout,
                        error=PraatScriptError, check=check)
        return provider.read_file(out, remove=True) or ""

    def dump_state(self, provider: ChannelHost) -> dict[str, Any]:
        raw = self.run_script(provider, STATE_SCRIPT, timeout=20.0)
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise PraatScriptError(f"state dump is not JSON ({exc}): {raw[:300]}") from None
