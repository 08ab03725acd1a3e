"""Rollouts on a Ray cluster: one env per actor, placed by custom resource, surviving faults.

Each :class:`EpisodeWorker` actor owns one env (any registered id, made once and reused across
episodes) and asks for a custom resource (``{"sciagent_slot": 1}`` or a per-tool one such as
``{"tool:ds9": 1}``), so Ray puts workers only on nodes that advertise they can run the program
and never more on a node than it declared. The driver (:func:`collect`) hands out work items
(task, seed, query), gathers each :class:`~sciagent_gym.runs.rollout.EpisodeResult` and its
recorded episode directory (shipped back as a tar archive, so nodes need no shared file
system) and shows progress.

Faults, in two layers: an actor whose process dies is restarted by Ray (``max_restarts``) and
its in-flight episode re-run on the restarted actor (``max_task_retries``); when Ray's budget
is spent the driver replaces the dead actor and re-queues the item (``item_retries``). An
episode that raises is recorded as a failure and not retried (it would raise again).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

#: The default resource a worker asks one unit of: ``ray start --resources='{"sciagent_slot": 4}'``
#: on a node that can hold four envs.
SLOT = "sciagent_slot"
_TMP_PREFIX = "sciagent-collect-"


@dataclass(frozen=True)
class WorkItem:
    """One episode to play: ``task`` (None: the env samples one), ``seed``, optional ``query``
    (a query pool's id, passed to reset as ``options={"query": ...}``)."""

    index: int
    seed: int
    task: str | None = None
    query: str | None = None

    @property
    def name(self) -> str:
        """The episode's directory name in the run directory."""
        task = (self.task or "sampled").replace("/", "_")
        query = f"-q{self.query}" if self.query else ""
        return f"{self.index:04d}-{task}-seed{self.seed}{query}"


def make_items(tasks: Iterable[str | None], seeds: Iterable[int],
               queries: Iterable[str | None] = (None,)) -> list[WorkItem]:
    """Every (task, seed, query) combination, numbered in order."""
    combos = [(t, s, q) for t in tasks for s in seeds for q in queries]
    return [WorkItem(i, s, t, q) for i, (t, s, q) in enumerate(combos)]


@dataclass(frozen=True)
class EnvSpec:
    """How a worker makes its env: ``gym.make(env_id, **kwargs)``; ``tools_roots`` are added
    with :func:`~sciagent_gym.tools.discovery.add_tools_root` first (tools outside the
    package, such as the tests' fixture tool), and ``env_id`` may also be a bare tool name for
    :class:`~sciagent_gym.env.SciGUIEnv` (which takes ``provider="fake"`` in unit tests)."""

    env_id: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    tools_roots: tuple[str, ...] = ()

    def make(self):
        import gymnasium as gym

        import sciagent_gym  # noqa: F401  (registers the ids)
        from sciagent_gym.tools.discovery import add_tools_root

        for root in self.tools_roots:
            add_tools_root(root)
        env_id = self.env_id.split(":", 1)[-1]
        if env_id in gym.registry:
            return gym.make(env_id, **self.kwargs)
        from sciagent_gym.env import SciGUIEnv

        return SciGUIEnv(env_id, **self.kwargs)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_collect_dirs(tmp: str | None = None) -> list[str]:
    """Remove recording dirs left by workers that were killed (their pid is gone)."""
    removed = []
    for path in Path(tmp or tempfile.gettempdir()).glob(f"{_TMP_PREFIX}*-*"):
        pid = path.name[len(_TMP_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not _pid_alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(str(path))
    return removed


def _pack(directory: Path) -> bytes:
    """The episode directory as an uncompressed tar (its PNGs are compressed already)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(directory, arcname=".")
    return buf.getvalue()


def _unpack(data: bytes, directory: Path) -> None:
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        tar.extractall(directory, filter="data")


class EpisodeWorker:
    """One env on one node; plays the items it is given (wrapped by ``ray.remote`` in
    :func:`worker_class`, so that importing this module needs no Ray)."""

    def __init__(self, env: EnvSpec, policy: str = "vlm", agent: dict[str, Any] | None = None,
                 max_steps: int | None = None, record: bool = True) -> None:
        sweep_collect_dirs()
        self.spec, self.policy, self.max_steps, self.record = env, policy, max_steps, record
        self.agent_config = dict(agent or {})
        self.env = None
        self.agent = None
        self.episodes = 0

    def info(self) -> dict[str, Any]:
        """Who this is: pid, node, whether Ray restarted it."""
        import ray

        ctx = ray.get_runtime_context()
        return {"pid": os.getpid(), "node": ctx.get_node_id(),
                "restarted": bool(ctx.was_current_actor_reconstructed)}

    def run(self, item: WorkItem) -> dict[str, Any]:
        """Play ``item``; its result as a dict, the recorded directory as a tar archive."""
        from sciagent_gym.runs.rollout import run_episode

        if self.env is None:  # here, not in __init__: a failure is then the item's error
            self.env = self.spec.make()
        if self.policy == "vlm" and self.agent is None:
            from sciagent_gym.agents import PromptAgent

            self.agent = PromptAgent(**self.agent_config)
        tmp = Path(tempfile.mkdtemp(prefix=f"{_TMP_PREFIX}{os.getpid()}-")) \
            if self.record else None
        t0 = time.monotonic()
        try:
            result = run_episode(self.env, self.policy, item.seed, task=item.task,
                                 out_dir=tmp / "ep" if tmp else None,
                                 max_steps=self.max_steps, agent=self.agent,
                                 options={"query": item.query} if item.query else None)
            archive = _pack(tmp / "ep") if tmp else None
        finally:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
        self.episodes += 1
        return {"index": item.index, "result": result.to_dict(), "archive": archive,
                "seconds": time.monotonic() - t0, "worker_episodes": self.episodes,
                **self.info()}

    def close(self) -> None:
        if self.env is not None:
            self.env.close()
            self.env = None


def worker_class(resources: dict[str, float], cpus: float = 0.0, max_restarts: int = 2,
                 max_task_retries: int = 1):
    """:class:`EpisodeWorker` as a Ray actor class placed by ``resources``."""
    import ray

    return ray.remote(EpisodeWorker).options(
        num_cpus=cpus, resources=dict(resources), max_restarts=max_restarts,
        max_task_retries=max_task_retries)


@dataclass
class CollectReport:
    """What a collection produced: results by item, failures, and what the faults cost."""

    results: list[dict[str, Any]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    #: Items re-queued by the driver after their actor died beyond Ray's retries.
    requeued: int = 0
    #: Episodes that finished on an actor Ray had restarted (their first try died with it).
    on_restarted: int = 0
    replaced_actors: int = 0
    seconds: float = 0.0
    by_node: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check_resources(resources: dict[str, float]) -> None:
    import ray

    have = ray.cluster_resources()
    missing = [k for k, v in resources.items() if have.get(k, 0) < v]
    if missing:
        spec = json.dumps({k: 4 for k in missing})
        raise ValueError(f"no node of the Ray cluster offers {', '.join(missing)}: start the "
                         f"nodes that can run the program with ray start --resources='{spec}'")


def collect(items: list[WorkItem], env: EnvSpec, *, policy: str = "vlm",
            agent: dict[str, Any] | None = None, actors: int = 2,
            resources: dict[str, float] | None = None, cpus: float = 0.0,
            out: Path | None = None, max_steps: int | None = None, max_restarts: int = 2,
            max_task_retries: int = 1, item_retries: int = 2,
            max_replacements: int | None = None, progress: bool = True,
            on_workers: Callable[[list[dict[str, Any]]], None] | None = None) -> CollectReport:
    """Play ``items`` on ``actors`` Ray actors (Ray must be initialised); write each episode
    under ``out/<item.name>/`` and ``out/summary.json`` if ``out`` is given.

    ``agent`` is :class:`~sciagent_gym.agents.PromptAgent`'s keyword arguments (unset ones
    come from each worker's environment; an ``api_key`` given here travels through Ray's
    control store, so on a shared cluster set it in the workers' environment instead).
    ``on_workers`` is called with the workers' info (pid, node) once they are up, and again
    with a replacement's.
    """
    import ray
    from tqdm import tqdm

    resources = dict(resources if resources is not None else {SLOT: 1})
    _check_resources(resources)
    cls = worker_class(resources, cpus, max_restarts, max_task_retries)
    spawn = lambda: cls.remote(env, policy, agent, max_steps, out is not None)  # noqa: E731
    workers = [spawn() for _ in range(max(1, min(actors, len(items) or 1)))]
    infos = ray.get([w.info.remote() for w in workers])
    if on_workers:
        on_workers(infos)
    budget = len(workers) if max_replacements is None else max_replacements
    report = CollectReport()
    queue: deque[tuple[WorkItem, int]] = deque((item, 0) for item in items)
    idle = list(range(len(workers)))
    pending: dict[Any, tuple[int, WorkItem, int]] = {}
    done: dict[int, dict[str, Any]] = {}
    t0 = time.monotonic()
    bar = tqdm(total=len(items), desc=f"collect {policy}", unit="ep", disable=not progress)
    try:
        while queue or pending:
            while idle and queue:
                slot = idle.pop()
                item, attempt = queue.popleft()
                pending[workers[slot].run.remote(item)] = (slot, item, attempt)
            if not pending:  # every actor is gone and the budget for new ones is spent
                for item, attempt in queue:
                    report.failures.append({"index": item.index, "item": asdict(item),
                                            "error": "no worker left", "attempts": attempt})
                break
            ready, _ = ray.wait(list(pending), num_returns=1)
            slot, item, attempt = pending.pop(ready[0])
            try:
                got = ray.get(ready[0])
            except ray.exceptions.RayActorError as exc:
                if not isinstance(exc, ray.exceptions.ActorDiedError):
                    idle.append(slot)  # unavailable for a moment (restarting), not dead
                elif budget > 0:  # Ray gave up on it: a fresh actor takes its slot
                    budget -= 1
                    report.replaced_actors += 1
                    workers[slot] = spawn()
                    idle.append(slot)
                    if on_workers:
                        on_workers([ray.get(workers[slot].info.remote())])
                else:
                    workers[slot] = None
                if attempt < item_retries:
                    report.requeued += 1
                    queue.appendleft((item, attempt + 1))
                else:
                    report.failures.append({"index": item.index, "item": asdict(item),
                                            "error": f"{type(exc).__name__}: {exc}"[:500],
                                            "attempts": attempt + 1})
                continue
            except ray.exceptions.RayTaskError as exc:  # the episode itself raised
                idle.append(slot)
                report.failures.append({"index": item.index, "item": asdict(item),
                                        "error": str(exc.cause or exc)[:500],
                                        "attempts": attempt + 1})
                bar.update(1)
                continue
            idle.append(slot)
            done[item.index] = _ingest(got, item, attempt, out)
            report.on_restarted += bool(got["restarted"] and got["worker_episodes"] == 1)
            report.by_node[got["node"]] = report.by_node.get(got["node"], 0) + 1
            bar.update(1)
            bar.set_postfix(requeued=report.requeued, restarted=report.on_restarted)
    finally:
        bar.close()
        _stop(workers)
    report.results = [done[k] for k in sorted(done)]
    report.failures.sort(key=lambda f: f["index"])
    report.seconds = time.monotonic() - t0
    if out is not None:
        _write_summary(out, env, policy, report)
    return report


def _ingest(got: dict[str, Any], item: WorkItem, attempt: int, out: Path | None) -> dict:
    """The episode's result with where it ran; its directory unpacked under ``out``."""
    result = dict(got["result"])
    if out is not None and got["archive"] is not None:
        directory = out / item.name
        _unpack(got["archive"], directory)
        result["directory"] = str(directory)
        (directory / "result.json").write_text(json.dumps(result, indent=2, default=str))
    result["distributed"] = {"item": item.index, "node": got["node"], "pid": got["pid"],
                             "on_restarted_actor": got["restarted"],
                             "driver_attempt": attempt + 1,
                             "seconds": round(got["seconds"], 3)}
    return result


def _stop(workers: list) -> None:
    """Close every live worker's env (its programs and display), then end the actors."""
    import ray

    workers = [w for w in workers if w is not None]
    refs = [w.close.remote() for w in workers]
    for ref in refs:
        try:
            ray.get(ref, timeout=60)
        except (ray.exceptions.RayError, TimeoutError):
            pass  # a dead actor's programs died with it (die-with-parent, PDEATHSIG)
    for w in workers:
        ray.kill(w, no_restart=True)


def _write_summary(out: Path, env: EnvSpec, policy: str, report: CollectReport) -> None:
    out.mkdir(parents=True, exist_ok=True)
    results = report.results
    mean = sum(r["score"] for r in results) / max(len(results), 1)
    rate = sum(r["success"] for r in results) / max(len(results), 1)
    summary = {"env": env.env_id, "policy": policy, "episodes": results,
               "mean_score": mean, "success_rate": rate, "failures": report.failures,
               "distributed": {k: v for k, v in report.to_dict().items()
                               if k not in ("results", "failures")}}
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
