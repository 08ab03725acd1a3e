# ruff: noqa: F821  (run by the channel, with ``project``, ``iface``, ``canvas`` at hand)
__out__ = dict(loaded=channel_status["loaded"], error=channel_status["open_error"],
               layers=len(project.mapLayers()), drawing=canvas.isDrawing())
