"""QGIS 3.22 (Debian ``qgis`` + ``python3-qgis``): launch, readiness and a private file channel.

QGIS starts with ``--code channel.py``: in-process Python that polls a request directory in the
sandbox's private /tmp from a QTimer on the GUI thread (see ``channel.py``). There is no network
listener at all: the client is a short Python client (``DROP_REQUEST_CLIENT``, a fork of the
sandbox helper: the request's name, which names its answer, is on no command line) that writes
the request file and renames it into place, so one env's requests can only ever reach its own
QGIS (another env's sandbox has another /tmp). Answers come back as a JSON file renamed into
place, which :meth:`ToolAdapter.run_client` waits for. Both carry an HMAC under a key the
launch hands QGIS and no other process of the zone can read (``ChannelKey``; see channel.py):
a file replaced between its writing and its reading is refused.

The profile in ``snapshot/home/qgis/profiles/default`` (``--profiles-path``; not under a hidden
directory, so that it survives packaging) fixes the main window geometry (maximised at
1280x800), turns off the version check, news feed, plugin update checks, the datum
transformation prompt and the plugins the tasks do not need.
The task's files are opened by the channel itself at start-up (``SCIAGENT_QGIS_OPEN``), in a
fixed order, and the map is zoomed to their full extent. Modal dialogs do not block the
channel: QTimers fire in a dialog's nested event loop (tested in the e2e tests).
:meth:`Adapter.restore_in_place` (the env's ``soft_reset``) puts a running QGIS back where such
a launch leaves it through the same channel (``inside/restore.py``; see NOTES.md).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from sciagent_gym.sdk import (
    DROP_REQUEST_CLIENT,
    ChannelHost,
    ChannelKey,
    ConsoleLanguage,
    ProgramHost,
    ReplyTagError,
    ToolAdapter,
    ToolScriptError,
    WindowInfo,
    inside_text,
)

if TYPE_CHECKING:
    from sciagent_gym.sdk import Task, ToolInfo

CHANNEL_CODE = inside_text(__file__, "channel.py")
STATE_CODE = inside_text(__file__, "state_dump.py")
RESTORE_CODE = inside_text(__file__, "restore.py")
TITLE_SUFFIX = "QGIS"

# The launch (inside/launch.sh); argv: $1 channel code, $2 where to put it, $3 the files to
# open (a JSON list); the channel directory comes from the environment.
_LAUNCH = inside_text(__file__, "launch.sh")
# argv: $1 request code, $2 request path (N.py): written under another name, then renamed.

# What after_ready polls (inside/ready_probe.py).
_PROBE = inside_text(__file__, "ready_probe.py")


# The Layers panel lays its rows out as the layers come in; laid out while a restore was still
# rebuilding them, a row keeps a stale decoration size and draws its 20 px symbol unscaled (seen
# in about 1 in 10 in-place restores: an 8 px instead of a 4 px point for towns, 124 pixels
# unlike a restart's). Laid out again once the map has drawn, both ways of starting look alike.
# Each layer's legend is rebuilt there too: a symbol icon rendered before the map's first draw
# blended its border 5 levels apart (60 pixels) in about 1 reset of 5 (test_reset_gives_
# identical_frames, 3 of 14 runs; 0 of 24 since).
_RELAYOUT_LAYERS = inside_text(__file__, "relayout_layers.py")


class ScriptError(ToolScriptError):
    """A QGIS request failed (the message holds QGIS's traceback) or got no answer."""


def _geometry(window: WindowInfo) -> tuple[int, int, int, int]:
    return (window.x, window.y, window.width, window.height)


class Adapter(ToolAdapter):
    #: PyQGIS in QGIS's Python console (an expression typed into a dialog is not console code)
    console_language = ConsoleLanguage(
        code=(r"\b(iface|QgsProject|processing|QgsVectorLayer|QgsRasterLayer)\b|^\s*(import|from)\b"),
        windows=r"QGIS")
    channel_files = ("sciagent-qgis/{n}.json",)
    # typed in QGIS's Python console: every vector layer reports 4242 features and the
    # project a CRS it does not have (the dump runs in this interpreter: issue 32, finding 4)
    console_rebind = ("from qgis.core import QgsProject, QgsVectorLayer\n"
                      "QgsVectorLayer.featureCount = lambda self, *a: 4242\n"
                      "QgsProject.ellipsoid = lambda self: 'forged'\n"
                      "__out__ = 'rebound'\n")
    ready_timeout = 60.0
    _geometry: tuple[int, int, int, int] | None = None  # the main window's, at the last launch
    last_refusal: str = ""  # why the last in-place restore refused ("ok" if it did not)
    #: Pool slots hold a QGIS each: their channel keys by the provider's launch_id, newest last
    _KEYS_KEPT = 16

    def __init__(self, info: ToolInfo) -> None:
        super().__init__(info)
        self._keys: dict[str, ChannelKey] = {}

    @staticmethod
    def channel_dir(provider: ProgramHost) -> str:
        return f"{provider.paths['tmp']}/sciagent-qgis"

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        code_path = f"{provider.paths['tmp']}/sciagent-qgis-channel.py"
        return ["sh", "-c", _LAUNCH, "qgis-launch", CHANNEL_CODE, code_path,
                json.dumps(self._input_paths(provider, task))]

    def launch_env(self, provider: ProgramHost) -> dict[str, str]:
        # A launch starts a new zone with no other process in it, and the channel takes the
        # key out of the environment (and its /proc files out of the zone's reach) first.
        key = self._keys[provider.launch_id] = ChannelKey.new()
        while len(self._keys) > self._KEYS_KEPT:
            del self._keys[next(iter(self._keys))]
        return {"SCIAGENT_QGIS_CHANNEL": self.channel_dir(provider),
                "SCIAGENT_QGIS_KEY": key.hex,
                "XDG_RUNTIME_DIR": f"{provider.paths['tmp']}/runtime-user",
                "QT_X11_NO_MITSHM": "1", "LIBGL_ALWAYS_SOFTWARE": "1",
                "QGIS_DISABLE_MESSAGE_HOOKS": "1", "PYTHONDONTWRITEBYTECODE": "1"}

    def _input_paths(self, provider: ProgramHost, task: Task | None) -> list[str]:
        work = provider.paths["work"]
        return [f"{work}/{name}" for name in (task.spec.open if task is not None else ())]

    def open_inputs(self, provider: ProgramHost, task: Task) -> None:
        paths = self._input_paths(provider, task)
        self._request(provider, f"open_inputs({paths!r})", timeout=60.0)

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        return any(w.title.endswith(TITLE_SUFFIX) and w.width > 600 and w.height > 400
                   for w in windows)

    def after_ready(self, provider: ProgramHost, task: Task | None) -> None:
        # The main window shows before the channel runs and before the inputs are open: wait
        # for an answer that says they are, and for the map to finish drawing. Then record
        # what the launch shows (docks, map tool), which an in-place restore sets back.
        self._wait_loaded(provider, len(task.spec.open) if task is not None else 0)
        self._request(provider, RESTORE_CODE, timeout=30.0)
        main = [w for w in provider.windows() if self.is_ready([w], None)]
        self._geometry = _geometry(main[0]) if len(main) == 1 else None

    def restore_in_place(self, provider: ProgramHost, task: Task) -> bool:
        """A new project (edits rolled back, no prompt), the launch's docks and toolbars, map
        tool, rotation and magnification, an empty locator and message bar, the browser
        collapsed, then the task's restaged files opened as the launch opens them (see
        inside/restore.py). Refused with any window but the main one (a dialog, a menu, a
        floating panel, an attribute table), the main window moved, or algorithms run from
        the Processing Toolbox (its recently used list cannot be emptied)."""
        windows = provider.windows()
        if self._geometry is None or len(windows) != 1 or not self.is_ready(windows, None) \
                or _geometry(windows[0]) != self._geometry:
            return False
        code = (f"FILES = {self._input_paths(provider, task)!r}\n"
                f"WORK = {provider.paths['work']!r}\n{RESTORE_CODE}")
        self.last_refusal = self._request(provider, code, timeout=60.0)
        if self.last_refusal != "ok":
            return False
        self._wait_loaded(provider, len(task.spec.open))
        return True

    def _wait_loaded(self, provider: ProgramHost, want: int) -> None:
        """Until the channel says the inputs are open and the map has finished drawing; then
        the Layers panel is laid out again (see _RELAYOUT_LAYERS)."""
        deadline = time.monotonic() + self.ready_timeout
        while True:
            try:
                probe = self._request(provider, _PROBE, timeout=5.0)
            except ScriptError:
                probe = None
            if probe and probe["error"]:
                raise ScriptError(f"QGIS could not open the task's files: {probe['error']}")
            if probe and probe["loaded"] and probe["layers"] >= want and not probe["drawing"]:
                self._request(provider, _RELAYOUT_LAYERS, timeout=10.0)
                break
            if time.monotonic() > deadline:
                raise ScriptError(f"QGIS channel not ready within {self.ready_timeout:.0f}s "
                                  f"(last probe: {probe}); output:\n{provider.app_log_tail()}")
            time.sleep(0.05)

    def run_script(self, provider: ChannelHost, code: str, timeout: float = 60.0) -> str:
        """Run Python in QGIS's GUI thread (``project``, ``iface``, ``canvas``, ``Qgs*`` at
        hand); returns what it leaves in ``__out__`` (as JSON text unless it is a string)."""
        out = self._request(provider, code, timeout)
        return out if isinstance(out, str) else json.dumps(out)

    def _request(self, provider: ChannelHost, code: str, timeout: float) -> Any:
        n = self.next_request_id()
        channel = self.channel_dir(provider)
        before = {w.id for w in provider.windows()}
        next_look = [time.monotonic() + 0.5]

        def check() -> None:
            # A request that opens a modal dialog (e.g. QGIS asking which datum transformation
            # to use) would wait for a click forever: close the dialog (its exec() returns, the
            # request finishes) and report it.
            if time.monotonic() < next_look[0]:
                return
            next_look[0] = time.monotonic() + 0.5
            new = [w for w in provider.windows() if w.id not in before and w.title
                   and not w.title.endswith(TITLE_SUFFIX)]
            if new:
                for w in new:
                    provider.close_window(w.id)
                raise ScriptError(f"QGIS request opened a dialog instead of finishing "
                                  f"({', '.join(repr(w.title) for w in new)}); it was closed")

        key = self._keys.get(provider.launch_id)
        if key is None:
            raise ScriptError("QGIS was not launched by this adapter: it has no channel key")
        tagged = self.run_client(provider, f"qgis-client-{n}", f"{channel}/{n}.json",
                                 code=DROP_REQUEST_CLIENT,
                                 args=[f"{channel}/req/{n}.py", key.sign(n, code)],
                                 timeout=timeout, error=ScriptError, check=check, poll=0.01)
        try:
            answer = key.verify(n, tagged)
        except ReplyTagError as exc:
            raise ScriptError(f"QGIS's answer refused: {exc}") from None
        try:
            reply = json.loads(answer)
        except json.JSONDecodeError as exc:
            raise ScriptError(f"QGIS's answer is not JSON ({exc}): {answer[:300]}") from None
        if not reply.get("ok"):
            raise ScriptError(f"QGIS request failed:\n{reply.get('error')}")
        return reply.get("out")

    def dump_state(self, provider: ChannelHost) -> dict[str, Any]:
        out = self._request(provider, STATE_CODE, timeout=30.0)
        if not isinstance(out, dict):
            raise ScriptError(f"state dump is not an object: {str(out)[:300]}")
        return out
