"""PyMOL 2.5 (Debian ``pymol``): launch, readiness and a state channel over PyMOL's XML-RPC.

PyMOL starts with ``-R``: an XML-RPC server on localhost port 9123 (or one of the next four).
The program runs in a bubblewrap sandbox with its own network namespace, so that port exists
only inside the sandbox: the client is a short Python client (``run_client``: a fork of the
sandbox helper, so the request is on no command line) started in the same sandbox. It writes
the request (Python) to the sandbox's private /tmp and asks PyMOL over XML-RPC to
``run`` it; PyMOL runs it on its GUI thread (commands execute synchronously there), and the
request writes its JSON answer to a file that it renames when complete, which the adapter reads.

The state dump is not computed in the live program (its console can rebind anything there):
the live PyMOL only pickles its session, and a fresh headless PyMOL reads it (see session.py),
one started ahead of need and handed the session on its stdin; it serves one dump, and the
next is started as it ends.
"""

from __future__ import annotations

import json
import re
import secrets
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from sciagent_gym.envs.pymol.data import GoldError
from sciagent_gym.envs.pymol.session import (
    MAX_SESSION_BYTES,
    SAVE_SESSION,
    SESSION_CLIENT,
    dump_from_session,
    session_bytes,
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

STATE_CODE = inside_text(__file__, "state_dump.py")
OUTPUT_CODE = inside_text(__file__, "output_area.py")
RESTORE_CODE = inside_text(__file__, "restore.py")
STEADY_CARET = inside_text(__file__, "steady_caret.py")
RPC_PORT = 9123
WINDOW_TITLE = "PyMOL"

# The client (inside/client.py; run_client, Python): argv[1] request path, argv[2] request
# code. Tries the ports PyMOL may use (its PORT_FROM and PORT_TO replaced here).
CLIENT = (inside_text(__file__, "client.py")
          .replace("PORT_FROM", str(RPC_PORT)).replace("PORT_TO", str(RPC_PORT + 5)))

# Runs inside PyMOL (inside/request.py): executes CODE with ``cmd`` at hand, answers {"ok",
# "out" | "error"}; CODE, PART and DONE are put in by request_code.
REQUEST = inside_text(__file__, "request.py")


def request_code(code: str, part: str, done: str) -> str:
    """:data:`REQUEST` with the reprs of ``code``, ``part`` and ``done`` for CODE, PART and
    DONE, in one pass (what is put in is never read again)."""
    values = {"CODE": code, "PART": part, "DONE": done}
    return re.sub(r"\b(CODE|PART|DONE)\b", lambda m: repr(values[m[1]]), REQUEST)


class ScriptError(ToolScriptError):
    """A PyMOL request failed or did not finish."""


def _geometry(window: WindowInfo) -> tuple[int, int, int, int]:
    return (window.x, window.y, window.width, window.height)


class Adapter(ToolAdapter):
    #: PyMOL commands typed at its command line
    console_language = ConsoleLanguage(
        code=(r"^\s*(create|align|super|cealign|bg_color|png|color|select|count_atoms|show|hide|"
              r"distance|save|load|remove|set|fetch|zoom|orient|get_distance|iterate|print|as|"
              r"extract|delete)\b"),
        windows=r"PyMOL")
    channel_files = ("sciagent-pymol-{n}.json",)
    placeholders = MappingProxyType({".pdb": b"END\n"})  # a structure with no atom
    # typed at PyMOL's command line, a Python block: every atom count 4242 (so every
    # representation covers every atom) and a white background
    console_rebind = ("#python\nfrom pymol import cmd\n"
                      "cmd.count_atoms = lambda *a, **k: 4242\n"
                      "cmd.get_setting_tuple = lambda *a, **k: (5, (1.0, 1.0, 1.0))\n"
                      "__out__ = 'rebound'\n")
    ready_timeout = 30.0
    _geometry: tuple[int, int, int, int] | None = None  # the main window's, at the last launch

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        work = provider.paths["work"]
        files = task.spec.open if task is not None else []
        # -R: XML-RPC server; -q: no start-up banner (its text is the same, but quieter);
        # -W/-H and -X/-Y: one fixed window geometry for every start.
        return ["pymol", "-R", "-q", "-W", "1000", "-H", "560", "-X", "0", "-Y", "0",
                *(f"{work}/{name}" for name in files)]

    def launch_env(self, provider: ProgramHost) -> dict[str, str]:
        # /usr/bin/pymol runs "python3" from PATH: the system one (with PyMOL and PyQt5).
        return {"PATH": "/usr/bin:/bin", "PYMOL_RPCHOST": "localhost",
                "QT_X11_NO_MITSHM": "1", "LIBGL_ALWAYS_SOFTWARE": "1"}

    def open_inputs(self, provider: ProgramHost, task: Task) -> None:
        work = provider.paths["work"]
        code = "".join(f"cmd.load({f'{work}/{name}'!r})\n" for name in task.spec.open)
        self._request(provider, code, timeout=60.0)

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        return any(w.title.startswith(WINDOW_TITLE) and w.width > 1 and w.height > 1
                   for w in windows)

    def after_ready(self, provider: ProgramHost, task: Task | None) -> None:
        # The first answer over the channel proves PyMOL has finished starting (and loading
        # the task's files): its window appears before the inputs are read.
        # It also stops the command line's caret blinking (steady, re-armed by a focus
        # change): a blinking caret made two identical resets differ in 15 pixels, and made
        # every reset's canonical settle (exact, 0.25 s quiet) retry until ~2.5 s.
        # And it lays the output area out as two blocks, as a restore does, whatever batches
        # the feedback timer made of the launch's lines (inside/output_area.py).
        self._request(provider, f"{STEADY_CARET}{OUTPUT_CODE}_lay_out_launch()\n"
                                "__out__ = cmd.get_names('objects')",
                      timeout=self.ready_timeout)
        main = next((w for w in provider.windows() if w.title.startswith(WINDOW_TITLE)), None)
        self._geometry = _geometry(main) if main is not None else None

    def restore_in_place(self, provider: ProgramHost, task: Task) -> bool:
        """Reinitialize PyMOL (objects, settings, view, colours), reload the task's restaged
        files as the launch does and rebuild the output area, command line and title (see
        inside/restore.py). Refused with any window but the main one (a dialog, a menu, an
        undocked panel) or the main window moved or resized (Display > Full Screen)."""
        windows = provider.windows()
        mains = [w for w in windows if w.title.startswith(WINDOW_TITLE)]
        if len(windows) != 1 or len(mains) != 1 or (self._geometry is not None
                                                     and _geometry(mains[0]) != self._geometry):
            return False
        work = provider.paths["work"]
        files = [f"{work}/{name}" for name in task.spec.open]
        code = f"FILES = {files!r}\nWORK = {work!r}\n{OUTPUT_CODE}{RESTORE_CODE}"
        return self._request(provider, code, 60.0) == "ok"

    def run_script(self, provider: ChannelHost, code: str, timeout: float = 30.0) -> str:
        """Run PyMOL commands (one per line, as typed at the ``PyMOL>`` prompt) in the GUI.

        A script whose first line is ``#python`` is Python instead, with ``cmd`` available;
        what it leaves in ``__out__`` is returned (as JSON text unless it is a string).
        """
        if code.lstrip().startswith("#python"):
            body = code
        else:
            body = f"cmd.do({code!r})\n"
        out = self._request(provider, body, timeout)
        return out if isinstance(out, str) else json.dumps(out)

    def _request(self, provider: ChannelHost, code: str, timeout: float) -> Any:
        tmp = provider.paths["tmp"]
        n = self.next_request_id()
        path = f"{tmp}/sciagent-pymol-{n}.py"
        part, done = f"{tmp}/sciagent-pymol-{n}.part", f"{tmp}/sciagent-pymol-{n}.json"
        request = request_code(code, part, done)
        answer = self.run_client(provider, f"pymol-client-{n}", done, code=CLIENT,
                                 args=[path, request], timeout=timeout, error=ScriptError,
                                 poll=0.01)
        try:
            reply = json.loads(answer)
        except json.JSONDecodeError as exc:
            raise ScriptError(f"PyMOL's answer is not JSON ({exc}): {answer[:300]}") from None
        if not reply.get("ok"):
            raise ScriptError(f"PyMOL request failed: {reply.get('error')}")
        return reply.get("out")

    def dump_state(self, provider: ChannelHost) -> dict[str, Any]:
        """The state dump (inside/state_dump.py) run on the live program's session by a fresh
        headless PyMOL, never in the live program, whose console can rebind what a dump calls
        (see :mod:`.session`)."""
        path = f"{provider.paths['tmp']}/sciagent-pymol-session-{secrets.token_hex(8)}.pkl"
        self._request(provider, SAVE_SESSION.format(path=path), timeout=20.0)
        n = self.next_request_id()
        reply = self.call_client(provider, f"pymol-session-{n}", code=SESSION_CLIENT,
                                 args=[path, str(MAX_SESSION_BYTES)], timeout=20.0,
                                 error=ScriptError)
        try:
            # read by a PyMOL started ahead of need for this env (its provider)
            out = dump_from_session(session_bytes(reply), STATE_CODE, warm=provider)
        except (ValueError, GoldError) as exc:
            raise ScriptError(f"state dump: {exc}") from None
        if not isinstance(out, dict):
            raise ScriptError(f"state dump is not an object: {str(out)[:300]}")
        return out
