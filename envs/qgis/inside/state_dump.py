"""Sent to the running QGIS by the adapter and run there (GUI thread) to dump its state.

It reads and never changes anything. Leaves a JSON-able dict in ``__out__``; ``project``,
``iface``, ``canvas`` and the ``Qgs*`` names come from the channel's request namespace.
"""
# ruff: noqa: F821  (names come from the namespace the channel runs this in)

MAX_IDS = 500


def _plain(value):
    if value is None:
        return None
    try:
        if value.isNull():
            return None
    except AttributeError:
        pass
    if isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _extent(rect):
    return [round(rect.xMinimum(), 6), round(rect.yMinimum(), 6),
            round(rect.xMaximum(), 6), round(rect.yMaximum(), 6)]


def _renderer(layer):
    r = layer.renderer()
    if r is None:
        return {"type": None}
    out = {"type": r.type(), "attribute": None, "categories": [], "n_ranges": 0}
    if r.type() == "categorizedSymbol":
        out["attribute"] = r.classAttribute()
        values = [_plain(c.value()) for c in r.categories()]
        out["categories"] = sorted(str(v) for v in values if v not in (None, ""))
        out["has_other_category"] = any(v in (None, "") for v in values)
    elif r.type() == "graduatedSymbol":
        out["attribute"] = r.classAttribute()
        out["n_ranges"] = len(r.ranges())
    return out


def _labels(layer):
    out = {"enabled": bool(layer.labelsEnabled()), "field": None, "is_expression": False,
           "size": None, "size_unit": None}
    labeling = layer.labeling()
    if labeling is not None and hasattr(labeling, "settings"):
        try:
            s = labeling.settings()
            out["field"] = s.fieldName
            out["is_expression"] = bool(s.isExpression)
            out["size"] = round(s.format().size(), 3)
            out["size_unit"] = QgsUnitTypes.encodeUnit(s.format().sizeUnit())
        except Exception:
            pass
    return out


def _vector(layer, out):
    out["geometry_type"] = QgsWkbTypes.displayString(layer.wkbType())
    out["feature_count"] = int(layer.featureCount())
    out["fields"] = [f.name() for f in layer.fields()]
    ids = sorted(int(i) for i in layer.selectedFeatureIds())
    out["selected_count"] = len(ids)
    out["selected_ids"] = ids[:MAX_IDS]
    names = []
    idx = layer.fields().indexOf("name")
    if idx >= 0 and ids:
        for feat in layer.getFeatures(QgsFeatureRequest().setFilterFids(ids[:MAX_IDS])):
            names.append(_plain(feat.attribute(idx)))
    out["selected_names"] = sorted(str(n) for n in names)
    out["subset"] = layer.subsetString()
    out["renderer"] = _renderer(layer)
    out["labels"] = _labels(layer)
    out["editing"] = bool(layer.isEditable())
    out["modified"] = bool(layer.isModified())


def _raster(layer, out):
    out["width"] = int(layer.width())
    out["height"] = int(layer.height())
    out["band_count"] = int(layer.bandCount())
    r = layer.renderer()
    out["renderer"] = {"type": r.type() if r is not None else None}


def _layer(layer, node):
    out = {"id": layer.id(), "name": layer.name(),
           "type": {0: "vector", 1: "raster"}.get(int(layer.type()), str(layer.type())),
           "provider": layer.providerType(), "source": layer.source(),
           "crs": layer.crs().authid(), "valid": bool(layer.isValid()),
           "visible": bool(node.isVisible()) if node is not None else False,
           "opacity": round(float(layer.opacity()), 3),
           "extent": _extent(layer.extent())}
    if out["type"] == "vector":
        _vector(layer, out)
    elif out["type"] == "raster":
        _raster(layer, out)
    return out


def _dump():
    root = project.layerTreeRoot()
    layers = []
    seen = set()
    for node in root.findLayers():
        layer = node.layer()
        if layer is None:
            continue
        seen.add(layer.id())
        layers.append(_layer(layer, node))
    for layer_id, layer in project.mapLayers().items():
        if layer_id not in seen:
            layers.append(_layer(layer, None))
    by_name = {}
    for item in layers:
        by_name.setdefault(item["name"], item)
    active = iface.activeLayer()
    return {
        "project": {"crs": project.crs().authid(), "file_name": project.fileName(),
                    "title": project.title(), "n_layers": len(layers),
                    "ellipsoid": project.ellipsoid(), "dirty": bool(project.isDirty())},
        "layers": layers,
        "layers_by_name": by_name,
        "layer_names": [item["name"] for item in layers],
        "visible_layers": [item["name"] for item in layers if item["visible"]],
        "active_layer": active.name() if active is not None else None,
        "canvas": {"extent": _extent(canvas.extent()), "scale": round(canvas.scale(), 3),
                   "crs": canvas.mapSettings().destinationCrs().authid()},
        "loaded": bool(channel_status["loaded"]),
        "open_error": channel_status["open_error"],
    }


__out__ = _dump()
