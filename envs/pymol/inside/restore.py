"""Sent to the running PyMOL by Adapter.restore_in_place and run there (GUI thread): put it
back where a fresh ``pymol -R -q FILES`` (started in WORK) leaves it. The caller prepends
``FILES`` and ``WORK`` (paths in the sandbox) and ``inside/output_area.py``. Leaves "ok" in
``__out__``, or why it refused (nothing changed then).

The output area is rebuilt as the launch left it (two blocks: the OpenGL detection's 3 lines,
then each file's header and load lines and the XML-RPC line), from the launch's lines still in
the area and a verbose reload.
"""
# ruff: noqa: F821  (``cmd``, ``FILES`` and ``WORK`` come from the namespace the adapter runs this in)
import os as _os

from pymol import gui as _gui
from pymol.Qt import QtWidgets as _QtWidgets


def _restore():
    w = _gui.get_qtwindow()
    lines = _output_lines(w, pending=False)
    opengl = lines[:3]
    rpc = next((line for line in lines if line.startswith("xml-rpc server running")), None)
    if not _is_opengl(opengl) or rpc is None:
        return "the output area lost the launch's lines"
    # The work folder was emptied and made anew: the old one, still PyMOL's working
    # directory, is gone (File > Open then silently failed to open its dialog).
    _os.chdir(WORK)
    cmd.set_wizard_stack([])
    cmd.reinitialize()
    cmd._get_feedback()
    # The session_file setting changed back to "" would retitle the window "PyMOL ()" at the
    # GUI's next feedback tick; a launch never fired that callback.
    cmd.get_setting_updates()
    # That also drained the updates the GUI's timer syncs its menus' check marks with: a
    # Display > Sequence left ticked by the last episode then read "on" over a viewer
    # reinitialize had turned off, and a click on it turned it off. Sync them all now.
    _sync_menu_checks(w)
    for path in FILES:
        cmd.load(path, quiet=0)
    feedback = cmd._get_feedback() or []
    _lay_out_output(w, opengl, [*feedback, rpc])
    w.lineedit.clear()
    # The viewport's own command line (keys typed while the viewport has the focus): to its
    # start, then kill to its end (PyMOL's Ctrl-A, Ctrl-K). A character first: on an empty
    # line Ctrl-A is PyMOL's "select all" (it left a (sele) of every atom after each restore,
    # which a menu-driven agent's next (sele) action then coloured or saved).
    for key in (ord("x"), 1, 11):
        w.pymolwidget.pymol.button(key, -1, 0, 0, 0)
    w._setup_history()
    w.setWindowTitle("PyMOL")
    w.lineedit.clearFocus()  # (a focus change re-arms the caret, steady since the launch)
    w.lineedit.setFocus()
    # Paint the whole window now (the viewport renders the reloaded scene, slowly in software
    # OpenGL): the window read black until then, which a settle took for a settled frame.
    _QtWidgets.QApplication.processEvents()
    w.repaint()
    return "ok"


def _sync_menu_checks(w):
    """Each setting-bound menu action's check mark set from the setting's value now, as the
    GUI's feedback timer does for the settings that changed (session_file left out: its
    callback retitles the window)."""
    skip = cmd.setting._get_index("session_file")
    for index, callbacks in getattr(w, "setting_callbacks", {}).items():
        if index == skip:
            continue
        value = cmd.get_setting_tuple(index)[1][0]
        for callback in callbacks:
            callback(value)


__out__ = _restore()
