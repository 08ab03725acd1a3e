"""A concrete task: a spec with its parameters drawn for one seed, staged into a sandbox."""

from __future__ import annotations

import hashlib
import shutil
import weakref
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import tifffile

from sciagent_gym.blas import one_blas_thread
from sciagent_gym.evaluation import Criterion
from sciagent_gym.evaluation.state import AGENT_STATUSES
from sciagent_gym.processes import owned_tempdir
from sciagent_gym.tasks.queries import query_params, query_split
from sciagent_gym.tasks.spec import TaskSpec, TaskSpecError
from sciagent_gym.tasks.step_schema import count_oracle_steps
from sciagent_gym.tasks.templating import resolve

SPLITS = {"train": (0.0, 0.8), "val": (0.8, 0.9), "test": (0.9, 1.0)}
#: The task-level split: only task families whose spec says ``heldout: true``.
HELDOUT_SPLIT = "heldout-tasks"


def split_of(task_id: str, variant: int) -> str:
    """The split a variant belongs to: a fixed hash of (task id, variant seed).

    80% train, 10% val, 10% test of the variant seeds of every task; the same on every machine
    and Python version, and independent of which other tasks exist.
    """
    digest = hashlib.sha256(f"{task_id}#{int(variant)}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    for name, (lo, hi) in SPLITS.items():
        if lo <= u < hi:
            return name
    return "test"


def variant_split(spec: TaskSpec, variant: int) -> str:
    """The seed split of a variant: its query's for a query pool, else :func:`split_of`."""
    if spec.queries:
        return query_split(spec.id, spec.queries, variant)
    return split_of(spec.id, variant)


def some_variants(spec: TaskSpec, n: int) -> range:
    """Up to ``n`` variants to sample a spec over: seeds 0..n-1, or its queries' indices."""
    return range(min(n, len(spec.queries))) if spec.queries else range(n)


def episode_split(spec: TaskSpec, variant: int) -> str:
    """The split an episode counts under: a held-out task family's variants are all
    "heldout-tasks" (no seed split draws them); other tasks' by :func:`variant_split`."""
    return HELDOUT_SPLIT if spec.heldout else variant_split(spec, variant)


def sample_params(spec: TaskSpec, seed: int) -> dict[str, Any]:
    """Draw the spec's params for ``seed`` (same seed, same variant)."""
    rng = np.random.default_rng([seed, 7919])
    out: dict[str, Any] = {}
    for name in sorted(spec.params):
        p = spec.params[name]
        if not isinstance(p, dict):
            out[name] = p
        elif "choice" in p:
            out[name] = p["choice"][int(rng.integers(len(p["choice"])))]
        elif "int" in p:
            out[name] = int(rng.integers(p["int"][0], p["int"][1] + 1))
        else:
            value = float(rng.uniform(*p["float"]))
            out[name] = round(value, p["round"]) if "round" in p else value
    return out


#: The name of the gate every feasible task's criteria start with (after the input checks).
STATUS_GATE = "did not declare FAIL (the task is feasible)"


def status_gate() -> Criterion:
    """A weight-0 gate that fails when the episode ended with ``FAIL``: on a feasible task
    giving up is a failure, whatever the files or the program show (as OSWorld scores it),
    so a policy cannot hedge by doing the work and then declaring it impossible."""
    ended = [s for s in AGENT_STATUSES if s != "fail"]
    return Criterion.from_dict({
        "name": STATUS_GATE, "weight": 0, "gate": True, "getter": "agent_status",
        "description": "FAIL says the task cannot be done; this one can, so FAIL scores 0.",
        "check": {"op": "one_of", "options": ended}})


class Task:
    """One variant of a spec. ``stage()`` writes its inputs and computes the gold values.

    Gold values live only in this host-side object; the sandbox sees the inputs alone.
    """

    def __init__(self, spec: TaskSpec, seed: int, generators: dict[str, Any],
                 paths: dict[str, str], hints: bool = False) -> None:
        self.spec, self.seed = spec, int(seed)
        self.params = sample_params(spec, self.seed)
        if spec.queries:
            self.params.update(query_params(spec.queries, self.seed, spec.id))
        self._generators = generators
        self.paths = dict(paths)
        self.gold: dict[str, Any] = {}
        self.input_hashes: dict[str, str] = {}
        self.staged = False
        self.gold_dir: Path | None = None
        self.instruction = resolve(spec.instruction, {**self.params, **self.paths})
        if hints and spec.hints:
            self.instruction += "\nHint: " + resolve(spec.hints, {**self.params, **self.paths})

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def variant_id(self) -> str:
        return f"{self.spec.id}#{self.seed}"

    @property
    def context(self) -> dict[str, Any]:
        """Everything ``$name`` and ``{name}`` may refer to (gold values included)."""
        return {**self.params, **self.paths, "gold": self.gold, "seed": self.seed}

    def stage(self, host_work: Path) -> None:
        """Write the task's input files into ``host_work`` and compute gold values."""
        host_work.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng([self.seed, 104729])
        self.gold = {}
        for gen in self.spec.generate:
            fn = self._generators.get(gen.fn)
            if fn is None:
                raise TaskSpecError(self.spec.source, "setup.generate.fn",
                                    f"unknown generator '{gen.fn}' for tool {self.spec.tool} "
                                    f"(known: {', '.join(sorted(self._generators))})")
            args = resolve(gen.args, {**self.params, **self.paths, "gold": self.gold})
            with one_blas_thread():
                made = fn(host_work, rng, **args)
            self.gold[gen.name] = self._store_arrays(gen.name, made)
        self.input_hashes = {}
        for name in self.spec.protect:
            path = host_work / name
            if not path.is_file():
                raise TaskSpecError(self.spec.source, "setup.protect",
                                    f"'{name}' was not created by the setup")
            self.input_hashes[name] = hashlib.sha256(path.read_bytes()).hexdigest()
        self.staged = True

    def _store_arrays(self, name: str, gold: dict[str, Any]) -> dict[str, Any]:
        """Reference images go to a host-side gold directory; criteria refer to their paths."""
        out = {}
        for key, value in gold.items():
            if isinstance(value, np.ndarray):
                if self.gold_dir is None:
                    self.gold_dir = owned_tempdir("gold")
                    # removed by cleanup(), or when the task is collected or at exit: a task
                    # dropped without cleanup() (a test, a crashed rollout) leaves no gold
                    self._gold_finalizer = weakref.finalize(
                        self, shutil.rmtree, str(self.gold_dir), True)
                path = self.gold_dir / f"{name}.{key}.tif"
                tifffile.imwrite(path, value)
                value = str(path)
            out[key] = value
        return out

    def cleanup(self) -> None:
        """Remove the host-side gold directory."""
        if self.gold_dir is not None:
            self._gold_finalizer()
            self.gold_dir = None

    def criteria(self) -> list[Criterion]:
        """The evaluator's criteria with every reference resolved, plus input-integrity checks.

        Protected inputs add weight-0 criteria first (so no gate skips them): they do not change
        the score, but an episode that altered an input cannot count as a success. A feasible
        task then gates everything on the agent not having given up (:func:`status_gate`:
        ``FAIL`` scores 0 however much was done); an infeasible task's own criteria gate on
        ``FAIL`` (the spec checks test_specs enforce), so there only ``FAIL`` earns credit. On a
        state-control variant where some toggle must change, the criteria crediting toggles
        that already start at their targets become weight-0 gates, moved first: leaving such a
        toggle earns nothing (doing nothing scores 0) and changing it scores 0 (flipping every
        toggle must not pay).
        """
        if not self.staged:
            raise RuntimeError("stage() the task before asking for its criteria")
        out = []
        for name, digest in self.input_hashes.items():
            out.append(Criterion.from_dict({
                "name": f"input {name} unchanged", "weight": 0,
                "getter": {"fn": "file_sha256", "path": name},
                "check": {"op": "unchanged", "expected_sha256": digest},
            }))
        if not self.spec.infeasible:
            out.append(status_gate())
        own = [Criterion.from_dict(resolve(c, self.context)) for c in self.spec.evaluator]
        return out + self._toggle_credit(own)

    def _toggle_credit(self, criteria: list[Criterion]) -> list[Criterion]:
        toggles = self.toggles
        if not any(t.positive for t in toggles):
            return criteria  # not state control, or doing nothing is the right answer
        names = {c.name for c in criteria}
        idle = set()
        for t in toggles:
            if t.credit and t.credit not in names:
                raise TaskSpecError(self.spec.source, "toggles", f"{t.name}: credit names "
                                    f"{t.credit!r}, not a criterion of this variant")
            if t.credit and not t.positive:
                idle.add(t.credit)
        gates = [replace(c, weight=0.0, gate=True) for c in criteria if c.name in idle]
        return gates + [c for c in criteria if c.name not in idle]

    def steps(self, which: str = "oracle") -> list[Any]:
        """The oracle's, the GUI oracle's (``"gui_oracle"``), a named negative's or
        (``"cheat:<name>"``) a named cheat's steps, with references resolved and toggle steps
        expanded (their ``then`` steps kept only when that toggle starts away from its
        target)."""
        if which == "oracle":
            raw = self.spec.oracle
        elif which == "gui_oracle":
            raw = self.spec.gui_oracle
            if raw is None:
                raise TaskSpecError(self.spec.source, "gui_oracle",
                                    f"{self.spec.id} has no GUI oracle yet")
        elif which.startswith("cheat:"):
            raw = self.spec.cheats[which.removeprefix("cheat:")]
        else:
            raw = self.spec.negatives[which]
        # "{output}" of an answer step is the script's output, filled in when it has run
        return self._expand(resolve(raw, {**self.context, "output": "{output}"}))

    def _expand(self, steps: list[Any]) -> list[Any]:
        changes = {t.name: t.positive for t in self.toggles}
        out: list[Any] = []
        for step in steps:
            if isinstance(step, dict) and "toggle" in step:
                if changes[step["toggle"]]:
                    out += self._expand(step["then"])
            else:
                out.append(step)
        return out

    @property
    def oracle_steps(self) -> int | None:
        """The GUI oracle's ``step()`` count for this variant (the reference for Steps*), or
        None when the task has no GUI oracle. Counted from the steps' structure with only the
        toggles resolved, so it needs no staging unless a toggle's start is a gold value."""
        raw = self.spec.gui_oracle
        if raw is None:
            return None
        changes = {t.name: t.positive for t in self.toggles} if self.spec.toggles else {}

        def expand(steps: list[Any]) -> list[Any]:
            out: list[Any] = []
            for step in steps:
                if isinstance(step, dict) and "toggle" in step:
                    name = resolve(step["toggle"], self.context)
                    out += expand(step["then"]) if changes[name] else []
                else:
                    out.append(step)
            return out

        return count_oracle_steps(expand(raw))

    @property
    def setup_script(self) -> str:
        """The tool script that puts the program in the task's start state (may be empty)."""
        return resolve(self.spec.setup_script, self.context, "setup.script")

    @property
    def toggles(self) -> list[ToggleState]:
        """A state-control task's toggles for this variant (empty for other tasks)."""
        out = []
        for i, raw in enumerate(self.spec.toggles):
            t = resolve(raw, self.context, f"toggles[{i}]")
            for key in ("initial", "target"):
                if not isinstance(t[key], bool):
                    raise TaskSpecError(self.spec.source, f"toggles[{i}].{key}",
                                        f"resolves to {t[key]!r}, not true or false")
            box = tuple(int(v) for v in t["box"]) if t.get("box") is not None else None
            out.append(ToggleState(t["name"], t["initial"], t["target"], box,
                                   t.get("credit", "")))
        return out

    @property
    def noop_correct(self) -> bool:
        """True when doing nothing is the right answer: a state-control variant whose toggles
        all start at their targets (every instruction is a negative one)."""
        toggles = self.toggles
        return bool(toggles) and not any(t.positive for t in toggles)


@dataclass(frozen=True)
class ToggleState:
    """One toggle of a state-control variant: where it starts and where it must end."""

    name: str
    initial: bool
    target: bool
    box: tuple[int, int, int, int] | None = None
    credit: str = ""  # the criterion that scores this toggle (resolved name)

    @property
    def positive(self) -> bool:
        """A positive instruction (after StaR): the toggle must change, so it must be clicked."""
        return self.initial != self.target
