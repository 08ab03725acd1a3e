"""The virtual display and the controller on a bare Xvfb (no application)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import our_processes
from Xlib import X
from Xlib import display as xdisplay

from sciagent_gym.actions import types as A
from sciagent_gym.controller.x11 import X11Controller
from sciagent_gym.providers.local.display import VirtualDisplay

pytestmark = pytest.mark.e2e


def test_displays_get_distinct_numbers_and_end_on_close():
    a, b = VirtualDisplay(320, 200), VirtualDisplay(320, 200)
    try:
        assert a.name != b.name and a.alive and b.alive
        markers = [a.marker, b.marker]
        assert all(our_processes(m) for m in markers)  # Xvfb and openbox of each
    finally:
        a.close()
        b.close()
    assert not a.alive and not b.alive
    assert [our_processes(m) for m in markers] == [[], []]


def test_grab_returns_exact_rgb_and_input_moves_the_pointer():
    with VirtualDisplay(320, 200, window_manager=False) as disp:
        ctl = X11Controller(disp.name, 320, 200)
        dpy = xdisplay.Display(disp.name)
        try:
            screen = dpy.screen()
            cmap = screen.default_colormap
            pixel = cmap.alloc_color(0xFFFF, 0x8000, 0x0000).pixel  # orange (255, 128, 0)
            win = screen.root.create_window(10, 20, 100, 50, 0, screen.root_depth,
                                            X.InputOutput, X.CopyFromParent,
                                            background_pixel=pixel, override_redirect=True)
            win.map()
            dpy.sync()
            frame = ctl.grab()
            for _ in range(50):
                if tuple(frame[40, 50]) == (255, 128, 0):
                    break
                frame = ctl.grab()
            assert frame.shape == (200, 320, 3) and frame.dtype == np.uint8
            assert tuple(frame[40, 50]) == (255, 128, 0)
            assert tuple(frame[5, 5]) == (0, 0, 0)
            ctl.execute(A.Move(123, 45))
            assert ctl.pointer() == (123, 45)
            ctl.execute(A.Drag(200, 150, start=(10, 10)))
            assert ctl.pointer() == (200, 150)
        finally:
            dpy.close()
            ctl.close()


@pytest.mark.timeout(60)
def test_bad_value_replies_raise_xerror_and_leave_the_connection_usable():
    """python-xlib 0.33 parses BadValue as RandR's BadRRModeError, raises AttributeError and
    then hangs the connection's next request (it hung a QGIS reset in CI); ours must not."""
    from Xlib import Xatom
    from Xlib.error import BadValue

    from sciagent_gym.controller.windows import WindowLister
    from sciagent_gym.controller.xconnect import open_display

    with VirtualDisplay(320, 200) as disp:
        plain = xdisplay.Display(disp.name)  # a plain connection re-registers RandR's errors
        dpy = open_display(disp.name)
        lister = WindowLister(disp.name)
        try:
            root = dpy.screen().root
            name = dpy.intern_atom("SCIAGENT_SHORT")
            root.change_property(name, Xatom.STRING, 8, b"abc")
            dpy.sync()
            for conn in (dpy, plain):  # the repair holds for every connection of the process
                with pytest.raises(BadValue):
                    conn.screen().root.get_property(name, Xatom.STRING, 1000, 10)
                assert conn.screen().root.get_full_property(name, Xatom.STRING).value == b"abc"
            assert isinstance(lister.list(), list)
        finally:
            lister.close()
            dpy.close()
            plain.close()


def _private_kb(pid: int) -> int:
    lines = open(f"/proc/{pid}/smaps_rollup").read().splitlines()
    return sum(int(line.split()[1]) for line in lines if line.startswith("Private_"))


def test_glx_can_be_left_out_and_saves_memory():
    """tool.json "display": {"glx": false}: no GLX extension, so Xvfb loads no Mesa driver."""
    with VirtualDisplay(320, 200, window_manager=False) as with_glx, \
            VirtualDisplay(320, 200, window_manager=False, glx=False) as without:
        have = {}
        for disp in (with_glx, without):
            dpy = xdisplay.Display(disp.name)
            try:
                have[disp.glx] = "GLX" in dpy.list_extensions()
            finally:
                dpy.close()
        assert have == {True: True, False: False}
        saved = _private_kb(with_glx._xvfb.pid) - _private_kb(without._xvfb.pid)
        assert saved > 4000, f"{saved} kB"
