"""SAOImage DS9 8.x (Debian ``saods9`` + ``xpa-tools``): launch, readiness and an XPA channel.

DS9 serves XPA, its own command protocol (``xpaset -p NAME cmd args``, ``xpaget NAME cmd``).
The channel is kept inside the env's sandbox:

- DS9 and every client run with ``XPA_METHOD=local``: access points are unix sockets (no TCP
  port at all) in ``XPA_TMPDIR``, a directory in the sandbox's private /tmp; the name server
  ``xpans`` that DS9 starts listens there too. DS9's IRAF (IIS) listener, by default TCP port
  5137 on all interfaces, is switched off. The sandbox also has its own network namespace
  (bubblewrap ``--unshare-all``), so not even a loopback port would be shared.
- The access point has a private name (:data:`XPA_NAME`, DS9's ``-title``), not DS9's default
  ``ds9``, so a client that does reach a directory by mistake never talks to the wrong program.
- Clients (``xpaget``/``xpaset``) are started inside the same sandbox by a shell
  (``call_client``, in the sandbox's /tmp); their answers come back on its stdout, through the
  sandbox helper, never through a file.

Scripts (:meth:`Adapter.run_script`, used by oracles) are XPA commands, one per line::

    # a comment; blank lines are skipped
    scale log                   -> xpaset -p NAME scale log
    set cmap heat               -> the same ("set " is optional)
    regions command "circle 100 120 5"
    get scale                   -> xpaget NAME scale; its answer is returned
    get data image 10 20 1 1 yes > peak.txt   -> the answer is written to peak.txt (relative
                                                 to the work directory)

The first failing command stops the script and raises :class:`DS9ScriptError` with DS9's
message (``XPA$ERROR ...``). XPA errors never open dialogs in DS9; errors from GUI actions do
(a Tk message box): a script run closes any that appear and reports them.
"""

from __future__ import annotations

import json
import time
from types import MappingProxyType
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

XPA_NAME = "sciagent"
MAIN_TITLE = f"SAOImage {XPA_NAME}"
# The image canvas; with DS9's panels, button bar and colour bar the window is 1000x717 at
# (0, 0) (plus openbox's title bar): it fits the 1280x800 screen with room to spare.
CANVAS = (1000, 480)
_SEP = "\x1e"

# DS9 in the sandbox: XPA over unix sockets in a private directory.
_LAUNCH = 'mkdir -p "$XPA_TMPDIR" && exec ds9 "$@"'

# The client (inside/xpa_client.sh; call_client: its stdout is the reply): $1 XPA dir, $2 name,
# $3 "stop"|"all", $4 the work directory (relative "> file" targets), then one command per
# argument.
_CLIENT = inside_text(__file__, "xpa_client.sh")

# What dump_state asks, by key (each an ``xpaget`` argument).
_QUERIES = {
    "version": "version", "file": "file", "frame": "frame", "frames": "frame all",
    "scale": "scale", "scale_mode": "scale mode", "scale_limits": "scale limits",
    "scale_log_exp": "scale log exp", "cmap": "cmap", "cmap_invert": "cmap invert",
    "zoom": "zoom", "rotate": "rotate", "pan_image": "pan image",
    "pan_fk5": "pan wcs fk5 degrees", "crosshair_image": "crosshair image",
    "crosshair_fk5": "crosshair wcs fk5 degrees", "mode": "mode",
    "regions": "regions -format ds9 -system image",
    "smooth": "smooth", "smooth_function": "smooth function", "smooth_radius": "smooth radius",
    "smooth_sigma": "smooth sigma", "contour": "contour", "contour_nlevels": "contour nlevels",
    # not "contour levels": DS9 answers it from the Contour Parameters dialog, which it opens
    # on screen to do so (a dump must never change what the agent sees)
    "contour_limits": "contour limits",
    "contour_scale": "contour scale", "contour_smooth": "contour smooth",
    "crop_image": "crop image", "size": "fits size", "object": "fits header keyword OBJECT",
    "block": "block", "tile": "tile", "colorbar": "colorbar", "grid": "grid",
    "view_info": "view info", "view_panner": "view panner", "view_magnifier": "view magnifier",
    "view_graph_horz": "view graph horizontal", "view_graph_vert": "view graph vertical",
}


# What a fresh DS9 shows (DS9 8.4 defaults, as launched by launch_argv), set back by
# Adapter.restore_in_place: every setting the dump reads, the panels, and the settings the
# button bar and the mouse reach in short episodes (contrast/bias, region defaults,
# coordinate systems). Each entry is (query, answer at launch, command that sets it back;
# None: "query answer"); only settings whose answer differs are set, in this order.
# tests/e2e/test_soft_reset_e2e.py compares the result with a restart, frame and dump.
_FRESH: list[tuple[str, str, str | None]] = [
    ("frame", "1", None), ("mode", "none", None),
    ("regions shape", "circle", None), ("regions color", "green", None),
    ("single", "yes", "single"), ("tile", "no", None), ("blink", "no", None),
    ("frame lock", "none", None), ("crosshair lock", "none", None),
    ("block", "1", "block to 1"), ("bin factor", "1 1", None),
    ("smooth", "no", None), ("smooth function", "gaussian", None),
    ("smooth radius", "3", None), ("smooth sigma", "1.5", None),
    ("contour", "no", None), ("contour nlevels", "5", None), ("contour smooth", "4", None),
    ("contour method", "smooth", None), ("contour scale", "linear", None),
    ("contour mode", "minmax", None),
    ("scale", "linear", "scale linear"), ("scale mode", "minmax", None),
    ("scale log exp", "1000", None), ("scale scope", "local", None),
    ("minmax mode", "scan", None), ("zscale contrast", ".25", None),
    ("cmap", "grey", "cmap grey"), ("cmap invert", "no", None), ("cmap value", "1 0.5", None),
    ("zoom", "1", "zoom to 1"), ("rotate", "0", "rotate to 0"),
    ("colorbar", "yes", None), ("colorbar numerics", "yes", None), ("grid", "no", None),
    ("wcs sky", "fk5", None), ("wcs skyformat", "sexagesimal", None),
    ("bg color", "white", "bg white"), ("nan color", "white", "nan white"),
    *[(f"view {k}", v, None) for k, v in [
        ("layout", "horizontal"), ("info", "yes"), ("panner", "yes"), ("magnifier", "yes"),
        ("buttons", "yes"), ("colorbar", "yes"), ("graph horizontal", "no"),
        ("graph vertical", "no"), ("filename", "yes"), ("object", "yes"), ("keyword", "no"),
        ("minmax", "no"), ("lowhigh", "no"), ("units", "no"), ("frame", "yes"),
        ("wcs", "yes"), ("physical", "yes"), ("image", "yes")]],
]
# Sent every time (cheap, and not all of it can be queried).
_FRESH_ALWAYS = [
    "regions delete all", "crop reset",
    # the info panel's coordinate-name labels: hovering the image gives them a Times font
    # (for alpha, delta) that stays, 2 px wider, after their text is cleared on leaving it;
    # at launch they have the panel's font, as the 'x' label of the Physical row has
    "tcl {foreach ll {{} a b c d e f g h i j k l m n o p q r s t u v w x y z} "
    "{foreach aa {x y z} {$infobox(wcs$ll,$aa,nm) configure "
    "-font [$ds9(info).physicalXLabel cget -font]}}}",
    # the button bar's first section, as at launch (XPA splits a line at ';': two commands)
    "tcl {set buttons(major,current) $ds9(buttons).file}", "tcl {MajorButton}",
    # DS9's notes (an oracle reads a count it computed in DS9's Tcl back through them; an
    # agent may type into them): empty, as at launch
    "tcl {set ds9notes {}}",
]


def _same_answer(got: str, want: str) -> bool:
    """XPA answers compared as words, numbers as numbers ('.25' is '0.25', '1.0' is '1')."""
    a, b = got.split(), want.split()
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        try:
            if float(x) != float(y):
                return False
        except ValueError:
            if x.lower() != y.lower():
                return False
    return True


def fresh_commands(answers: list[str]) -> list[str]:
    """The commands that set back what differs from launch, given the answers to the
    :data:`_FRESH` queries (in order), then :data:`_FRESH_ALWAYS`."""
    out = [cmd or f"{query} {want}" for (query, want, cmd), got in zip(_FRESH, answers,
                                                                       strict=True)
           if not _same_answer(got, want)]
    if any(c.startswith("contour ") for c in out):
        out.append("contour close")  # DS9 opens the Contour Parameters dialog to set them
    return out + _FRESH_ALWAYS


class DS9ScriptError(ToolScriptError):
    """An XPA command failed or DS9 did not answer."""


def is_error_dialog(window: WindowInfo) -> bool:
    """DS9's message boxes are Tk dialogs (class Dialog), not the main window."""
    return (not window.title.startswith("SAOImage") and "dialog" in window.wm_class.lower()
            and window.width > 50 and window.height > 30)


def parse_script(code: str) -> list[str]:
    """The script's commands: one per line, comments and blank lines dropped."""
    lines = [ln.strip() for ln in code.splitlines()]
    return [ln for ln in lines if ln and not ln.startswith("#")]


#: Seconds to ask again while DS9's access point is missing from the name server's list.
_UNLISTED_RETRY = 2.0


def _unlisted(answers: list[tuple[int, int, str]], mode: str) -> bool:
    """The name server listed no access point for DS9, so no command reached it: true when the
    first answer says so and nothing after it ran (``stop`` ends the request there; with
    ``all``, every answer must say so). For a moment right after a start, DS9's access point
    is missing from that list although it had answered (a request 0.02 s after a reset under
    the damage settle failed 2 times in 6: ``envs/ds9/NOTES.md``); a request then is safe to
    repeat."""
    def says(text: str) -> bool:
        return "access points match template" in text and text.lstrip().startswith("XPA$ERROR")

    if not answers or answers[0][1] == 0 or not says(answers[0][2]):
        return False
    return mode == "stop" or all(rc != 0 and says(text) for _, rc, text in answers)


def parse_answers(text: str) -> list[tuple[int, int, str]]:
    """(line number, exit code, answer text) per command from the client's answer file."""
    out = []
    for block in text.split(_SEP)[1:]:
        head, _, body = block.partition("\n")
        n, rc = head.split()
        out.append((int(n), int(rc), body.rstrip("\n")))
    return out


def _floats(text: str | None) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(v) for v in text.split()]
    except ValueError:
        return None


def _float(text: str | None) -> float | None:
    values = _floats(text)
    return values[0] if values else None


def _yes(text: str | None) -> bool | None:
    return None if text is None else text.strip().lower() in ("yes", "1", "true")


def build_state(raw: dict[str, str | None]) -> dict[str, Any]:
    """The state dump as JSON data from the raw ``xpaget`` answers (None: the query failed)."""
    from sciagent_gym.envs.ds9.regions import RegionError, parse_regions

    file = (raw.get("file") or "").strip()
    try:
        parsed = parse_regions(raw.get("regions") or "")
        regions = [{"shape": s["shape"], "exclude": s["exclude"], "coords": s["coords"],
                    "sizes": [v for v, _ in s["sizes"]], "angles": s["angles"],
                    "props": s["props"]} for s in parsed["shapes"]]
        region_error = None
    except RegionError as exc:
        regions, region_error = [], str(exc)
    crop = _floats(raw.get("crop_image"))
    size = _floats(raw.get("size"))
    return {
        "xpa_name": XPA_NAME, "version": (raw.get("version") or "").split()[-1:] or None,
        "file": file, "loaded": bool(file),
        "file_name": file.rsplit("/", 1)[-1] if file else "",
        "frame": _float(raw.get("frame")),
        "frames": [int(v) for v in (_floats(raw.get("frames")) or [])],
        "n_frames": len(_floats(raw.get("frames")) or []),
        "scale": {"function": (raw.get("scale") or "").strip() or None,
                  "mode": (raw.get("scale_mode") or "").strip() or None,
                  "limits": _floats(raw.get("scale_limits")),
                  "log_exp": _float(raw.get("scale_log_exp"))},
        "cmap": {"name": (raw.get("cmap") or "").strip() or None,
                 "invert": _yes(raw.get("cmap_invert"))},
        "zoom": _float(raw.get("zoom")), "rotate": _float(raw.get("rotate")),
        "pan": {"image": _floats(raw.get("pan_image")), "fk5": _floats(raw.get("pan_fk5"))},
        "crosshair": {"image": _floats(raw.get("crosshair_image")),
                      "fk5": _floats(raw.get("crosshair_fk5"))},
        "mode": (raw.get("mode") or "").strip() or None,
        "regions": regions, "n_regions": len(regions), "regions_error": region_error,
        "smooth": {"on": _yes(raw.get("smooth")),
                   "function": (raw.get("smooth_function") or "").strip() or None,
                   "radius": _float(raw.get("smooth_radius")),
                   "sigma": _float(raw.get("smooth_sigma"))},
        "contour": {"on": _yes(raw.get("contour")), "nlevels": _float(raw.get("contour_nlevels")),
                    "limits": _floats(raw.get("contour_limits")),
                    "scale": (raw.get("contour_scale") or "").strip() or None,
                    "smooth": _float(raw.get("contour_smooth"))},
        "crop": {"image": crop,
                 "cropped": bool(crop and size and (crop[2] < size[0] or crop[3] < size[1]))},
        "size": size,
        "object": (raw.get("object") or "").strip() or None,
        "block": _float(raw.get("block")), "tile": _yes(raw.get("tile")),
        "colorbar": _yes(raw.get("colorbar")), "grid": _yes(raw.get("grid")),
        "view": {"info": _yes(raw.get("view_info")), "panner": _yes(raw.get("view_panner")),
                 "magnifier": _yes(raw.get("view_magnifier")),
                 "graph_horz": _yes(raw.get("view_graph_horz")),
                 "graph_vert": _yes(raw.get("view_graph_vert"))},
    }


class Adapter(ToolAdapter):
    #: a region file with no region (the placeholder cheat's file)
    placeholders = MappingProxyType({".reg": b"# Region file format: DS9 version 4.1\nfk5\n"})
    #: Tcl typed into DS9's Tcl console
    console_language = ConsoleLanguage(
        code=(r"\$|\[.*\]|;|^\s*(set|lassign|foreach|puts|proc)\b"),
        windows=r"SAOImage")
    ready_timeout = 30.0
    # DS9 runs Tcl it is given (its ``tcl`` command; File > Source from the GUI): redefine the
    # procedure that answers ``get cmap``, so the dump reports a colour map DS9 does not show
    # (the dump is answered by DS9's own Tcl: issue 32, finding 4)
    console_rebind = ('tcl {proc ProcessSendCmapCmd {proc id param {sock {}} {fn {}}} '
                      '{$proc $id "forged\\n"}}')

    @staticmethod
    def xpa_dir(provider: ProgramHost) -> str:
        return f"{provider.paths['tmp']}/xpa"

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        work = provider.paths["work"]
        files = task.spec.open if task is not None else []
        opens: list[str] = []
        for i, name in enumerate(files):
            opens += (["-frame", "new"] if i else []) + [f"{work}/{name}"]
        # -port 0 -fifo none -unix none: no IRAF (IIS) listener, which by default is a TCP
        # port (5137) on all interfaces; XPA is the only way in.
        return ["sh", "-c", _LAUNCH, "ds9", "-title", XPA_NAME, "-port", "0", "-fifo", "none",
                "-unix", "none", "-geometry", "+0+0",
                "-width", str(CANVAS[0]), "-height", str(CANVAS[1]), *opens]

    def launch_env(self, provider: ProgramHost) -> dict[str, str]:
        return {"XPA_METHOD": "local", "XPA_TMPDIR": self.xpa_dir(provider)}

    def open_inputs(self, provider: ProgramHost, task: Task) -> None:
        work = provider.paths["work"]
        lines = []
        for i, name in enumerate(task.spec.open):
            lines += (["frame new"] if i else []) + [f"fits {work}/{name}"]
        self.run_script(provider, "\n".join(lines), timeout=60.0)

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        return any(w.title == MAIN_TITLE and w.width > 1 and w.height > 1 for w in windows)

    def after_ready(self, provider: ProgramHost, task: Task | None) -> None:
        # The window shows before DS9 serves XPA and before it has read the task's files: an
        # answer naming the last file proves both.
        work = provider.paths["work"]
        want = f"{work}/{task.spec.open[-1]}" if task is not None and task.spec.open else None
        deadline = time.monotonic() + self.ready_timeout
        last = None
        while True:
            try:
                last = self._run(provider, ["get file"], "stop", timeout=2.0)[0][2].strip()
                if want is None or last == want:
                    return
            except DS9ScriptError as exc:
                last = str(exc)
            if time.monotonic() > deadline:
                raise DS9ScriptError(f"DS9 did not serve XPA with its file loaded within "
                                     f"{self.ready_timeout:.0f} s (last answer: {last!r})")
            time.sleep(0.05)

    def restore_in_place(self, provider: ProgramHost, task: Task) -> bool:
        """Set back what a restart would (see :data:`_FRESH`) and reload the task's one input
        file into frame 1 (the file is restaged; loading it re-centres pan and crosshair).
        Refused with any other window open (a dialog, a torn-off menu), with more than one
        frame, or for tasks that open no file or several."""
        if len(task.spec.open) != 1 or any(w.title != MAIN_TITLE for w in provider.windows()):
            return False
        answers = self._run(provider, ["get frame all", *[f"get {q}" for q, _, _ in _FRESH]],
                            "all", 20.0)
        if len(answers) != 1 + len(_FRESH) or any(rc != 0 for _, rc, _ in answers) \
                or answers[0][2].split() != ["1"]:
            return False
        work = provider.paths["work"]
        self.run_script(provider, "\n".join(
            [*fresh_commands([text for _, _, text in answers[1:]]),
             f"fits {work}/{task.spec.open[0]}"]), timeout=60.0)
        return True

    def _run(self, provider: ProgramHost, commands: list[str], mode: str,
             timeout: float) -> list[tuple[int, int, str]]:
        n = self.next_request_id()
        before = {w.id for w in provider.windows() if is_error_dialog(w)}

        def check() -> None:
            errors = [w for w in provider.windows() if is_error_dialog(w) and w.id not in before]
            if errors:
                time.sleep(0.05)
                for w in errors:
                    provider.close_window(w.id)
                raise DS9ScriptError("DS9 showed an error message (now closed) instead of "
                                     "answering")

        deadline = time.monotonic() + _UNLISTED_RETRY
        while True:
            text = self.call_client(provider, f"ds9-xpa-{n}",
                                    argv=["sh", "-c", _CLIENT, "xpa", self.xpa_dir(provider),
                                          XPA_NAME, mode, provider.paths["work"], *commands],
                                    timeout=timeout, error=DS9ScriptError, check=check)
            try:
                answers = parse_answers(text)
            except ValueError:
                raise DS9ScriptError(f"unreadable answer from the XPA client: {text[:300]!r}") \
                    from None
            if not _unlisted(answers, mode) or time.monotonic() > deadline:
                return answers
            time.sleep(0.05)

    def run_script(self, provider: ChannelHost, code: str, timeout: float = 30.0) -> str:
        """Run XPA commands (see the module docstring); returns the ``get`` answers, one per
        line. Raises DS9ScriptError at the first failing command."""
        commands = parse_script(code)
        if not commands:
            return ""
        answers = self._run(provider, commands, "stop", timeout)
        for n, rc, text in answers:
            if rc != 0:
                message = text.replace("XPA$ERROR", "").strip()
                raise DS9ScriptError(f"DS9 rejected command {n} ({commands[n - 1]!r}): "
                                     f"{message or f'exit code {rc}'}")
        if len(answers) != len(commands):
            raise DS9ScriptError(f"only {len(answers)} of {len(commands)} commands ran")
        gets = [text for n, _, text in answers
                if commands[n - 1].startswith("get ") and " > " not in commands[n - 1]]
        return "\n".join(gets)

    def dump_state(self, provider: ChannelHost) -> dict[str, Any]:
        keys = list(_QUERIES)
        answers = self._run(provider, [f"get {_QUERIES[k]}" for k in keys], "all", 20.0)
        if len(answers) != len(keys):
            raise DS9ScriptError(f"state dump incomplete: {len(answers)} of {len(keys)} answers")
        raw = {keys[n - 1]: (text if rc == 0 else None) for n, rc, text in answers}
        return json.loads(json.dumps(build_state(raw)))
