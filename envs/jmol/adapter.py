"""Jmol 14.32 (Debian ``jmol``): launch, readiness and a state channel over Jmol's JSON socket.

Jmol starts with ``-j "sync -PORT"``: its JSON service (the Molecular Playground protocol)
listens on that port on every interface. The program runs in a bubblewrap sandbox with its own
network namespace, so the port exists only inside the sandbox: the client is a short Python
client (``call_client``: a fork of the sandbox helper, its arguments on no command line) started
in the same sandbox. It sends ``{"magic": "JmolApp", "role": "out"}`` and then the request as
``{"type": "command", "command": SCRIPT}``; Jmol runs the script on its script queue and reports
every ``message`` the script sends back over the same socket as a ``SCRIPT:`` reply. The
request's last command sends ``<nonce> <JSON>``, with a random nonce per request, so nothing
else Jmol says can pass for the answer. The client prints the answer on its stdout, which goes
back through the sandbox helper, never through a file.
"""

from __future__ import annotations

import json
import math
import secrets
import time
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

STATE_SCRIPT = inside_text(__file__, "state.spt")
JMOL_JAR = "/usr/share/java/Jmol.jar"
SYNC_PORT = 30000
MAIN_CLASS = "jmolpanel"  # WM_CLASS of every Jmol window: org-openscience-jmol-app-jmolpanel-...
#: Display size (the 3D panel): the main window then fills most of the 1280 x 800 screen.
GEOMETRY = "960x640"
#: Tasks with this tag start with Jmol's unit-cell label hidden (it prints the space group).
HIDE_CELL_INFO_TAG = "symmetry"
#: How long one readiness probe waits before it is asked again on a new connection.
PROBE_TIMEOUT = 15.0

# The client (call_client): argv[1] port, argv[2] nonce, argv[3] the Jmol script.
# Retries the connection while Jmol is still starting (about 30 s).
CLIENT = SOCKET_CLIENT_PRELUDE + inside_text(__file__, "client.py")


class ScriptError(ToolScriptError):
    """A Jmol request failed or did not finish."""


def _wrap(code: str, nonce: str) -> str:
    """``code`` with its answer (what it leaves in ``__o``) sent back as ``<nonce> <JSON>``."""
    return (f'var __o = "";\n{code}\n'
            f'message @{{"{nonce} " + __o.format("JSON")}}\n')


class Adapter(ToolAdapter):
    #: Jmol script (a statement; a line of statements)
    console_language = ConsoleLanguage(
        code=(r";\s*\S|^\s*(load|select|var|for|measure|polyhedra|write|color|spacefill|unitcell|"
              r"background|prompt|set|script|show|print|echo)\b"),
        windows=r"\bJmol|cif")
    ready_timeout = 40.0

    def launch_argv(self, provider: ProgramHost, task: Task | None) -> list[str]:
        work, home = provider.paths["work"], provider.paths["home"]
        files = task.spec.open if task is not None else []
        # java directly (not /usr/bin/jmol, which prefers a Jmol.jar in the current folder:
        # the work folder, which the agent can write). -L: no splash screen; -g: the display
        # size; user.home: Java ignores $HOME for ~/.jmol and ~/.java.
        # -J runs before the files load: a task that asks for the symmetry starts without
        # Jmol's unit-cell label (HM symbol and space-group number at the top left).
        hide = ["-J", "set showUnitCellInfo false"] if task is not None and (
            HIDE_CELL_INFO_TAG in task.spec.tags) else []
        return ["java", f"-Duser.home={home}", "-Xmx768m", "-jar", JMOL_JAR, "-L",
                "-g", GEOMETRY, *hide, *(f"{work}/{name}" for name in files),
                "-j", f"sync -{SYNC_PORT}"]

    def launch_env(self, provider: ProgramHost) -> dict[str, str]:
        return {"_JAVA_OPTIONS": "-Dawt.useSystemAAFontSettings=on"}

    def open_inputs(self, provider: ProgramHost, task: Task) -> None:
        work = provider.paths["work"]
        # both ways: a machine restored with the program running may have had another task
        shown = "false" if HIDE_CELL_INFO_TAG in task.spec.tags else "true"
        self.run_script(provider, f"set showUnitCellInfo {shown}")
        for name in task.spec.open:
            self.run_script(provider, f'load "{work}/{name}"', timeout=60.0)

    def is_ready(self, windows: list[WindowInfo], task: Task | None) -> bool:
        files = task.spec.open if task is not None else []
        main = [w for w in windows if MAIN_CLASS in w.wm_class.lower() and w.width > 300
                and w.height > 300]
        if not files:
            return any(w.title.startswith("Jmol") for w in main)
        return any(w.title.startswith(files[-1]) for w in main)

    def after_ready(self, provider: ProgramHost, task: Task | None) -> None:
        """Wait until the channel answers: that proves the sync service is up and the file
        loaded. The probe is idempotent, so a probe left unanswered is asked again on a new
        connection (a CI run once saw Jmol's first request go unanswered for 40 s after its
        window was up; 80 starts under load here answered within 0.8 s)."""
        deadline = time.monotonic() + self.ready_timeout * provider.ready_scale
        while True:
            left = deadline - time.monotonic()
            try:
                self.run_script(provider, "__o = {*}.size", timeout=min(PROBE_TIMEOUT, left))
                return
            except ScriptError:
                if deadline - time.monotonic() < 1.0:
                    raise

    def run_script(self, provider: ChannelHost, code: str, timeout: float = 30.0) -> str:
        """Run Jmol script in the GUI's viewer; returns what it leaves in ``__o`` (as text
        for a string, else as JSON)."""
        out = self._request(provider, code, timeout)
        return out if isinstance(out, str) else json.dumps(out)

    def _request(self, provider: ChannelHost, code: str, timeout: float) -> Any:
        n = self.next_request_id()
        nonce = secrets.token_hex(12)
        text = self.call_client(provider, f"jmol-client-{n}", code=CLIENT,
                                args=[str(SYNC_PORT), nonce, _wrap(code, nonce)],
                                timeout=timeout, error=ScriptError)
        try:
            reply = json.loads(text)
            if not reply.get("ok"):
                raise ScriptError(f"Jmol request failed: {reply.get('error')}")
            return json.loads(reply["out"])
        except (ValueError, TypeError, KeyError) as exc:
            raise ScriptError(f"Jmol's answer is not JSON ({exc}): {text[:300]}") from None

    def dump_state(self, provider: ChannelHost) -> dict[str, Any]:
        raw = self._request(provider, STATE_SCRIPT, timeout=30.0)
        if not isinstance(raw, dict):
            raise ScriptError(f"state dump is not an object: {str(raw)[:300]}")
        return summarise(raw)


def _list(value: Any) -> list:
    """Jmol gives "" for the list of an empty atom set, and a bare value for one atom."""
    if value in ("", None):
        return []
    return value if isinstance(value, list) else [value]


def _number(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(out) else out


def summarise(raw: dict[str, Any]) -> dict[str, Any]:
    """The state dump with derived keys the tasks check.

    Keys: atoms, models, counts ({element: atoms}), fxyz (per atom, up to 1500 atoms, else
    None), cell {a, b, c, alpha, beta, gamma} (or None), spacegroup (Hermann-Mauguin symbol
    without Jmol's "HM:"), spacegroup_number, show {unitcell, axes}, background [r, g, b]
    (0-255), radius ({element: [min, max]} in A), radius_pct ({element: [min, max]}, the
    sphere radius in % of the atom's van der Waals radius), color ({element: [distinct [r, g, b]]}),
    measurements ([{type, value, elements, visible}]), polyhedra ([{element, vertices,
    vertex_elements}]), hidden (hidden atoms), file.
    """
    counts = raw.get("counts")
    out: dict[str, Any] = {
        "atoms": int(raw.get("atoms") or 0),
        "models": int(raw.get("models") or 0),
        "counts": ({str(k): int(v) for k, v in counts.items()} if isinstance(counts, dict)
                   else {}),
        "fxyz": _list(raw.get("fxyz")) if "fxyz" in raw else None,
        "hidden": int(raw.get("hidden") or 0),
        "file": str(raw.get("file") or ""),
        "show": {"unitcell": bool(raw.get("show_unitcell")), "axes": bool(raw.get("show_axes"))},
    }
    cell = [_number(v) for v in _list(raw.get("cell"))[:6]]
    out["cell"] = (dict(zip(("a", "b", "c", "alpha", "beta", "gamma"), cell, strict=True))
                   if len(cell) == 6 and None not in cell else None)
    sg = str(raw.get("spacegroup") or "")
    out["spacegroup"] = sg[3:] if sg.startswith("HM:") else sg
    try:
        out["spacegroup_number"] = int(str(raw.get("spacegroup_number")).split(":")[0])
    except ValueError:
        out["spacegroup_number"] = None
    out["background"] = _rgb(str(raw.get("background") or ""))
    out["radius"], out["color"] = {}, {}
    for style in _list(raw.get("styles")):
        parts = str(style).split(" ", 2)
        radius = _number(parts[1]) if len(parts) == 3 else None
        rgb = _rgb(parts[2]) if len(parts) == 3 else None
        if radius is None or rgb is None:
            continue
        el = parts[0]
        lo, hi = out["radius"].get(el, [math.inf, -math.inf])
        out["radius"][el] = [min(lo, radius), max(hi, radius)]
        seen = out["color"].setdefault(el, [])
        if rgb not in seen:
            seen.append(rgb)
    out["radius_pct"] = {}
    for entry in _list(raw.get("radius_pct")):
        el, _, value = str(entry).partition(" ")
        pct = _number(value)
        if el and pct is not None:
            lo, hi = out["radius_pct"].get(el, [math.inf, -math.inf])
            out["radius_pct"][el] = [min(lo, pct), max(hi, pct)]
    out["measurements"] = [
        {"type": m.get("type"), "value": _number(m.get("value")),
         "elements": str(m.get("elements") or "").split(),
         "visible": bool(m.get("visible", True))}
        for m in _list(raw.get("measurements")) if isinstance(m, dict)]
    out["polyhedra"] = [
        {"element": str(p.get("element")), "vertices": int(p.get("vertices") or 0),
         "vertex_elements": sorted(_element_symbol(z) for z in _list(p.get("vertex_elements")))}
        for p in _list(raw.get("polyhedra")) if isinstance(p, dict)]
    return out


def _rgb(text: str) -> list[int] | None:
    """Jmol's colour "[xRRGGBB]" (or an atom's "{r g b}") as [r, g, b]."""
    if text.startswith("{"):
        try:
            return [round(float(v)) for v in text.strip("{}").split()][:3]
        except ValueError:
            return None
    try:
        value = int(text.strip().strip("[]").lstrip("x"), 16)
    except ValueError:
        return None
    return [value >> 16 & 255, value >> 8 & 255, value & 255]


_SYMBOLS = ("X H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn "
            "Ga Ge As Se Br Kr Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce "
            "Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb Lu Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi").split()


def _element_symbol(z: Any) -> str:
    try:
        return _SYMBOLS[int(z)]
    except (ValueError, TypeError, IndexError):
        return str(z)
