"""What the sandbox's defences cost: reset, step, CLI step and episode end, this tree vs another.

    git worktree add /tmp/before <commit>          # the code to compare against
    for d in envs task_specs vm_images; do ln -s ../$d /tmp/before/sciagent_gym/$d; done
    python benchmarks/sandbox_cost.py --before /tmp/before --rounds 2

Each round measures both trees, one after the other, each in a child process of its own (the
same interpreter, the tree first on PYTHONPATH): ``--resets`` cold resets (``pool_size=0``:
program start included), ``--steps`` idle steps (a pointer move: parse, act, settle, grab),
``--steps`` CLI steps (``run("true")``; the first starts the agent zone) and the episode's end
(``DONE``: stop the agent's processes, freeze the work directory, dump the program's state,
score). Rounds alternate the order, so drift on a noisy machine hits both trees alike. Prints
medians per tree and the ratio this/before; ``--json`` prints the numbers instead.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, sys, time
import gymnasium as gym
import sciagent_gym
env_id, task, resets, steps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
env = gym.make(env_id, task=task, pool_size=0, max_steps=10_000, modality="gui+cli")
out = {"reset": [], "step": [], "cli": [], "end": [], "module": sciagent_gym.__file__}
try:
    for i in range(resets):
        t = time.perf_counter(); env.reset(seed=i); out["reset"].append(time.perf_counter() - t)
        for k in range(steps):
            t = time.perf_counter()
            env.step({"type": "move", "x": 1200 - (k % 2) * 20, "y": 780})
            out["step"].append(time.perf_counter() - t)
        for k in range(steps):
            t = time.perf_counter(); env.step({"type": "run", "command": "true"})
            out["cli"].append(time.perf_counter() - t)
        t = time.perf_counter(); env.step("DONE"); out["end"].append(time.perf_counter() - t)
finally:
    env.close()
print("RESULT" + json.dumps(out))
"""


def measure(tree: Path, args: argparse.Namespace) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    res = subprocess.run([sys.executable, "-c", CHILD, args.env, args.task, str(args.resets),
                          str(args.steps)], capture_output=True, text=True, env=env,
                         cwd=tree, timeout=3600)
    for line in res.stdout.splitlines():
        if line.startswith("RESULT"):
            data = json.loads(line[6:])
            if not data.pop("module").startswith(str(tree)):
                raise SystemExit(f"the child imported sciagent_gym from elsewhere than {tree}")
            return data
    raise SystemExit(f"measurement in {tree} failed:\n{res.stderr[-3000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the other tree (see the docstring)")
    parser.add_argument("--env", default="SciGUI-ImageJ-v0")
    parser.add_argument("--task", default="imagej/count-nuclei")
    parser.add_argument("--resets", type=int, default=8)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    trees = {"before": Path(args.before).resolve(),
             "this": Path(__file__).resolve().parent.parent}
    samples: dict[str, dict[str, list[float]]] = {k: {} for k in trees}
    for r in range(args.rounds):
        order = list(trees) if r % 2 == 0 else list(reversed(trees))
        for name in order:
            for key, values in measure(trees[name], args).items():
                samples[name].setdefault(key, []).extend(values)
    table = {}
    for key in ("reset", "step", "cli", "end"):
        before = statistics.median(samples["before"][key])
        this = statistics.median(samples["this"][key])
        table[key] = {"before_ms": before * 1000, "this_ms": this * 1000,
                      "ratio": this / before, "n": len(samples["this"][key])}
    if args.json:
        print(json.dumps({"env": args.env, "task": args.task, "phases": table}, indent=2))
        return
    print(f"{args.env} ({args.task}), medians over {args.rounds} rounds")
    print(f"{'phase':<8}{'before ms':>12}{'this ms':>12}{'ratio':>8}")
    for key, row in table.items():
        print(f"{key:<8}{row['before_ms']:>12.1f}{row['this_ms']:>12.1f}{row['ratio']:>8.2f}")


if __name__ == "__main__":
    main()
