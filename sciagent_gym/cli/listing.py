"""``sciagent-gym list``: the envs and their tasks, as text, JSON or the README's Markdown."""

from __future__ import annotations

import argparse
import json

#: Variants sampled to give a task's GUI oracle step counts in ``list`` (the counts depend on
#: discrete parameters only, such as which toggles must change).
STEP_SAMPLE = 64


def oracle_step_range(spec) -> dict[str, int] | None:
    """min / median / max of the GUI oracle's step count over the first variants (the exact
    count of an episode's variant is ``info["oracle_steps"]``); None without a GUI oracle."""
    import statistics

    from sciagent_gym.tasks.task import Task, some_variants

    if spec.gui_oracle is None:
        return None
    paths = {"home": "~", "work": "~/work", "tmp": "/tmp"}  # placeholders: counts need none
    counts = sorted(Task(spec, v, {}, paths).oracle_steps
                    for v in some_variants(spec, STEP_SAMPLE))
    return {"min": counts[0], "median": int(statistics.median_low(counts)),
            "max": counts[-1]}


def cmd_list(args: argparse.Namespace) -> int:
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
                                "seeded_data": bool(s.generate),
                                "infeasible": s.infeasible,
                                "oracle_steps": oracle_step_range(s),
                                "oracle_interface": s.oracle_interface}
                               for s in specs.values()]})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if args.markdown:
        print(tasks_markdown(rows) if args.tasks else envs_markdown(rows))
        return 0
    for row in rows:
        print(f"{row['env_id']}  ({row['domain']}, {len(row['tasks'])} tasks)")
        for t in row["tasks"]:
            held = " [held out]" if t["heldout"] else ""
            line = (f"  {t['id']:<34} {t['difficulty']:<7} {t['modality']:<8} "
                    f"{_steps_text(t['oracle_steps']):>6}  {t['title']}{held}")
            if args.variants:
                combos = t["param_combinations"]
                count = "continuous" if combos is None else str(combos)
                data = ", new data per seed" if t["seeded_data"] else ""
                line = f"  {t['id']:<34} {t['difficulty']:<7} {count:>10} parameter " \
                       f"combinations{data}"
            print(line)
    return 0


def _steps_text(steps: dict[str, int] | None) -> str:
    """A GUI oracle's step count: "7", or "3-5" when variants differ; "-" without one."""
    if steps is None:
        return "-"
    if steps["min"] == steps["max"]:
        return str(steps["min"])
    return f"{steps['min']}-{steps['max']}"


def _menus_text(tasks: list[dict]) -> str:
    """Feasible ``gui`` tasks whose GUI oracle works through menus and dialogs: "9/13"."""
    gui = [t for t in tasks if t["modality"] == "gui" and not t["infeasible"]]
    if not gui:
        return "- (no gui tasks)"
    if all(t.get("oracle_interface") is None for t in gui):
        return "- (no GUI oracles)"
    return f"{sum(t.get('oracle_interface') == 'menus' for t in gui)}/{len(gui)}"


def tasks_markdown(rows: list[dict]) -> str:
    """The README's task tables (``list --markdown --tasks``): a table per tool with each
    task's difficulty, modality, step budget, its GUI oracle's step count (the reference for
    Steps*) and how that oracle works the program (menus, console or mixed)."""
    out = []
    for row in rows:
        out += [f"**{row['env_id']}**", "",
                "| task | difficulty | modality | max steps | GUI oracle steps | GUI oracle works "
                "through | title |",
                "|---|---|---|---|---|---|---|"]
        for t in sorted(row["tasks"], key=lambda t: t["id"]):
            steps = "FAIL is right" if t["infeasible"] else _steps_text(t["oracle_steps"])
            how = "-" if t["infeasible"] else (t.get("oracle_interface") or "-")
            out.append(f"| `{t['id']}` | {t['difficulty']} | {t['modality']} | "
                       f"{t['max_steps']} | {steps} | {how} | {t['title']} |")
        out.append("")
    return "\n".join(out).strip()


def envs_markdown(rows: list[dict]) -> str:
    """The README's table of envs, from the tool folders (``list --markdown``)."""
    from sciagent_gym.deps import tool_packages
    from sciagent_gym.tools import tool_info

    lines = ["| env | program (Debian packages) | domain | tasks | gui tasks proven through "
             "menus |", "|---|---|---|---|---|"]
    for row in rows:
        info = tool_info(row["tool"])
        packages = tool_packages({"requires": [{"package": r.package} for r in info.requires],
                                  "debian": info.extra.get("debian", [])})
        installs = sorted({r.install for r in info.requires if r.install})
        source = ", ".join(f"`{p}`" for p in packages) if packages else \
            "not in Debian: " + ", ".join(f"`{i}`" for i in installs)
        pips = [r.pip for r in info.requires if r.pip]
        if pips:
            source += "; pip " + ", ".join(f"`{p}`" for p in pips)
        program = info.extra.get("program", info.display_name)
        lines.append(f"| `{row['env_id']}` | {program} ({source}) | {row['domain']} | "
                     f"{len(row['tasks'])} | {_menus_text(row['tasks'])} |")
    return "\n".join(lines)
