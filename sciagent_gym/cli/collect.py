"""``sciagent-gym collect``: prompt-agent (or baseline) episodes on a Ray cluster.

Each worker owns one env and asks for one unit of a custom resource, so start every node that
has the tool's programs with it (``ray start --address=HEAD:6379 --resources='{"tool:ds9":
4}'``) and pass ``--resource tool:ds9``. Episodes come back as ``run`` writes them (one
directory per item, ``summary.json``), whichever node played them.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

#: sciagent_gym.runs.rollout.POLICIES, named here so that parsing imports neither Ray nor Gym.
POLICIES = ("vlm", "random", "oracle", "gui-oracle", "noop")


def _resource(text: str) -> tuple[str, float]:
    name, _, amount = text.partition("=")
    if not name:
        raise argparse.ArgumentTypeError(f"not a resource: {text!r} (NAME or NAME=AMOUNT)")
    return name, float(amount or 1)


def add_collect_parser(sub) -> None:
    p = sub.add_parser("collect", help="episodes on a Ray cluster: one env per worker, placed "
                                       "by custom resource, retried when a worker dies")
    p.add_argument("--env", required=True, help="env id, e.g. SciGUI-DS9-v0")
    p.add_argument("--task", action="append",
                   help="task id (repeatable; default: the env samples one per seed)")
    p.add_argument("--seeds", type=int, default=4, help="seeds per task (default 4)")
    p.add_argument("--seed", type=int, default=0, help="first seed")
    p.add_argument("--query", action="append",
                   help="query ids of a query-pool task (repeatable; each seed plays each)")
    p.add_argument("--policy", choices=POLICIES, default="vlm")
    p.add_argument("--base-url", help="vlm: endpoint up to /chat/completions "
                                      "(default: each worker's $SCIAGENT_VLM_BASE_URL)")
    p.add_argument("--model", help="vlm: model name (default $SCIAGENT_VLM_MODEL)")
    p.add_argument("--api-key-env", default="SCIAGENT_VLM_API_KEY",
                   help="vlm: variable holding the API key, read here and given to the "
                        "workers (unset: each worker reads its own environment)")
    p.add_argument("--history", type=int, default=3)
    p.add_argument("--max-steps", type=int, help="step budget of an episode")
    p.add_argument("--workers", type=int, default=2, help="Ray actors, one env each")
    p.add_argument("--resource", type=_resource, action="append", metavar="NAME[=AMOUNT]",
                   help="custom resource a worker needs (repeatable; default sciagent_slot)")
    p.add_argument("--pool-size", type=int, default=1, help="warm spares of each worker's env")
    p.add_argument("--max-restarts", type=int, default=2,
                   help="Ray restarts of a dead worker (its episode re-run on the new one)")
    p.add_argument("--item-retries", type=int, default=2,
                   help="re-queues of an item whose worker died beyond its restarts")
    p.add_argument("--address", default="auto",
                   help="Ray cluster (default: auto, the one `ray start` made here; 'local' "
                        "starts a one-node Ray offering --workers slots)")
    p.add_argument("--out", required=True, help="run directory")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_collect)


def cmd_collect(args: argparse.Namespace) -> int:
    import ray

    from sciagent_gym.runs.distributed import SLOT, EnvSpec, collect, make_items

    resources = dict(args.resource or [(SLOT, 1.0)])
    owns_ray = not ray.is_initialized()  # a caller's connection (a test's) stays open
    if not owns_ray:
        pass
    elif args.address == "local":
        ray.init(num_cpus=os.cpu_count() or 1, include_dashboard=False, log_to_driver=False,
                 resources={k: v * args.workers for k, v in resources.items()})
    else:
        ray.init(address=args.address, log_to_driver=False)
    agent = None
    if args.policy == "vlm":
        key = os.environ.get(args.api_key_env)
        agent = {k: v for k, v in {"base_url": args.base_url, "model": args.model,
                                   "api_key": key, "history": args.history}.items()
                 if v is not None}
    items = make_items(args.task or [None], range(args.seed, args.seed + args.seeds),
                       args.query or [None])
    try:
        report = collect(items, EnvSpec(args.env, {"pool_size": args.pool_size}),
                         policy=args.policy, agent=agent, actors=args.workers,
                         resources=resources, out=Path(args.out), max_steps=args.max_steps,
                         max_restarts=args.max_restarts, item_retries=args.item_retries,
                         progress=not args.quiet and sys.stderr.isatty())
    finally:
        if owns_ray:
            ray.shutdown()
    results = report.results
    mean = sum(r["score"] for r in results) / max(len(results), 1)
    print(f"{len(results)}/{len(items)} episodes in {report.seconds:.1f} s on "
          f"{len(report.by_node)} node(s): mean score {mean:.3f}; {report.on_restarted} "
          f"finished on a restarted worker, {report.requeued} re-queued, "
          f"{len(report.failures)} failed; {args.out}/summary.json")
    for failure in report.failures:
        print(f"  item {failure['index']} failed: {failure['error']}", file=sys.stderr)
    return 1 if report.failures else 0
