"""Per-variant structure databases: what one seed of a task stages for the OPTIMADE server.

A variant is derived from the cached templates of :mod:`.db` (never rebuilt: a few hundredths
of a second), deterministically from its seed:

- **which compounds**: each core compound (database v1's formulas) with probability
  ``core`` ~ U(:data:`CORE_KEEP`), each reserve compound (substitutions and ordered solid
  solutions) with probability ``reserve`` ~ U(:data:`RESERVE_KEEP`); of a held compound each
  polymorph with probability ``poly`` ~ U(:data:`POLYMORPH_KEEP`) (at least two of a compound
  that has two), at least :data:`MIN_ENTRIES` entries in all;
- **toy values**: every entry's formation energy and band gap get fresh noise (the models of
  :mod:`.toy_models`, noise N(0, :data:`ENERGY_NOISE`) and N(0, :data:`GAP_NOISE`)), a fresh date;
- **analysis**: each entry is unanalysed (space group, density and structure type null) with
  probability ``unanalysed`` ~ U(:data:`UNANALYSED`);
- **ids**: a seeded shuffle, ``sag-1`` ... ``sag-N``.

The structures themselves (cell, sites) are the templates', real crystallography where the
templates are. A task names what it needs and the variant provides it: ``formulas`` are held
with all their polymorphs, ``pristine`` ids (``sag-9``) hold the pristine database's entry of
that id, and :meth:`Variant.place` moves a seeded entry of a kind to an id the instruction
names (an unanalysed entry, a cubic one...). Gold values are computed from the variant's
entries, which are exactly what :meth:`Variant.write` stages.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.materials import db
from sciagent_gym.envs.materials.template import LAST_MODIFIED
from sciagent_gym.envs.materials.toy_models import toy_gap

#: The fewest entries of a variant: ids ``sag-1`` ... ``sag-MIN_ENTRIES`` always exist.
MIN_ENTRIES = 400
#: Ranges of the per-variant shares (each drawn uniformly per variant).
CORE_KEEP = (0.7, 1.0)
POLYMORPH_KEEP = (0.7, 1.0)
RESERVE_KEEP = (0.1, 1.0)
UNANALYSED = (0.05, 0.6)
#: Standard deviations of the toy values' noise (eV/atom, eV), as :mod:`.db` draws them
#: (:mod:`.toy_models`).
ENERGY_NOISE = 0.01
GAP_NOISE = 0.15


class NoFit(ValueError):
    """The variant has nothing that fits a request (a placement finds no candidate)."""


@dataclass(frozen=True)
class _Index:
    compounds: tuple[tuple[str, bool, tuple[int, ...]], ...]  # formula, core?, template indices
    pristine: dict[str, int]  # pristine id -> template index


@functools.lru_cache(maxsize=1)
def _index() -> _Index:
    groups: dict[str, list[int]] = {}
    core: dict[str, bool] = {}
    pristine = {}
    for i, t in enumerate(db.templates()):
        formula = t["entry"]["chemical_formula_descriptive"]
        groups.setdefault(formula, []).append(i)
        is_core = t["pristine"] is not None
        if core.setdefault(formula, is_core) != is_core:
            raise ValueError(f"{formula}: both a core and a reserve compound")
        if is_core:
            pristine[f"sag-{t['pristine']}"] = i
    return _Index(tuple((f, core[f], tuple(m)) for f, m in groups.items()), pristine)


def compounds() -> dict[str, bool]:
    """Every compound (descriptive formula) the templates hold -> whether it is a core one."""
    return {f: is_core for f, is_core, _ in _index().compounds}


@dataclass
class Variant:
    """One seed's database: its entries by id (what is staged) and, host-side only, the
    template each id comes from."""

    seed: int
    knobs: dict[str, float]
    entries_by_id: dict[str, dict[str, Any]]
    source: dict[str, int]  # id -> template index
    fixed: set[str] = field(default_factory=set)  # ids a request holds in place
    rng: np.random.Generator = field(default_factory=np.random.default_rng)

    @property
    def entries(self) -> list[dict[str, Any]]:
        """The entries in id order (``sag-1`` first), as the server lists them."""
        return sorted(self.entries_by_id.values(), key=lambda e: int(e["id"][4:]))

    def by_id(self) -> dict[str, dict[str, Any]]:
        return self.entries_by_id

    def entry(self, entry_id: str) -> dict[str, Any]:
        found = self.entries_by_id.get(entry_id)
        if found is None:
            raise ValueError(f"no entry {entry_id!r} in this variant ({len(self)} entries)")
        return found

    def __len__(self) -> int:
        return len(self.entries_by_id)

    def template(self, entry_id: str) -> dict[str, Any]:
        """The template an entry comes from (host-side: its key, the full analysis, the
        cations and anions)."""
        return db.templates()[self.source[entry_id]]

    def truth(self, entry_id: str) -> dict[str, Any]:
        """The entry fully analysed (what an unanalysed entry's null fields would say)."""
        return {**self.template(entry_id)["entry"], **self.entry(entry_id),
                **{k: self.template(entry_id)["entry"][k] for k in db.ANALYSIS_FIELDS}}

    def structure_type(self, entry_id: str) -> str:
        return self.template(entry_id)["entry"]["_sag_structure_type"]

    @staticmethod
    def analysed(entry: dict[str, Any]) -> bool:
        return entry["_sag_space_group_number"] is not None

    def polymorphs(self, formula: str) -> list[dict[str, Any]]:
        """Entries whose descriptive (chemist's) formula is ``formula``, lowest energy first."""
        found = [e for e in self.entries_by_id.values()
                 if e["chemical_formula_descriptive"] == formula]
        return sorted(found, key=lambda e: (e["_sag_formation_energy_per_atom"],
                                            int(e["id"][4:])))

    # -- requests ----------------------------------------------------------------------------

    def swap(self, a: str, b: str) -> None:
        """Exchange the entries of ids ``a`` and ``b``."""
        if a == b:
            return
        ea, eb = self.entries_by_id[a], self.entries_by_id[b]
        self.entries_by_id[a], self.entries_by_id[b] = {**eb, "id": a}, {**ea, "id": b}
        self.source[a], self.source[b] = self.source[b], self.source[a]

    def place(self, entry_id: str, fits: Callable[[dict[str, Any], dict[str, Any]], bool],
              group: Callable[[dict[str, Any], dict[str, Any]], Any] | None = None
              ) -> dict[str, Any]:
        """Move a seeded entry for which ``fits(entry, template)`` holds to ``entry_id`` (an id
        the instruction names) and hold it there; returns it. With ``group``, a seeded group
        of the fitting entries (``group(entry, template)``) is chosen first, each as likely."""
        if entry_id not in self.entries_by_id:
            raise NoFit(f"no id {entry_id!r} in this variant ({len(self)} entries)")
        if entry_id in self.fixed:
            raise NoFit(f"{entry_id} is already held for another request")
        candidates = sorted((i for i, e in self.entries_by_id.items()
                             if i not in self.fixed and fits(e, self.template(i))),
                            key=lambda i: int(i[4:]))
        if group is not None:
            groups: dict[Any, list[str]] = {}
            for i in candidates:
                groups.setdefault(group(self.entries_by_id[i], self.template(i)), []).append(i)
            keys = sorted(groups, key=str)
            candidates = groups[keys[int(self.rng.integers(len(keys)))]] if keys else []
        if not candidates:
            raise NoFit(f"no entry fits the request for {entry_id}")
        self.swap(entry_id, candidates[int(self.rng.integers(len(candidates)))])
        self.fixed.add(entry_id)
        return self.entries_by_id[entry_id]

    def set_analysed(self, entry_id: str, analysed: bool) -> None:
        """Mark an entry analysed (its template's analysis shown) or unanalysed (nulls)."""
        tpl = self.template(entry_id)["entry"]
        e = self.entries_by_id[entry_id]
        e.update({k: tpl[k] if analysed else None for k in db.ANALYSIS_FIELDS})

    def redraw_energies(self, entry_ids: Iterable[str]) -> None:
        """Draw these entries' energy noise again (a request that wants them apart)."""
        for i in entry_ids:
            model = self.template(i)["energy_model"]
            self.entries_by_id[i]["_sag_formation_energy_per_atom"] = round(
                model + float(self.rng.normal(0, ENERGY_NOISE)), 4)

    def redraw_gaps(self, entry_ids: Iterable[str]) -> None:
        """Draw these entries' band-gap noise again."""
        for i in entry_ids:
            t = self.template(i)
            self.entries_by_id[i]["_sag_band_gap"] = toy_gap(
                t["gap_base"], t["open_d"], float(self.rng.normal(0, GAP_NOISE)))

    # -- staging -----------------------------------------------------------------------------

    def document(self) -> dict[str, Any]:
        """The database file the OPTIMADE server reads."""
        return {"version": db.DB_VERSION, "provider": db.PROVIDER, "entries": self.entries}

    def text(self) -> str:
        """:meth:`document` as compact JSON, composed from each template's fields serialised
        once (:func:`_static`) and the entry's own values (a few milliseconds)."""
        head = json.dumps({"version": db.DB_VERSION, "provider": db.PROVIDER},
                          separators=(",", ":"))[:-1]
        parts = []
        for e in self.entries:
            own = ",".join(f'"{k}":{_value(e[k])}' for k in _DYNAMIC)
            parts.append(f"{{{own},{_static(self.source[e['id']])}}}")
        return f'{head},"entries":[{",".join(parts)}]}}'

    def write(self, path: Path) -> None:
        """Stage the database where the server reads it."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.text())


#: The fields a variant sets per entry (the rest is its template's).
_DYNAMIC = ("id", "_sag_formation_energy_per_atom", "_sag_band_gap", "last_modified",
            *db.ANALYSIS_FIELDS)


def _value(v: Any) -> str:
    if isinstance(v, float):
        return repr(v)
    return json.dumps(v)


@functools.cache
def _static(index: int) -> str:
    """A template's entry fields but :data:`_DYNAMIC`, as JSON members (no braces)."""
    e = db.templates()[index]["entry"]
    return json.dumps({k: v for k, v in e.items() if k not in _DYNAMIC},
                      separators=(",", ":"))[1:-1]


def build(seed: int, formulas: Iterable[str] = (), pristine: Iterable[str] = ()) -> Variant:
    """The variant of ``seed`` (module docstring); ``formulas`` are held with every polymorph,
    ``pristine`` ids hold the pristine database's entry of that id."""
    templates = db.templates()
    index = _index()
    formulas = set(formulas)
    pristine = list(dict.fromkeys(pristine))
    rng = np.random.default_rng([db.SEED, 2, int(seed)])
    knobs = {"core": float(rng.uniform(*CORE_KEEP)), "poly": float(rng.uniform(*POLYMORPH_KEEP)),
             "reserve": float(rng.uniform(*RESERVE_KEEP)),
             "unanalysed": float(rng.uniform(*UNANALYSED))}
    held = rng.random(len(index.compounds))
    keep: list[int] = []
    left: list[tuple[str, bool, tuple[int, ...]]] = []
    for (formula, is_core, members), h in zip(index.compounds, held, strict=True):
        draws = rng.random(len(members))
        if formula in formulas:
            keep += members
            continue
        if h >= (knobs["core"] if is_core else knobs["reserve"]):
            left.append((formula, is_core, members))
            continue
        chosen = [m for m, d in zip(members, draws, strict=True) if d < knobs["poly"]]
        need = min(2, len(members))
        if len(chosen) < need:
            chosen = [members[j] for j in np.argsort(draws)[:need]]
        keep += chosen
    missing = [f for f in formulas if not any(f == c[0] for c in index.compounds)]
    if missing:
        raise ValueError(f"no compound {missing[0]!r} in the structure database")
    for pid in pristine:
        if pid not in index.pristine:
            raise ValueError(f"no entry {pid!r} in the pristine structure database")
        keep.append(index.pristine[pid])
    for j in rng.permutation(len(left)):  # too few: hold more reserve compounds
        if len(set(keep)) >= MIN_ENTRIES:
            break
        if not left[j][1]:
            keep += left[j][2]
    chosen_idx = sorted(set(keep))
    n = len(chosen_idx)
    energy_noise = rng.normal(0, ENERGY_NOISE, n)
    gap_noise = rng.normal(0, GAP_NOISE, n)
    analysed = rng.random(n) >= knobs["unanalysed"]
    days, hours = rng.integers(1, 29, n), rng.integers(0, 24, n)
    ids = rng.permutation(n) + 1
    by_id: dict[str, dict[str, Any]] = {}
    source: dict[str, int] = {}
    for k, i in enumerate(chosen_idx):
        t = templates[i]
        entry_id = f"sag-{int(ids[k])}"
        e = db.public(t["entry"], entry_id, bool(analysed[k]))
        e["_sag_formation_energy_per_atom"] = round(t["energy_model"] + float(energy_noise[k]),
                                                    4)
        e["_sag_band_gap"] = toy_gap(t["gap_base"], t["open_d"], float(gap_noise[k]))
        e["last_modified"] = LAST_MODIFIED.format(day=int(days[k]), hour=int(hours[k]))
        by_id[entry_id] = e
        source[entry_id] = i
    v = Variant(int(seed), knobs, by_id, source,
                rng=np.random.default_rng([db.SEED, 3, int(seed)]))
    where = {i: entry_id for entry_id, i in source.items()}
    for pid in pristine:
        if int(pid[4:]) > n:
            raise ValueError(f"{pid} is beyond this variant's {n} entries")
        v.swap(pid, where[index.pristine[pid]])
        where = {i: entry_id for entry_id, i in v.source.items()}
        v.fixed.add(pid)
    return v
