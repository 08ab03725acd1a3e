"""The evaluator audit: are a tool's tasks solvable, and do their evaluators tell right from wrong?

For every task (and seed): the oracle must score 1.0 with success, and so must the GUI oracle
(the task solved through ``step()`` alone, where it differs from the oracle); doing nothing
must score 0 (an infeasible task only must not succeed), every named negative must not
succeed, and the oracle's final state with the other ending (``FAIL`` on a feasible task,
``DONE`` on an infeasible one: case ``status:fail`` / ``status:done``) must score 0. Then a
cross-task matrix, after MatToolBench's reliability audit: each task's oracle final state is
scored by every other task's evaluator, which must not call it a success. Precision, recall
and F1 of the success decision are computed over all of these judgements.

With ``cheats``, the cheat audit too: the generic cheats of :mod:`sciagent_gym.runs.cheats` are
scored on the no-op's final state (the real start state, program state included), and the spec's own
``cheats`` are played as episodes. A cheat must score 0 (a placeholder: no success and at most
``PLACEHOLDER_LIMIT``); on a state-control task, no more than the no-op.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import gymnasium as gym

from sciagent_gym.evaluation import FinalState, evaluate
from sciagent_gym.evaluation.rewards import EpisodeEnd, cheat_findings
from sciagent_gym.runs.audit_report import ORACLES, AuditReport, CaseResult, CrossResult
from sciagent_gym.runs.cheats import generic_cheats, play_offline_scores
from sciagent_gym.runs.interfaces import derived_interface
from sciagent_gym.tasks.steps import run_steps
from sciagent_gym.tasks.task import Task
from sciagent_gym.tools import tool_info


def _expected_ok(case: str, infeasible: bool, score: float, success: bool,
                 noop_correct: bool = False, toggles: bool = False, limit: float = 0.0,
                 noop_score: float = 0.0) -> bool:
    """Oracle: 1.0 and success. No-op: 0 (unless FAIL is right: infeasible tasks); on a
    state-control task it succeeds with 1.0 exactly when every toggle already starts at its
    target (StaR's negative instruction) and otherwise scores 0 (toggles that start right earn
    nothing while another must change). Negatives: no success. Cheats: at most ``limit`` and
    no success; on a state-control task no more than the no-op (and success only where doing
    nothing is right).
    """
    if case.startswith("cheat:"):
        if toggles:
            return score <= noop_score + 1e-9 and (noop_correct or not success)
        return score <= limit + 1e-9 and not success
    if case in ORACLES:
        return score == 1.0 and success
    if case == "noop" and noop_correct:
        return score == 1.0 and success
    if case == "noop" and not infeasible:
        return score == 0.0 and not success
    return not success


def _play(env: gym.Env, task_id: str, case: str, seed: int):
    """One episode of ``case``; returns its evaluation and the step() calls it made."""
    env.reset(seed=seed, options={"task": task_id})
    base = env.unwrapped
    taken = run_steps(env, ["DONE"] if case == "noop" else base.task.steps(case),
                      refused_ok=case.startswith("cheat:"))
    if base.evaluation is None:
        env.step("DONE")
        taken += 1
    return base.evaluation, taken


def _play_sharing(env: gym.Env, task_id: str, seed: int, candidates: list[str]):
    """The oracle's episode, which also scores each of ``candidates`` (the no-op and
    negatives) whose steps are the oracle's first k steps and then DONE: at that point of the
    oracle's episode the program has had exactly that case's actions, so its state is
    collected there (:meth:`SciAgentEnv.checkpoint`) and scored, and the case needs no program
    start of its own. Returns the oracle's evaluation, its step() calls, and per shared case
    (evaluation, step() calls, final state, seconds taken)."""
    env.reset(seed=seed, options={"task": task_id})
    base = env.unwrapped
    steps = base.task.steps("oracle")
    at: dict[int, list[str]] = {}
    for name in candidates:
        k = _prefix_length(steps, ["DONE"] if name == "noop" else base.task.steps(name))
        if k is not None:
            at.setdefault(k, []).append(name)
    shared: dict[str, tuple] = {}
    taken = 0
    for k in range(len(steps) + 1):
        for name in at.get(k, ()):
            t0 = time.monotonic()
            state = base.checkpoint("done")
            ev = evaluate(base.task.criteria(), state)
            shared[name] = (ev, taken + 1, state, time.monotonic() - t0)
        if k == len(steps) or base.evaluation is not None:
            break
        taken += run_steps(env, steps[k:k + 1])
    if base.evaluation is None:
        env.step("DONE")
        taken += 1
    return base.evaluation, taken, shared


def _prefix_length(oracle: list, theirs: list) -> int | None:
    """k when ``theirs`` is the oracle's first k steps then DONE (so it can be scored at that
    point of the oracle's episode), else None."""
    k = len(theirs) - 1
    if theirs and theirs[-1] == "DONE" and k <= len(oracle) and oracle[:k] == theirs[:k]:
        return k
    return None


def _prefix_cases(spec, candidates: list[str]) -> set[str]:
    """Which of ``candidates`` :func:`_play_sharing` will most likely score on the oracle's
    start, judged on the spec's steps before templating (for planning only)."""
    oracle = list(spec.oracle)
    return {name for name in candidates if _prefix_length(
        oracle, ["DONE"] if name == "noop" else list(spec.negatives[name])) is not None}


def audit_cases(spec, cheats: bool = False) -> list[str]:
    """The cases the audit plays for one task: the oracle, its GUI oracle where that is a
    different sequence, the no-op, each negative and (with ``cheats``) the spec's cheats."""
    gui = ["gui_oracle"] if spec.explicit_gui_oracle is not None else []
    spec_cheats = [f"cheat:{n}" for n in sorted(spec.cheats)] if cheats else []
    return ["oracle", *gui, "noop", *sorted(spec.negatives), *spec_cheats]


def audit_tool(tool: str, seeds: Iterable[int] = (0,), cross: bool = True,
               tasks: Iterable[str] | None = None, env: gym.Env | None = None,
               progress: Callable[[str], None] | None = None, cheats: bool = False,
               cases: Iterable[str] | None = None, share_starts: bool = True,
               **make_kwargs: Any) -> AuditReport:
    """Run the audit for ``tool`` on the real program (an env is made unless given).

    ``cheats`` adds the cheat audit: generic cheats scored on each no-op's final state and the
    spec's own cheats played as episodes. ``cases`` keeps only these case names (e.g.
    ``["gui_oracle"]``; "gui_oracle" then also means a GUI-only oracle). ``share_starts``
    scores the no-op and the negatives that are a prefix of the oracle on the oracle's own
    program start (:func:`_play_sharing`); False plays every case as its own episode."""
    only = set(cases) if cases is not None else None
    seeds = [int(s) for s in seeds]
    own_env = env is None
    if own_env:
        # One spare: the next case's program starts while this case plays.
        make_kwargs.setdefault("pool_size", 1)
        env = gym.make(tool_info(tool).env_id, **make_kwargs)
    base = env.unwrapped
    task_ids = sorted(tasks) if tasks else base.task_ids
    report = AuditReport(tool=tool, seeds=seeds)
    keep = Path(tempfile.mkdtemp(prefix="sciagent-audit-"))
    oracle_states: dict[tuple[str, int], Path] = {}

    def record(task_id, seed, case, spec, ev, taken, error, t0, shared=False,
               training: str | None = None) -> None:
        score, success = (ev.score, ev.success) if ev is not None else (0.0, False)
        failed = [c.name for c in ev.criteria if not c.passed] if ev is not None else []
        if training:  # a cheat that ST-Bench's gate-free training reward pays for a target
            failed.append(training)
        noop_correct = base.task.noop_correct if error is None else False
        noop_score = next((c.score for c in report.cases if c.case == "noop" and
                           (c.task_id, c.seed) == (task_id, seed)), 0.0)
        ok = error is None and not training and _expected_ok(
            case, spec.infeasible, score, success, noop_correct, bool(spec.toggles),
            noop_score=noop_score)
        gui = case == "gui_oracle" or (case == "oracle" and spec.explicit_gui_oracle is None
                                       and spec.gui_oracle is not None)
        interface = derived_interface(spec) if gui else None
        if gui and interface != spec.oracle_interface:  # what "proven through the GUI" means
            ok, error = False, (f"oracle_interface: the spec declares {spec.oracle_interface!r}, "
                                f"its GUI oracle works through {interface!r}")
        report.cases.append(CaseResult(task_id, seed, case, score, success, ok, failed,
                                       time.monotonic() - t0, error, noop_correct,
                                       base.modality, steps=taken, gui=gui, shared=shared,
                                       interface=interface))

    try:
        plans = {}
        for task_id in task_ids:
            if task_id not in base.specs:
                raise ValueError(f"{tool} has no task {task_id!r} "
                                 f"(its tasks: {', '.join(sorted(base.specs))})")
            spec = base.specs[task_id]
            played = audit_cases(spec, cheats)
            if only is not None:
                wanted = set(only)
                if "gui_oracle" in wanted and spec.explicit_gui_oracle is None \
                        and spec.gui_oracle is not None:
                    wanted.add("oracle")  # this task's oracle is its GUI oracle
                played = [c for c in played if c in wanted]
            sharable = [c for c in played if c == "noop" or c in spec.negatives] \
                if share_starts and "oracle" in played else []
            plans[task_id] = (spec, played, sharable)
        # Every case in order; cases scored on their oracle's start are marked done as they are.
        schedule = [(task_id, seed, case) for task_id in task_ids for seed in seeds
                    for case in plans[task_id][1]]
        done: set[tuple[str, int, str]] = set()

        def announce(i: int) -> None:
            """Tell the warm pool (if the env has one) this case's variant and the next case's
            that will need a program start, so that the next is prepared while this one plays."""
            likely_shared = {(t, s, c) for t, s, c in schedule[i:]
                             if c in _prefix_cases(plans[t][0], plans[t][2])}
            upcoming = [(t, s) for t, s, c in schedule[i + 1:]
                        if (t, s, c) not in done and (t, s, c) not in likely_shared]
            if hasattr(base, "expect"):
                base.expect([schedule[i][:2], *upcoming[:1]])

        for i, (task_id, seed, case) in enumerate(schedule):
            spec, played, sharable = plans[task_id]
            if (task_id, seed, case) in done:
                continue
            if progress:
                progress(f"{task_id} seed {seed} {case}")
            announce(i)
            t0 = time.monotonic()
            shared: dict[str, tuple] = {}
            try:
                if case == "oracle" and sharable:
                    ev, taken, shared = _play_sharing(env, task_id, seed, sharable)
                else:
                    ev, taken = _play(env, task_id, case, seed)
                error = None
            except Exception as exc:  # a broken oracle is an audit finding
                ev, taken, error = None, 0, f"{type(exc).__name__}: {exc}"
            record(task_id, seed, case, spec, ev, taken, error, t0,
                   training=cheat_findings(EpisodeEnd(
                       base._criteria, base.final_state, base.evaluation, gave_up=False))
                   if case.startswith("cheat:") and error is None else None)
            if case == "oracle" and error is None:
                oracle_states[(task_id, seed)] = base.final_state.save(
                    keep / f"{task_id.replace('/', '_')}-{seed}")
                report.cases.append(_swapped_status(base, spec, seed))
            if case == "noop" and cheats and error is None:
                report.cases += _generic_cheats(base, spec, seed, ev.score,
                                                base.final_state, keep)
            # The cases scored on the oracle's start, in their usual order; the no-op's
            # state (still the env's own) serves the generic cheats too.
            for name in (c for c in played if c in shared):
                sev, staken, state, seconds = shared[name]
                record(task_id, seed, name, spec, sev, staken, None,
                       time.monotonic() - seconds, shared=True)
                done.add((task_id, seed, name))
                if name == "noop" and cheats:
                    report.cases += _generic_cheats(base, spec, seed, sev.score, state, keep)
        if cross:
            report.cross = _cross_matrix(base, task_ids, oracle_states, progress)
    finally:
        shutil.rmtree(keep, ignore_errors=True)
        if own_env:
            env.close()
    return report


def _swapped_status(base, spec, seed: int) -> CaseResult:
    """The oracle's final state scored as if the episode had ended the other way: ``FAIL`` on
    a feasible task (the work done, then declared impossible), ``DONE`` on an infeasible one.
    Either must score 0 without success; it needs no program start of its own."""
    t0 = time.monotonic()
    status = "done" if spec.infeasible else "fail"
    ev = evaluate(base.task.criteria(), replace(base.final_state, agent_status=status))
    return CaseResult(spec.id, seed, f"status:{status}", ev.score, ev.success,
                      ev.score == 0.0 and not ev.success,
                      [c.name for c in ev.criteria if not c.passed],
                      time.monotonic() - t0, None, base.task.noop_correct, base.modality)


def _generic_cheats(base, spec, seed: int, noop_score: float, start: FinalState,
                    scratch: Path) -> list[CaseResult]:
    """Score the generic cheats on the no-op's final state ``start`` (the env still holds its
    task)."""
    out = []
    criteria = base.task.criteria()
    for cheat in generic_cheats(criteria, start.work_dir, base.task.instruction,
                                base.adapter.placeholders):
        t0 = time.monotonic()
        ev, training = play_offline_scores(cheat, criteria, start, scratch / "cheat")
        case = f"cheat:{cheat.name}"
        ok = _expected_ok(case, spec.infeasible, ev.score, ev.success, base.task.noop_correct,
                          bool(spec.toggles), cheat.limit, noop_score)
        failed = [c.name for c in ev.criteria if not c.passed]
        if training:  # ST-Bench's training reward applies no gate: it must meet no target
            ok = False
            failed.append(training)
        out.append(CaseResult(spec.id, seed, case, ev.score, ev.success, ok, failed,
                              time.monotonic() - t0, None, base.task.noop_correct,
                              base.modality, cheat.limit))
    return out


def _cross_matrix(base, task_ids: list[str], states: dict[tuple[str, int], Path],
                  progress: Callable[[str], None] | None) -> list[CrossResult]:
    """Every task's evaluator on every other task's oracle state of the same seed. Each
    evaluator is staged once per seed and judges all the states (staging can run a program
    for its gold values: PyMOL's headless superpositions took most of an audit when every
    state staged every evaluator again)."""
    out = []
    scratch = Path(tempfile.mkdtemp(prefix="sciagent-cross-"))
    loaded = {key: FinalState.load(path) for key, path in sorted(states.items())}
    try:
        for seed in sorted({seed for _, seed in loaded}):
            for evaluator_task in task_ids:
                judged = [(t, s) for t, s in loaded if s == seed and t != evaluator_task]
                if not judged:
                    continue
                if progress:
                    progress(f"cross: {evaluator_task} judges {len(judged)} states (seed {seed})")
                task = Task(base.specs[evaluator_task], seed, base.adapter.generators,
                            base.provider.paths)
                task.stage(scratch / f"{evaluator_task.replace('/', '_')}-{seed}")
                try:
                    criteria = task.criteria()
                    for state_task, _ in judged:
                        result = evaluate(criteria, loaded[(state_task, seed)])
                        out.append(CrossResult(state_task, evaluator_task, seed,
                                               result.score, result.success))
                finally:
                    task.cleanup()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    out.sort(key=lambda r: (r.state_task, r.seed, task_ids.index(r.evaluator_task)))
    return out
