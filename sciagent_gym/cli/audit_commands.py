"""``sciagent-gym audit``: the evaluator audit, the attack catalogue (``--attacks``), the prior
audit (``--prior``) and the docs' audit table (``--summary``)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def cmd_attacks(args: argparse.Namespace) -> int:
    """``audit --attacks``: the hostile-agent catalogue on every installed tool."""
    from tqdm import tqdm

    from sciagent_gym.errors import MissingProgramError
    from sciagent_gym.runs.attacks import ATTACKS, catalogue_summary, run_attacks
    from sciagent_gym.tools import discover, load_adapter

    tools = [args.tool] if args.tool else sorted(discover())
    names = args.attack or list(ATTACKS)
    unknown = [n for n in names if n not in ATTACKS]
    if unknown:
        print(f"error: unknown attack {unknown[0]!r} (known: {', '.join(ATTACKS)})",
              file=sys.stderr)
        return 2
    reports, skipped = [], {}
    for tool in tools:
        try:
            load_adapter(tool, getters=False).check_installed()
        except MissingProgramError as exc:
            skipped[tool] = str(exc)
            continue
        bar = tqdm(total=len(names), desc=f"attacks {tool}", unit="attack",
                   disable=args.json or args.quiet or not sys.stderr.isatty())
        report = run_attacks(tool, names, isolation=args.isolation,
                             progress=lambda name, bar=bar: bar.update(1))
        bar.close()
        reports.append(report)
        if not args.json:
            print(report.table())
    summary = catalogue_summary(reports, skipped)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        for tool, why in skipped.items():
            print(f"{tool}: skipped ({why.splitlines()[0]})")
        print(f"attacks held {summary['held']}/{summary['total']}")
    return 0 if reports and summary["held"] == summary["total"] else 1


def _progress_bar(args: argparse.Namespace, desc: str, unit: str) -> tuple[Any, Callable]:
    """A tqdm bar on a terminal (none with --json or -q) and the callback that ticks it."""
    from tqdm import tqdm

    bar = tqdm(desc=desc, unit=unit, disable=args.json or args.quiet or not sys.stderr.isatty())

    def progress(message: str) -> None:
        bar.set_postfix_str(message[:60])
        bar.update(1)

    return bar, progress


def cmd_prior(args: argparse.Namespace) -> int:
    """``audit --prior``: constant answers and instruction-decided answers, offline."""

    from sciagent_gym.runs.prior import audit_prior, summary_markdown
    from sciagent_gym.tools import discover

    tools = [args.tool] if args.tool else sorted(discover())
    reports = []
    t0 = time.monotonic()
    for tool in tools:
        bar, progress = _progress_bar(args, f"prior {tool}", "variant")
        report = audit_prior(tool, tasks=args.task or None, train=args.train,
                             unseen=args.unseen, progress=progress)
        bar.close()
        reports.append(report)
        if not args.json:
            print(report.table())
    if args.json:
        print(json.dumps({"train": args.train, "unseen": args.unseen,
                          "measured": time.strftime("%Y-%m-%d %H:%M %Z"),
                          "seconds": round(time.monotonic() - t0),
                          "tools": [r.to_dict() for r in reports]}, indent=2))
    else:
        print(summary_markdown(reports))
    return 0 if all(r.passed for r in reports) else 1


def cmd_audit(args: argparse.Namespace) -> int:
    from sciagent_gym.tools import discover

    if args.tool and args.tool not in discover():
        print(f"error: unknown tool {args.tool!r} (known: {', '.join(sorted(discover()))})",
              file=sys.stderr)
        return 2
    if args.attacks:
        return cmd_attacks(args)
    if args.prior:
        return cmd_prior(args)
    if args.summary:
        return cmd_audit_summary(args)

    from sciagent_gym.runs.audit import audit_tool
    from sciagent_gym.runs.audit_report import write_json
    from sciagent_gym.tools import discover

    tools = [args.tool] if args.tool else sorted(discover())
    reports = []
    for tool in tools:
        bar, progress = _progress_bar(args, f"audit {tool}", "check")
        report = audit_tool(tool, seeds=range(args.seed, args.seed + args.seeds),
                            cross=not args.no_cross, tasks=args.task or None,
                            progress=progress, isolation=args.isolation, cheats=args.cheats,
                            cases=args.cases, share_starts=not args.separate_starts,
                            settle=args.settle)
        bar.close()
        reports.append(report)
        if not args.json:
            print(report.table())
        if args.out:
            write_json(report, Path(args.out) / f"audit-{tool}.json")
    if args.json:
        print(json.dumps([r.to_dict() for r in reports], indent=2))
    return 0 if all(r.passed and r.metrics["f1"] >= 0.99 for r in reports) else 1


def cmd_audit_summary(args: argparse.Namespace) -> int:
    """``audit --summary DIR``: the docs' audit table from the reports a test run saved."""
    from sciagent_gym.runs.audit_summary import load_report, summary_markdown
    from sciagent_gym.tools import discover

    tools = discover()
    paths = sorted(Path(args.summary).glob("*.json"))
    if not paths:
        raise ValueError(f"no audit reports (*.json) in {args.summary}")
    reports = [load_report(p) for p in paths]
    order = {name: i for i, name in enumerate(tools)}
    reports.sort(key=lambda r: order.get(r.tool, len(order)))
    print(summary_markdown((r, tools[r.tool].display_name if r.tool in tools else r.tool)
                           for r in reports))
    return 0 if all(r.passed for r in reports) else 1
