"""A short run of the benchmark on the real app (checks that it measures, not how fast)."""

from __future__ import annotations

import pytest

from sciagent_gym.runs.bench import format_bench, plot_bench, run_bench

pytestmark = pytest.mark.e2e


def test_bench_runs_and_reports(tmp_path):
    result = run_bench("SciGUI-ImageJ-v0", task="imagej/count-nuclei", episodes=2,
                       baseline_episodes=1, vector_sizes=(1,), vector_steps=3,
                       reset_sleep=0.2, step_sleep=0.05)
    for key in ("reset_cold_s", "reset_warm_s", "step_overhead_s", "episode_s"):
        assert result[key]["p50"] > 0 and result[key]["p95"] >= result[key]["p50"]
    assert result["episodes_per_hour"]["ours"] > 0 and result["peak_memory_mb_per_env"] > 50
    assert result["vector_steps_per_s"]["1"] > 0
    assert "episodes per hour" in format_bench(result)
    plot_bench(result, tmp_path / "bench.png")
    assert (tmp_path / "bench.png").stat().st_size > 1000
