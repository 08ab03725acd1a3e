"""The Ray rollout collector (runs/distributed.py) on a 3-node cluster simulated here, with the
fake provider (the fixture tool ``faketool``) and the prompt agent against the scripted model
server (agents/scripted_server.py).

One cluster per module (Ray's start-up dominates): a head that offers no slot and two nodes
offering ``sciagent_slot`` (2 and 1), so placement by resource is visible. Fault tests kill a
worker's process while its episode waits on the model server (a gate the test holds closed),
which is "mid-rollout" without any timing guess.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="install the [ray] extra")
from ray.cluster_utils import Cluster  # noqa: E402

from sciagent_gym.agents.scripted_server import ScriptedModelServer  # noqa: E402
from sciagent_gym.runs.distributed import (  # noqa: E402
    SLOT,
    EnvSpec,
    WorkItem,
    collect,
    make_items,
    sweep_collect_dirs,
)

pytestmark = pytest.mark.timeout(300)
FIXTURE_TOOLS = str(Path(__file__).resolve().parents[1] / "fixtures" / "tools")
SUM = "faketool/sum-numbers"
FAKE = EnvSpec("faketool", {"provider": "fake", "screen_size": (160, 100), "pool_size": 0},
               tools_roots=(FIXTURE_TOOLS,))


def ray_processes(temp_dir: Path) -> list[int]:
    """Live processes whose command line names ``temp_dir`` (raylets, GCS, workers)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str(temp_dir).encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    # short and ours: Ray's socket paths must stay under 108 bytes, which pytest's
    # tmp paths exceed under xdist (popen-gw1/ray0/session_.../sockets/plasma_store.1)
    temp_dir = Path(tempfile.mkdtemp(prefix="sag-ray-"))
    # Ray's default temp dir (its address file, a driver's logs) follows RAY_TMPDIR: nothing
    # of this cluster lands in /tmp/ray.
    old_tmpdir = os.environ.get("RAY_TMPDIR")
    os.environ["RAY_TMPDIR"] = str(temp_dir)
    (temp_dir / "ray").mkdir()
    # the workers' own temp files too (they inherit it): a worker SIGKILLed mid-episode
    # cannot remove its env's sandbox directory, which then goes with temp_dir
    old_tmp = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(temp_dir / "tmp")
    (temp_dir / "tmp").mkdir()
    node = {"num_cpus": 1, "include_dashboard": False, "temp_dir": str(temp_dir)}
    cluster = None
    try:
        cluster = Cluster(initialize_head=True, head_node_args={**node, "resources": {}})
        cluster.add_node(**{**node, "resources": {SLOT: 2}})
        cluster.add_node(**{**node, "resources": {SLOT: 1}})
        ray.init(address=cluster.address, log_to_driver=False)
        yield temp_dir
    finally:
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
        for name, old in (("RAY_TMPDIR", old_tmpdir), ("TMPDIR", old_tmp)):
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old
        left = ray_processes(temp_dir)
        shutil.rmtree(temp_dir, ignore_errors=True)
        assert left == [], f"Ray processes left running: {left}"


@pytest.fixture(scope="module")
def model():
    """The scripted model server, answering DONE; its gate holds requests while a test keeps
    it closed and ``arrived`` counts those waiting (so a test knows episodes are mid-way)."""
    with ScriptedModelServer() as server:
        yield server


def agent(model: ScriptedModelServer) -> dict:
    return {"base_url": model.url, "model": "scripted", "retries": 0}


def slot_nodes() -> set[str]:
    return {n["NodeID"] for n in ray.nodes() if n["Alive"] and n["Resources"].get(SLOT)}


def test_items_cover_every_combination_and_name_their_directories():
    items = make_items([SUM, None], range(2), ["q1", None])
    assert len(items) == 8 and [i.index for i in items] == list(range(8))
    assert items[0].name == "0000-faketool_sum-numbers-seed0-qq1"
    assert WorkItem(3, 7).name == "0003-sampled-seed7"


def test_collects_every_item_on_slot_nodes_with_recorded_directories(cluster, model, tmp_path):
    items = make_items([SUM], range(6))
    report = collect(items, FAKE, agent=agent(model), actors=3, out=tmp_path, progress=False)
    assert report.failures == [] and len(report.results) == 6
    assert [r["seed"] for r in report.results] == list(range(6))
    assert set(report.by_node) <= slot_nodes() and sum(report.by_node.values()) == 6
    for item, result in zip(items, report.results, strict=True):
        directory = tmp_path / item.name
        assert result["directory"] == str(directory) and result["policy"] == "vlm"
        assert result["agent"]["calls"] == 1 and result["end"] == "agent"
        lines = (directory / "trajectory.jsonl").read_text().splitlines()
        assert json.loads(lines[-1])["reply"] == "DONE"
        assert json.loads((directory / "result.json").read_text())["seed"] == item.seed
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert len(summary["episodes"]) == 6 and summary["distributed"]["requeued"] == 0


def test_collect_cli_parses_resources_tasks_and_seeds():
    import argparse

    from sciagent_gym.cli.collect import add_collect_parser

    parser = argparse.ArgumentParser()
    add_collect_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["collect", "--env", "SciGUI-DS9-v0", "--task", "ds9/a",
                              "--task", "ds9/b", "--seeds", "3", "--resource", "tool:ds9",
                              "--resource", "gpu_box=0.5", "--out", "x"])
    assert args.resource == [("tool:ds9", 1.0), ("gpu_box", 0.5)]
    assert args.policy == "vlm" and args.task == ["ds9/a", "ds9/b"] and args.seeds == 3
    with pytest.raises(SystemExit):
        parser.parse_args(["collect", "--env", "E", "--resource", "=2", "--out", "x"])


def test_missing_resource_names_the_ray_start_option(cluster, model):
    with pytest.raises(ValueError, match=r"ray start --resources='\{\"tool:nothing\": 4\}'"):
        collect(make_items([SUM], [0]), FAKE, agent=agent(model),
                resources={"tool:nothing": 1}, progress=False)


def test_an_episode_that_raises_is_a_failure_not_a_retry(cluster, model):
    report = collect([WorkItem(0, 0, "faketool/no-such-task"), WorkItem(1, 1, SUM)], FAKE,
                     agent=agent(model), actors=1, progress=False)
    assert [r["index"] for r in report.failures] == [0] and report.requeued == 0
    assert "no-such-task" in report.failures[0]["error"]
    assert [r["seed"] for r in report.results] == [1]


def _kill_one_mid_rollout(model: ScriptedModelServer, waiting: int):
    """``on_workers`` callback state: close the gate, and once ``waiting`` episodes wait on
    the model, SIGKILL the first worker's process, then open the gate."""
    pids: list[int] = []
    killed: list[int] = []
    model.gate.clear()

    def killer() -> None:
        for _ in range(waiting):
            assert model.arrived.acquire(timeout=120), "no episode reached the model"
        killed.append(pids[0])
        os.kill(pids[0], signal.SIGKILL)
        model.gate.set()

    thread = threading.Thread(target=killer, daemon=True)
    return pids, killed, thread


@pytest.mark.parametrize("ray_retries", [True, False], ids=["actor-restart", "driver-requeue"])
def test_every_item_finishes_when_a_worker_is_killed_mid_rollout(cluster, model, tmp_path,
                                                                  ray_retries):
    """actor-restart: Ray restarts the actor and re-runs its episode (max_restarts,
    max_task_retries). driver-requeue: no restarts; the driver replaces the dead actor and
    re-queues the item."""
    pids, killed, killer = _kill_one_mid_rollout(model, waiting=2)

    def on_workers(infos: list[dict]) -> None:
        pids.extend(i["pid"] for i in infos)
        if not killer.is_alive() and not killed:
            killer.start()

    items = make_items([SUM], range(5))
    try:
        report = collect(items, FAKE, agent=agent(model), actors=2, out=tmp_path,
                         progress=False, on_workers=on_workers,
                         max_restarts=2 if ray_retries else 0,
                         max_task_retries=1 if ray_retries else 0)
    finally:
        model.gate.set()
        killer.join(10)
    assert killed and report.failures == []
    assert [r["seed"] for r in report.results] == list(range(5))
    assert all((tmp_path / i.name / "result.json").is_file() for i in items)
    ran_on = {r["distributed"]["pid"] for r in report.results}
    assert killed[0] not in ran_on  # its episode was played again elsewhere (or restarted)
    if ray_retries:
        assert report.on_restarted == 1 and report.requeued == 0
        assert sum(r["distributed"]["on_restarted_actor"] for r in report.results) >= 1
    else:
        assert report.requeued == 1 and report.replaced_actors == 1
        assert max(r["distributed"]["driver_attempt"] for r in report.results) == 2
    sweep_collect_dirs()  # what a killed worker was recording is removed once it is dead
    assert not list(Path("/tmp").glob(f"sciagent-collect-{killed[0]}-*"))


def _rllib_example():
    path = Path(__file__).resolve().parents[2] / "examples" / "rllib_ppo.py"
    spec = importlib.util.spec_from_file_location("rllib_ppo", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["rllib_ppo"] = module
    spec.loader.exec_module(module)
    return module


def test_rllib_example_finishes_when_an_env_runner_is_killed(cluster, tmp_path):
    """examples/rllib_ppo.py on the fake provider: its runners placed by ``sciagent_slot``;
    one SIGKILLed while it samples in the second iteration (its process title says
    ``.apply``, RLlib's sample call) is restarted and the run completes."""
    pytest.importorskip("ray.rllib", reason="install the [ray] extra")
    killed: list[int] = []
    seen: list[list[int]] = []  # the runner processes after each iteration
    stop = threading.Event()

    def kill_one_sampling(pids: list[int]) -> None:
        while not stop.is_set():  # two small files: polling them often costs nothing
            for pid in pids:
                if _cmdline(pid).startswith(b"ray::SingleAgentEnvRunner.apply"):
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                    return
            time.sleep(0.005)

    def runners() -> list[int]:
        return sorted(p for p in ray_processes_by_env(cluster)
                      if _cmdline(p).startswith(b"ray::SingleAgentEnvRunner"))

    def restarted() -> list[int] | None:
        now = runners()
        return now if len(now) == 2 and killed[0] not in now else None

    def on_iteration(row: dict) -> None:
        if row["iteration"] == 1:
            seen.append(runners())
            assert len(seen[0]) == 2 and row["healthy_runners"] == 2
            threading.Thread(target=kill_one_sampling, args=(seen[0],), daemon=True).start()
        else:  # the run went on without it; Ray brings a fresh copy up meanwhile
            stop.set()
            assert killed, "no runner was caught sampling in iteration 2"
            deadline = time.monotonic() + 180
            while not restarted() and time.monotonic() < deadline:
                time.sleep(0.5)
            seen.append(runners())

    t0 = time.monotonic()
    try:
        summary = _rllib_example().main(
            ["--env-runners", "2", "--iterations", "2", "--batch", "32", "--pool-size", "0",
             "--max-steps", "3", "--resource", SLOT, "--cpus-per-runner", "0",
             "--out", str(tmp_path)],
            env_config={"env_id": "faketool", "task": SUM, "tools_roots": [FIXTURE_TOOLS],
                        "env_kwargs": {"provider": "fake"}},
            on_iteration=on_iteration)
    finally:
        stop.set()
    history = summary["history"]
    print(f"rllib (fake provider), a runner killed sampling in iteration 2: "
          f"{time.monotonic() - t0:.1f} s {json.dumps(history)} runners {seen}")
    assert killed and [row["iteration"] for row in history] == [1, 2]
    assert all(row["env_steps"] >= 32 * row["iteration"] for row in history)
    # Two runners again, the killed one replaced by a restarted copy (RLlib's actor restart;
    # it takes the copy back into service at the next iteration's health probe).
    assert len(seen[-1]) == 2 and killed[0] not in seen[-1]
    deadline = time.monotonic() + 60  # algo.stop() ends the runners, the restarted one too
    while runners() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert runners() == []


def _cmdline(pid: int) -> bytes:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes()
    except OSError:
        return b""


def ray_processes_by_env(temp_dir: Path) -> list[int]:
    """Live processes of this module's cluster: RAY_TMPDIR=temp_dir in their environment."""
    needle = f"RAY_TMPDIR={temp_dir}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if needle in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found
