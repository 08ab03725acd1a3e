"""The materials code env: an xterm in the agent zone, beside a local OPTIMADE server.

The program is a terminal whose shell is the agent's own: xterm runs in the agent zone
(``program_zone = "agent"``), with the same uid, /tmp and network namespace as the agent's
``run()`` commands. Before the window opens, a short boot script (``BOOT``, run by the
sandbox's ``/usr/bin/python3``) writes :mod:`inside.optimade_server` to the zone's private /tmp,
starts it on ``127.0.0.1:PORT`` over the structure database staged into the work directory
(``.optimade/structures.json``, :mod:`.db`) and waits until it accepts connections; only then
does it exec xterm, so a visible terminal means a running server. The loopback interface is
the agent zone's own (bubblewrap's ``--unshare-net``): nothing outside this env reaches it.

There is no state channel to isolate: the env's state is what the agent wrote into the work
directory and what it answered. Each variant stages its own database (:mod:`.variant`, derived
from the templates cached in the user cache); gold values are computed on the host at staging,
from the variant's entries as they were written (never read back from the staged copy, which
the agent may edit).

The shell shows its state in the window title: ``Materials terminal: running`` while a command
runs (bash's ``PS0``) and ``Materials terminal: ready N`` at the N-th prompt after the first
(``PROMPT_COMMAND``), which is what an agent (and a GUI oracle) waits for before reading output.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from sciagent_gym.sdk import (
    ChannelHost,
    ProgramHost,
    TerminalAdapter,
    ToolScriptError,
    inside_text,
    ready_pattern,
    shell_env,
    xterm_argv,
)

if TYPE_CHECKING:
    from sciagent_gym.sdk import Task

SERVER_SOURCE = inside_text(__file__, "optimade_server.py")
PORT = 8000
URL = f"http://127.0.0.1:{PORT}/v1"
DB_RELPATH = ".optimade/structures.json"
TITLE = "Materials terminal"
READY = ready_pattern(TITLE)
XTERM = xterm_argv(TITLE)
SHELL_ENV = {**shell_env(TITLE), "OPTIMADE_URL": URL}

# The boot (inside/boot.py); argv: server source, database path, port, "--", the xterm
# command line.
BOOT = inside_text(__file__, "boot.py")
#: Exits 0 when the server accepts connections, within argv[1] seconds (inside/probe.py,
#: its PORT replaced by the port number).
PROBE = inside_text(__file__, "probe.py").replace("PORT", str(PORT))


def ensure_server(provider: ChannelHost) -> None:
    """Start the OPTIMADE server again when it no longer answers, before an oracle's shell
    step (the Materials terminal's and the MatSci workstation's). It lives in the agent zone,
    where anything the agent runs may end it; a final state collected at the end of an episode
    stops it too (the audit's mid-episode checkpoints no longer do)."""
    run = provider.run_command
    probe = f"/usr/bin/python3 -I -S -c {shlex.quote(PROBE)}"
    if run(f"{probe} 0", timeout=30).returncode == 0:
        return
    launch = getattr(provider, "launch_command", None)
    if launch is None:
        raise ToolScriptError("the OPTIMADE server is not running and this provider "
                              "cannot start it")
    db = f"{provider.paths['work']}/{DB_RELPATH}"
    launch("optimade", ["/usr/bin/python3", "-I", "-S", "-c", BOOT, SERVER_SOURCE, db, str(PORT),
                        "--", "/bin/true"])
    if run(f"{probe} 120", timeout=150).returncode != 0:
        raise ToolScriptError("the OPTIMADE server did not start again")


class Adapter(TerminalAdapter):
    title = TITLE
    judged_on = "the work directory's files and the answer"
    extra_env = {"OPTIMADE_URL": URL}

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        db = f"{provider.paths['work']}/{DB_RELPATH}"
        return ["/usr/bin/python3", "-I", "-S", "-c", BOOT, SERVER_SOURCE, db, str(PORT), "--",
                *XTERM]

    def before_command(self, provider: ChannelHost) -> None:
        ensure_server(provider)
