"""A short density run on real DS9 programs: two envs for a few seconds each level. Checks that
latency, memory and CPU are measured from the real process trees (not how many envs fit) and
that every process ends when the run does, also when it is interrupted mid-run."""

from __future__ import annotations

import threading

import pytest
from helpers import requires

from sciagent_gym import processes
from sciagent_gym.runs import density

pytestmark = [pytest.mark.e2e, requires(tool="ds9")]


def test_density_measures_real_envs_and_ends_everything(tmp_path):
    r = density.run_density("SciGUI-DS9-v0", max_envs=2, pace=0.5, duration=3.0,
                            p95_limit=10.0, margin_mb=0.0)
    assert [lv["envs"] for lv in r["levels"]] == [1, 2] and r["held_envs"] == 2
    for lv in r["levels"]:
        assert lv["latency_s"]["n"] >= 3 * lv["envs"]
        assert 0.005 < lv["latency_s"]["p50"] <= lv["latency_s"]["p95"] < 10.0
        # Xvfb, openbox and DS9's wish at least, tens of MB each
        assert 40 < lv["mem_per_env_mb"] < 1000 and lv["processes"] >= 3 * lv["envs"]
        assert "wish" in lv["pss_mb_per_env_by_program"]
        assert lv["cpu_envs_cores"] >= 0 and lv["cpu_driver_cores"] > 0
    assert not r["errors"], r["errors"]
    assert r["left_running"] == 0 and not processes.live_processes()
    density.plot_density(r, tmp_path / "density.png")
    assert (tmp_path / "density.png").stat().st_size > 1000


def test_an_interrupt_mid_run_ends_every_process():
    def interrupt(level):
        raise KeyboardInterrupt  # as Ctrl+C in the main thread after the first level

    with pytest.raises(KeyboardInterrupt):
        density.run_density("SciGUI-DS9-v0", max_envs=3, pace=0.5, duration=2.0,
                            p95_limit=10.0, margin_mb=0.0, progress=interrupt)
    assert not processes.live_processes() and not density.our_pids()
    assert not [t for t in threading.enumerate() if t.name.startswith("density-env-")]
