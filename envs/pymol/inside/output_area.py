"""Prepended to requests that run inside PyMOL (GUI thread): lay the output area out the way
every launch and every in-place restore leaves it, so their frames agree pixel for pixel.

The GUI's feedback timer appends whatever feedback is pending as one block. A launch's lines
(3 OpenGL lines, then each file's header and load lines and the XML-RPC line) arrive in two or
three such batches as timing decides, and the number of blocks sets the scroll bar's range and
so its thumb. Both the launch (``Adapter.after_ready``) and ``inside/restore.py`` therefore
rebuild the area as exactly two blocks: the OpenGL lines, then the rest.
"""
# ruff: noqa: F821  (``cmd`` comes from the namespace the adapter runs this in)
from pymol import colorprinting as _cp
from pymol import gui as _gui
from pymol.Qt import QtWidgets as _QtWidgets


def _output_lines(w, pending=True):
    """The lines in the output area, then (``pending``) the feedback the GUI has not appended
    yet, which this takes from the queue."""
    text = w.browser.toPlainText().replace("\xa0", " ")
    lines = text.split("\n") if text else []
    return lines + list(cmd._get_feedback() or []) if pending else lines


def _is_opengl(lines):
    return len(lines) == 3 and all(line.startswith((" Detected ", " Geometry "))
                                   for line in lines)


def _lay_out_output(w, opengl, rest):
    """The area as two blocks, shown one after the other as a launch shows them."""
    w.browser.clear()
    w.browser.appendHtml(_cp.text2html("\n".join(opengl)))
    # The first block is laid out before the second arrives (that sets the scroll bar's
    # range): let the GUI catch up in between.
    _QtWidgets.QApplication.processEvents()
    w.browser.appendHtml(_cp.text2html("\n".join(rest)))
    bar = w.browser.verticalScrollBar()
    bar.setValue(bar.maximum())


def _lay_out_launch():
    """After a launch: the same two blocks whatever batches the feedback timer made. Returns
    False (and changes nothing) if the launch's lines are not what a launch prints."""
    w = _gui.get_qtwindow()
    lines = _output_lines(w)
    if not _is_opengl(lines[:3]) or not any(line.startswith("xml-rpc server running")
                                             for line in lines):
        return False
    _lay_out_output(w, lines[:3], lines[3:])
    return True
