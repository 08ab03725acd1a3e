"""The registry of ported benchmarks (what ``sciagent-gym report`` asks each for)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Benchmark:
    """A ported benchmark as ``sciagent-gym report`` sees it. ``report(results, args)`` gets
    the episodes' result records and the command's arguments and returns the benchmark's
    summary (JSON-able; None when no episode belongs to it) and the text to print after the
    episode table. ``options(parser)`` adds its own ``report`` options."""

    name: str
    title: str
    report: Callable[[list[dict[str, Any]], argparse.Namespace], tuple[Any, str]]
    options: Callable[[argparse.ArgumentParser], None] | None = None


BENCHMARKS: dict[str, Benchmark] = {}


def register_benchmark(bench: Benchmark) -> Benchmark:
    if bench.name in BENCHMARKS and BENCHMARKS[bench.name] is not bench:
        raise ValueError(f"benchmark {bench.name!r} is already registered")
    BENCHMARKS[bench.name] = bench
    return bench
