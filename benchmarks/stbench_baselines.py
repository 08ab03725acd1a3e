"""ST-Bench's baseline table for a query-pool tool: three policies on one split's queries.

- ``oracle``: the task's reference pipeline (its scripted oracle), the upper reference;
- ``random``: random mouse and keyboard actions for ``--random-steps`` steps, then DONE;
- ``prompt``: the prompt agent (:class:`sciagent_gym.agents.PromptAgent`, the whole HTTP path
  with its token and time accounting) against a local scripted model server
  (:class:`sciagent_gym.agents.scripted_server.ScriptedModelServer`) whose replies replay the
  family's first negative -- a weaker method, a wrong scope or a fabricated report, as the spec
  lists it -- as ``run()`` commands, then DONE.

Every episode pins one query (``reset(options={"query": id})``) and is recorded like
``sciagent-gym run``; then ``sciagent-gym report`` prints each policy's ST-Bench table and the
oracle's comparison against the prompt agent::

    python benchmarks/stbench_baselines.py --env SciCode-EarthData-v0 --split test \\
        --out benchmarks/results/stbench-earthdata
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import gymnasium as gym
from tqdm import tqdm

import sciagent_gym  # noqa: F401  (registers the envs)
from sciagent_gym.agents import PromptAgent
from sciagent_gym.agents.scripted_server import ScriptedModelServer
from sciagent_gym.cli.main import main as cli
from sciagent_gym.runs.rollout import run_episode
from sciagent_gym.tasks.queries import query_split

POLICIES = ("oracle", "random", "prompt")


def scripted_replies(task) -> list[tuple[int, str]]:
    """The first negative of ``task`` as a model's replies: shell steps become ``run()``
    actions, action strings stay as they are, and the episode ends with DONE."""
    name = next(iter(task.spec.negatives))
    replies: list[tuple[int, str]] = []
    for step in task.steps(name):
        if isinstance(step, dict) and "script" in step and "answer" not in step:
            replies.append((200, f"```python\nrun({step['script']!r})\n```"))
        elif isinstance(step, str):
            replies.append((200, step if step in ("DONE", "FAIL") else
                            f"```python\n{step}\n```"))
        elif isinstance(step, dict) and "action" in step and isinstance(step["action"], str):
            replies.append((200, f"```python\n{step['action']}\n```"))
    if not replies or replies[-1][1] not in ("DONE", "FAIL"):
        replies.append((200, "DONE"))
    return replies


def queries_of(env, split: str, tasks: list[str] | None) -> list[tuple[str, str]]:
    """(task id, query id) of every query-pool task's queries in ``split``."""
    out = []
    for task_id, spec in sorted(env.unwrapped.specs.items()):
        if not spec.queries or (tasks and task_id not in tasks):
            continue
        for i, query in enumerate(spec.queries):
            if split == "all" or query_split(task_id, spec.queries, i) == split:
                out.append((task_id, query["id"]))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--env", default="SciCode-EarthData-v0")
    ap.add_argument("--split", default="test", choices=("train", "val", "test", "all"))
    ap.add_argument("--tasks", help="comma-separated task ids (default: every query-pool task)")
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--random-steps", type=int, default=15)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    policies = [p for p in args.policies.split(",") if p]
    unknown = set(policies) - set(POLICIES)
    if unknown:
        ap.error(f"unknown policies {sorted(unknown)} (choose from {', '.join(POLICIES)})")
    env = gym.make(args.env)
    server = ScriptedModelServer()
    try:
        plan = queries_of(env, args.split, args.tasks.split(",") if args.tasks else None)
        if not plan:
            ap.error(f"{args.env} has no query-pool task with {args.split} queries")
        runs = [(p, t, q) for p in policies for t, q in plan]
        for policy, task_id, query in tqdm(runs, desc="episodes", unit="ep"):
            out = args.out / policy / task_id.replace("/", "__") / query
            if (out / "result.json").is_file():
                continue  # resumable: a finished episode is kept
            out.mkdir(parents=True, exist_ok=True)
            agent = None
            if policy == "prompt":
                # the replies need the pinned query's task: stage it, read its negative
                env.reset(seed=0, options={"task": task_id, "query": query})
                server.script = scripted_replies(env.unwrapped.task)
                agent = PromptAgent(base_url=server.url, model="scripted-negative-replay",
                                    api_key="none")
            run_episode(env, "vlm" if policy == "prompt" else policy, seed=0, task=task_id,
                        out_dir=out, agent=agent, options={"query": query},
                        max_steps=args.random_steps if policy == "random" else None)
    finally:
        server.close()
        env.close()
    for policy in policies:
        print(f"\n## {policy}")
        cli(["report", str(args.out / policy), "--out", str(args.out / f"report-{policy}")])
    has_stbench = any(json.loads(p.read_text()).get("stbench")
                      for p in (args.out / "oracle").rglob("result.json"))
    if "oracle" in policies and "prompt" in policies and has_stbench:
        print("\n## oracle against the prompt agent")
        cli(["report", str(args.out / "oracle"), "--baseline", str(args.out / "prompt"),
             "--out", str(args.out / "report-oracle-vs-prompt")])
    (args.out / "plan.json").write_text(json.dumps(
        {"env": args.env, "split": args.split, "policies": policies,
         "queries": [list(x) for x in plan]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
