"""Getters of the materials tasks: tolerant key-value results, id lists and CIF files.

Imported by :func:`sciagent_gym.tools.load_tool_getters` as
``sciagent_gym.envs.materials.getters``. Every failure on a missing, oversized or malformed
file is a GetterError (a failed criterion).

``kv_match`` is MatToolBench's tolerant key-value matching: a results file is a JSON object
whose keys are matched to the expected ones case- and separator-insensitively
(``"Space group"``, ``space_group`` and ``spaceGroup`` are one key; aliases may be named),
numbers within stated tolerances (a number written as a string, with or without a unit after
it, counts as that number), strings normalised (case, spaces and underscores), lists compared
in order or as sets.
"""

from __future__ import annotations

import json
import math
import re
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciagent_gym.sdk import (
    GetterError,
    check_json,
    check_lines,
    decode_text,
    existing_file,
    looks_binary,
    pick_key,
    read_bytes,
    register,
)

if TYPE_CHECKING:
    from sciagent_gym.sdk import FinalState

#: Largest results file, id list or CIF read (real ones are a few kilobytes).
MAX_RESULTS_BYTES = 1 << 20
MAX_CIF_BYTES = 2 << 20
#: Largest number of sites a CIF may declare (atom-site rows; the DB's largest cell has 56).
MAX_CIF_SITES = 5000
_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?:\s*[^\d\s].*)?$")
_ID = re.compile(r"(?<![\w-])sag\s*-\s*(\d+)(?![\w-])", re.IGNORECASE)


def norm_key(key: str) -> str:
    """A key as matched: lower case, letters and digits only (``Space group`` ->
    ``spacegroup``)."""
    return re.sub(r"[^0-9a-z]", "", str(key).casefold())


def norm_text(value: str) -> str:
    """A string value as compared: case-folded, without spaces and underscores
    (``P6_3mc`` and ``p 63 mc`` are one symbol; ``-`` and ``/`` stay, they mean something)."""
    return re.sub(r"[\s_]+", "", str(value).casefold())


def as_number(value: Any) -> float | None:
    """A JSON number, or a string that starts with one (``"5.43"``, ``"5.43 g/cm3"``)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str) and len(value) < 100:
        m = _NUMBER.match(value)
        if m:
            number = float(m.group(1))
            return number if math.isfinite(number) else None
    return None


def _same(got: Any, want: Any, abs_tol: float, rel_tol: float, as_set: bool) -> str:
    """"" when ``got`` matches ``want``, else why not."""
    if isinstance(want, bool):
        return "" if got is want else f"{got!r} is not {want!r}"
    if isinstance(want, (int, float)):
        number = as_number(got)
        if number is None:
            return f"{str(got)[:40]!r} is not a number"
        if abs(number - want) <= max(abs_tol, rel_tol * abs(want)):
            return ""
        return f"{number:g} is not {want:g} (within {max(abs_tol, rel_tol * abs(want)):g})"
    if isinstance(want, str):
        if not isinstance(got, (str, int, float)) or isinstance(got, bool):
            return f"{str(got)[:40]!r} is not text"
        return "" if norm_text(str(got)) == norm_text(want) else f"{str(got)[:40]!r} is not " \
                                                                  f"{want!r}"
    if isinstance(want, list):
        if not isinstance(got, list):
            return f"{str(got)[:40]!r} is not a list"
        if len(got) != len(want):
            return f"{len(got)} items, not {len(want)}"
        if not as_set:
            for i, (g, w) in enumerate(zip(got, want, strict=True)):
                why = _same(g, w, abs_tol, rel_tol, as_set)
                if why:
                    return f"item {i + 1}: {why}"
            return ""
        left = list(got)
        for w in want:
            hit = next((j for j, g in enumerate(left) if not _same(g, w, abs_tol, rel_tol,
                                                                    as_set)), None)
            if hit is None:
                return f"no item matches {w!r}"
            left.pop(hit)
        return ""
    if want is None:
        return "" if got is None else f"{str(got)[:40]!r} is not null"
    raise GetterError(f"kv_match: cannot compare with an expected {type(want).__name__}")


def read_object(state: FinalState, path: str) -> dict[str, Any]:
    """The JSON object in ``path`` (size-limited); nested objects are flattened one level
    deep into ``outer.inner`` keys as well as kept."""
    data = read_bytes(state, path, MAX_RESULTS_BYTES)
    check_json(data, path)
    try:
        doc = json.loads(decode_text(data))
    except (ValueError, RecursionError) as exc:
        raise GetterError(f"{path}: not valid JSON: {str(exc)[:120]}") from None
    if not isinstance(doc, dict):
        raise GetterError(f"{path}: a JSON object {{\"key\": value, ...}} is expected, not a "
                          f"{type(doc).__name__}")
    return doc


@register("kv_match")
def kv_match(state: FinalState, path: str, expected: dict[str, Any], abs_tol: float = 0.0,
             rel_tol: float = 0.0, tolerances: dict[str, Any] | None = None,
             aliases: dict[str, list[str]] | None = None, keys: list[str] | None = None,
             sets: bool = True, key: str | None = None) -> Any:
    """Tolerant key-value matching of the JSON object in ``path`` against ``expected``.

    ``tolerances`` {key: number (absolute) or {"abs", "rel"}} override ``abs_tol``/``rel_tol``
    per key; ``aliases`` {key: [other names]}; ``keys`` restricts the comparison to some
    expected keys (the others neither count nor are reported as extra); ``sets``: lists are
    compared as multisets (else in order). Keys of nested objects count too (a file
    ``{"results": {"density": 5.1}}`` has the key ``density``).

    Returns (or, with ``key``, one item of) ``{"ok": every compared key matches,
    "fraction": matched / compared, "matched": [...], "missing": [...], "wrong": {key: why},
    "extra": [file keys matching no expected key], "ambiguous": [...], "same_keys": every
    compared key given and no extra one, whatever the values}``. ``same_keys`` scores a
    listing's membership apart from its values: which entries a query found is part of the
    work before their numbers are.
    """
    if not isinstance(expected, dict) or not expected:
        raise GetterError("kv_match: expected must be a non-empty object")
    doc = read_object(state, path)
    found: dict[str, list[Any]] = {}
    for k, v in doc.items():
        found.setdefault(norm_key(k), []).append(v)
        if isinstance(v, dict):
            for k2, v2 in v.items():
                found.setdefault(norm_key(k2), []).append(v2)
    names = {k: {norm_key(k), *(norm_key(a) for a in (aliases or {}).get(k, []))}
             for k in expected}
    compared = [k for k in expected if keys is None or k in keys]
    result: dict[str, Any] = {"matched": [], "missing": [], "wrong": {}, "ambiguous": []}
    for k in compared:
        values = [v for n in names[k] for v in found.get(n, [])]
        if not values:
            result["missing"].append(k)
            continue
        tol = (tolerances or {}).get(k, {})
        if isinstance(tol, (int, float)):
            tol = {"abs": tol}
        why = {_same(v, expected[k], float(tol.get("abs", abs_tol)),
                     float(tol.get("rel", rel_tol)), sets) for v in values}
        if len(values) > 1 and len({json.dumps(v, sort_keys=True) for v in values}) > 1:
            result["ambiguous"].append(k)
            result["wrong"][k] = "given more than once with different values"
        elif why == {""}:
            result["matched"].append(k)
        else:
            result["wrong"][k] = sorted(why - {""})[0]
    known = set().union(*names.values())
    top = {norm_key(k) for k in doc}
    result["extra"] = sorted(n for n in top if n not in known
                             and not isinstance(doc.get(_original(doc, n)), dict))
    if keys is not None:
        result["extra"] = []
    result["fraction"] = len(result["matched"]) / len(compared) if compared else 0.0
    result["ok"] = bool(compared) and len(result["matched"]) == len(compared)
    result["same_keys"] = bool(compared) and not result["missing"] and not result["extra"]
    return pick_key(path, result, key)


def _original(doc: dict[str, Any], normalised: str) -> str:
    return next(k for k in doc if norm_key(k) == normalised)


def ids_in(text: str) -> list[str]:
    """The entry ids (``sag-<n>``) ``text`` names, in order (any case; ``SAG-007`` is
    ``sag-7``)."""
    return [f"sag-{int(m.group(1))}" for m in _ID.finditer(text)]


@register("id_list")
def id_list(state: FinalState, path: str, count: bool = False) -> list[str] | int:
    """The entry ids a text or JSON file names, in order (one per line, comma separated or a
    JSON list all read the same); with ``count``, how many."""
    data = read_bytes(state, path, MAX_RESULTS_BYTES)
    if looks_binary(data):
        raise GetterError(f"{path}: binary data, not a text file")
    text = decode_text(data)
    check_lines(text, path)
    ids = ids_in(text)
    return len(ids) if count else ids


@register("answer_ids")
def answer_ids(state: FinalState, count: bool = False) -> list[str] | int:
    """The entry ids the answer names, in order (``answer("sag-12")``); with ``count``, how
    many."""
    if not (state.answer or "").strip():
        raise GetterError("no answer was given (use the answer action, e.g. answer(\"sag-12\"))")
    ids = ids_in(state.answer)
    return len(ids) if count else ids


#: Element symbols, for :func:`answer_pair`.
_ELEMENTS = frozenset("""H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni
Cu Zn Ga Ge As Se Br Kr Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm
Sm Eu Gd Tb Dy Ho Er Tm Yb Lu Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U Np Pu
""".split())


def _labelled(text: str, names: list[str]) -> re.Match[str] | None:
    """Where ``name = `` (or ``name:``) of the first of ``names`` the answer writes ends."""
    for name in names:
        m = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])\s*[:=]\s*", text, re.IGNORECASE)
        if m:
            return m
    return None


@register("answer_part")
def answer_part(state: FinalState, label: str, aliases: list[str] | None = None,
                unit: str | None = None) -> float:
    """One labelled part of an answer that has several (``answer("2theta = 27.45, d = 3.246
    Å")``): the number after ``label =`` (or an alias), converted to ``unit``. An answer that
    names no such label is read as one value (:func:`answer_number`: several values are
    ambiguous and fail), so a one-value answer counts for the part it is right about and no
    other."""
    from dataclasses import replace

    from sciagent_gym.sdk import answer_number

    text = (state.answer or "").strip()
    if not text:
        raise GetterError("no answer was given (use the answer action)")
    state = replace(state, answer=_ID.sub(" ", text))  # an id's digits are no value
    text = state.answer
    names = [label, *(aliases or [])]
    if _labelled(text, names) is None:
        return answer_number(state, unit=unit)
    for name in names:
        if _labelled(text, [name]) is not None:
            return answer_number(state, unit=unit, label=name)
    raise GetterError(f"answer {text[:80]!r} has no '{label} = value'")


@register("answer_pair")
def answer_pair(state: FinalState, label: str | None = None) -> str:
    """The two element symbols the answer names (after ``label =`` up to the next comma,
    semicolon or line end when the answer writes that label, else in the whole answer), in
    alphabetical order joined by ``-`` (``"Na-Cl"``, ``"Cl and Na"`` and ``"NaCl"`` all read
    ``Cl-Na``); any other number of symbols fails."""
    text = (state.answer or "").strip()
    if not text:
        raise GetterError("no answer was given (use the answer action)")
    m = _labelled(text, [label]) if label else None
    part = re.split(r"[,;\n]", text[m.end():])[0] if m else text
    symbols = []
    for word in re.findall(r"[A-Za-z]+", part):  # "Na-Cl", "Na and Cl", "NaCl"
        pieces = re.findall(r"[A-Z][a-z]?", word)
        if "".join(pieces) == word and all(p in _ELEMENTS for p in pieces):
            symbols += pieces
    if len(symbols) != 2:
        raise GetterError(f"answer {text[:80]!r}: {len(symbols)} element symbols "
                          f"({', '.join(symbols[:6]) or 'none'}) where a pair was expected")
    return "-".join(sorted(symbols))


@register("json_keys")
def json_keys(state: FinalState, path: str, count: bool = False) -> list[str] | int:
    """The keys of the JSON object in ``path`` as :func:`kv_match` matches them (lower case,
    letters and digits only), nested objects' keys included; with ``count``, how many."""
    doc = read_object(state, path)
    keys = [norm_key(k) for k in doc]
    keys += [norm_key(k2) for v in doc.values() if isinstance(v, dict) for k2 in v]
    return len(keys) if count else keys


# -- CIF files --------------------------------------------------------------------------------

SYSTEM_PYTHON = "/usr/bin/python3"
INSIDE_CIF = "/input/structure.cif"
#: Read in a throwaway sandbox by the system pymatgen (Debian's): the marker comes on stdin.
CIF_READER = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
mark = sys.stdin.readline().strip()
def answer(out):
    print(mark + json.dumps(out), flush=True)
try:
    from pymatgen.io.cif import CifParser
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer
    text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
    structures = CifParser.from_string(text).get_structures(primitive=False)
    if not structures:
        raise ValueError("no structure in the file")
    s = structures[0]
    if len(s) > int(sys.argv[2]):
        raise ValueError("more than %s sites" % sys.argv[2])
    comp = s.composition
    lat = s.lattice
    try:
        sg = SpacegroupAnalyzer(s, symprec=0.01).get_space_group_number()
    except Exception:
        sg = None
    dists = s.distance_matrix
    nn = min(dists[i][j] for i in range(len(s)) for j in range(len(s)) if i != j) \
        if len(s) > 1 else None
    answer({"composition": {str(el): int(round(n)) for el, n in comp.items()},
            "nsites": len(s), "a": lat.a, "b": lat.b, "c": lat.c, "alpha": lat.alpha,
            "beta": lat.beta, "gamma": lat.gamma, "volume": lat.volume,
            "lengths": sorted([lat.a, lat.b, lat.c]), "density": float(s.density),
            "space_group_number": sg, "ordered": bool(s.is_ordered)})
except Exception as exc:
    answer({"error": "%s: %s" % (type(exc).__name__, str(exc)[:300])})
"""


def read_cif(path: Path, label: str, timeout: float = 120.0) -> dict[str, Any]:
    """What pymatgen (Debian's, in a throwaway sandbox) reads from an agent's CIF file."""
    from sciagent_gym.sdk import SandboxError, run_sandboxed

    marker = secrets.token_hex(16)
    try:
        res = run_sandboxed([SYSTEM_PYTHON, "-I", "-c", CIF_READER, INSIDE_CIF,
                             str(MAX_CIF_SITES)], files={INSIDE_CIF: path},
                            stdin=f"{marker}\n".encode(), timeout=timeout, max_output=1 << 20)
    except (SandboxError, OSError) as exc:
        raise GetterError(f"{label}: the CIF reader did not run: {exc}") from None
    if res.timed_out:
        raise GetterError(f"{label}: the CIF reader did not finish within {timeout:g} s")
    for line in reversed(res.output.splitlines()):
        if line.startswith(marker):
            try:
                out = json.loads(line[len(marker):])
            except ValueError:
                break
            if "error" in out:
                raise GetterError(f"{label}: not a readable CIF: {out['error']}")
            return out
    raise GetterError(f"{label}: the CIF reader gave no answer (exit {res.returncode})")


@register("cif_structure")
def cif_structure(state: FinalState, path: str, key: str | None = None) -> Any:
    """A CIF file as pymatgen reads it: composition {element: atoms in the cell}, nsites,
    a, b, c, alpha, beta, gamma, volume, lengths (a, b, c sorted), density, space_group_number
    (SpacegroupAnalyzer, symprec 0.01), ordered."""
    p = existing_file(state, path)
    data = read_bytes(state, path, MAX_CIF_BYTES)
    if not data.strip():
        raise GetterError(f"{path}: empty file")
    if looks_binary(data):
        raise GetterError(f"{path}: binary data, not a CIF text file")
    text = decode_text(data)
    check_lines(text, path)
    if "_cell_length_a" not in text:
        raise GetterError(f"{path}: no _cell_length_a: not a CIF file")
    return pick_key(path, read_cif(p, path), key)
