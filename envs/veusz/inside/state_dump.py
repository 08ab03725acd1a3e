# Runs inside Veusz (the live program through the state channel, or a headless Veusz that
# loaded a saved document in a throwaway sandbox) with ``doc`` at hand; leaves in ``__out__``
# a JSON-able summary of the document:
#   filename, modified,
#   widgets {path: {type, settings {name or group/name: value}, data {setting: summary}}},
#   datasets {name: summary + {kind, linked, expr}}.
# A data summary is {n, sum, mean, min, max, first, last} of the finite values, with
# serr/perr/nerr summaries (or None) for the error columns; 2D datasets give {shape}.
import math as _math

_LIMIT_WIDGETS = 400
_LIMIT_DATASETS = 400


def _plain(value, depth=0):
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if _math.isfinite(value) else None
    if depth < 3 and isinstance(value, (list, tuple)):
        return [_plain(v, depth + 1) for v in list(value)[:200]]
    if depth < 3 and isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in list(value.items())[:200]}
    try:
        return float(value) if _math.isfinite(float(value)) else None
    except (TypeError, ValueError):
        return str(value)[:500]


def _column(values):
    if values is None:
        return None
    try:
        import numpy as _np

        arr = _np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        return None
    fin = arr[_np.isfinite(arr)]
    if len(fin) == 0:
        return {"n": int(len(arr)), "finite": 0}
    return {"n": int(len(arr)), "finite": int(len(fin)), "sum": float(fin.sum()),
            "mean": float(fin.mean()), "min": float(fin.min()), "max": float(fin.max()),
            "first": _plain(float(arr[0])), "last": _plain(float(arr[-1]))}


def _summary(ds):
    if ds is None:
        return None
    if getattr(ds, "dimensions", 1) != 1:
        data = getattr(ds, "data", None)
        return {"dimensions": ds.dimensions, "shape": list(getattr(data, "shape", []))}
    if getattr(ds, "datatype", "numeric") == "text":
        data = list(getattr(ds, "data", []))
        return {"datatype": ds.datatype, "n": len(data), "text": [str(v) for v in data[:50]]}
    out = _column(ds.data) or {"n": 0}
    for err in ("serr", "perr", "nerr"):
        out[err] = _column(getattr(ds, err, None))
    return out


def _settings(sets, prefix=""):
    out = {}
    for name in sets.getNames():
        item = sets.get(name)
        if hasattr(item, "getNames"):
            out.update(_settings(item, prefix + name + "/"))
        else:
            try:
                out[prefix + name] = _plain(item.get())
            except Exception as exc:  # a reference that no longer resolves
                out[prefix + name] = f"<error {type(exc).__name__}>"
    return out


def _data(widget):
    out = {}
    for name in widget.settings.getSettingNames():
        setn = widget.settings.get(name)
        if getattr(setn, "typename", "") != "dataset-extended":
            continue
        try:
            out[name] = _summary(setn.getData(doc))  # noqa: F821 (doc: given by the caller)
        except Exception as exc:
            out[name] = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    return out


def _curve(widget, data):
    """A fit's function on 1001 points across the range it was fitted over: the straight
    line's slope, a peak's top (argmax, ymax) and full width at half height above the curve's
    lowest point in that range."""
    import numpy as _np

    s = widget.settings
    xs = data.get("xData") or {}
    lo = s.fitMin if s.fitMin != "Auto" else xs.get("min")
    hi = s.fitMax if s.fitMax != "Auto" else xs.get("max")
    if lo is None or hi is None or not hi > lo:
        return None
    compiled = doc.evaluate.compileCheckedExpression(s.function)  # noqa: F821
    if compiled is None:
        return None
    grid = _np.linspace(float(lo), float(hi), 1001)
    env = widget.initEnviron()
    env[s.variable] = grid
    y = _np.asarray(eval(compiled, env) + grid * 0.0, dtype=float)
    if not _np.all(_np.isfinite(y)):
        return None
    top = int(_np.argmax(y))
    half = (y[top] + y.min()) / 2
    above = grid[y >= half]
    return {"lo": float(lo), "hi": float(hi), "slope": float((y[-1] - y[0]) / (hi - lo)),
            "argmax": float(grid[top]), "ymax": float(y[top]),
            "fwhm": float(above.max() - above.min()) if len(above) else None}


def _widgets(root):
    out, todo = {}, [root]
    while todo and len(out) < _LIMIT_WIDGETS:
        w = todo.pop(0)
        sets = _settings(w.settings)
        if w.typename == "document":
            sets = {k: v for k, v in sets.items() if not k.startswith("StyleSheet/")}
        info = {"type": w.typename, "name": w.name, "settings": sets, "data": _data(w)}
        if w.typename == "fit":
            try:
                info["curve"] = _curve(w, info["data"])
            except Exception as exc:
                info["curve"] = None
                info["curve_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
        out[w.path] = info
        todo.extend(w.children)
    return out


def _datasets(d):
    out = {}
    for name in sorted(d.data)[:_LIMIT_DATASETS]:
        ds = d.data[name]
        info = _summary(ds) or {}
        info["kind"] = type(ds).__name__
        linked = getattr(ds, "linked", None)
        info["linked"] = getattr(linked, "filename", None) if linked is not None else None
        expr = getattr(ds, "expr", None)
        info["expr"] = expr if isinstance(expr, str) else None
        out[name] = info
    return out


__out__ = {"filename": doc.filename or "",  # noqa: F821
           "modified": bool(doc.isModified()),  # noqa: F821
           "widgets": _widgets(doc.basewidget),  # noqa: F821
           "datasets": _datasets(doc)}  # noqa: F821
