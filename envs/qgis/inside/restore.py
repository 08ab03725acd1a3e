"""Sent to the running QGIS by Adapter.restore_in_place and run there (GUI thread): put it
back where a fresh launch with FILES open leaves it. The caller prepends ``FILES`` and ``WORK``
(paths in the sandbox). Leaves "ok" in ``__out__``, or why it refused (then the env restarts
QGIS; all refusals but an unexpected file in the work folder come before anything changed).

What a launch leaves is recorded once by Adapter.after_ready (``record_launch``, kept on the
``sys`` module like the channel): the main window's dock and toolbar layout, the map tool, the
status bar's check buttons and button icons, the Processing Toolbox's recently used
algorithms. Refused: any visible top-level window but the main one (a dialog, a floating dock,
an attribute table, a menu), the locator's results list, a modal or popup widget, another map
tool than the pan tool the launch leaves, algorithms run (the toolbox's recently used list
cannot be emptied), a project saved (Open Recent and the welcome page list it), a task
with nothing to open whose map has moved (the launch's empty extent cannot be set back).
"""
# ruff: noqa: F821  (``project``, ``iface``, ``canvas``, ``open_inputs`` and ``FILES`` come
# from the namespace the channel runs this in)
import os as _os
import sys as _sys
import time as _time

from qgis.gui import QgsGui as _QgsGui
from qgis.PyQt.QtCore import QCoreApplication as _QCoreApplication
from qgis.PyQt.QtCore import QEvent as _QEvent
from qgis.PyQt.QtCore import QModelIndex as _QModelIndex
from qgis.PyQt.QtGui import QIcon as _QIcon
from qgis.PyQt.QtWidgets import QAbstractButton as _QAbstractButton
from qgis.PyQt.QtWidgets import QApplication as _QApplication
from qgis.PyQt.QtWidgets import QDockWidget as _QDockWidget
from qgis.PyQt.QtWidgets import QLabel as _QLabel
from qgis.PyQt.QtWidgets import QLineEdit as _QLineEdit
from qgis.PyQt.QtWidgets import QMenu as _QMenu
from qgis.PyQt.QtWidgets import QStackedWidget as _QStackedWidget
from qgis.PyQt.QtWidgets import QToolBar as _QToolBar
from qgis.PyQt.QtWidgets import QToolButton as _QToolButton
from qgis.PyQt.QtWidgets import QTreeView as _QTreeView
from qgis.PyQt.QtWidgets import QWidget as _QWidget


def _recent():
    return list(_QgsGui.processingRecentAlgorithmLog().recentAlgorithmIds())


def _coordinate_boxes():
    """The status bar's coordinate box (it widens to fit the pointer's coordinates)."""
    return [edit for label in iface.statusBarIface().findChildren(_QLabel, "mCoordsLabel")
            for edit in label.parentWidget().findChildren(_QLineEdit)]


def _floating():
    """Widgets floating over the main window (the locator's results list). By the C++
    class name: sip wraps some of them as plain QWidgets."""
    return [w for w in iface.mainWindow().findChildren(_QWidget)
            if w.metaObject().className() == "QgsFloatingWidget"]


def _status_buttons():
    """The status bar's check buttons (Render, the scale lock)."""
    return [b for b in iface.statusBarIface().findChildren(_QAbstractButton) if b.isCheckable()]


def _toolbox_boxes():
    """The Processing Toolbox's search box."""
    return [edit for dock in iface.mainWindow().findChildren(_QDockWidget, "ProcessingToolbox")
            for edit in dock.findChildren(_QLineEdit)]


def _status_tool_buttons():
    return iface.statusBarIface().findChildren(_QToolButton)


def _central_stacks():
    """The map area: the map canvas or, with nothing open at launch, the welcome page."""
    central = iface.mainWindow().centralWidget()
    return [w for w in central.findChildren(_QStackedWidget) if w.parentWidget() is central]


def _split_buttons():
    """Toolbar buttons with a drop-down whose face is the action last chosen from it."""
    return [b for bar in iface.mainWindow().findChildren(_QToolBar)
            for b in bar.findChildren(_QToolButton)
            if b.popupMode() == _QToolButton.MenuButtonPopup and b.defaultAction() is not None]


def _recent_projects():
    return [len(m.actions()) for m in iface.mainWindow().findChildren(_QMenu,
                                                                      "mRecentProjectsMenu")]


def _locator_boxes():
    """The locator's search box (sip knows the locator widget only as a QWidget)."""
    return [edit for edit in iface.mainWindow().findChildren(_QLineEdit)
            if edit.placeholderText().startswith("Type to locate")]


def _clear_locator(edit, style):
    """Empty the locator's box as a user would. The text change searches and pops the
    results list up 100 ms later (QgsLocatorWidget's popup timer): wait for it, hide it."""
    edit.clear()
    edit.setStyleSheet(style)  # (a cleared filter box turns its placeholder italic)
    popups = _floating()
    deadline = _time.monotonic() + 2.0
    while not any(p.isVisible() for p in popups) and _time.monotonic() < deadline:
        _QApplication.processEvents()
        _time.sleep(0.01)
    locator = edit.parentWidget()
    if hasattr(locator, "invalidateResults"):
        locator.invalidateResults()


def record_launch():
    """What a fresh launch shows, for later restores (called once the launch is ready)."""
    mw = iface.mainWindow()
    tool = canvas.mapTool()
    _sys._sciagent_qgis_launch = {
        "state": mw.saveState(), "window_state": int(mw.windowState()),
        "tool": type(tool).__name__ if tool is not None else None, "recent": _recent(),
        "visible": {bar.objectName() for bar in mw.findChildren(_QDockWidget)
                    + mw.findChildren(_QToolBar) if bar.isVisible()},
        "locator": [edit.styleSheet() for edit in _locator_boxes()],
        "toolbox": [edit.styleSheet() for edit in _toolbox_boxes()],
        "coords": [(e.minimumWidth(), e.maximumWidth()) for e in _coordinate_boxes()],
        "buttons": [(b, b.isChecked()) for b in _status_buttons()],
        "icons": [(b, _QIcon(b.icon())) for b in _status_tool_buttons()],
        "stacks": [w.currentIndex() for w in _central_stacks()],
        "split": [(b, b.defaultAction()) for b in _split_buttons()],
        "recent_projects": _recent_projects(), "extent": canvas.extent(),
        "focus": _QApplication.focusWidget()}


def _refusal(launch):
    mw = iface.mainWindow()
    if launch is None:
        return "no launch recorded"
    if _QApplication.activeModalWidget() is not None or \
            _QApplication.activePopupWidget() is not None:
        return "a modal dialog or a menu is open"
    others = [w for w in _QApplication.topLevelWidgets() if w.isVisible() and w is not mw]
    others += [w for w in _floating() if w.isVisible()]
    if others:
        return "windows open: " + ", ".join(repr(w.windowTitle()) for w in others)
    if _recent() != launch["recent"]:
        return "the Processing Toolbox lists recently used algorithms"
    if _recent_projects() != launch["recent_projects"]:
        return "a project was saved (Open Recent and the welcome page list it)"
    if not FILES and canvas.extent() != launch["extent"]:
        # a launch with nothing to open leaves the map's empty extent (scale 1:1, the zoom
        # buttons disabled), which a map that has shown a layer cannot be given back
        return "nothing to open, and the map has left the launch's extent"
    if launch["tool"] != "QgsMapToolPan":
        return f"the launch left the map tool {launch['tool']}, which this does not restore"
    if int(mw.windowState()) != launch["window_state"]:  # (its place: checked by the adapter)
        return "the main window was made full screen or restored"
    return None


def _restore():
    launch = getattr(_sys, "_sciagent_qgis_launch", None)
    why = _refusal(launch)
    if why:
        return why
    mw = iface.mainWindow()
    old = list(project.mapLayers().values())
    for layer in old:
        if hasattr(layer, "isEditable") and layer.isEditable():
            layer.rollBack()  # edits dropped, no save prompt
    # The files were restaged at the same paths: the old layers' datasets must be closed
    # (pooled connections closed when released), or QGIS's OGR/GDAL connection pools hand
    # the reopened layers the old files' data (a reload showed the last episode's extent).
    for layer in old:
        provider = layer.dataProvider()
        if provider is not None:
            provider.invalidateConnections(layer.source().split("|")[0])
    del old[:]
    layer = provider = None  # (no reference left to the layers newProject deletes)
    staged = set(_os.listdir(WORK))
    canvas.stopRendering()
    iface.messageBar().clearWidgets()
    iface.newProject(False)
    _QCoreApplication.sendPostedEvents(None, _QEvent.DeferredDelete)
    # GDAL writes what it learnt of a raster (statistics) beside it when it closes it: here
    # the old DEM's, which the reopened new one would have shown in its legend. A launch
    # (the last one was killed) finds none.
    for name in set(_os.listdir(WORK)) - staged:
        if not name.endswith(".aux.xml"):
            return f"a file appeared in the work folder: {name}"
        _os.remove(_os.path.join(WORK, name))
    mw.restoreState(launch["state"])
    for bar in mw.findChildren(_QDockWidget) + mw.findChildren(_QToolBar):
        # a panel made after the launch (Identify Results) is not in the saved layout
        if bar.isVisible() and bar.objectName() not in launch["visible"]:
            bar.hide()
    canvas.setRotation(0.0)
    canvas.setMagnificationFactor(1.0)
    iface.actionPan().trigger()
    for button, checked in launch["buttons"]:
        button.setChecked(checked)  # the map's Render box and the scale lock
    for button, action in launch["split"]:
        button.setDefaultAction(action)  # e.g. Select by Expression back to Select by Value
    for button, icon in launch["icons"]:
        button.setIcon(icon)  # the Log Messages button's "unread" dots (a tool logged)
    styles = launch["toolbox"] + [""] * len(_toolbox_boxes())  # (made when first shown)
    for edit, style in zip(_toolbox_boxes(), styles, strict=False):
        if edit.text():  # the Processing Toolbox's search emptied, its tree folded
            edit.clear()
            edit.setStyleSheet(style)
            for dock in mw.findChildren(_QDockWidget, "ProcessingToolbox"):
                for tree in dock.findChildren(_QTreeView):
                    tree.collapseAll()
    for edit, style in zip(_locator_boxes(), launch["locator"], strict=True):
        if edit.text():
            _clear_locator(edit, style)
    for dock in mw.findChildren(_QDockWidget):
        if dock.objectName() in ("Browser", "Browser2"):  # the two Browser panels
            for tree in dock.findChildren(_QTreeView):
                tree.collapseAll()
                tree.clearSelection()
                tree.setCurrentIndex(_QModelIndex())
                tree.scrollToTop()
    # The docks closed give the map its launch size only once the layout has run: zooming
    # to the full extent before that kept the narrower map's scale (a wider extent).
    _QApplication.processEvents()
    # A marker's legend icon is drawn once, at the map scale the Layers panel knows then:
    # none yet at launch, the last episode's here (the towns' dot came out 2 px larger).
    iface.layerTreeView().layerTreeModel().setLegendMapViewData(0.0, 0, 0.0)
    open_inputs(FILES)
    for stack, index in zip(_central_stacks(), launch["stacks"], strict=True):
        stack.setCurrentIndex(index)  # the welcome page where nothing was open at launch
    bar = iface.statusBarIface()
    bar.showMessage("Ready")  # as the launch leaves it
    for edit, width in zip(_coordinate_boxes(), launch["coords"], strict=True):  # at launch
        edit.clear()
        edit.setMinimumWidth(width[0])
        edit.setMaximumWidth(width[1])
    focus = _QApplication.focusWidget()
    if launch["focus"] is not None:
        launch["focus"].setFocus()  # the map, or with nothing open the welcome page's
    elif focus is not None:
        focus.clearFocus()
    return "ok"


__out__ = _restore() if "FILES" in globals() else record_launch()
