"""Distributed rollouts with the real DS9 on a 3-node Ray cluster simulated here: the collector
(runs/distributed.py) with a worker SIGKILLed mid-rollout. (RLlib's runner restart is tested
on the fake provider in tests/integration/test_distributed.py: a DS9 PPO iteration took 75 s at
load 8 here, past this module's budget; tests/e2e/test_rl_loops_e2e.py trains on DS9.)

One cluster for the module (Ray's start-up dominates): a head offering nothing and two nodes
offering ``tool:ds9`` (2 and 1). Every process of the cluster inherits a mark in its
environment, so the end check finds this module's leftovers only (raylets, workers, DS9s).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest
from helpers import requires

ray = pytest.importorskip("ray", reason="install the [ray] extra")
from ray.cluster_utils import Cluster  # noqa: E402

from sciagent_gym.agents.scripted_server import ScriptedModelServer  # noqa: E402
from sciagent_gym.runs.distributed import EnvSpec, collect, make_items  # noqa: E402

pytestmark = [pytest.mark.timeout(300), requires(tool="ds9")]
DS9 = {"tool:ds9": 1}


def _proc_table() -> dict[int, tuple[int, bytes, bytes]]:
    """pid -> (parent pid, command line, environment) of every live, non-zombie process."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
                if stat[0] != "Z":
                    table[int(entry.name)] = (int(stat[1]), (entry / "cmdline").read_bytes(),
                                              (entry / "environ").read_bytes())
            except (OSError, IndexError, ValueError):
                continue
    return table


def marked(mark: bytes) -> list[int]:
    return sorted(p for p, (_, _, env) in _proc_table().items()
                  if mark in env and p != os.getpid())


def descendants(pid: int) -> set[int]:
    table = _proc_table()
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, (ppid, _, _) in table.items() if ppid in frontier} - found
        found |= frontier
    return found


def wait_until(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)
    return value


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    # short and ours: Ray's socket paths must stay under 108 bytes, which pytest's
    # tmp paths exceed under xdist (popen-gw1/ray0/session_.../sockets/plasma_store.1)
    temp_dir = Path(tempfile.mkdtemp(prefix="sag-ray-"))
    (temp_dir / "ray").mkdir()  # RAY_TMPDIR/ray holds the address file (not /tmp/ray)
    mark = f"SCIAGENT_TEST_MARK={uuid.uuid4().hex}".encode()
    saved = {k: os.environ.get(k) for k in ("RAY_TMPDIR", "SCIAGENT_TEST_MARK")}
    os.environ["RAY_TMPDIR"] = str(temp_dir)
    os.environ["SCIAGENT_TEST_MARK"] = mark.split(b"=", 1)[1].decode()
    node = {"include_dashboard": False, "temp_dir": str(temp_dir)}
    cluster = None
    try:
        cluster = Cluster(initialize_head=True,
                          head_node_args={**node, "num_cpus": 1, "resources": {}})
        cluster.add_node(**node, num_cpus=2, resources={"tool:ds9": 2})
        cluster.add_node(**node, num_cpus=1, resources={"tool:ds9": 1})
        ray.init(address=cluster.address, log_to_driver=False)
        yield mark
    finally:
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        deadline = time.monotonic() + 30
        while (left := marked(mark)) and time.monotonic() < deadline:
            time.sleep(0.5)
        shutil.rmtree(temp_dir, ignore_errors=True)
        assert left == [], f"left running: {left}"


def test_collector_finishes_every_ds9_episode_when_a_worker_is_killed(cluster, tmp_path):
    pids: list[int] = []
    killed: dict[str, object] = {}
    script = [(200, "WAIT")] * 40  # the model waits; the runner ends each episode (budget)

    with ScriptedModelServer(script) as server:
        def killer() -> None:
            # Mid-rollout: the worker's DS9 is up and the model has been asked.
            victim = pids[0]
            wait_until(lambda: len(server.requests) >= 1 and
                       any(b"ds9" in _proc_table().get(p, (0, b"", b""))[1]
                           for p in descendants(victim)), 120, "the worker's DS9")
            killed["programs"] = descendants(victim)
            killed["pid"] = victim
            os.kill(victim, signal.SIGKILL)

        thread = threading.Thread(target=killer, daemon=True)

        def on_workers(infos: list[dict]) -> None:
            pids.extend(i["pid"] for i in infos)
            if not thread.is_alive() and not killed:
                thread.start()

        t0 = time.monotonic()
        items = make_items(["ds9/toggle-colorbar"], range(4))
        report = collect(items, EnvSpec("SciGUI-DS9-v0", {"pool_size": 0, "max_steps": 3}),
                         agent={"base_url": server.url, "model": "scripted", "retries": 0},
                         actors=2, resources=DS9, out=tmp_path, progress=False,
                         on_workers=on_workers)
        seconds = time.monotonic() - t0
        thread.join(5)
    print(f"collector: 4 DS9 episodes on 2 workers, one killed, {seconds:.1f} s; "
          f"{report.on_restarted} on a restarted actor, {report.requeued} re-queued")
    assert killed and report.failures == []
    assert [r["seed"] for r in report.results] == list(range(4))
    assert report.on_restarted + report.requeued >= 1
    for item, result in zip(items, report.results, strict=True):
        assert result["end"] == "budget" and result["agent"]["calls"] == 3
        assert len(list((tmp_path / item.name).glob("step_*.png"))) == 4  # reset + 3 steps
    assert json.loads((tmp_path / "summary.json").read_text())["distributed"]["seconds"] > 0
    # The killed worker's programs and display went with it.
    wait_until(lambda: not (killed["programs"] & set(_proc_table())) or None, 30,
               "the killed worker's programs to end")

