"""The adapter of one tool: what the core needs to know about its program.

Hooks take the machine the program runs on as a :class:`~sciagent_gym.tools.host.ProgramHost`
(launch and reset hooks, host side: the local and remote providers) or a
:class:`~sciagent_gym.tools.host.ChannelHost` (state-channel hooks, which the control server
also calls with its own machine inside a guest).
"""

from __future__ import annotations

import importlib
import itertools
import secrets
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from sciagent_gym.controller.windows import WindowInfo
from sciagent_gym.errors import SciAgentError
from sciagent_gym.tasks.oracle_interface import ConsoleLanguage
from sciagent_gym.tools.discovery import ToolInfo, load_tool_getters, tool_info
from sciagent_gym.tools.host import ChannelHost, ProgramHost

if TYPE_CHECKING:
    from sciagent_gym.tasks.task import Task


#: The start of a socket channel client (Python, run by :meth:`ToolAdapter.call_client`): its
#: arguments (port, nonce, request) and ``finish(reply)``, which prints the reply as JSON on
#: stdout, the pipe back to the sandbox helper that no other process of the zone can write.
#: Each tool appends its own protocol.
SOCKET_CLIENT_PRELUDE = r"""
import json, socket, sys, time
port, nonce, request = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def finish(reply):
    sys.stdout.write(json.dumps(reply))
    sys.stdout.flush()
    sys.exit(0)
"""


#: A client (Python, for :meth:`ToolAdapter.run_client`) that drops a request file where the
#: program polls for it: argv[1] its path, argv[2] its text, written beside it and renamed into
#: place so the program never reads half of it. No child process, so the path (which names the
#: answer file) appears on no command line.
DROP_REQUEST_CLIENT = r"""
import os, sys
path, text = sys.argv[1], sys.argv[2]
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path + ".tmp", "w") as fh:
    fh.write(text)
os.rename(path + ".tmp", path)
"""


def load_adapter(name: str, getters: bool = True) -> ToolAdapter:
    """The tool's adapter; ``getters=False`` skips its evaluator getters (the control server
    needs only the adapter's state channel)."""
    info = tool_info(name)
    if getters:
        load_tool_getters(name)
    module = importlib.import_module(f"sciagent_gym.envs.{name}.adapter")
    return module.Adapter(info)


class ToolAdapter:
    """What the core needs to know about one program. Subclasses stay thin."""

    #: Seconds to wait for the program's main window after launch.
    ready_timeout: float = 30.0
    #: Where the program runs: "program" (the program zone, beside its state channel) or
    #: "agent" (the agent zone, with the agent's ``run()`` commands). A code env's program is
    #: a terminal whose shell is the agent's own, so it belongs in the agent zone: a shell in
    #: the program zone would reach the channel. Providers without an agent zone refuse it.
    program_zone: str = "program"
    #: The answer files the program writes for its state channel, under the program zone's
    #: /tmp, with ``{n}`` for the request id: what a forging agent would plant
    #: (``runs.attacks``'s plant-answers). Channels whose reply comes back through the sandbox
    #: helper (:meth:`call_client`) have none.
    channel_files: tuple[str, ...] = ()
    #: The smallest valid file of each of the tool's own formats, by lower-case extension
    #: (".reg": a region file with no region): what the generic placeholder cheat writes for
    #: an output of that format, so an empty-but-valid file is proven to score nothing.
    placeholders: Mapping[str, bytes] = MappingProxyType({})
    #: What a person at the program's own console could type to make the state dump lie: a
    #: :meth:`run_script` script that rebinds what the dump calls inside the program (played by
    #: ``runs.attacks``'s console-rebind, which checks the dump reports the same state after
    #: it). None where the adapter declares none: the attack is then not played on the tool.
    console_rebind: str | None = None
    #: The program's own console(s), as a GUI oracle's typed lines and awaited windows show
    #: them: what tells a spec's ``oracle_interface`` (menus, console or mixed) from its GUI
    #: oracle (see :mod:`sciagent_gym.tasks.oracle_interface`). None: the program has none.
    console_language: ConsoleLanguage | None = None

    def __init__(self, info: ToolInfo) -> None:
        self.info = info
        self._requests = itertools.count(1)

    def next_request_id(self) -> str:
        """A fresh name for one state-channel request (its request and answer files): a
        number and 64 random bits, so no process can guess and plant an answer in advance
        (the files live in the program zone's private /tmp, which the agent zone never sees;
        this guards against what the program's own console could do)."""
        return f"{next(self._requests)}-{secrets.token_hex(8)}"

    @property
    def generators(self) -> dict[str, Callable[..., dict[str, Any]]]:
        """``GENERATORS`` of the tool's ``data.py``, imported on first use: the control server
        in a guest runs adapters without numpy or scikit-image."""
        if not (self.info.folder / "data.py").is_file():
            return {}
        return importlib.import_module(f"sciagent_gym.envs.{self.name}.data").GENERATORS

    @property
    def perceivers(self) -> dict[str, Callable[..., str]]:
        """``PERCEIVERS`` of the tool's ``perceive.py``: functions a GUI oracle's ``perceive``
        step uses to read an answer off the displayed pixels where OCR cannot (a lattice's
        spacing, a curve's yield point), so that even a figure question's GUI oracle answers
        from what is on the screen, never from the gold."""
        if not (self.info.folder / "perceive.py").is_file():
            return {}
        return importlib.import_module(f"sciagent_gym.envs.{self.name}.perceive").PERCEIVERS

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def snapshot_dir(self) -> Path:
        """The home directory every episode starts from (copied on each reset)."""
        return self.info.folder / "snapshot" / "home"

    def check_installed(self) -> None:
        """Raise MissingProgramError naming the package if a required program is absent."""
        for req in self.info.requires:
            if req.missing():
                raise req.error()

    # -- hooks for subclasses ----------------------------------------------------------------
    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        """The command that starts the program inside the sandbox for ``task`` (with its
        inputs open), or with nothing open when ``task`` is None (a VM snapshot's start)."""
        raise NotImplementedError

    def open_inputs(self, provider: ProgramHost, task: Task) -> None:
        """Open ``task``'s inputs in the already running program (after a VM snapshot restore,
        where the program is up but no task was staged yet)."""
        raise NotImplementedError(f"{self.name} cannot open a task's inputs in a running "
                                  "program; use a provider that restarts it")

    def launch_env(self, provider: ProgramHost) -> dict[str, str]:
        return {}

    def sandbox_ro_binds(self) -> list[str]:
        """Host directories the sandbox must show read-only at the same path (a program
        installed outside /usr, which every sandbox sees)."""
        return []

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        """True once the program shows what the task starts from (with ``task`` None: once
        its main window is up)."""
        raise NotImplementedError

    def after_ready(self, provider: ProgramHost, task: Task | None) -> None:
        """Last touches once the window is up (e.g. clear timing text) so resets are identical."""

    def restore_in_place(self, provider: ProgramHost, task: Task) -> bool:
        """Put the running program back where a fresh launch with ``task``'s (already
        restaged) inputs leaves it, before ``setup.script``, without restarting it: the env's
        ``soft_reset`` option. False when this tool cannot, or not from the state it is in;
        the env then restarts the program as usual."""
        return False

    def apply_start_state(self, provider: ProgramHost, task: Task | None) -> None:
        """Run the spec's ``setup.script`` (e.g. a state-control task's random initial toggle
        states) through the scripting channel, once the program is ready."""
        script = task.setup_script if task is not None else ""
        if script.strip():
            self.run_script(provider, script)

    def dump_state(self, provider: ChannelHost) -> dict[str, Any]:
        """The program's internal state through its own scripting channel, as JSON data."""
        raise NotImplementedError

    def run_script(self, provider: ChannelHost, code: str, timeout: float = 30.0) -> str | None:
        """Run code in the program's own scripting language (oracles); returns its answer."""
        raise NotImplementedError

    def console_shell(self, command: str) -> str | None:
        """A :meth:`run_script` script that runs the shell ``command`` from the program's
        own console, as a person at it could (R's ``system()``, Praat's ``runSystem``).
        ``runs.attacks``'s answer-race starts its loop this way; None (the default): the
        attack starts it in the program zone directly, as any way into the zone would."""
        return None

    # -- shared plumbing for state channels ---------------------------------------------------
    def call_client(self, provider: ChannelHost, name: str, *, code: str | None = None,
                    args: list[str] | None = None, argv: list[str] | None = None,
                    stdin: str = "", timeout: float, error: type[SciAgentError] = SciAgentError,
                    check: Callable[[], None] | None = None, poll: float = 0.01) -> str:
        """Run a channel client in the sandbox and return what it prints on stdout.

        Python ``code`` gets ``args`` as ``sys.argv[1:]``; on the local provider it runs in a
        forked child of the sandbox helper, so its arguments (nonces, requests) are on no
        command line and no other process of the zone can read its memory or write its
        reply. A program ``argv`` gets its secrets on ``stdin``. Either way the reply comes
        back through the helper, never through a file, and the client runs outside the work
        directory. ``check`` runs between polls and raises to give up early (e.g. when the
        program showed an error dialog instead of answering). The client is always ended.
        """
        def reply() -> str | None:
            state = provider.collect_in_sandbox(name)
            if not state.get("done"):
                return None
            if state.get("output") is None:
                raise error(f"{self.info.display_name}'s channel client gave no reply: "
                            f"{state.get('error') or 'the call was lost'}")
            if state.get("returncode") != 0:
                raise error(f"{self.info.display_name}'s channel client failed (exit "
                            f"{state.get('returncode')})" + _client_log_tail(provider, name))
            return state["output"]

        provider.call_in_sandbox(name, code=code, args=args, argv=argv, stdin=stdin)
        return self._await(provider, name, reply, timeout, error, check, poll)

    def run_client(self, provider: ChannelHost, name: str, answer: str, *,
                   code: str | None = None, args: list[str] | None = None,
                   argv: list[str] | None = None, stdin: str = "", timeout: float,
                   error: type[SciAgentError] = SciAgentError,
                   check: Callable[[], None] | None = None, poll: float = 0.02) -> str:
        """Start a channel client (as :meth:`call_client` does: Python ``code`` with ``args``,
        or ``argv`` fed ``stdin``) and wait for the answer file the *program* writes, for
        channels whose reply only the program can give (PyMOL, QGIS, ImageJ, Praat...).
        Where the client itself receives the reply, :meth:`call_client` keeps it off the
        file system.

        The program writes ``answer`` (a path in the sandbox) only once the reply is complete
        (written elsewhere, then renamed), so the first read that finds it is whole. ``check``
        runs between polls and raises to give up early (e.g. when the program showed an error
        dialog instead of answering). The client is always ended, answered or not.
        """
        provider.call_in_sandbox(name, code=code, args=args, argv=argv, stdin=stdin)
        return self._await(provider, name, lambda: provider.read_file(answer, remove=True),
                           timeout, error, check, poll)

    def _await(self, provider: ChannelHost, name: str, reply: Callable[[], str | None],
               timeout: float, error: type[SciAgentError], check: Callable[[], None] | None,
               poll: float) -> str:
        """Poll ``reply`` until it gives the answer (``check`` between polls) or ``timeout``
        (scaled by the provider's ``ready_scale``) passes; the client is always ended."""
        deadline = time.monotonic() + timeout * provider.ready_scale
        try:
            while time.monotonic() < deadline:
                text = reply()
                if text is not None:
                    return text
                if check is not None:
                    check()
                time.sleep(poll)
            raise error(f"{self.info.display_name} gave no answer within "
                        f"{timeout * provider.ready_scale:.0f}s"
                        + _client_log_tail(provider, name))
        finally:
            provider.kill_in_sandbox(name)


def _client_log_tail(provider: ChannelHost, name: str, limit: int = 600) -> str:
    """What a channel client that did not answer printed (its log in the sandbox's /tmp),
    for the error message: the difference between "not reachable" and "no reply"."""
    try:
        text = provider.read_file(f"{provider.paths['tmp']}/{name}.log")
    except Exception:  # noqa: BLE001 (a diagnostic only; the timeout is the error)
        return ""
    text = (text or "").strip()
    return f" (client output: {text[-limit:]})" if text else ""


def hold_focus(provider: ProgramHost, find: Callable[[list[WindowInfo]], WindowInfo | None],
               hold: float = 0.3, within: float = 8.0) -> None:
    """Give the window ``find`` picks the focus until it has kept it for ``hold`` seconds (or
    ``within`` seconds pass, or the window is gone), both scaled by the provider's
    ``ready_scale``: programs that raise a second window at start-up steal it back for a
    moment, and every episode must start with keys going to the same window."""
    scale = provider.ready_scale
    deadline = time.monotonic() + within * scale
    kept_since: float | None = None
    while time.monotonic() < deadline:
        win = find(provider.windows())
        if win is None:
            return
        if win.active:
            kept_since = kept_since or time.monotonic()
            if time.monotonic() - kept_since >= hold * scale:
                return
        else:
            kept_since = None
            provider.activate_window(win.id)
        time.sleep(0.05)
