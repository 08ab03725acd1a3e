"""GRASS GIS 8.2 (Debian ``grass-gui``): launch into a prepared mapset, and a batch state channel.

The snapshot home holds a GRASS database ``~/grassdata`` with one location ``sci`` (WGS 84 /
UTM 33N, EPSG:32633; its default region is the 200 x 200 grid of 10 m cells every generator
writes) and the mapset ``user1`` the GUI works in, plus ``~/.grass8/rc`` and ``wx.json`` (the
window layout and the data catalog's questions answered). ``grass MAPSET --exec g.gui -f``
starts the wxGUI straight in that mapset: the start-up screen (location wizard) never shows.
The task's ``setup.open`` files are imported into ``user1`` before the GUI starts (rasters
with r.in.gdal, CSV points with v.in.ascii), each named after its file's stem; files the agent
must import itself are only generated into the work directory.

``LANG=C``: the machine has no generated locale but C.UTF-8, which wxPython cannot set, and
GRASS then opens a "Cannot set locale" warning on every start.

State channel: GRASS keeps its state in the mapset's files, so the channel is GRASS's own batch
mode run in the program zone: ``grass --tmp-mapset ~/grassdata/sci --exec python3 -I -c CODE``
(``inside/state_dump.py``) starts a throw-away mapset in the same location (the GUI's lock on
``user1`` is per mapset and stays untouched), reads every map of ``user1`` with r.info, r.univar,
r.stats and v.info, and prints JSON after a marker on stdout, which goes back through the
sandbox helper (``call_client``). The database lives in the program zone's home, which the
agent zone never sees.
Oracle scripts (:meth:`Adapter.run_script`) are shell lines of GRASS commands run in ``user1``
the way the GUI's own console runs them: with a GISRC of their own that names the mapset.
"""

from __future__ import annotations

import json
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

STATE_CODE = inside_text(__file__, "state_dump.py")
MAIN_TITLE = "sci/user1 - GRASS GIS"
MAP_TITLE = "Map Display 1"
GISBASE = "/usr/lib/grass82"

# The launch (inside/launch.sh); argv: the files to import before the GUI starts (paths in
# the work directory).
_LAUNCH = inside_text(__file__, "launch.sh")

# The script client (inside/run_script.sh): shell lines of GRASS commands, read from stdin
# (never on a command line), run in user1 as the GUI's console runs them: GRASS's environment
# and a GISRC of their own. Their stdout is the reply, then a marker line with the exit status
# and the tail of their stderr.
_SCRIPT = inside_text(__file__, "run_script.sh")
_MARK = "@@sciagent-grass-rc"

# The state channel's starter (inside/state_dump.sh; $1: inside/state_dump.py).
_STATE = inside_text(__file__, "state_dump.sh")
_STATE_MARK = "@@sciagent-grass-state "


class GrassError(ToolScriptError):
    """A GRASS command failed or gave no answer."""


def _env() -> dict[str, str]:
    return {"LANG": "C", "LC_ALL": "C", "GRASS_PYTHON": "/usr/bin/python3",
            "PATH": "/usr/bin:/bin", "NO_AT_BRIDGE": "1"}


class Adapter(ToolAdapter):
    #: GRASS modules with their parameters in the command console (the import dialog,
    #: r.in.gdal, brings data in: not the analysis)
    console_language = ConsoleLanguage(
        code=(r"^\s*[rvgdbitm]\.[\w.]+\s+\w+="),
        windows=r"GRASS GIS|r\.in\.gdal")
    ready_timeout = 60.0

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        work = provider.paths["work"]
        files = task.spec.open if task is not None else []
        return ["sh", "-c", _LAUNCH, "grass", *(f"{work}/{name}" for name in files)]

    def launch_env(self, provider: ProgramHost) -> dict[str, str]:
        return _env()

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        titles = {w.title for w in windows if w.width > 100 and w.height > 100}
        return MAIN_TITLE in titles and MAP_TITLE in titles

    def after_ready(self, provider: ProgramHost, task: Task | None) -> None:
        # The map display opens after the layer manager and takes the focus; the layer
        # manager (menus, console) is where work starts, so every episode starts with it active.
        import time

        deadline = time.monotonic() + 8.0 * provider.ready_scale
        kept_since: float | None = None
        while time.monotonic() < deadline:
            main = next((w for w in provider.windows() if w.title == MAIN_TITLE), None)
            if main is None:
                return
            if main.active:
                kept_since = kept_since or time.monotonic()
                if time.monotonic() - kept_since >= 0.4 * provider.ready_scale:
                    return
            else:
                kept_since = None
                provider.activate_window(main.id)
            time.sleep(0.05)

    def run_script(self, provider: ChannelHost, code: str, timeout: float = 60.0) -> str:
        """Run shell lines of GRASS commands in ``user1``; returns their standard output."""
        n = self.next_request_id()
        text = self.call_client(provider, f"grass-script-{n}",
                                argv=["sh", "-c", _SCRIPT],
                                stdin=code, timeout=timeout, error=GrassError, poll=0.02)
        out, mark, tail = text.rpartition(f"\n{_MARK} ")
        if not mark:
            raise GrassError(f"the GRASS client gave no exit status: {text[-300:]}")
        rc, _, err = tail.partition("\n")
        if rc.strip() != "0":
            raise GrassError(f"GRASS command failed (exit {rc.strip()}): {err.strip()[-500:]}")
        return out

    def dump_state(self, provider: ChannelHost) -> dict[str, Any]:
        n = self.next_request_id()
        text = self.call_client(provider, f"grass-state-{n}",
                                argv=["sh", "-c", _STATE, "grass", STATE_CODE], timeout=60.0,
                                error=GrassError, poll=0.02)
        raw = next((line[len(_STATE_MARK):] for line in reversed(text.splitlines())
                    if line.startswith(_STATE_MARK)), "")
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise GrassError(f"state dump is not JSON ({exc}): {raw[:300]}") from None
