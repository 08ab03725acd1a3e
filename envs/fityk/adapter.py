"""Fityk 1.3 (Debian ``fityk``): launch, readiness and a state channel that replays its log.

The Fityk GUI has no remote control (no socket, no command pipe), but every operation in it is
a Fityk command: typed in its input line, or made by a menu, a dialog or a mouse gesture in
the plot, and Fityk writes each one to its ``logfile`` before running it. The GUI starts with
``set logfile`` pointing into the program zone's private /tmp (the agent zone never sees that
/tmp; the agent can reach it only through Fityk itself, which logs what it does).

The state channel (:file:`inside/replay.py`, started in the program zone like every channel
client here) replays that log in ``cfityk``, Fityk's own headless program built on the same
library, whose fitting is deterministic, and dumps the session with Fityk's C++ ``print`` and
``info`` commands into a file named with a fresh random token, renamed when complete. Lua that
the log contains runs before the dump and cannot alter it; a log whose ``logfile`` option was
changed (the GUI's actions after that are unlogged) is reported as tampered with, and
:meth:`Adapter.dump_state` then fails, so the task fails.

Scripts (:meth:`Adapter.run_script`, for scripted oracles and negatives) are Fityk commands.
They run in that replay, inserted after the log entries the GUI had written when the script
was sent, and are kept for every later replay: the session the evaluator sees is the GUI's
log with the scripts in their places. Files a script writes (``info peaks > 'x'``) are written
into the work directory when it runs. The GUI itself does not show what a script did.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import TYPE_CHECKING, Any

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

REPLAY = inside_text(__file__, "replay.py")
MAIN_TITLE = "Fityk"
LOG_PREFIX = "fityk-session-"
#: Programs whose scripts the adapter remembers (a warm pool starts spares beside the active one).
MAX_SESSIONS = 32


class FitykScriptError(ToolScriptError):
    """The replay of Fityk's session failed or did not finish."""


class Adapter(ToolAdapter):
    #: Fityk's command language in its input line
    console_language = ConsoleLanguage(
        code=(r"^\s*(@[\d*+]|guess|fit|print|info|F\s*[+=]|delete|set|%|\$|A\s*=|plot|define)"),
        windows=r"Fityk")
    ready_timeout = 30.0

    def __init__(self, info) -> None:
        super().__init__(info)
        #: Per program start (its log's path, new at each start): the script commands run so
        #: far, as [log entries before it, commands]. Keyed by log because a warm pool starts
        #: spare programs while an episode runs in another.
        self._scripts: dict[str, list[list[Any]]] = {}

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        log = f"{provider.paths['tmp']}/{LOG_PREFIX}{secrets.token_hex(6)}.log"
        self._scripts[log] = []
        while len(self._scripts) > MAX_SESSIONS:
            self._scripts.pop(next(iter(self._scripts)))
        work = provider.paths["work"]
        files = task.spec.open if task is not None else []
        # -I: no ~/.fityk/init; -c runs before the files are loaded, so their loading is logged.
        return ["fityk", "-I", "-c", f"set logfile='{log}'",
                *(f"{work}/{name}" for name in files)]

    def launch_env(self, provider: ProgramHost) -> dict[str, str]:
        return {"UBUNTU_MENUPROXY": "0", "NO_AT_BRIDGE": "1", "GTK_OVERLAY_SCROLLING": "0"}

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        want = task.spec.open if task is not None else ()
        for w in windows:
            if w.title.startswith(MAIN_TITLE) and w.width > 100 and w.height > 100:
                # The title names a data file once one is loaded (with several, the focused
                # one: the first); after_ready waits until every file is.
                return not want or any(w.title.endswith("/" + name) for name in want)
        return False

    def after_ready(self, provider: ProgramHost, task: Task | None) -> None:
        # The first replay proves the log is being written and holds the task's inputs.
        want = len(task.spec.open) if task is not None else 0
        deadline = time.monotonic() + self.ready_timeout
        while True:
            state = self._replay(provider, {}, timeout=self.ready_timeout)["state"]
            loaded = sum(1 for d in state["datasets"] if d.get("points"))
            if loaded >= want:
                return
            if time.monotonic() > deadline:
                raise FitykScriptError(f"Fityk shows {loaded} loaded dataset(s), expected "
                                       f"{want}")

    def run_script(self, provider: ChannelHost, code: str, timeout: float = 30.0) -> str:
        """Run Fityk commands (one per line) after what the GUI has done; returns their output."""
        scripts = {log: [*done, [10**9, code]] for log, done in self._scripts.items()}
        probe = self._replay(provider, scripts, timeout)
        self._scripts.setdefault(probe["log"], []).append([probe["log_entries"], code])
        return probe["output"]

    def dump_state(self, provider: ChannelHost) -> dict[str, Any]:
        state = self._replay(provider, self._scripts, timeout=30.0)["state"]
        if state.get("tampered"):
            raise FitykScriptError("Fityk's session log was redirected or switched off: the "
                                   "session cannot be read back")
        return state

    def _replay(self, provider: ChannelHost, scripts: dict | list, timeout: float
                ) -> dict[str, Any]:
        n = self.next_request_id()
        token = n.rsplit("-", 1)[-1]
        output = self.call_client(
            provider, f"fityk-replay-{n}", code=REPLAY,
            args=[f"glob:{provider.paths['tmp']}/{LOG_PREFIX}*.log", json.dumps(scripts), "-",
                  token], timeout=timeout, error=FitykScriptError, poll=0.02)
        mark = f"@@{token} RESULT "
        answer = next((line[len(mark):] for line in reversed(output.splitlines())
                       if line.startswith(mark)), "")
        try:
            reply = json.loads(answer)
        except json.JSONDecodeError as exc:
            raise FitykScriptError(f"the replay's answer is not JSON ({exc}): "
                                   f"{output[-300:]}") from None
        if not reply.get("ok"):
            raise FitykScriptError(f"replaying Fityk's session failed: {reply.get('error')}")
        return reply
