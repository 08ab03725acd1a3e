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
    for path in FILES:
        cmd.load(path, quiet=0)
    feedback = cmd._get_feedback() or []
    _lay_out_output(w, opengl, [*feedback, rpc])
    w.lineedit.clear()
    # The viewport's own command line (keys typed while the viewport has the focus): to its
    # start, then kill to its end (PyMOL's Ctrl-A, Ctrl-K).
    for key in (1, 11):
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


__out__ = _restore()
