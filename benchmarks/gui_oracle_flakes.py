"""Flake rate of the GUI oracles under load: each task's GUI oracle, 20 runs, beside CPU burners.

    python benchmarks/gui_oracle_flakes.py --tool ds9 --runs 20 --burners 2 --json flakes-ds9.json
    python benchmarks/gui_oracle_flakes.py --runs 20             # every installed tool

A run is one episode of the task's GUI oracle (``audit --case gui_oracle``) on seed 0, 1, ...
(each seed its own variant, so a run also tests that the oracle works for that variant). It
flakes when it does not score 1.0 with success, or raises. ``--burners`` processes spin on the
CPU the whole time (two on a 2-core machine leave the program and the env half a core each),
so timing assumptions that hold on an idle machine are put to the test. Flaky oracles are to
be fixed, not retried: the target is 0 per tool. Prints a table per tool and the failures.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from pathlib import Path

from tqdm import tqdm

import sciagent_gym  # noqa: F401
from sciagent_gym.runs.audit import audit_tool
from sciagent_gym.tools import discover, load_tool_specs, tool_info


def _burn() -> None:
    while True:
        pass


def flakes(tool: str, runs: int, quiet: bool = False, only: list[str] | None = None) -> dict:
    """Every GUI oracle of ``tool`` (or those of the tasks ``only``) on seeds 0 .. runs-1;
    counts and failures per task."""
    bar = tqdm(desc=f"{tool} GUI oracles", unit="ep", disable=quiet)

    def progress(msg: str) -> None:
        bar.set_postfix_str(msg, refresh=False)
        bar.update()

    t0 = time.monotonic()
    feasible = [t for t, spec in load_tool_specs(tool).items()
                if not spec.infeasible and (not only or t in only)]
    report = audit_tool(tool, seeds=range(runs), cross=False, cases=["gui_oracle"],
                        tasks=feasible, progress=progress)
    bar.close()
    tasks: dict[str, dict] = {}
    for case in report.cases:
        if not case.gui:
            continue
        row = tasks.setdefault(case.task_id, {"runs": 0, "flakes": 0, "steps": [],
                                              "seconds": [], "failures": []})
        row["runs"] += 1
        row["steps"].append(case.steps)
        row["seconds"].append(round(case.seconds, 2))
        if not case.ok:
            row["flakes"] += 1
            row["failures"].append({"seed": case.seed, "score": case.score,
                                    "error": case.error, "failed": case.failed_criteria})
    total = sum(r["runs"] for r in tasks.values())
    bad = sum(r["flakes"] for r in tasks.values())
    return {"tool": tool, "runs_per_task": runs, "tasks": tasks, "episodes": total,
            "flakes": bad, "flake_rate": bad / total if total else None,
            "minutes": round((time.monotonic() - t0) / 60, 1)}


def table(result: dict) -> str:
    lines = [f"{tool_info(result['tool']).display_name}: {result['flakes']}/"
             f"{result['episodes']} runs flaked ({len(result['tasks'])} tasks x "
             f"{result['runs_per_task']} runs, {result['minutes']} min)"]
    for task, r in sorted(result["tasks"].items()):
        lines.append(f"  {task:<38} {r['flakes']:>2}/{r['runs']:<3} steps "
                     f"{min(r['steps'])}-{max(r['steps'])}")
        for f in r["failures"]:
            lines.append(f"      seed {f['seed']}: score {f['score']:.2f} "
                         f"{f['error'] or ''} {f['failed']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", action="append", help="only these tools (default: all "
                                                         "installed)")
    parser.add_argument("--task", action="append", help="only these tasks (e.g. a fixed one "
                                                         "measured again)")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--burners", type=int, default=2, help="CPU-burning processes")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("-q", "--quiet", action="store_true")
    args = parser.parse_args(argv)
    tools = args.tool or [t for t in sorted(discover())
                          if not any(r.missing() for r in tool_info(t).requires)]
    burners = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(args.burners)]
    for p in burners:
        p.start()
    results = []
    try:
        for tool in tools:
            results.append(flakes(tool, args.runs, args.quiet or not sys.stderr.isatty(),
                                  args.task))
            print(table(results[-1]), flush=True)
    finally:
        for p in burners:
            p.terminate()
            p.join()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0 if all(r["flakes"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
