"""QuPath 0.5.1 (official Linux release, not in Debian): discovery, launch, readiness and a
Groovy request channel.

Discovery (:func:`find_qupath`): ``QUPATH_EXE``, then ``QuPath``/``qupath`` on PATH, then the
install locations of ``envs/qupath/install.sh`` (``$SCIAGENT_QUPATH_HOME/bin/QuPath``,
``~/.local/share/sciagent-gym/qupath/bin/QuPath``, ``/usr/local/lib/sciagent-gym/qupath``) and
``/opt/QuPath``. Missing, the env raises MissingProgramError naming ``sciagent-gym install qupath``.

Launch (one shell in the sandbox): write the staging files to the sandbox's private /tmp, run
``QuPath script make_project.groovy`` (QuPath's own API builds ``{work}/project`` with the
task's image, image type, pixel size, stains and pre-drawn annotations), then
``exec QuPath -q -p project.qpproj -i <image>``. ``-q`` skips setup dialogs and update checks;
``JAVA_TOOL_OPTIONS`` sets ``user.home`` to the sandbox home (Java takes it from the password
database, not $HOME), a private preferences node (``qupath.prefs.name``, pre-seeded in
``snapshot/home/.java/.userPrefs/sciagent-gym/prefs.xml``) and the startup script.

Channel: ``channel.groovy`` is QuPath's startup script (``-Dqupath.startup.script``); it serves
Groovy requests dropped into ``/tmp/sciagent-qupath`` (see that file). The client is
``DROP_REQUEST_CLIENT`` (Python, a fork of the sandbox helper, so the request's name is on no
command line), which writes the request atomically; ToolAdapter.run_client polls the answer
file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciagent_gym.sdk import (
    DROP_REQUEST_CLIENT,
    ChannelHost,
    MissingProgramError,
    ProgramHost,
    ToolAdapter,
    ToolScriptError,
    WindowInfo,
    inside_text,
)

if TYPE_CHECKING:
    from sciagent_gym.sdk import Task

# Code run inside QuPath (inside/): its request loop, the project maker, the state dump.
CHANNEL_SCRIPT = inside_text(__file__, "channel.groovy")
MAKE_PROJECT = inside_text(__file__, "make_project.groovy")
STATE_SCRIPT = inside_text(__file__, "state_dump.groovy")
# The launch (inside/launch.sh): $1 exe, $2 channel dir, $3 stage JSON ("" = no task),
# $4 make_project.groovy, $5 channel.groovy, $6 project dir, $7 image name, $8 work dir
_LAUNCH = inside_text(__file__, "launch.sh")
# Hides QuPath's notification popups (their count is the answer).
_HIDE_NOTIFICATIONS = inside_text(__file__, "hide_notifications.groovy")
# The name of the image open in QuPath ("" when none).
_PROBE = inside_text(__file__, "probe.groovy")
# Opens the staged project's first image in the running QuPath (@PROJECT: its folder, a JSON
# string literal).
_OPEN_PROJECT = inside_text(__file__, "open_project.groovy")
PACKAGE = "QuPath (not in Debian; official release)"
INSTALL = "sciagent-gym install qupath"
PREFS_NODE = "sciagent-gym"
CHANNEL_DIR = "sciagent-qupath"  # under the sandbox's /tmp
PROJECT_DIR = "project"  # under the work dir
# QuPathGUI.createTitleFromCurrentImage: "QuPath (<version>)" + " - <image name>" when open
TITLE = re.compile(r"^QuPath(?: \([^)]*\))?(?: - (?P<image>.+))?$")


def install_locations() -> list[Path]:
    """Where the install recipe puts QuPath (and /opt/QuPath, a common manual location)."""
    out = []
    home = os.environ.get("SCIAGENT_QUPATH_HOME")
    if home:
        out.append(Path(home).expanduser() / "bin" / "QuPath")
    out += [Path("~/.local/share/sciagent-gym/qupath/bin/QuPath").expanduser(),
            Path("/usr/local/lib/sciagent-gym/qupath/bin/QuPath"), Path("/opt/QuPath/bin/QuPath")]
    return out


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_qupath() -> Path | None:
    """The QuPath launcher: $QUPATH_EXE (when set, only it), PATH, then install locations."""
    env = os.environ.get("QUPATH_EXE")
    if env:
        path = Path(env).expanduser()
        return path if _executable(path) else None
    for name in ("QuPath", "qupath"):
        found = shutil.which(name)
        if found:
            return Path(found)
    return next((p for p in install_locations() if _executable(p)), None)


def missing_error() -> MissingProgramError:
    program = "QuPath"
    env = os.environ.get("QUPATH_EXE")
    if env:
        program += f" (QUPATH_EXE={env} is not an executable file)"
    return MissingProgramError(program, PACKAGE, INSTALL)


def app_dir(exe: Path) -> Path:
    """The QuPath application directory (bin/, lib/app, lib/runtime) of a launcher path; it
    must be visible in the sandbox, read-only, at the same path."""
    real = exe.resolve()
    return real.parent.parent if real.parent.name == "bin" else real.parent


class QuPathScriptError(ToolScriptError):
    """A Groovy request failed or QuPath did not answer."""




def stage_of(task: Task) -> dict[str, Any] | None:
    from sciagent_gym.envs.qupath.data import stage_of as _stage_of

    return _stage_of(task.gold)


class Adapter(ToolAdapter):
    channel_files = (f"{CHANNEL_DIR}/{{n}}.json",)
    ready_timeout = 180.0  # two JVM starts: the staging script, then the GUI

    # -- discovery ------------------------------------------------------------------------
    def check_installed(self) -> None:
        if find_qupath() is None:
            raise missing_error()

    def executable(self) -> Path:
        exe = find_qupath()
        if exe is None:
            raise missing_error()
        return exe

    def sandbox_ro_binds(self) -> list[str]:
        """Host directories the sandbox must see read-only at the same path (the QuPath
        application directory, unless it is under /usr, which every sandbox sees)."""
        exe = find_qupath()
        if exe is None:
            return []
        root = app_dir(exe)
        return [] if str(root).startswith("/usr/") else [str(root)]

    # -- launch ---------------------------------------------------------------------------
    def channel_dir(self, provider: ProgramHost) -> str:
        return f"{provider.paths['tmp']}/{CHANNEL_DIR}"

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        work = provider.paths["work"]
        stage = stage_of(task) if task is not None else None
        image = stage["image"] if stage else ""
        return ["sh", "-c", _LAUNCH, "qupath-launch", str(self.executable()),
                self.channel_dir(provider), json.dumps(stage) if stage else "", MAKE_PROJECT,
                CHANNEL_SCRIPT, f"{work}/{PROJECT_DIR}", image, work]

    def launch_env(self, provider: ProgramHost) -> dict[str, str]:
        home, chan = provider.paths["home"], self.channel_dir(provider)
        options = [f"-Duser.home={home}", f"-Dqupath.prefs.name={PREFS_NODE}",
                   f"-Dqupath.startup.script={chan}/channel.groovy", f"-Dsciagent.channel={chan}",
                   "-Dprism.order=sw", "-Djava.awt.headless=false"]
        return {"JAVA_TOOL_OPTIONS": " ".join(options), "GDK_BACKEND": "x11"}

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        want = None
        if task is not None:
            stage = stage_of(task)
            want = stage["image"] if stage else None
        for w in windows:
            m = TITLE.match(w.title)
            if m and w.width > 1 and w.height > 1 and (want is None or m.group("image") == want):
                return True
        return False

    def after_ready(self, provider: ProgramHost, task: Task | None) -> None:
        # The first answer proves the startup script runs and the image is open; then the
        # "Running startup script" notification is closed so every reset looks the same.
        name = self.run_script(provider, _PROBE, timeout=60.0)
        stage = stage_of(task) if task is not None else None
        if stage and name != stage["image"]:
            raise QuPathScriptError(f"QuPath opened {name!r}, expected {stage['image']!r}")
        self.run_script(provider, _HIDE_NOTIFICATIONS, timeout=20.0)
        for window in provider.windows():
            if TITLE.match(window.title):
                provider.activate_window(window.id)
                break

    def open_inputs(self, provider: ProgramHost, task: Task) -> None:
        stage = stage_of(task)
        if stage is None:
            return
        work = provider.paths["work"]
        project = f"{work}/{PROJECT_DIR}"
        args = "def args = " + json.dumps([json.dumps(stage), project, work]) + " as String[]"
        code = MAKE_PROJECT.replace("// @ARGS", args, 1) \
            + _OPEN_PROJECT.replace("@PROJECT", json.dumps(project), 1)
        self.run_script(provider, code, timeout=120.0)

    # -- channel --------------------------------------------------------------------------
    def run_script(self, provider: ChannelHost, code: str, timeout: float = 60.0) -> str:
        """Run Groovy in the running QuPath (as its script editor would: the current project
        and image, QPEx's methods); returns the script's value as text."""
        n = self.next_request_id()
        chan = self.channel_dir(provider)
        base = f"{chan}/{int(time.time() * 1000)}-{n}"
        answer = self.run_client(provider, f"qupath-client-{n}", f"{base}.json",
                                 code=DROP_REQUEST_CLIENT, args=[f"{base}.req", code],
                                 timeout=timeout, error=QuPathScriptError, poll=0.02)
        try:
            reply = json.loads(answer)
        except json.JSONDecodeError as exc:
            raise QuPathScriptError(f"QuPath's answer is not JSON ({exc}): {answer[:300]}") \
                from None
        if not reply.get("ok"):
            raise QuPathScriptError(f"QuPath script failed: {reply.get('error')}")
        out = reply.get("out")
        return "" if out is None else str(out)

    def dump_state(self, provider: ChannelHost) -> dict[str, Any]:
        raw = self.run_script(provider, STATE_SCRIPT, timeout=60.0)
        try:
            state = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise QuPathScriptError(f"state dump is not JSON ({exc}): {raw[:300]}") from None
        if not isinstance(state, dict):
            raise QuPathScriptError(f"state dump is not an object: {raw[:300]}")
        return state
