"""The structure database behind the materials code env: templates built with pymatgen, cached.

Deterministic (no seed but :data:`SEED`, no network) and cached under the user's cache folder
(``$SCIAGENT_CACHE/materials/``, default ``~/.cache/sciagent-gym/materials/``) as one JSON file
named after :data:`DB_VERSION`: built on first use (2230 templates, about 20 s, with a
progress bar), rebuilt whenever the version changes. Bump :data:`DB_VERSION` with any change to
this module or to those it builds from that changes a template:

- :mod:`.chemistry`: the ion data and the compounds (core and reserve);
- :mod:`.recipes`: the polymorphs to build of each and their lattice parameters;
- :mod:`.structures`: a recipe's structure, from its space group's symmetry operations;
- :mod:`.toy_models`: the toy formation energies and synthetic band gaps;
- :mod:`.template`: one template, the OPTIMADE entry and the models' noise-free values.

No task serves this file as it is: every variant (seed) of a task stages its own database,
derived from these templates in a fraction of a second by
:mod:`sciagent_gym.envs.materials.variant` (a seeded subset, fresh toy energies and band gaps,
a seeded set of unanalysed entries, shuffled ids), and its gold values are computed from that
staged database. :func:`entries` is the *pristine* database, the core templates as database v1
served them to every seed (same ids and values); the matsci specs' entry parameters name
pristine ids, which a variant keeps where a task names them. The structures are what they are
in every variant: only the toy values and the analysis flags vary.

In the pristine database a seeded sixth of the entries is "unanalysed": their space group
(symbol and number), density and structure type are unknown (null), as in a database whose
analysis pipeline has not run on every entry (a variant draws its own unanalysed share). Ids
(``sag-1`` ...) follow a seeded shuffle of the build order (a variant shuffles again).
"""

from __future__ import annotations

import functools
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.materials.recipes import (
    recipes,
    reserve_recipes,
)
from sciagent_gym.envs.materials.template import (
    build_template,
)

DB_VERSION = "2"
SEED = 20261205
FILE_NAME = f"sag-structures-v{DB_VERSION}.json"
PROVIDER = {"name": "sciagent-gym structures", "prefix": "sag",
            "description": "Structures built with pymatgen for sciagent-gym's materials tasks "
                           "(toy formation energies, synthetic band gaps)",
            "homepage": None}
UNANALYSED_FRACTION = 1 / 6


def cache_dir() -> Path:
    """``$SCIAGENT_CACHE/materials`` (default ``~/.cache/sciagent-gym/materials``)."""
    base = os.environ.get("SCIAGENT_CACHE")
    root = Path(base) if base else Path.home() / ".cache" / "sciagent-gym"
    return root / "materials"


#: The fields an unanalysed entry leaves unknown (null).
ANALYSIS_FIELDS = ("_sag_space_group_symbol", "_sag_space_group_number", "_sag_density",
                   "_sag_structure_type")


def build(progress: bool = True) -> dict[str, Any]:
    """Every template (deterministic): ``{"version", "provider", "templates": [...]}``. Core
    templates (database v1, in its build order) carry ``pristine`` (their v1 id number) and
    ``analysed`` (their v1 analysis flag); reserve templates have ``pristine`` None."""
    rng = np.random.default_rng(SEED)
    core = recipes()
    order = rng.permutation(len(core))  # entry k of the build gets id sag-(order[k] + 1)
    analysed = rng.random(len(core)) >= UNANALYSED_FRACTION
    reserve = reserve_recipes()
    todo = [(r, np.random.default_rng([SEED, k]), int(order[k]) + 1, bool(analysed[k]))
            for k, r in enumerate(core)]
    todo += [(r, np.random.default_rng([SEED, 1, k]), None, True) for k, r in enumerate(reserve)]
    items: Iterator[int] = iter(range(len(todo)))
    if progress:
        from tqdm import tqdm

        items = tqdm(items, total=len(todo), desc="materials: building the structure database",
                     unit="entry")
    templates = []
    for k in items:
        recipe, entry_rng, pristine, flag = todo[k]
        templates.append({**build_template(recipe, entry_rng), "pristine": pristine,
                          "analysed": flag})
    return {"version": DB_VERSION, "provider": PROVIDER, "templates": templates}


def db_path(progress: bool = True) -> Path:
    """The cached template file, built first if it is not there yet."""
    path = cache_dir() / FILE_NAME
    if path.is_file():
        return path
    data = build(progress)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".building-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh, separators=(",", ":"))
        os.replace(tmp, path)  # atomic: a concurrent builder writes the same bytes
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


@functools.lru_cache(maxsize=1)
def load() -> dict[str, Any]:
    """The templates (built and cached on first use)."""
    return json.loads(db_path().read_text())


def templates() -> list[dict[str, Any]]:
    """Every template, core first (in build order), then the reserve."""
    return load()["templates"]


def public(entry: dict[str, Any], entry_id: str, analysed: bool) -> dict[str, Any]:
    """A template's entry as a database serves it: its id, its analysis fields null when it
    is unanalysed."""
    out = {"id": entry_id, **entry}
    if not analysed:
        out.update(dict.fromkeys(ANALYSIS_FIELDS))
    return out


@functools.lru_cache(maxsize=1)
def _pristine() -> tuple[dict[str, Any], ...]:
    core = [t for t in templates() if t["pristine"] is not None]
    core.sort(key=lambda t: t["pristine"])
    return tuple(public(t["entry"], f"sag-{t['pristine']}", t["analysed"]) for t in core)


def entries() -> list[dict[str, Any]]:
    """The pristine database (database v1's entries: the core with its v1 ids and values)."""
    return list(_pristine())


def by_id() -> dict[str, dict[str, Any]]:
    """The pristine database by id."""
    return {e["id"]: e for e in _pristine()}


def pristine_document() -> dict[str, Any]:
    """The pristine database as the OPTIMADE server reads a database file."""
    return {"version": DB_VERSION, "provider": PROVIDER, "entries": entries()}


def structure_of(entry: dict[str, Any]) -> Any:
    """The pymatgen structure of an entry, as a client rebuilds it from the served fields."""
    from pymatgen.core import Lattice, Structure

    return Structure(Lattice(entry["lattice_vectors"]), entry["species_at_sites"],
                     entry["cartesian_site_positions"], coords_are_cartesian=True)
