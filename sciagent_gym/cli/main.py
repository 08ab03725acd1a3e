"""``sciagent-gym``: list envs and tasks, run baseline policies, check the installation."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from sciagent_gym import __version__


def _cmd_list(args: argparse.Namespace) -> int:
    from sciagent_gym.tasks.spec import count_variants
    from sciagent_gym.tools import discover, load_tool_specs

    rows = []
    for name, info in discover().items():
        if args.tool and name != args.tool:
            continue
        specs = load_tool_specs(name)
        rows.append({"env_id": info.env_id, "tool": name, "domain": info.domain,
                     "tasks": [{"id": s.id, "title": s.title, "difficulty": s.difficulty,
                                "modality": s.modality, "heldout": s.heldout,
                                "max_steps": s.max_steps, "tags": list(s.tags),
                                "param_combinations": count_variants(s),
                                "seeded_data": bool(s.generate)}
                               for s in specs.values()]})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        print(f"{row['env_id']}  ({row['domain']}, {len(row['tasks'])} tasks)")
        for t in row["tasks"]:
            held = " [held out]" if t["heldout"] else ""
            line = f"  {t['id']:<34} {t['difficulty']:<7} {t['modality']:<8} {t['title']}{held}"
            if args.variants:
                combos = t["param_combinations"]
                count = "continuous" if combos is None else str(combos)
                data = ", new data per seed" if t["seeded_data"] else ""
                line = f"  {t['id']:<34} {t['difficulty']:<7} {count:>10} parameter " \
                       f"combinations{data}"
            print(line)
    return 0


def _cmd_doctor(args: argparse.Namespace) -> int:
    from sciagent_gym.cli.doctor import format_checks, run_checks

    checks = run_checks()
    if args.json:
        print(json.dumps([c.__dict__ for c in checks], indent=2))
    else:
        print(format_checks(checks))
    return 0 if all(c.ok for c in checks if c.required) else 1


def _cmd_run(args: argparse.Namespace) -> int:
    import gymnasium as gym
    from tqdm import tqdm

    import sciagent_gym  # noqa: F401  (registers the env ids)
    from sciagent_gym.runs.rollout import run_episode

    env_id = args.env.split(":", 1)[-1]
    if env_id not in gym.registry:
        known = ", ".join(k for k in gym.registry if k.startswith("SciGUI-"))
        print(f"error: unknown env {args.env!r} (known: {known})", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else None
    agent = None
    if args.policy == "vlm":
        from sciagent_gym.agents import PromptAgent

        agent = PromptAgent(base_url=args.base_url, model=args.model,
                            api_key=os.environ.get(args.api_key_env), history=args.history)
    # A spare sandbox only pays off when another episode follows.
    remote = {"url": args.url, "token": args.token} if args.provider == "remote" else {}
    env = gym.make(env_id, task=args.task, isolation=args.isolation, split=args.split,
                   hints=args.hints, pool_size=1 if args.episodes > 1 else 0,
                   provider=args.provider, modality=args.modality, **remote)
    results = []
    try:
        bar = tqdm(range(args.episodes), desc=f"{args.policy}", unit="ep",
                   disable=args.quiet or not sys.stderr.isatty())
        for k in bar:
            seed = args.seed + k
            ep_dir = out / f"ep{k:03d}-seed{seed}" if out else None
            res = run_episode(env, args.policy, seed, task=args.task, out_dir=ep_dir,
                              max_steps=args.max_steps, agent=agent)
            results.append(res)
            passed = sum(c["passed"] for c in res.criteria)
            tqdm.write(f"episode {k} seed={seed} task={res.task_id} variant={res.variant} "
                       f"score={res.score:.3f} success={res.success} steps={res.steps} "
                       f"criteria={passed}/{len(res.criteria)} ({res.seconds:.1f}s)"
                       + (f" tokens={res.agent['total_tokens']}" if res.agent else ""))
            if args.verbose:
                for c in res.criteria:
                    tqdm.write(f"    [{'x' if c['passed'] else ' '}] {c['name']} "
                               f"(w={c['weight']:g}): {c['detail']}")
    finally:
        env.close()
    mean = sum(r.score for r in results) / max(len(results), 1)
    rate = sum(r.success for r in results) / max(len(results), 1)
    print(f"{len(results)} episodes: mean score {mean:.3f}, success rate {rate:.2f}")
    if out:
        out.mkdir(parents=True, exist_ok=True)
        summary = {"env": env_id, "policy": args.policy, "task": args.task,
                   "episodes": [r.to_dict() for r in results],
                   "mean_score": mean, "success_rate": rate}
        (out / "summary.json").write_text(json.dumps(summary, indent=2))
        print(f"trajectories, screenshots and final states in {out}/")
    return 0


def _cmd_attacks(args: argparse.Namespace) -> int:
    """``audit --attacks``: the hostile-agent catalogue on every installed tool."""
    from tqdm import tqdm

    from sciagent_gym.errors import MissingProgramError
    from sciagent_gym.runs.attacks import ATTACKS, run_attacks
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
    held = sum(r.held for r in reports)
    total = sum(len(r.results) for r in reports)
    if args.json:
        print(json.dumps({"held": held, "total": total, "skipped": skipped,
                          "tools": [r.to_dict() for r in reports]}, indent=2))
    else:
        for tool, why in skipped.items():
            print(f"{tool}: skipped ({why.splitlines()[0]})")
        print(f"attacks held {held}/{total}")
    return 0 if reports and held == total else 1


def _cmd_audit(args: argparse.Namespace) -> int:
    if args.attacks:
        return _cmd_attacks(args)
    from tqdm import tqdm

    from sciagent_gym.runs.audit import audit_tool, write_json
    from sciagent_gym.tools import discover

    tools = [args.tool] if args.tool else sorted(discover())
    reports = []
    for tool in tools:
        bar = tqdm(desc=f"audit {tool}", unit="check", disable=args.json or args.quiet
                   or not sys.stderr.isatty())

        def progress(message: str, bar=bar) -> None:
            bar.set_postfix_str(message[:60])
            bar.update(1)

        report = audit_tool(tool, seeds=range(args.seed, args.seed + args.seeds),
                            cross=not args.no_cross, tasks=args.task or None,
                            progress=progress, isolation=args.isolation, cheats=args.cheats)
        bar.close()
        reports.append(report)
        if not args.json:
            print(report.table())
        if args.out:
            write_json(report, Path(args.out) / f"audit-{tool}.json")
    if args.json:
        print(json.dumps([r.to_dict() for r in reports], indent=2))
    return 0 if all(r.passed and r.metrics["f1"] >= 0.99 for r in reports) else 1


def _cmd_rescore(args: argparse.Namespace) -> int:
    from sciagent_gym.runs.reports import rescore

    rows = rescore(args.run_dir)
    if not rows:
        print(f"error: no saved final states under {args.run_dir}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps([r.__dict__ | {"changed": r.changed} for r in rows], indent=2))
        return 0
    for r in rows:
        mark = "CHANGED" if r.changed else "same"
        print(f"{mark:<8} {r.task_id:<32} {r.old_score:.3f} -> {r.new_score:.3f}  "
              f"({Path(r.directory).name})")
    changed = sum(r.changed for r in rows)
    print(f"{len(rows)} episodes re-scored, {changed} changed")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from sciagent_gym.runs import reports
    from sciagent_gym.runs.reports import (
        episode_metrics,
        format_table,
        load_results,
        plot,
        write_csv,
    )

    runs = {d: load_results(d) for d in args.run_dir}
    results = [r for rows in runs.values() for r in rows]
    if not results:
        print(f"error: no episodes under {', '.join(args.run_dir)}", file=sys.stderr)
        return 1
    if len(args.run_dir) > 1:  # side by side: one column group per run, never pooled
        labelled: dict[str, list] = {}
        for d, rows in runs.items():
            label = reports.run_label(d, rows)
            labelled[label if label not in labelled else f"{label} ({Path(d).name})"] = rows
        compared = reports.compare_runs(labelled)
        if args.json:
            print(json.dumps(compared, indent=2, default=str))
        else:
            print(reports.format_comparison(compared))
        out = Path(args.out or args.run_dir[0])
        out.mkdir(parents=True, exist_ok=True)
        reports.write_comparison_csv(compared, out / "report.csv")
        reports.plot_comparison(compared, out / "report.png", title=" vs ".join(compared))
        if not args.json:
            print(f"wrote {out / 'report.csv'} and {out / 'report.png'}")
        return 0
    metrics = episode_metrics(results)
    if args.json:
        print(json.dumps(metrics, indent=2, default=str))
    else:
        print(format_table(metrics))
    out = Path(args.out or args.run_dir[0])
    out.mkdir(parents=True, exist_ok=True)
    write_csv(metrics, out / "report.csv")
    plot(metrics, out / "report.png", title=", ".join(args.run_dir))
    if not args.json:
        print(f"wrote {out / 'report.csv'} and {out / 'report.png'}")
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from sciagent_gym.runs.bench import format_bench, plot_bench, run_bench, save

    if args.episodes < 1 or args.baseline_episodes < 1:
        raise ValueError("bench needs --episodes >= 1 and --baseline-episodes >= 1: every "
                         "figure is a median and a ratio against the baseline")

    def progress(message: str) -> None:
        if not args.json:
            print(f"... {message}", file=sys.stderr, flush=True)

    result = run_bench(args.env, task=args.task, episodes=args.episodes,
                       baseline_episodes=args.baseline_episodes,
                       vector_sizes=tuple(args.vector), vector_steps=args.vector_steps,
                       pool_size=args.pool_size, pool_workers=args.pool_workers,
                       progress=progress)
    print(json.dumps(result, indent=2) if args.json else format_bench(result))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        stem = args.env.split(":")[-1]
        save(result, out / f"{stem}.json")
        plot_bench(result, out / f"{stem}.png")
    return 0


def _cmd_replay(args: argparse.Namespace) -> int:
    from sciagent_gym.runs.replay import replay_run

    def show(r) -> None:
        if not args.json:
            got = "error" if r.replayed_score is None else f"{r.replayed_score:.3f}"
            print(f"{'same' if r.same else 'DIFF'}  {r.task_id} seed={r.seed} "
                  f"recorded={r.recorded_score:.3f} replayed={got} steps={r.steps}"
                  + (f"  ({r.error})" if r.error else ""))

    results = replay_run(Path(args.run_dir), progress=show)
    same = sum(r.same for r in results)
    if args.json:
        print(json.dumps([r.to_dict() for r in results], indent=2))
    else:
        print(f"{same}/{len(results)} episodes reach the recorded score again")
    return 0 if same == len(results) else 1


def _cmd_export_minari(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from sciagent_gym.runs.minari_export import export_runs

    size = None
    if args.size:
        try:
            w, h = (int(v) for v in args.size.lower().split("x"))
        except ValueError:
            raise ValueError(f"--size must be WIDTHxHEIGHT, got {args.size!r}") from None
        size = (w, h)
    try:
        import minari  # noqa: F401
    except ImportError:
        raise ValueError("Minari is not installed: pip install 'sciagent-gym[data]'") from None
    bar = tqdm(desc="episodes", unit="ep", disable=args.quiet or not sys.stderr.isatty())
    dataset = export_runs([Path(r) for r in args.run_dir], args.dataset_id, size=size,
                          root=Path(args.root) if args.root else None, jpeg=args.jpeg,
                          author=args.author, progress=lambda _: bar.update())
    bar.close()
    print(f"dataset {args.dataset_id}: {dataset.total_episodes} episodes, "
          f"{dataset.total_steps} steps")
    return 0


def _cmd_deps(args: argparse.Namespace) -> int:
    from sciagent_gym.deps import apt_packages
    from sciagent_gym.tools import discover, envs_root

    unknown = sorted(set(args.tool or ()) - set(discover()))
    if unknown:
        raise ValueError(f"unknown tools {unknown} (known: {', '.join(sorted(discover()))})")
    from importlib import resources

    vm_images = Path(str(resources.files("sciagent_gym.vm_images")))
    print("\n".join(apt_packages(envs_root(), vm_images, tools=args.tool)))
    return 0


def _cmd_install(args: argparse.Namespace) -> int:
    from sciagent_gym.tools import envs_root

    recipes = envs_root()
    script = recipes / args.tool / "install.sh"
    if not script.is_file():
        known = sorted(p.parent.name for p in recipes.glob("*/install.sh"))
        listed = ", ".join(known) or "none"
        raise ValueError(f"no install recipe for {args.tool!r} (recipes: {listed}); tools "
                         "from Debian packages install with apt-get, see `sciagent-gym doctor`")
    return subprocess.call(["bash", str(script), *args.recipe_args])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sciagent-gym", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="list registered envs and their tasks")
    p.add_argument("--tool", help="only this tool (e.g. imagej)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--variants", action="store_true",
                   help="count the parameter combinations of every task")
    p.set_defaults(func=_cmd_list)

    p = sub.add_parser("run", help="run episodes of a baseline policy")
    p.add_argument("--env", required=True, help="env id, e.g. SciGUI-ImageJ-v0")
    p.add_argument("--task", help="task id (default: sampled per episode)")
    p.add_argument("--policy", choices=("random", "oracle", "noop", "vlm"), default="random",
                   help="vlm: a model behind an OpenAI-compatible chat-completions endpoint")
    p.add_argument("--base-url", help="vlm: endpoint up to /chat/completions "
                                      "(default $SCIAGENT_VLM_BASE_URL)")
    p.add_argument("--model", help="vlm: model name (default $SCIAGENT_VLM_MODEL)")
    p.add_argument("--api-key-env", default="SCIAGENT_VLM_API_KEY",
                   help="vlm: environment variable holding the API key (default "
                        "SCIAGENT_VLM_API_KEY, then OPENAI_API_KEY)")
    p.add_argument("--history", type=int, default=3,
                   help="vlm: earlier (screenshot, reply) pairs sent each turn")
    p.add_argument("--episodes", type=int, default=1)
    p.add_argument("--seed", type=int, default=0, help="seed of the first episode")
    p.add_argument("--max-steps", type=int, help="step cap for the random policy")
    p.add_argument("--out", help="run directory for trajectories, screenshots, final states")
    p.add_argument("--isolation", choices=("auto", "bwrap", "none"), default="auto")
    p.add_argument("--provider", choices=("local", "qemu", "remote"), default="local",
                   help="where the program runs (qemu: build the image first; remote: --url)")
    p.add_argument("--url", help="remote provider: the control server's URL")
    p.add_argument("--token", default=os.environ.get("SCIAGENT_TOKEN"),
                   help="remote provider: its secret (default $SCIAGENT_TOKEN)")
    p.add_argument("--split", choices=("train", "val", "test", "heldout-tasks"),
                   help="draw variants of a seed split (of the tasks not held out), or the "
                        "held-out task families")
    p.add_argument("--modality", choices=("gui", "gui+cli", "code"),
                   help="override every task's modality (e.g. GUI tasks with a shell)")
    p.add_argument("--hints", action="store_true", help="add workflow hints to instructions")
    p.add_argument("-v", "--verbose", action="store_true", help="print every criterion")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("audit", help="prove every task: oracle, no-op, negatives, cross-task F1;"
                       " with --attacks: play the hostile-agent catalogue instead")
    p.add_argument("--attacks", action="store_true",
                   help="play the attack catalogue (escape, spy, forge, reset, limits, parser) "
                        "on every installed tool; prints 'attacks held N/N'")
    p.add_argument("--attack", action="append",
                   help="with --attacks: only these attacks (repeatable)")
    p.add_argument("--tool", help="only this tool (default: all)")
    p.add_argument("--task", action="append", help="only these task ids (repeatable)")
    p.add_argument("--seeds", type=int, default=1, help="variants per task (default 1)")
    p.add_argument("--seed", type=int, default=0, help="first seed")
    p.add_argument("--no-cross", action="store_true", help="skip the cross-task matrix")
    p.add_argument("--cheats", action="store_true",
                   help="also play the cheat audit (generic cheats on the real start state and "
                        "each spec's own cheats): every cheat must score 0")
    p.add_argument("--json", action="store_true", help="machine-readable results")
    p.add_argument("--out", help="also write audit-<tool>.json into this directory")
    p.add_argument("--isolation", choices=("auto", "bwrap", "none"), default="auto")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_audit)

    p = sub.add_parser("rescore", help="score a run's saved final states again, offline")
    p.add_argument("run_dir")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_rescore)

    p = sub.add_parser("replay", help="re-execute recorded episodes; exit 1 if a score differs")
    p.add_argument("run_dir", help="a run directory or one episode's directory")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_replay)

    p = sub.add_parser("export-minari", help="write run directories as a Minari dataset")
    p.add_argument("run_dir", nargs="+")
    p.add_argument("--dataset-id", required=True,
                   help="e.g. sciagent/imagej-oracle-v0 (namespace/name-vN)")
    p.add_argument("--size", help="resize frames to WIDTHxHEIGHT (default: as recorded)")
    p.add_argument("--root", help="datasets directory (default $MINARI_DATASETS_PATH or "
                                  "~/.minari/datasets)")
    p.add_argument("--jpeg", action="store_true", help="JPEG-encode frames (lossy, smaller)")
    p.add_argument("--author")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_export_minari)

    p = sub.add_parser("report", help="episode metrics of run directories: table, CSV, plot")
    p.add_argument("run_dir", nargs="+")
    p.add_argument("--out", help="where report.csv and report.png go (default: first run dir)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_report)

    p = sub.add_parser("bench", help="reset/step speed, episodes per hour, vector throughput, "
                                     "against a fixed-sleep baseline")
    p.add_argument("--env", default="SciGUI-ImageJ-v0")
    p.add_argument("--task", help="task id (default: sampled)")
    p.add_argument("--episodes", type=int, default=6)
    p.add_argument("--baseline-episodes", type=int, default=2)
    p.add_argument("--vector", type=int, nargs="+", default=[1, 2, 4],
                   help="numbers of async envs to measure")
    p.add_argument("--vector-steps", type=int, default=20)
    p.add_argument("--pool-size", type=int, default=2,
                   help="spare sandboxes of the warm-reset env (default 2)")
    p.add_argument("--pool-workers", type=int, default=2,
                   help="how many of them are prepared at once (default 2)")
    p.add_argument("--out", help="write <env>.json and <env>.png here")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_bench)

    from sciagent_gym.cli.image import add_image_parser

    add_image_parser(sub)

    p = sub.add_parser("install", help="install a tool that no system package provides "
                                       "(runs envs/<tool>/install.sh)")
    p.add_argument("tool", help="e.g. qupath")
    p.add_argument("recipe_args", nargs=argparse.REMAINDER,
                   help="passed to the recipe (e.g. --prefix DIR; --help lists them)")
    p.set_defaults(func=_cmd_install)

    p = sub.add_parser("deps", help="print the Debian packages the set-up installs "
                                    "(shared ones, then each tool's from its tool.json)")
    p.add_argument("--apt", action="store_true", required=True,
                   help="Debian packages, one per line")
    p.add_argument("--tool", action="append", help="only this tool's (repeatable), plus the "
                   "shared packages")
    p.set_defaults(func=_cmd_deps)

    p = sub.add_parser("doctor", help="check what is installed and what is missing")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_doctor)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a clear one-line error instead of a traceback
        from sciagent_gym.errors import SciAgentError
        from sciagent_gym.tasks.spec import TaskSpecError

        if isinstance(exc, SciAgentError | TaskSpecError | ValueError):
            print(f"error: {exc}", file=sys.stderr)
            return 1
        raise


if __name__ == "__main__":
    sys.exit(main())
