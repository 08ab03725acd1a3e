"""The materials workstation: Jmol, Fityk and Veusz on one display, a terminal beside them.

Composed from the single-tool adapters, never copied: the program zone's program is a small
launcher (:file:`inside/launcher.py`, ``python3 -I -S -c``) that starts the three programs with
the argv and environment their own adapters give (nothing opened, or the task's inputs routed
by type: ``.cif`` to Jmol, ``.vsz`` to Veusz, anything else to Fityk) and waits. They share the
program zone's network namespace and private /tmp, so each program's state channel works as
in its own env (Jmol's sync socket, Veusz's QTcpServer, Fityk's session log replayed in
cfityk) through the same adapters' request code, on ports that do not collide.

Once the three windows are up, :meth:`Adapter.after_ready` starts, in the **agent zone** (the
provider's ``launch_command``, where the agent's ``run()`` commands go), the materials code
env's OPTIMADE server over the staged structure database and its xterm
(:mod:`sciagent_gym.envs.materials.adapter`: the same boot script, server and shell title
protocol ``Materials terminal: ready N``), and waits for the terminal's first prompt. The agent
zone cannot reach the program zone's ports or /tmp: the channels stay isolated; the terminal
and the programs share only the work directory.

Each program has its own region of the 1280 x 800 screen (:data:`LAYOUT`), set by the snapshot
home (Jmol's ``~/.jmol/history``, Fityk's ``~/.fityk/configs/default``, Veusz's
``veusz.conf``) and the xterm's ``-geometry``, so GUI oracles reach each by its window title.

State: ``{"jmol": ..., "fityk": ..., "veusz": ...}``, each the sub-adapter's own dump (a
program whose dump fails is ``None`` there, with the reason under ``errors``). Scripts start
with a line naming their target, ``jmol:``, ``fityk:``, ``veusz:`` or ``shell:`` (a shell
command in the agent zone, as the materials env's oracle steps); the rest is the program's own
script language.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from sciagent_gym.envs.fityk.adapter import Adapter as FitykAdapter
from sciagent_gym.envs.jmol import adapter as jmol
from sciagent_gym.envs.materials import adapter as materials
from sciagent_gym.envs.veusz.adapter import Adapter as VeuszAdapter

from sciagent_gym.sdk import (
    ChannelHost,
    ConsoleLanguage,
    ProgramHost,
    SciAgentError,
    ToolAdapter,
    ToolScriptError,
    WindowInfo,
    inside_text,
    run_shell_step,
    tool_info,
    wait_for,
)

if TYPE_CHECKING:
    from sciagent_gym.sdk import Task

LAUNCHER = inside_text(__file__, "launcher.py")
PROGRAMS = ("jmol", "fityk", "veusz")
#: Screen regions (x, y, width, height of the whole window, frame included): Jmol top left,
#: Fityk top right, Veusz bottom left, the terminal bottom right.
#: Veusz's window cannot be less than 435 px high (its docks and toolbars), Fityk's 416.
LAYOUT = {"jmol": (0, 0, 640, 345), "fityk": (640, 0, 640, 440),
          "veusz": (0, 345, 640, 455), "terminal": (640, 440, 640, 360)}
#: Jmol's display size (its 3D panel) inside its region.
JMOL_GEOMETRY = "636x245"
#: The terminal: DejaVu Sans Mono 10 pt, 78 x 19 cells at the bottom right.
TERMINAL_FONT_SIZE = "10"
TERMINAL_GEOMETRY = "78x19+640+440"
#: Windows the launcher moves into place ({WM_CLASS: frame corner}): Fityk 1.3 restores its
#: size (``~/.fityk/configs/default``) but not its position.
PLACE = {"fityk": LAYOUT["fityk"][:2]}
TERMINAL = "matsci-terminal"
TERMINAL_TIMEOUT = 90.0


class ScriptTargetError(ToolScriptError):
    """A script names no program of the workstation."""


def _route(name: str) -> str:
    """Which program opens an input file."""
    if name.endswith(".cif"):
        return "jmol"
    if name.endswith(".vsz"):
        return "veusz"
    return "fityk"


def _view(task: Task | None, program: str) -> Any:
    """``task`` as one program's adapter sees it: only the inputs routed to that program (and
    the spec's tags, which a program's adapter may read: Jmol's hides its unit-cell label for
    tasks tagged so)."""
    if task is None:
        return None
    files = tuple(name for name in task.spec.open if _route(name) == program)
    return SimpleNamespace(spec=SimpleNamespace(open=files, setup_script="",
                                                tags=tuple(task.spec.tags)), seed=task.seed)


def _terminal_argv(db: str) -> list[str]:
    """The materials env's xterm, resized and moved into the terminal's region."""
    xterm = list(materials.XTERM)
    xterm[xterm.index("-fs") + 1] = TERMINAL_FONT_SIZE
    xterm[xterm.index("-geometry") + 1] = TERMINAL_GEOMETRY
    # launch_command takes no environment: env sets the shell's prompt protocol
    return ["/usr/bin/env", *(f"{k}={v}" for k, v in materials.SHELL_ENV.items()),
            "/usr/bin/python3", "-I", "-S", "-c", materials.BOOT, materials.SERVER_SOURCE, db,
            str(materials.PORT), "--", *xterm]


class Adapter(ToolAdapter):
    #: the terminal, Jmol script, Fityk's and Veusz's consoles
    console_language = ConsoleLanguage(
        code=(r"^\s*(cat|python3|clear|ls|cd|head|tail|grep|echo|cp|mv)\b|<<|^EOF$"
              r"|^\s*(import|from|def|for|with|print|return|if)\b"
              r"|^\s*[A-Za-z_][\w.\[\]\'\"]*\s*[-+]?=|^\s*[A-Za-z_][\w.]*\("
              r"|;\s*\S|^\s*(load|select|var|guess|fit|print|@\d)\b|^\s*[A-Z][A-Za-z]+\("),
        windows=r"\bJmol|terminal|Veusz|Fityk|cif")
    ready_timeout = 120.0

    def __init__(self, info) -> None:
        super().__init__(info)
        self.jmol = jmol.Adapter(tool_info("jmol"))
        self.fityk = FitykAdapter(tool_info("fityk"))
        self.veusz = VeuszAdapter(tool_info("veusz"))

    def _programs(self) -> dict[str, ToolAdapter]:
        return {"jmol": self.jmol, "fityk": self.fityk, "veusz": self.veusz}

    # -- launch and readiness ----------------------------------------------------------------
    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        programs = []
        for name, sub in self._programs().items():
            argv = sub.launch_argv(provider, _view(task, name))
            if name == "jmol":
                argv[argv.index("-g") + 1] = JMOL_GEOMETRY
            programs.append({"name": name, "argv": argv, "env": sub.launch_env(provider)})
        return ["/usr/bin/python3", "-I", "-S", "-c", LAUNCHER, json.dumps(programs),
                json.dumps(PLACE)]

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        return all(self._ready(name, windows, task) for name in PROGRAMS)

    def _ready(self, name: str, windows: list[WindowInfo], task: Task | None) -> bool:
        if name == "jmol":
            # the Jmol adapter wants a main window over 300 px; this one is smaller
            files = _view(task, "jmol").spec.open if task is not None else ()
            main = [w for w in windows if jmol.MAIN_CLASS in w.wm_class.lower()
                    and w.width > 200 and w.height > 200]
            if not files:
                return any(w.title.startswith("Jmol") for w in main)
            return any(w.title.startswith(files[-1]) for w in main)
        return self._programs()[name].is_ready(windows, _view(task, name))

    def after_ready(self, provider: ProgramHost, task: Task | None) -> None:
        for name, sub in self._programs().items():
            sub.after_ready(provider, _view(task, name))
        if task is None:
            return
        launch = getattr(provider, "launch_command", None)
        if launch is None:
            raise SciAgentError("the materials workstation needs a provider with an agent "
                                "zone (its terminal runs there)")
        db = f"{provider.paths['work']}/{materials.DB_RELPATH}"
        launch(TERMINAL, _terminal_argv(db))
        timeout = TERMINAL_TIMEOUT * provider.ready_scale
        try:
            wait_for(lambda: any(materials.READY.match(w.title)
                                           for w in provider.windows()),
                               timeout, interval=0.05, what="the materials terminal")
        except TimeoutError as exc:
            titles = [w.title for w in provider.windows()]
            raise TimeoutError(f"{exc}; windows now: {titles}") from None

    # -- state and scripts -------------------------------------------------------------------
    def dump_state(self, provider: ChannelHost) -> dict[str, Any]:
        out: dict[str, Any] = {"errors": {}}
        for name, sub in self._programs().items():
            try:
                out[name] = sub.dump_state(provider)
            except SciAgentError as exc:
                out[name] = None
                out["errors"][name] = str(exc)[:500]
        return out

    def run_script(self, provider: ChannelHost, code: str, timeout: float = 60.0) -> str:
        """Run ``code`` in the program its first line names (``jmol:``, ``fityk:``,
        ``veusz:``, ``shell:``); returns that program's answer."""
        head, _, body = code.partition("\n")
        target = head.strip().rstrip(":")
        if target == "shell":
            materials.ensure_server(provider)
            return run_shell_step(provider, body, timeout)
        sub = self._programs().get(target)
        if sub is None:
            raise ScriptTargetError(f"a workstation script starts with a line naming its "
                                    f"program ({', '.join(PROGRAMS)}, shell), not {head!r}")
        return sub.run_script(provider, body, timeout)

