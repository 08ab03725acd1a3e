"""Veusz 3.6 (Debian ``veusz``): launch, readiness and a state channel served from inside Veusz.

Veusz is started by ``inside/channel.py`` (``python3 -I -c``: no script file, and no module is
imported from the working directory, the agent-writable work folder), which opens a QTcpServer
on 127.0.0.1 before Veusz's main window appears and then runs Veusz as ``/usr/bin/veusz`` would.
The program runs in a bubblewrap sandbox with its own network namespace, so that port exists
only inside the program zone. The client is a short Python client (``call_client``: a fork of
the sandbox helper, its nonce on no command line) started in the same zone: it sends one JSON
request (Python code and a fresh random nonce), Veusz runs the code on its GUI thread with a
``CommandInterface`` on the main window's document, and the client keeps the reply only if it
carries the nonce; it prints the reply on its stdout, which goes back through the sandbox
helper. The agent zone sees neither the port nor the program zone's /tmp.

The state dump is not computed in the live program (its console can rebind anything there):
the live Veusz writes its document out as commands (inside/serialize.py) and a fresh headless
Veusz reads them in a throwaway sandbox, in its safe mode (the reader of saved documents). That
Veusz is started ahead of need (imported, its application made, waiting on its stdin for the
document) and serves one dump; the next is started as it ends (getters.load_live_document).
"""

from __future__ import annotations

import copy
import json
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciagent_gym.sdk import (
    SOCKET_CLIENT_PRELUDE,
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

INSIDE = Path(__file__).parent / "inside"
CHANNEL_CODE = (INSIDE / "channel.py").read_text()
SERIALIZE_CODE = (INSIDE / "serialize.py").read_text()
PORT = 47123
PYTHON = "/usr/bin/python3"
TITLE_SUFFIX = " - Veusz"

# The client (call_client): argv[1] port, argv[2] nonce, argv[3] the request code.
# Retries while Veusz is starting (no server yet, or no main window yet): about 40 s.
CLIENT = SOCKET_CLIENT_PRELUDE + inside_text(__file__, "client.py")


class ScriptError(ToolScriptError):
    """A Veusz request failed or did not finish."""


class Adapter(ToolAdapter):
    #: Veusz's command API (ImportFileCSV(...), Add(...), Set(...)) in its console
    console_language = ConsoleLanguage(
        code=(r"^\s*[A-Z][A-Za-z]+\("),
        windows=r"Veusz")
    # typed in Veusz's console (Python): the document always modified, and math.isfinite
    # false, so every number the dump reads becomes None (the dump runs in this interpreter
    # and imports math from it: issue 32, finding 4)
    console_rebind = ("import math\nfrom veusz.document import Document\n"
                      "Document.isModified = lambda self: True\n"
                      "math.isfinite = lambda value: False\n"
                      "__out__ = 'rebound'\n")
    ready_timeout = 40.0

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        work = provider.paths["work"]
        files = task.spec.open if task is not None else []
        # -I: no module from the working directory (the work folder) or the environment
        return [PYTHON, "-I", "-c", CHANNEL_CODE, str(PORT),
                *(f"{work}/{name}" for name in files)]

    def launch_env(self, provider: ProgramHost) -> dict[str, str]:
        return {"QT_X11_NO_MITSHM": "1", "XDG_RUNTIME_DIR": provider.paths["tmp"],
                "NO_AT_BRIDGE": "1"}

    def open_inputs(self, provider: ProgramHost, task: Task) -> None:
        work = provider.paths["work"]
        for name in task.spec.open:
            self._request(provider, f"window.openFileInWindow({f'{work}/{name}'!r})\n",
                          timeout=60.0)

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        files = task.spec.open if task is not None else []
        main = [w for w in windows if w.title.endswith(TITLE_SUFFIX) and w.width > 600
                and w.height > 400]
        if not files:
            return any(w.title == "Untitled" + TITLE_SUFFIX for w in main)
        return any(w.title == Path(files[-1]).name + TITLE_SUFFIX for w in main)

    def after_ready(self, provider: ProgramHost, task: Task | None) -> None:
        # The first answer proves the channel is up and the main window holds the document.
        self._request(provider, "__out__ = len(doc.data)", timeout=self.ready_timeout)

    def run_script(self, provider: ChannelHost, code: str, timeout: float = 30.0) -> str:
        """Run Veusz commands (Python, as typed at the console: ``Set``, ``Add``,
        ``ImportFileCSV``... from the command interface) on the main window's document;
        returns what the code leaves in ``__out__`` (text as is, anything else as JSON)."""
        body = ("for _n in ci.safe_commands + ci.unsafe_commands + ci.import_commands:\n"
                "    globals()[_n] = getattr(ci, _n)\n"
                "__out__ = None\n" + code)
        out = self._request(provider, body, timeout)
        return out if isinstance(out, str) else json.dumps(out)

    def _request(self, provider: ChannelHost, code: str, timeout: float) -> Any:
        n = self.next_request_id()
        nonce = secrets.token_hex(16)
        text = self.call_client(provider, f"veusz-client-{n}", code=CLIENT,
                                args=[str(PORT), nonce, code],
                                timeout=timeout, error=ScriptError)
        try:
            reply = json.loads(text)
        except ValueError as exc:
            raise ScriptError(f"Veusz's answer is not JSON ({exc}): {text[:300]}") from None
        if not reply.get("ok"):
            raise ScriptError(f"Veusz request failed: {reply.get('error')}")
        return reply.get("out")

    def dump_state(self, provider: ChannelHost) -> dict[str, Any]:
        """The state dump (inside/state_dump.py) run by a fresh headless Veusz on the live
        document, never in the live program, whose console can rebind what a dump calls: the
        live Veusz only writes its document out as commands (inside/serialize.py), which the
        sandboxed reader of saved documents loads in Veusz's safe mode."""
        from sciagent_gym.envs.veusz.getters import load_live_document

        from sciagent_gym.sdk import GetterError

        out = self._request(provider, SERIALIZE_CODE, timeout=30.0)
        if not isinstance(out, dict) or not isinstance(out.get("vsz"), str) \
                or not isinstance(out.get("meta"), dict):
            raise ScriptError(f"the document came back malformed: {str(out)[:300]}")
        try:
            # a copy: the summaries are cached, and this one is changed below. Read by a
            # Veusz started ahead of need for this env (its provider), the document on stdin.
            state = copy.deepcopy(load_live_document(out["vsz"], provider))
        except GetterError as exc:
            raise ScriptError(f"state dump: {exc}") from None
        state["filename"], state["modified"] = str(out.get("filename")), \
            bool(out.get("modified"))
        for name, info in state.get("datasets", {}).items():
            meta = out["meta"].get(name)
            info.update({k: meta.get(k) for k in ("kind", "linked", "expr")}
                        if isinstance(meta, dict) else {"kind": None, "linked": None,
                                                        "expr": None})
        return state
