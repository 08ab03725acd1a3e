# The workstation's program: runs as ``python3 -I -S -c <this> JSON PLACE`` in the program zone
# and starts every program JSON lists ([{"name", "argv", "env"}]) in that zone, each in the
# launcher's process group (the zone's kill ends them all), with its own environment on top of
# the launcher's. It waits and exits once any of them exits (with that program's status), after
# ending the others: a workstation whose program died is a crashed program, as for one tool.
#
# PLACE ({"<WM_CLASS>": [x, y]}) moves the first top-level window of each of those classes to
# (x, y) once it is mapped: Fityk 1.3 restores its size but not its position, so without this the
# window manager would put it wherever there is room at the moment it maps. Xlib through ctypes
# (the standard library only); the window manager places the frame's corner there.
import ctypes
import json
import os
import signal
import subprocess
import sys
import time

programs = json.loads(sys.argv[1])
place = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}


class ClassHint(ctypes.Structure):
    _fields_ = [("res_name", ctypes.c_void_p), ("res_class", ctypes.c_void_p)]


def x11():
    lib = ctypes.cdll.LoadLibrary("libX11.so.6")
    lib.XOpenDisplay.restype = ctypes.c_void_p
    lib.XOpenDisplay.argtypes = [ctypes.c_char_p]
    lib.XDefaultRootWindow.restype = ctypes.c_ulong
    lib.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    lib.XQueryTree.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.POINTER(ctypes.c_ulong),
                               ctypes.POINTER(ctypes.c_ulong),
                               ctypes.POINTER(ctypes.POINTER(ctypes.c_ulong)),
                               ctypes.POINTER(ctypes.c_uint)]
    lib.XGetClassHint.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.POINTER(ClassHint)]
    lib.XMoveWindow.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int]
    lib.XFree.argtypes = [ctypes.c_void_p]
    lib.XFlush.argtypes = [ctypes.c_void_p]
    lib.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return lib


def subwindows(lib, dpy, window):
    root, parent = ctypes.c_ulong(), ctypes.c_ulong()
    kids, n = ctypes.POINTER(ctypes.c_ulong)(), ctypes.c_uint()
    if not lib.XQueryTree(dpy, window, ctypes.byref(root), ctypes.byref(parent),
                          ctypes.byref(kids), ctypes.byref(n)):
        return []
    out = [kids[i] for i in range(n.value)]
    if kids:
        lib.XFree(kids)
    return out


def wm_class(lib, dpy, window):
    hint = ClassHint()
    if not lib.XGetClassHint(dpy, window, ctypes.byref(hint)):
        return ""
    out = ctypes.string_at(hint.res_class).decode("latin-1") if hint.res_class else ""
    for ptr in (hint.res_name, hint.res_class):
        if ptr:
            lib.XFree(ptr)
    return out


def place_windows(want, deadline):
    """Move each class's first managed client window (a child of the window manager's frame, so
    that the move is a configure request the manager honours, not a placement it redoes)."""
    lib = x11()
    dpy = lib.XOpenDisplay(None)
    if not dpy:
        return
    root = lib.XDefaultRootWindow(dpy)
    todo = {k.lower(): v for k, v in want.items()}
    while todo and time.monotonic() < deadline:
        for top in subwindows(lib, dpy, root):
            for win in subwindows(lib, dpy, top):
                cls = wm_class(lib, dpy, win).lower()
                if cls in todo:
                    x, y = todo.pop(cls)
                    lib.XMoveWindow(dpy, win, int(x), int(y))
                    lib.XSync(dpy, 0)
                    sys.stdout.write(f"launcher: placed {cls} at {x},{y}\n")
                    sys.stdout.flush()
        time.sleep(0.05)

children = []
for program in programs:
    env = dict(os.environ)
    env.update(program.get("env") or {})
    sys.stdout.write(f"launcher: starting {program['name']}\n")
    sys.stdout.flush()
    children.append((program["name"], subprocess.Popen(program["argv"], env=env,
                                                       stdin=subprocess.DEVNULL)))


def stop(*_):
    for _, child in children:
        if child.poll() is None:
            child.terminate()
    sys.exit(0)


signal.signal(signal.SIGTERM, stop)
if place:
    try:
        place_windows(place, time.monotonic() + 120)
    except OSError as exc:
        sys.stdout.write(f"launcher: cannot place windows: {exc}\n")
while True:
    for name, child in children:
        code = child.poll()
        if code is not None:
            sys.stdout.write(f"launcher: {name} exited with {code}\n")
            sys.stdout.flush()
            for _, other in children:
                if other.poll() is None:
                    other.terminate()
            sys.exit(code)
    time.sleep(0.2)
