"""Ported benchmarks, one package each: their checks, rewards, episode reports and ``report``
sections, registered on import. ``sciagent_gym.benchmarks.stbench`` (ST-Bench: metric
criteria, its training reward, per-task and per-system evaluation) and
``sciagent_gym.benchmarks.csmbench`` (CSMBench: open-answer text scores and its evaluation of
runs). A third port is a folder here with a ``registry.Benchmark`` registered in its
``__init__``; nothing in the env or the CLI names a benchmark.
"""

from __future__ import annotations

from sciagent_gym.benchmarks.registry import BENCHMARKS, Benchmark, register_benchmark

__all__ = ["BENCHMARKS", "Benchmark", "load_all", "register_benchmark"]


def load_all() -> dict[str, Benchmark]:
    """Import every ported benchmark (registering its checks, rewards and reports)."""
    import sciagent_gym.benchmarks.csmbench
    import sciagent_gym.benchmarks.stbench  # noqa: F401

    return BENCHMARKS
