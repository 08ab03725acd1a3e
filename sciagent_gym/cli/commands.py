"""What each ``sciagent-gym`` command does; :mod:`sciagent_gym.cli.main` parses the arguments."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path


def cmd_doctor(args: argparse.Namespace) -> int:
    from sciagent_gym.cli.doctor import format_checks, run_checks

    checks = run_checks()
    if args.json:
        print(json.dumps([c.__dict__ for c in checks], indent=2))
    else:
        print(format_checks(checks))
    return 0 if all(c.ok for c in checks if c.required) else 1


def cmd_run(args: argparse.Namespace) -> int:
    import gymnasium as gym
    from tqdm import tqdm

    import sciagent_gym  # noqa: F401  (registers the env ids)
    from sciagent_gym.runs.rollout import run_episode

    env_id = args.env.split(":", 1)[-1]
    if env_id not in gym.registry:
        known = ", ".join(k for k in gym.registry if k.startswith(("SciGUI-", "SciCode-")))
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
                   provider=args.provider, modality=args.modality, settle=args.settle, **remote)
    results = []
    try:
        bar = tqdm(range(args.episodes), desc=f"{args.policy}", unit="ep",
                   disable=args.quiet or not sys.stderr.isatty())
        for k in bar:
            seed = args.seed + k
            ep_dir = out / f"ep{k:03d}-seed{seed}" if out else None
            res = run_episode(env, args.policy, seed, task=args.task, out_dir=ep_dir,
                              max_steps=args.max_steps, agent=agent, demos=args.demos)
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


def cmd_rescore(args: argparse.Namespace) -> int:
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


def cmd_report(args: argparse.Namespace) -> int:
    from sciagent_gym.benchmarks import load_all
    from sciagent_gym.run_records import load_results
    from sciagent_gym.runs import reports
    from sciagent_gym.runs.reports import episode_metrics, format_table, plot, write_csv

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
    sections = []
    for bench in load_all().values():  # each ported benchmark's summary and table
        summary, text = bench.report(results, args)
        if summary is not None:
            metrics[bench.name] = summary
            sections.append(text)
    if args.json:
        print(json.dumps(metrics, indent=2, default=str))
    else:
        print(format_table(metrics) + "".join(sections))
    out = Path(args.out or args.run_dir[0])
    out.mkdir(parents=True, exist_ok=True)
    write_csv(metrics, out / "report.csv")
    plot(metrics, out / "report.png", title=", ".join(args.run_dir))
    if not args.json:
        print(f"wrote {out / 'report.csv'} and {out / 'report.png'}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
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


def cmd_replay(args: argparse.Namespace) -> int:
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


def cmd_demos(args: argparse.Namespace) -> int:
    """Record GUI oracle demonstrations; exit 1 if any failed to reach 1.0."""
    from tqdm import tqdm

    from sciagent_gym.runs.demos import record_demos

    bar = tqdm(desc="demos", unit="ep", disable=args.quiet or not sys.stderr.isatty())

    def progress(msg: str) -> None:
        bar.set_postfix_str(msg)
        bar.update()

    demos = record_demos(args.tool, args.out, seeds=range(args.seed, args.seed + args.seeds),
                         tasks=args.task, progress=progress, isolation=args.isolation,
                         pool_size=0)
    bar.close()
    steps = sum(e.steps for e in demos.episodes)
    print(f"{len(demos.episodes)} demonstrations ({steps} steps) of "
          f"{len({e.task_id for e in demos.episodes})} tasks in {args.out}/")
    if demos.skipped:
        print(f"no GUI oracle yet: {', '.join(demos.skipped)}")
    for f in demos.failed:
        print(f"FAILED {f['task_id']} seed {f['seed']}: score {f['score']} {f['error'] or ''}")
    if args.minari and demos.episodes:
        from sciagent_gym.runs.minari_export import export_runs

        dataset = export_runs([Path(args.out)], args.minari,
                              root=Path(args.minari_root) if args.minari_root else None)
        print(f"dataset {args.minari}: {dataset.total_episodes} episodes, "
              f"{dataset.total_steps} steps")
    return 1 if demos.failed else 0


def cmd_export_minari(args: argparse.Namespace) -> int:
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


def cmd_deps(args: argparse.Namespace) -> int:
    from sciagent_gym.deps import apt_packages, pip_packages
    from sciagent_gym.tools import discover, envs_root

    unknown = sorted(set(args.tool or ()) - set(discover()))
    if unknown:
        raise ValueError(f"unknown tools {unknown} (known: {', '.join(sorted(discover()))})")
    from importlib import resources

    if args.pip:
        print("\n".join(pip_packages(envs_root(), tools=args.tool)))
        return 0
    vm_images = Path(str(resources.files("sciagent_gym.vm_images")))
    print("\n".join(apt_packages(envs_root(), vm_images, tools=args.tool)))
    return 0


def cmd_install(args: argparse.Namespace) -> int:
    from sciagent_gym.tools import envs_root

    recipes = envs_root()
    script = recipes / args.tool / "install.sh"
    if not script.is_file():
        known = sorted(p.parent.name for p in recipes.glob("*/install.sh"))
        listed = ", ".join(known) or "none"
        raise ValueError(f"no install recipe for {args.tool!r} (recipes: {listed}); tools "
                         "from Debian packages install with apt-get, see `sciagent-gym doctor`")
    return subprocess.call(["bash", str(script), *args.recipe_args])
