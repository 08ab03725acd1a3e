"""cgroup v2 zone limits, checked against directories shaped like a v2 hierarchy (this
project's machines offer cgroup v1 only, so a real v2 delegation cannot be exercised here)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sciagent_gym.isolation import confinement as conf
from sciagent_gym.providers.local import cgroups
from sciagent_gym.providers.local import sandbox as sb


def _hierarchy(tmp_path: Path, delegated: str = "cpu memory pids") -> tuple[Path, str]:
    root = tmp_path / "cgroup"
    own = root / "system.slice" / "ci.service"
    own.mkdir(parents=True)
    (root / "cgroup.controllers").write_text("cpu io memory pids\n")
    (own / "cgroup.subtree_control").write_text(delegated + "\n")
    return root, "0::/system.slice/ci.service\n"


def test_v1_hosts_and_undelegated_cgroups_get_no_zone_cgroup(tmp_path):
    assert cgroups.own_cgroup(tmp_path, "0::/\n") is None  # no cgroup.controllers: v1
    root, proc = _hierarchy(tmp_path, delegated="cpu")
    assert cgroups.own_cgroup(root, proc) == root / "system.slice" / "ci.service"
    assert cgroups.delegated_parent(root, proc) is None  # memory and pids not delegated


def test_a_zone_cgroup_carries_its_limits_and_goes_away(tmp_path):
    root, proc = _hierarchy(tmp_path)
    parent = cgroups.delegated_parent(root, proc)
    zone = cgroups.ZoneCgroup(parent, "agent", cgroups.AGENT_CGROUP)
    assert (zone.path / "memory.max").read_text() == str(4 << 30)
    assert (zone.path / "pids.max").read_text() == "256"
    assert (zone.path / "cpu.weight").read_text() == "50"
    assert zone.join_path.endswith("cgroup.procs")
    zone.remove()
    assert not zone.path.exists()


def test_preexec_joins_the_cgroup_before_the_program_runs(tmp_path):
    procs = tmp_path / "cgroup.procs"
    procs.touch()
    lease = conf.UidLease()
    try:
        subprocess.run(["true"], check=True,
                       preexec_fn=conf.preexec(lease.agent, conf.AGENT_LIMITS, str(procs)))
    finally:
        lease.release()
    assert procs.read_text() == "0"


@pytest.mark.skipif(sb.bwrap_problem() is not None, reason="bubblewrap cannot isolate")
def test_sandbox_zones_use_a_delegated_cgroup(tmp_path, monkeypatch):
    root, proc = _hierarchy(tmp_path)
    parent = cgroups.delegated_parent(root, proc)
    monkeypatch.setattr(cgroups, "delegated_parent", lambda *a, **k: parent)
    box = sb.Sandbox(":0", "/nonexistent", "bwrap")
    box.show_display = False
    try:
        box.start()
        zone = box.cgroup.path
        assert (zone / "cgroup.procs").read_text() == "0"
        assert (zone / "pids.max").read_text() == "2048"
        assert box.exec(shell="echo in").output == "in\n"
        box.stop()
        assert box.cgroup is None and not zone.exists()
    finally:
        box.close()


def test_stale_zone_cgroups_are_swept(tmp_path):
    root, proc = _hierarchy(tmp_path)
    parent = cgroups.delegated_parent(root, proc)
    dead = subprocess.Popen(["true"])
    dead.wait()
    (parent / f"sciagent-{dead.pid}-agent-ab").mkdir()
    (parent / "sciagent-1-program-cd").mkdir()
    removed = cgroups.sweep_stale(parent, lambda pid: pid == 1)
    assert removed == [str(parent / f"sciagent-{dead.pid}-agent-ab")]
    assert (parent / "sciagent-1-program-cd").exists()
