"""Opening an X display connection with python-xlib, minus a bug that hangs it.

python-xlib 0.32/0.33 registers the RandR extension's errors under their *relative* codes
(0, 1, 2) instead of ``first_error + code``. Code 2 is the core ``BadValue``, so a BadValue reply
is parsed into ``BadRRModeError``, which lacks ``sequence_number``: the parser raises
AttributeError half-way through and the connection's next request waits forever (upstream issues
#241/#259). A ``GetProperty`` whose property shrinks between the two reads of
``get_full_property`` (a program retitling its window) gets exactly that BadValue, so a QGIS
start-up that renames its window could hang a reset for good.

Importing this module wraps the RandR module's ``init`` so that every connection made in the
process afterwards (ours or a user's) puts the core error classes back; the table is shared by
every connection (a class attribute in python-xlib), so one plain connection would break it for
all. :func:`open_display` also repairs it directly.
"""

from __future__ import annotations

from Xlib import display as xdisplay
from Xlib import error as xerror
from Xlib.ext import randr


def open_display(name: str) -> xdisplay.Display:
    """``Xlib.display.Display(name)`` whose error replies parse to the right classes."""
    dpy = xdisplay.Display(name)
    repair_error_classes(dpy)
    return dpy


def repair_error_classes(dpy) -> None:
    """Map core error codes back to python-xlib's core classes (see the module docstring)."""
    table = dpy.display.error_classes if hasattr(dpy, "display") else dpy.error_classes
    for code in range(0, 18):
        core = xerror.xerror_class.get(code)
        if core is not None:
            table[code] = core
        elif code in table and not issubclass(table[code], xerror.XError):
            del table[code]  # parsed as a generic XError, which keeps the connection usable


def _install() -> None:
    if getattr(randr.init, "_sciagent_repaired", False):
        return
    original = randr.init

    def init(disp, info):
        original(disp, info)
        repair_error_classes(disp)

    init._sciagent_repaired = True
    randr.init = init


_install()
