# ruff: noqa: E401, I001, F821  (the adapter puts in the code and the answer's paths)
import json as _json, os as _os, traceback as _tb
from pymol import cmd as _cmd
try:
    _ns = {"cmd": _cmd, "__name__": "sciagent_request"}
    exec(CODE, _ns)
    _res = {"ok": True, "out": _ns.get("__out__")}
except BaseException:
    _res = {"ok": False, "error": _tb.format_exc()[-2000:]}
with open(PART, "w") as _fh:
    _json.dump(_res, _fh, default=str)
_os.rename(PART, DONE)
