# Runs inside the live Veusz through the state channel (``doc`` at hand) and changes nothing:
# the document as Veusz commands, for a fresh headless Veusz to load in a throwaway sandbox and
# run the state dump on (the dump never runs in the live program, whose console can rebind
# what it calls: issue 32, finding 4). Leaves in ``__out__``:
#   vsz       the document: every dataset with its values inline (numbers as exact literals;
#             links and expressions are not followed again), tags, custom definitions and the
#             widget tree with the read-only settings a fit writes, in Veusz's safe
#             command set
#   filename, modified   read from the document's attributes (no method is called)
#   meta      per dataset {kind, linked, expr}: where its values came from
_NUMERIC_LIMIT = 2_000_000


def _number(value):
    value = float(value)
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def _column(values):
    if values is None:
        return "None"
    return "[" + ", ".join(_number(v) for v in list(values)[:_NUMERIC_LIMIT]) + "]"


def _dataset(buf, name, ds):
    dims, kind = getattr(ds, "dimensions", 0), getattr(ds, "datatype", "")
    if dims == 1 and kind == "numeric" and getattr(ds, "data", None) is not None:
        buf.write("SetData({!r}, {}, symerr={}, negerr={}, poserr={})\n".format(
            name, _column(ds.data), _column(getattr(ds, "serr", None)),
            _column(getattr(ds, "nerr", None)), _column(getattr(ds, "perr", None))))
    elif dims == 1 and kind == "text":
        buf.write(f"SetDataText({name!r}, {[str(v) for v in ds.data]!r})\n")
    else:  # dates, 2D and n-D datasets: Veusz's own text form, from an unlinked copy
        ds.returnCopy().saveToFile(buf, name)


def _readonly(buf, settings, prefix, rrepr):
    """Settings a program writes and Veusz does not save (a fit's chi2, dof, outExpr)."""
    for name in settings.getNames():
        item = settings.get(name)
        if hasattr(item, "getNames"):
            _readonly(buf, item, prefix + name + "/", rrepr)
        elif getattr(item, "readonly", False) and not item.isDefault():
            buf.write(f"Set({prefix + name!r}, {rrepr(item.val)})\n")


def _serialize():
    import io

    buf = io.StringIO()
    buf.write(f"SetCompatLevel({doc.compatlevel})\n")  # noqa: F821 (doc: given by the caller)
    meta = {}
    for name, ds in sorted(doc.data.items()):  # noqa: F821
        _dataset(buf, name, ds)
        linked = getattr(ds, "linked", None)
        expr = getattr(ds, "expr", None)
        meta[name] = {"kind": type(ds).__name__,
                      "linked": getattr(linked, "filename", None) if linked is not None else None,
                      "expr": expr if isinstance(expr, str) else None}
    doc.saveDatasetTags(buf)  # noqa: F821
    doc.evaluate.saveCustomDefinitions(buf)  # noqa: F821
    buf.write(doc.basewidget.getSaveText())  # noqa: F821
    from veusz.utils import rrepr

    todo = [doc.basewidget]  # noqa: F821
    while todo:
        widget = todo.pop(0)
        _readonly(buf, widget.settings, widget.path.rstrip("/") + "/", rrepr)
        todo.extend(widget.children)
    return {"vsz": buf.getvalue(), "filename": doc.filename or "",  # noqa: F821
            "modified": bool(doc.modified), "meta": meta}  # noqa: F821


__out__ = _serialize()
