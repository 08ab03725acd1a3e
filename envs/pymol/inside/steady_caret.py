# ruff: noqa: I001  (prepended to the launch's first request: see Adapter.after_ready)
from pymol import gui as _gui
from pymol.Qt import QtWidgets as _QtWidgets
_QtWidgets.QApplication.setCursorFlashTime(0)
_gui.get_qtwindow().lineedit.clearFocus()
_gui.get_qtwindow().lineedit.setFocus()
