"""RKWard 0.7.5 with R 4.2 (Debian ``rkward``, ``r-base``): launch, readiness and a state channel
served from inside RKWard's own R session.

RKWard starts its R backend (``rkward.rbackend``) as a child process; that R reads the profile
named by ``R_PROFILE_USER``, here ``~/.sciagent-rprofile.R`` from the snapshot home, which runs
the code of ``inside/channel.R`` handed over in an environment variable (and then drops the
variable). The channel loads the namespace of tcltk (part of R, not attached) and opens a Tcl
server socket on 127.0.0.1 in the program zone's own network namespace; RKWard's backend runs
R's event handlers while it waits for commands, so the socket is served whenever R is idle,
with dialogs open too. The client is a short Python client (``call_client``: a fork of the
sandbox helper, its nonce on no command line) started in the same zone: it sends one line (a
fresh random nonce, the mode and the R code in hexadecimal), keeps the reply only if it carries
the nonce, and prints it on its stdout, which goes back through the sandbox helper. The agent
zone sees neither the port nor the program zone's /tmp.

RKWard shows its "Setup Assistant" on every start when no Kate plugins are installed (Debian's
``kate`` package brings them; it is not required here): :meth:`Adapter.after_ready` closes it,
which is its Cancel, so every episode starts from the same bare main window.
"""

from __future__ import annotations

import json
import secrets
import time
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
CHANNEL_CODE = (INSIDE / "channel.R").read_text()
STATE_CODE = (INSIDE / "state_dump.R").read_text()
PORT = 47311
#: The main window's title once R is up: "[Unnamed Workspace] — RKWard" (an em dash), or the
#: workspace's file name in the brackets.
TITLE_SUFFIX = "RKWard"
WIZARD_TITLE = "RKWard"
READY_PROBE = ('"package:rkward" %in% search() && '
               'isTRUE(getOption("sciagent.channel")$tasks >= 1L)')

# The client (call_client): argv[1] port, argv[2] nonce, argv[3] "MODE HEX".
# Retries while R is starting (no server yet) or busy: about 60 s.
CLIENT = SOCKET_CLIENT_PRELUDE + inside_text(__file__, "client.py")


class ScriptError(ToolScriptError):
    """An R request in RKWard failed or did not finish."""


def main_window(windows: list[WindowInfo]) -> WindowInfo | None:
    """RKWard's main window once its R session is up (its title names the workspace)."""
    return next((w for w in windows if w.title.endswith(TITLE_SUFFIX) and "[" in w.title
                 and w.width > 600 and w.height > 400), None)


def _wizard(windows: list[WindowInfo]) -> WindowInfo | None:
    return next((w for w in windows if w.title == WIZARD_TITLE and 200 < w.width < 900
                 and w.height < 700), None)


class Adapter(ToolAdapter):
    #: R code in the R console
    console_language = ConsoleLanguage(
        code=(r"<-|\b[\w.]+\(.*\)|\$"),
        windows=r"RKWard")
    # typed at RKWard's R console: base's getwd() rebound (R lets a console unlock and replace
    # any binding; the dump runs in this session: issue 32, finding 4)
    console_rebind = ('unlockBinding("getwd", baseenv())\n'
                      'assign("getwd", function() "/forged", envir = baseenv())\n'
                      'lockBinding("getwd", baseenv())\n'
                      '"rebound"\n')
    ready_timeout = 60.0

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        # --evaluate runs one command at the R console once R is up: it opens the console
        # at the bottom of the window, so every episode starts with it shown at a prompt.
        return ["rkward", "--evaluate", f'setwd("{provider.paths["work"]}")']

    def launch_env(self, provider: ProgramHost) -> dict[str, str]:
        home = provider.paths["home"]
        return {"R_PROFILE_USER": f"{home}/.sciagent-rprofile.R",
                "SCIAGENT_RK_CHANNEL": CHANNEL_CODE, "SCIAGENT_RK_PORT": str(PORT),
                "XDG_RUNTIME_DIR": provider.paths["tmp"], "QT_X11_NO_MITSHM": "1",
                "NO_AT_BRIDGE": "1", "R_HISTFILE": f"{provider.paths['tmp']}/.Rhistory"}

    def open_inputs(self, provider: ProgramHost, task: Task) -> None:
        work = provider.paths["work"]
        for name in task.spec.open:
            self._request(provider, f"load({f'{work}/{name}'!r}, envir = globalenv())\n",
                          "g", timeout=60.0)

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        return main_window(windows) is not None or _wizard(windows) is not None

    def after_ready(self, provider: ProgramHost, task: Task | None) -> None:
        deadline = time.monotonic() + self.ready_timeout * provider.ready_scale
        while main_window(provider.windows()) is None:
            wizard = _wizard(provider.windows())
            if wizard is not None:
                provider.close_window(wizard.id)
            if time.monotonic() > deadline:
                raise ScriptError("RKWard's main window did not come up (its setup assistant "
                                  "stayed open?); output:\n" + provider.app_log_tail())
            time.sleep(0.1)
        # R answers the channel while RKWard still sets its session up (it loads its own R
        # package, from the snapshot home's ~/.rkward/.rkward_packages, or installs it there
        # first, ~12 s), and runs the --evaluate command only after that: wait until the
        # channel's task callback has seen that command finish, so that every episode starts
        # with an idle R and the console at its prompt.
        while not self._request(provider, READY_PROBE, "l", timeout=self.ready_timeout):
            if time.monotonic() > deadline:
                raise ScriptError("RKWard's R session did not finish starting; output:\n"
                                  + provider.app_log_tail())
            time.sleep(0.1)
        if task is not None and task.spec.open:
            self.open_inputs(provider, task)

    def run_script(self, provider: ChannelHost, code: str, timeout: float = 60.0) -> str:
        """Run R code in RKWard's R session, in the global environment (as typed at its
        console); returns the value of the last expression: text as is, a single number
        with 15 significant digits, anything else as JSON. RKWard's own functions that talk
        to its frontend (``rk.sync.global()``...) must not be called here: the request runs
        inside R's event loop, where they wait for the frontend forever."""
        out = self._request(provider, code, "g", timeout)
        return out if isinstance(out, str) else json.dumps(out)

    def _request(self, provider: ChannelHost, code: str, mode: str, timeout: float) -> Any:
        n = self.next_request_id()
        nonce = secrets.token_hex(16)
        text = self.call_client(provider, f"rkward-client-{n}", code=CLIENT,
                                args=[str(PORT), nonce, f"{mode} {code.encode().hex()}"],
                                timeout=timeout, error=ScriptError)
        try:
            reply = json.loads(text)
        except ValueError as exc:
            raise ScriptError(f"RKWard's answer is not JSON ({exc}): {text[:300]}") from None
        if not reply.get("ok"):
            raise ScriptError(f"R request failed in RKWard: {reply.get('error')}")
        return reply.get("out")

    def dump_state(self, provider: ChannelHost) -> dict[str, Any]:
        out = self._request(provider, STATE_CODE, "l", timeout=30.0)
        if not isinstance(out, dict):
            raise ScriptError(f"state dump is not an object: {str(out)[:300]}")
        return out
