# ruff: noqa: F821  (run by the channel, with ``project``, ``iface``, ``canvas`` at hand)
view = iface.layerTreeView()
model = view.layerTreeModel()
for node in project.layerTreeRoot().findLayers():
    model.refreshLayerLegend(node)
view.doItemsLayout()
view.viewport().update()
__out__ = "ok"
