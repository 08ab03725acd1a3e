"""Staging a materials task's database: each variant's structure database drawn until it suits
the task, and written where the terminal's OPTIMADE server reads it.

:func:`stage` draws the variant (:mod:`.variant` derives it from the cached templates of
:mod:`.db` in a fraction of a second) into ``work_dir/.optimade/structures.json``; the gold
values are then computed on the host from exactly the entries staged. A variant is drawn again
(a handful of tries at most) until the task is well-posed; :func:`_separate` draws a formula's
toy energies again until its polymorphs are apart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
from sciagent_gym.envs.materials.adapter import DB_RELPATH
from sciagent_gym.envs.materials.variant import NoFit, Variant, build

#: Variants drawn at most before a generator gives up on its conditions.
ATTEMPTS = 60


def stage(work: Path, rng: np.random.Generator | None, formulas: Iterable[str] = (),
          pristine: Iterable[str] = (),
          prepare: Callable[[Variant], None] | None = None,
          fits: Callable[[Variant], bool] | None = None) -> Variant:
    """Draw this variant's database (its seed from ``rng``; ``None``: seed 0), holding
    ``formulas`` and ``pristine`` ids; ``prepare`` makes requests on it (placements, toy values
    drawn again), ``fits`` says whether it suits the task; the first that does is written where
    the server reads it and returned."""
    base = 0 if rng is None else int(rng.integers(1 << 30))
    formulas, pristine = list(formulas), list(pristine)
    why = "its conditions never held"
    for k in range(ATTEMPTS):
        v = build(base + 7919 * k, formulas, pristine)
        try:
            if prepare is not None:
                prepare(v)
        except NoFit as exc:
            why = str(exc)
            continue
        if fits is None or fits(v):
            v.write(work / DB_RELPATH)
            return v
    raise ValueError(f"no database variant fits this task after {ATTEMPTS} tries: {why}")


def stage_database(work: Path, rng: np.random.Generator | None = None) -> Variant:
    """Stage a variant with no request (its seed from ``rng``)."""
    return stage(work, rng)


def _with(v: Variant, element: str, nelements: int | None = None) -> list[dict[str, Any]]:
    return [e for e in v.entries if element in e["elements"]
            and (nelements is None or e["nelements"] == nelements)]


def _energy(e: dict[str, Any]) -> float:
    return e["_sag_formation_energy_per_atom"]


def _separate(v: Variant, formula: str, lead: float = 0.0, step: float = 0.0,
              highest: float = 0.0, tries: int = 200) -> None:
    """Draw ``formula``'s energies again until the lowest leads the next by ``lead``, all
    consecutive ones are ``step`` apart and the highest is ``highest`` above the one below."""
    ids = [e["id"] for e in v.polymorphs(formula)]
    for _ in range(tries):
        es = [_energy(e) for e in v.polymorphs(formula)]
        gaps = [b - a for a, b in zip(es, es[1:], strict=False)]
        if len(es) < 2 or (gaps[0] >= lead - 1e-9 and min(gaps) >= step - 1e-9
                           and gaps[-1] >= highest - 1e-9):
            return
        v.redraw_energies(ids)
    raise NoFit(f"{formula}: energies not apart")
