"""``sciagent-gym``: list envs and tasks, run baseline policies, check the installation."""

from __future__ import annotations

import argparse
import os
import sys

from sciagent_gym import __version__
from sciagent_gym.cli import audit_commands, commands, listing

#: sciagent_gym.runs.rollout.POLICIES, named here so that parsing imports no Gymnasium.
RUN_POLICIES = ("random", "oracle", "gui-oracle", "noop", "vlm")


def settle(name: str):
    """``--settle NAME``: the SettleConfig it names (argparse reports a ValueError's name).
    Imported here, when a command that has the option is parsed, not for every command."""
    from sciagent_gym.controller.settle import SettleConfig

    return SettleConfig.named(name)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sciagent-gym", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="list registered envs and their tasks")
    p.add_argument("--tool", help="only this tool (e.g. imagej)")
    p.add_argument("--markdown", action="store_true",
                   help="the table of envs in the README and docs (a row per tool)")
    p.add_argument("--tasks", action="store_true",
                   help="with --markdown: the docs' task tables (a table per tool, with "
                        "each GUI oracle's step count)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--variants", action="store_true",
                   help="count the parameter combinations of every task")
    p.set_defaults(func=listing.cmd_list)

    p = sub.add_parser("run", help="run episodes of a baseline policy")
    p.add_argument("--env", required=True, help="env id, e.g. SciGUI-ImageJ-v0 or "
                   "SciCode-Materials-v0")
    p.add_argument("--task", help="task id (default: sampled per episode)")
    p.add_argument("--policy", choices=RUN_POLICIES, default="random",
                   help="gui-oracle: the task solved through step() alone (a demonstration); "
                        "vlm: a model behind an OpenAI-compatible chat-completions endpoint")
    p.add_argument("--base-url", help="vlm: endpoint up to /chat/completions "
                                      "(default $SCIAGENT_VLM_BASE_URL)")
    p.add_argument("--model", help="vlm: model name (default $SCIAGENT_VLM_MODEL)")
    p.add_argument("--api-key-env", default="SCIAGENT_VLM_API_KEY",
                   help="vlm: environment variable holding the API key (default "
                        "SCIAGENT_VLM_API_KEY, then OPENAI_API_KEY)")
    p.add_argument("--demos", metavar="DIR",
                   help="vlm: a directory of `sciagent-gym demos`; the prompt shows one "
                        "demonstration of the same task (another variant) as a worked example")
    p.add_argument("--history", type=int, default=3,
                   help="vlm: earlier (screenshot, reply) pairs sent each turn")
    p.add_argument("--episodes", type=int, default=1)
    p.add_argument("--seed", type=int, default=0, help="seed of the first episode")
    p.add_argument("--max-steps", type=int, help="step cap for the random policy")
    p.add_argument("--out", help="run directory for trajectories, screenshots, final states")
    p.add_argument("--isolation", choices=("auto", "bwrap", "none"), default="auto")
    p.add_argument("--settle", type=settle, metavar="{frame,damage,fast}",
                   help="how a step waits for the screen: damage (X DAMAGE events; the "
                        "default), frame (compare grabs) or fast")
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
    p.set_defaults(func=commands.cmd_run)

    p = sub.add_parser("audit", help="prove every task: oracle, no-op, negatives, cross-task F1;"
                       " with --attacks: play the hostile-agent catalogue instead")
    p.add_argument("--attacks", action="store_true",
                   help="play the attack catalogue (escape, spy, forge, reset, limits, parser) "
                        "on every installed tool; prints 'attacks held N/N'")
    p.add_argument("--attack", action="append",
                   help="with --attacks: only these attacks (repeatable)")
    p.add_argument("--prior", action="store_true",
                   help="offline, no program started: can a constant answer learnt on train "
                        "variants pass unseen ones, and does the instruction decide the "
                        "answer? (every tool, installed or not)")
    p.add_argument("--train", type=int, default=30,
                   help="with --prior: train-split variants per task (default 30)")
    p.add_argument("--unseen", type=int, default=30,
                   help="with --prior: val/test-split variants per task (default 30)")
    p.add_argument("--tool", help="only this tool (default: all)")
    p.add_argument("--task", action="append", help="only these task ids (repeatable)")
    p.add_argument("--seeds", type=int, default=1, help="variants per task (default 1)")
    p.add_argument("--seed", type=int, default=0, help="first seed")
    p.add_argument("--no-cross", action="store_true", help="skip the cross-task matrix")
    p.add_argument("--case", action="append", dest="cases", metavar="CASE",
                   help="play only these cases (repeatable): oracle, gui_oracle (a GUI-only "
                        "oracle included), noop, a negative's name")
    p.add_argument("--cheats", action="store_true",
                   help="also play the cheat audit (generic cheats on the real start state and "
                        "each spec's own cheats): every cheat must score 0")
    p.add_argument("--separate-starts", action="store_true",
                   help="play the no-op and every negative as its own episode (default: those "
                        "that are the oracle's first steps then DONE are scored at that point "
                        "of the oracle's episode, on its program start)")
    p.add_argument("--json", action="store_true", help="machine-readable results")
    p.add_argument("--out", help="also write audit-<tool>.json into this directory")
    p.add_argument("--summary", metavar="DIR",
                   help="run nothing: print the docs' Markdown audit table (a row per tool) from "
                        "the audit reports (*.json) in DIR, e.g. the .audit/ of .ci/run")
    p.add_argument("--isolation", choices=("auto", "bwrap", "none"), default="auto")
    p.add_argument("--settle", type=settle, metavar="{frame,damage,fast}",
                   help="how a step waits for the screen: damage (X DAMAGE events; the "
                        "default), frame (compare grabs) or fast")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=audit_commands.cmd_audit)

    p = sub.add_parser("rescore", help="score a run's saved final states again, offline")
    p.add_argument("run_dir")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=commands.cmd_rescore)

    p = sub.add_parser("replay", help="re-execute recorded episodes; exit 1 if a score differs")
    p.add_argument("run_dir", help="a run directory or one episode's directory")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=commands.cmd_replay)

    p = sub.add_parser("demos", help="record GUI oracle demonstrations (trajectories, "
                                      "screenshots, pyautogui actions) of a tool's tasks")
    p.add_argument("--tool", required=True)
    p.add_argument("--task", action="append", help="only these task ids (repeatable)")
    p.add_argument("--seeds", type=int, default=3, help="demonstrations per task (default 3)")
    p.add_argument("--seed", type=int, default=0, help="first seed")
    p.add_argument("--out", required=True, help="the demo directory (a run directory)")
    p.add_argument("--minari", metavar="DATASET_ID",
                   help="also write them as a Minari dataset, e.g. sciagent/ds9-demos-v0")
    p.add_argument("--minari-root", help="datasets directory for --minari")
    p.add_argument("--isolation", choices=("auto", "bwrap", "none"), default="auto")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=commands.cmd_demos)

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
    p.set_defaults(func=commands.cmd_export_minari)

    p = sub.add_parser("report", help="episode metrics of run directories: table, CSV, plot")
    p.add_argument("run_dir", nargs="+")
    p.add_argument("--out", help="where report.csv and report.png go (default: first run dir)")
    p.add_argument("--json", action="store_true")
    from sciagent_gym.benchmarks import load_all

    for bench in load_all().values():  # each ported benchmark's own options
        if bench.options is not None:
            bench.options(p.add_argument_group(f"{bench.title} episodes"))
    p.set_defaults(func=commands.cmd_report)

    p = sub.add_parser("bench", help="reset/step speed, episodes per hour, vector throughput, "
                                     "against a fixed-sleep baseline")
    p.add_argument("--env", help="the env to measure (`sciagent-gym list` names them); "
                                 "required unless --all")
    p.add_argument("--task", help="task id (default: sampled)")
    p.add_argument("--all", action="store_true",
                   help="every installed tool's env, one row each (runs/bench_all.py); "
                        "resumes from --out DIR/bench-all.json")
    p.add_argument("--tools", help="with --all: only these tools, comma-separated")
    p.add_argument("--force", action="store_true",
                   help="with --all: measure tools already in bench-all.json again")
    p.add_argument("--episodes", type=int, default=6)
    p.add_argument("--baseline-episodes", type=int, default=2)
    p.add_argument("--vector", type=int, nargs="+", default=[1, 2, 4],
                   help="numbers of async envs to measure (not with --all)")
    p.add_argument("--vector-steps", type=int, default=20)
    p.add_argument("--pool-size", type=int, default=2,
                   help="spare sandboxes of the warm-reset env (default 2)")
    p.add_argument("--pool-workers", type=int, default=2,
                   help="how many of them are prepared at once (default 2)")
    p.add_argument("--out", help="write <env>.json and <env>.png here (--all: bench-all.*)")
    p.add_argument("--json", action="store_true")
    d = p.add_argument_group("density (--density): how many envs of one tool this machine holds")
    d.add_argument("--density", action="store_true",
                   help="add envs until p95 step latency or memory says stop")
    d.add_argument("--max-envs", type=int, default=24)
    d.add_argument("--pace", type=float, default=3.0, help="seconds between actions of an env")
    d.add_argument("--duration", type=float, default=60.0, help="measuring window per level, s")
    d.add_argument("--p95-limit", type=float, default=0.5, help="p95 step latency limit, s")
    d.add_argument("--add", type=int, default=1, help="envs added per level")
    d.add_argument("--spares", type=int, default=0, help="warm-pool spares of each env")
    d.add_argument("--margin-mb", type=float, default=2048.0,
                   help="MemAvailable kept free when adding envs")
    p.set_defaults(func=_bench)

    from sciagent_gym.cli.image import add_image_parser

    add_image_parser(sub)
    from sciagent_gym.cli.collect import add_collect_parser  # Ray rollouts (runs/distributed)

    add_collect_parser(sub)
    from sciagent_gym.cli.clean import add_clean_parser  # leftovers of killed processes

    add_clean_parser(sub)

    p = sub.add_parser("install", help="install a tool that no system package provides "
                                       "(runs envs/<tool>/install.sh)")
    p.add_argument("tool", help="e.g. qupath")
    p.add_argument("recipe_args", nargs=argparse.REMAINDER,
                   help="passed to the recipe (e.g. --prefix DIR; --help lists them)")
    p.set_defaults(func=commands.cmd_install)

    p = sub.add_parser("deps", help="print the Debian packages (or pip requirements) the "
                                    "set-up installs (shared ones, then each tool's from its "
                                    "tool.json)")
    kind = p.add_mutually_exclusive_group(required=True)
    kind.add_argument("--apt", action="store_true", help="Debian packages, one per line")
    kind.add_argument("--pip", action="store_true",
                      help="pip requirements of the tools' host side, one per line")
    p.add_argument("--tool", action="append", help="only this tool's (repeatable), plus the "
                   "shared packages")
    p.set_defaults(func=commands.cmd_deps)

    p = sub.add_parser("doctor", help="check what is installed and what is missing")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=commands.cmd_doctor)
    return parser


def _bench(args: argparse.Namespace) -> int:
    """``bench``, with ``--density`` the density run (runs/density.py), with ``--all`` every
    installed tool (runs/bench_all.py)."""
    if not args.all and not args.env:
        raise ValueError("bench needs --env ENV_ID (`sciagent-gym list` names them), or --all")
    if args.density:
        from sciagent_gym.runs.density import cmd_density

        return cmd_density(args)
    if args.all:
        from sciagent_gym.runs.bench_all import cmd_bench_all

        return cmd_bench_all(args)
    return commands.cmd_bench(args)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `sciagent-gym list | head`: the reader left, as in any Unix tool
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # a clear one-line error instead of a traceback
        from sciagent_gym.errors import SciAgentError
        from sciagent_gym.tasks.spec import TaskSpecError

        if isinstance(exc, SciAgentError | TaskSpecError | ValueError):
            print(f"error: {exc}", file=sys.stderr)
            return 1
        raise


if __name__ == "__main__":
    sys.exit(main())
