"""A small OPTIMADE v1 server over one JSON file of structures (standard library only).

Run inside the agent zone by the sandbox's ``/usr/bin/python3``::

    python3 optimade_server.py DB.json [--host 127.0.0.1] [--port 8000]

Endpoints (JSON:API documents as the OPTIMADE v1.1 specification describes them):
``/versions``, ``/v1/info``, ``/v1/info/structures``, ``/v1/structures`` (query parameters
``filter``, ``page_limit``, ``page_offset``, ``response_fields``, ``sort``) and
``/v1/structures/<id>``. Errors come back as OPTIMADE error documents (400 for a filter this
server does not understand, 403 for a page limit over the maximum, 404 for an unknown entry).

The filter language subset: comparisons ``= != < <= > >=`` of a property with a number or a
string (either side), ``CONTAINS``, ``STARTS [WITH]``, ``ENDS [WITH]`` on strings; on lists
``HAS``, ``HAS ALL``, ``HAS ANY``, ``HAS ONLY`` and ``LENGTH [op] n``; ``IS KNOWN`` and
``IS UNKNOWN``; ``AND``, ``OR``, ``NOT`` and parentheses. Keywords are upper case, property names
lower case, as the specification requires. A comparison with a null value is false.
Properties of other providers (``_xyz_...``) are unknown: every comparison on them is false.
Not supported (400): nested properties (``a.b``), relationships, operators inside ``HAS``.
"""

from __future__ import annotations

import json
import re
import sys
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

API_VERSION = "1.1.0"
DEFAULT_PAGE_LIMIT = 20
MAX_PAGE_LIMIT = 100
PREFIX = "_sag_"

#: Every property of a structure: type, unit, description, sortable.
PROPERTIES = {
    "id": ("string", None, "The entry's id, e.g. sag-12.", True),
    "type": ("string", None, "Always 'structures'.", True),
    "last_modified": ("timestamp", None, "When the entry last changed.", True),
    "elements": ("list", None, "Element symbols in alphabetical order.", False),
    "nelements": ("integer", None, "Number of different elements.", True),
    "elements_ratios": ("list", None, "Atom fraction of each element of 'elements'.", False),
    "chemical_formula_reduced": (
        "string", None, "Reduced formula, elements in alphabetical order (e.g. 'ClNa', "
        "'O3SrTi').", True),
    "chemical_formula_descriptive": ("string", None, "Formula as a chemist writes it "
                                     "(e.g. 'NaCl', 'SrTiO3').", True),
    "chemical_formula_anonymous": ("string", None, "Anonymous formula (e.g. 'A3BC').", True),
    "dimension_types": ("list", None, "Periodicity along each lattice vector.", False),
    "nperiodic_dimensions": ("integer", None, "Number of periodic dimensions.", True),
    "lattice_vectors": ("list", "Å", "The three lattice vectors (rows) in Cartesian "
                        "coordinates.", False),
    "cartesian_site_positions": ("list", "Å", "Cartesian position of each site.", False),
    "nsites": ("integer", None, "Number of sites in the cell.", True),
    "species_at_sites": ("list", None, "The species name of each site.", False),
    "species": ("list", None, "The species (name, chemical_symbols, concentration).", False),
    "structure_features": ("list", None, "Structure features (none here).", False),
    "_sag_formation_energy_per_atom": (
        "float", "eV/atom", "Formation energy per atom from sciagent-gym's documented toy model "
        "(electronegativity differences, structure preference, strain, noise).", True),
    "_sag_band_gap": ("float", "eV", "Band gap. SYNTHETIC: a toy model, not a calculation.",
                      True),
    "_sag_band_gap_synthetic": ("boolean", None, "True: the band gap is synthetic.", True),
    "_sag_space_group_symbol": ("string", None, "Hermann-Mauguin symbol as spglib reports it "
                                "(null: not analysed).", True),
    "_sag_space_group_number": ("integer", None, "International space group number "
                                "(null: not analysed).", True),
    "_sag_density": ("float", "g/cm^3", "Density (null: not analysed).", True),
    "_sag_structure_type": ("string", None, "Structure type, e.g. 'rocksalt' (null: not "
                            "analysed).", True),
}
KEYWORDS = {"AND", "OR", "NOT", "HAS", "ALL", "ANY", "ONLY", "LENGTH", "IS", "KNOWN", "UNKNOWN",
            "CONTAINS", "STARTS", "ENDS", "WITH"}
OPS = ("<=", ">=", "!=", "=", "<", ">")


class FilterError(ValueError):
    """A filter this server cannot parse or evaluate (answered with a 400)."""


# -- the filter language -----------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<number>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
  | (?P<op><=|>=|!=|=|<|>)
  | (?P<punct>[(),.])
  | (?P<word>[A-Za-z_][A-Za-z_0-9]*)
""", re.VERBOSE)


def tokenize(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise FilterError(f"unexpected character {text[pos]!r} at position {pos}")
        kind = m.lastgroup
        value = m.group()
        pos = m.end()
        if kind == "ws":
            continue
        if kind == "string":
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        elif kind == "word":
            if value in KEYWORDS:
                kind = "kw"
            elif value.upper() in KEYWORDS:
                raise FilterError(f"keyword {value!r} must be written in upper case "
                                  f"({value.upper()})")
        out.append((kind, value))
    return out


class _Parser:
    """Recursive descent over the tokens; builds nested tuples (the AST)."""

    def __init__(self, text: str) -> None:
        self.tokens = tokenize(text)
        self.i = 0

    def peek(self, offset: int = 0) -> tuple[str, str]:
        j = self.i + offset
        return self.tokens[j] if j < len(self.tokens) else ("end", "")

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        self.i += 1
        return tok

    def accept(self, kind: str, value: str | None = None) -> bool:
        tok = self.peek()
        if tok[0] == kind and (value is None or tok[1] == value):
            self.i += 1
            return True
        return False

    def expect(self, kind: str, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if tok[0] != kind or (value is not None and tok[1] != value):
            want = value or kind
            got = tok[1] or "the end of the filter"
            raise FilterError(f"expected {want} but found {got!r}")
        return self.take()

    def parse(self) -> tuple:
        if not self.tokens:
            raise FilterError("the filter is empty")
        tree = self.expression()
        if self.peek()[0] != "end":
            raise FilterError(f"unexpected {self.peek()[1]!r} after a complete expression")
        return tree

    def expression(self) -> tuple:
        terms = [self.term()]
        while self.accept("kw", "OR"):
            terms.append(self.term())
        return terms[0] if len(terms) == 1 else ("or", terms)

    def term(self) -> tuple:
        factors = [self.factor()]
        while self.accept("kw", "AND"):
            factors.append(self.factor())
        return factors[0] if len(factors) == 1 else ("and", factors)

    def factor(self) -> tuple:
        if self.accept("kw", "NOT"):
            return ("not", self.factor())
        if self.accept("punct", "("):
            inner = self.expression()
            self.expect("punct", ")")
            return inner
        return self.comparison()

    def value(self) -> float | str:
        kind, text = self.take()
        if kind == "string":
            return text
        if kind == "number":
            return float(text) if any(c in text for c in ".eE") else int(text)
        raise FilterError(f"expected a number or a \"string\" but found {text or 'the end'!r}")

    def values(self) -> list:
        out = [self.value()]
        while self.accept("punct", ","):
            out.append(self.value())
        return out

    def prop(self) -> str:
        kind, name = self.take()
        if kind != "word":
            raise FilterError(f"expected a property name but found {name or 'the end'!r}")
        if self.peek() == ("punct", "."):
            raise FilterError(f"nested properties ({name}.…) and relationships are not "
                              "supported by this server")
        if name != name.lower():
            raise FilterError(f"property names are lower case: {name!r}")
        return name

    def comparison(self) -> tuple:
        kind, _ = self.peek()
        if kind in ("string", "number"):  # constant first: 2.5 < _sag_band_gap
            constant = self.value()
            op = self.expect("op")[1]
            name = self.prop()
            flipped = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op, op)
            return ("cmp", name, flipped, constant)
        name = self.prop()
        kind, text = self.peek()
        if kind == "op":
            self.take()
            return ("cmp", name, text, self.value())
        if kind != "kw":
            raise FilterError(f"expected an operator after {name!r} but found "
                              f"{text or 'the end'!r}")
        self.take()
        if text == "HAS":
            if self.peek()[0] == "op":
                raise FilterError("operators inside HAS (HAS < ...) are not supported by this "
                                  "server")
            if self.accept("kw", "ALL"):
                return ("has_all", name, self.values())
            if self.accept("kw", "ANY"):
                return ("has_any", name, self.values())
            if self.accept("kw", "ONLY"):
                return ("has_only", name, self.values())
            return ("has_all", name, [self.value()])
        if text == "LENGTH":
            op = self.take()[1] if self.peek()[0] == "op" else "="
            n = self.value()
            if not isinstance(n, int):
                raise FilterError("LENGTH takes an integer")
            return ("length", name, op, n)
        if text == "IS":
            if self.accept("kw", "KNOWN"):
                return ("known", name, True)
            self.expect("kw", "UNKNOWN")
            return ("known", name, False)
        if text == "CONTAINS":
            return ("str", name, "contains", self._string())
        if text in ("STARTS", "ENDS"):
            self.accept("kw", "WITH")
            return ("str", name, text.lower(), self._string())
        raise FilterError(f"unexpected keyword {text!r} after {name!r}")

    def _string(self) -> str:
        v = self.value()
        if not isinstance(v, str):
            raise FilterError("CONTAINS, STARTS and ENDS take a \"string\"")
        return v


def parse_filter(text: str) -> tuple:
    """The AST of an OPTIMADE filter (raises FilterError)."""
    tree = _Parser(text).parse()
    check_properties(tree)
    return tree


def check_properties(tree: tuple) -> None:
    """Unknown properties without a provider prefix are errors; other providers' are null."""
    if tree[0] in ("and", "or"):
        for t in tree[1]:
            check_properties(t)
        return
    if tree[0] == "not":
        check_properties(tree[1])
        return
    name = tree[1]
    if name in PROPERTIES:
        kind = PROPERTIES[name][0]
        if tree[0] in ("has_all", "has_any", "has_only", "length") and kind != "list":
            raise FilterError(f"{name} is not a list: {tree[0].upper().replace('_', ' ')} "
                              "applies to lists (elements, species_at_sites, ...)")
        if tree[0] in ("cmp", "str") and kind == "list":
            raise FilterError(f"{name} is a list: use HAS, HAS ALL, HAS ANY, HAS ONLY or "
                              "LENGTH")
        return
    if not re.fullmatch(r"_[a-z0-9]+_\w+", name) or name.startswith(PREFIX):
        raise FilterError(f"unknown property {name!r} (see /v1/info/structures)")


def _compare(a, op: str, b) -> bool:
    if a is None:
        return False
    if isinstance(a, bool) or isinstance(b, bool):
        raise FilterError("booleans cannot be compared in a filter")
    if isinstance(a, str) != isinstance(b, str):
        raise FilterError(f"cannot compare {type(a).__name__} {a!r} with "
                          f"{type(b).__name__} {b!r}")
    if op == "=":
        return a == b
    if op == "!=":
        return a != b
    if op == "<":
        return a < b
    if op == "<=":
        return a <= b
    if op == ">":
        return a > b
    return a >= b


def matches(tree: tuple, entry: dict) -> bool:
    """Whether ``entry`` (its attributes and id) satisfies the filter ``tree``."""
    kind = tree[0]
    if kind == "and":
        return all(matches(t, entry) for t in tree[1])
    if kind == "or":
        return any(matches(t, entry) for t in tree[1])
    if kind == "not":
        return not matches(tree[1], entry)
    value = entry.get(tree[1])
    if kind == "known":
        return (value is not None) == tree[2]
    if value is None:
        return False
    if kind == "cmp":
        return _compare(value, tree[2], tree[3])
    if kind == "str":
        if not isinstance(value, str):
            raise FilterError(f"{tree[1]} is not a string")
        return {"contains": tree[3] in value, "starts": value.startswith(tree[3]),
                "ends": value.endswith(tree[3])}[tree[2]]
    if kind == "length":
        return _compare(len(value), tree[2], tree[3])
    items = set(value)
    wanted = set(tree[2])
    if kind == "has_all":
        return wanted <= items
    if kind == "has_any":
        return bool(wanted & items)
    return items <= wanted  # has_only


# -- responses -------------------------------------------------------------------------------

class ApiError(Exception):
    def __init__(self, status: int, title: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.title, self.detail = status, title, detail


class Database:
    def __init__(self, path: str) -> None:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        self.entries = data["entries"]
        self.by_id = {e["id"]: e for e in self.entries}
        self.provider = data.get("provider", {"name": "sciagent-gym", "prefix": "sag"})


def _meta(base: str, query: str, db: Database, returned: int | None = None,
          more: bool = False, warnings: list | None = None) -> dict:
    meta = {"query": {"representation": query}, "api_version": API_VERSION,
            "more_data_available": more, "data_available": len(db.entries),
            "time_stamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "provider": db.provider, "schema": None}
    if returned is not None:
        meta["data_returned"] = returned
    if warnings:
        meta["warnings"] = [{"type": "warning", "detail": w} for w in warnings]
    return meta


def resource(entry: dict, fields: list | None, base: str) -> dict:
    attributes = {k: v for k, v in entry.items() if k not in ("id", "type")
                  and (fields is None or k in fields)}
    return {"id": entry["id"], "type": "structures", "attributes": attributes,
            "links": {"self": f"{base}/v1/structures/{entry['id']}"}}


def _int_param(params: dict, name: str, default: int) -> int:
    raw = params.get(name, [None])[-1]
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, "Bad Request", f"{name} must be an integer, not {raw!r}") from None
    if value < 0:
        raise ApiError(400, "Bad Request", f"{name} must not be negative")
    return value


def _sort_key(spec: str):
    keys = []
    for part in [p.strip() for p in spec.split(",") if p.strip()]:
        desc = part.startswith("-")
        name = part.lstrip("-+")
        if name not in PROPERTIES or not PROPERTIES[name][3]:
            raise ApiError(400, "Bad Request", f"cannot sort on {name!r}: not a sortable "
                           "property (lists are not sortable)")
        keys.append((name, desc))
    return keys


def _sorted(entries: list, keys: list) -> list:
    out = list(entries)
    for name, desc in reversed(keys):
        known = [e for e in out if e.get(name) is not None]
        unknown = [e for e in out if e.get(name) is None]
        known.sort(key=lambda e: e[name], reverse=desc)
        out = known + unknown  # nulls last either way
    return out


STANDARD_PARAMS = {"filter", "page_limit", "page_offset", "response_fields", "sort",
                   "response_format", "email_address", "include", "api_hint",
                   "page_number", "page_cursor", "page_above", "page_below"}


def list_structures(db: Database, params: dict, base: str, query: str) -> dict:
    warnings = [f"unknown query parameter {k!r} ignored" for k in params
                if k not in STANDARD_PARAMS]
    fmt = params.get("response_format", ["json"])[-1]
    if fmt != "json":
        raise ApiError(400, "Bad Request", f"response_format {fmt!r} is not supported (json)")
    limit = _int_param(params, "page_limit", DEFAULT_PAGE_LIMIT)
    if limit > MAX_PAGE_LIMIT:
        raise ApiError(403, "Forbidden", f"page_limit {limit} exceeds the maximum of "
                       f"{MAX_PAGE_LIMIT}: page through the results with page_offset")
    offset = _int_param(params, "page_offset", 0)
    text = params.get("filter", [""])[-1].strip()
    try:
        tree = parse_filter(text) if text else None
        found = [e for e in db.entries if tree is None or matches(tree, e)]
    except FilterError as exc:
        raise ApiError(400, "Bad Request", f"filter {text!r}: {exc}") from None
    if "sort" in params and params["sort"][-1].strip():
        found = _sorted(found, _sort_key(params["sort"][-1]))
    fields = _fields(params, warnings)
    page = found[offset:offset + limit]
    more = offset + limit < len(found)
    next_link = None
    if more:
        nxt = {k: v[-1] for k, v in params.items()}
        nxt.update(page_offset=str(offset + limit), page_limit=str(limit))
        next_link = f"{base}/v1/structures?{urllib.parse.urlencode(nxt)}"
    return {"data": [resource(e, fields, base) for e in page],
            "links": {"next": next_link, "base_url": f"{base}/v1"},
            "meta": _meta(base, query, db, len(found), more, warnings)}


def _fields(params: dict, warnings: list) -> list | None:
    if "response_fields" not in params:
        return None
    fields = [f.strip() for f in params["response_fields"][-1].split(",") if f.strip()]
    for f in fields:
        if f not in PROPERTIES:
            warnings.append(f"response field {f!r} is not a property of structures")
    return fields


def info(base: str) -> dict:
    return {"type": "info", "id": "/", "attributes": {
        "api_version": API_VERSION,
        "available_api_versions": [{"url": f"{base}/v1", "version": API_VERSION}],
        "formats": ["json"], "entry_types_by_format": {"json": ["structures"]},
        "available_endpoints": ["info", "structures"], "is_index": False}}


def info_structures() -> dict:
    props = {}
    for name, (kind, unit, description, sortable) in PROPERTIES.items():
        props[name] = {"description": description, "type": kind, "sortable": sortable}
        if unit:
            props[name]["unit"] = unit
    return {"description": "Crystal structures (sciagent-gym's local database).",
            "properties": props, "formats": ["json"],
            "output_fields_by_format": {"json": list(PROPERTIES)}}


def respond(db: Database, path: str, params: dict, base: str, query: str) -> tuple[int, dict]:
    """The status and document for one GET request."""
    try:
        path = path.rstrip("/") or "/"
        if path == "/versions":
            return 200, {"csv": "version\n1\n"}
        if path.startswith("/v1.1"):
            path = "/v1" + path[len("/v1.1"):]
        if path in ("/v1/info", "/v1"):
            return 200, {"data": info(base), "meta": _meta(base, query, db)}
        if path == "/v1/info/structures":
            return 200, {"data": info_structures(), "meta": _meta(base, query, db)}
        if path == "/v1/structures":
            return 200, list_structures(db, params, base, query)
        m = re.fullmatch(r"/v1/structures/([^/]+)", path)
        if m:
            entry_id = urllib.parse.unquote(m.group(1))
            if entry_id not in db.by_id:
                raise ApiError(404, "Not Found", f"no structure with id {entry_id!r}")
            warnings: list = []
            doc = resource(db.by_id[entry_id], _fields(params, warnings), base)
            return 200, {"data": doc, "links": {"base_url": f"{base}/v1"},
                         "meta": _meta(base, query, db, 1, False, warnings)}
        raise ApiError(404, "Not Found", f"no endpoint {path!r} (try /v1/info, "
                       "/v1/info/structures, /v1/structures)")
    except ApiError as exc:
        return exc.status, {"errors": [{"status": str(exc.status), "title": exc.title,
                                        "detail": exc.detail}],
                            "meta": _meta(base, query, db)}


def make_handler(db: Database, base: str):
    class Handler(BaseHTTPRequestHandler):
        server_version = "sag-optimade/1"

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            url = urllib.parse.urlsplit(self.path)
            params = urllib.parse.parse_qs(url.query, keep_blank_values=True)
            query = url.path + (f"?{url.query}" if url.query else "")
            status, doc = respond(db, url.path, params, base, query)
            if "csv" in doc:
                body, ctype = doc["csv"].encode(), "text/csv; header=present"
            else:
                body, ctype = json.dumps(doc).encode(), "application/vnd.api+json"
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt: str, *args) -> None:
            sys.stderr.write(f"{self.log_date_time_string()} {fmt % args}\n")

    return Handler


def main(argv: list[str]) -> int:
    args = list(argv)
    host, port = "127.0.0.1", 8000
    if "--host" in args:
        i = args.index("--host")
        host = args[i + 1]
        del args[i:i + 2]
    if "--port" in args:
        i = args.index("--port")
        port = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 1:
        sys.stderr.write("usage: optimade_server.py DB.json [--host H] [--port P]\n")
        return 2
    db = Database(args[0])
    base = f"http://{host}:{port}"
    server = ThreadingHTTPServer((host, port), make_handler(db, base))
    server.daemon_threads = True
    sys.stderr.write(f"OPTIMADE server with {len(db.entries)} structures at {base}/v1\n")
    sys.stderr.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
