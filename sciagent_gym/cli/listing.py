"""``sciagent-gym list``: the envs and their tasks, as text, JSON or Markdown (the README's and
the docs' env table, and one generated docs page per env: :func:`env_page`)."""

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


def list_rows(tool: str | None = None) -> list[dict]:
    """A row per discovered tool (only ``tool`` if given) with its tasks: what ``list --json``
    prints and the Markdown tables and doc pages are rendered from."""
    from sciagent_gym.tasks.spec import count_variants
    from sciagent_gym.tools import discover, load_tool_specs

    rows = []
    for name, info in discover().items():
        if tool and name != tool:
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
    return rows


def cmd_list(args: argparse.Namespace) -> int:
    rows = list_rows(args.tool)
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
    """The task tables (``list --markdown --tasks``): a table per tool with each
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
    """The README's and the docs' table of envs, from the tool folders (``list --markdown``)."""
    lines = ["| env | program (Debian packages) | domain | tasks | gui tasks proven through "
             "menus |", "|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| `{row['env_id']}` | {_program_text(row['tool'])} | {row['domain']} | "
                     f"{len(row['tasks'])} | {_menus_text(row['tasks'])} |")
    return "\n".join(lines)


def _program_text(tool: str) -> str:
    """A tool's program and where it comes from: "Praat 6.3 (`praat`, `espeak-ng`)"."""
    from sciagent_gym.deps import tool_packages
    from sciagent_gym.tools import tool_info

    info = tool_info(tool)
    packages = tool_packages({"requires": [{"package": r.package} for r in info.requires],
                              "debian": list(info.debian)})
    installs = sorted({r.install for r in info.requires if r.install})
    source = ", ".join(f"`{p}`" for p in packages) if packages else \
        "not in Debian: " + ", ".join(f"`{i}`" for i in installs)
    pips = [r.pip for r in info.requires if r.pip]
    if pips:
        source += "; pip " + ", ".join(f"`{p}`" for p in pips)
    return f"{info.program or info.display_name} ({source})"


#: Under the title of every generated env page (``docs/envs/<tool>.md``).
PAGE_MARKER = "<!-- generated by scripts/update_readme.py (make readme): do not edit -->"


def envs_index(rows: list[dict]) -> str:
    """The docs' list of env pages (``docs/envs/index.md``): a row per env, linked."""
    lines = ["| env | domain | tasks |", "|---|---|---|"]
    for row in rows:
        lines.append(f"| [`{row['env_id']}`]({row['tool']}.md) | {row['domain']} | "
                     f"{len(row['tasks'])} |")
    return "\n".join(lines)


def env_page(row: dict) -> str:
    """One env's docs page (``docs/envs/<tool>.md``): its program, its tasks (with the GUI
    oracle's step count, the reference for Steps*, its modality and how the oracle works the
    program) and the tool's ``NOTES.md``, all from the tool's folders."""
    from sciagent_gym.tools import tool_info

    tool, tasks = row["tool"], sorted(row["tasks"], key=lambda t: t["id"])
    held = [f"`{t['id']}`" for t in tasks if t["heldout"]]
    infeasible = [f"`{t['id']}`" for t in tasks if t["infeasible"]]
    example = next((t["id"] for t in tasks if not t["infeasible"]), tasks[0]["id"]) \
        if tasks else f"{tool}/<task>"
    out = [f"# {row['env_id']}", "", PAGE_MARKER, "",
           f"- **Program:** {_program_text(tool)}",
           f"- **Domain:** {row['domain']}",
           f"- **Tasks:** {len(tasks)}; feasible `gui` tasks whose GUI oracle works through "
           f"menus: {_menus_text(tasks)}",
           f"- **Held out** (`split=\"heldout-tasks\"`): {', '.join(held) or 'none'}",
           f"- **Infeasible** (`FAIL` is the right answer): {', '.join(infeasible) or 'none'}",
           f"- **Folders:** `envs/{tool}/`, `task_specs/{tool}/`", "",
           "```python", f'env = gym.make("{row["env_id"]}", task="{example}")', "```", "",
           "## Tasks", "",
           "*GUI oracle steps* is the task's reference step count (min-max over variants where "
           "they differ): the **Opt** that `sciagent-gym report` shows beside **Steps\\***. "
           "*Works through* is the GUI oracle's `oracle_interface`: menus, console or mixed.", "",
           "| task | title | difficulty | modality | max steps | GUI oracle steps "
           "| works through | tags |",
           "|---|---|---|---|---|---|---|---|"]
    for t in tasks:
        steps = "FAIL is right" if t["infeasible"] else _steps_text(t["oracle_steps"])
        how = "-" if t["infeasible"] else (t.get("oracle_interface") or "-")
        tags = ", ".join(t["tags"] + (["held out"] if t["heldout"] else [])) or "-"
        title = t["title"].replace("|", "\\|")
        out.append(f"| `{t['id']}` | {title} | {t['difficulty']} | {t['modality']} | "
                   f"{t['max_steps']} | {steps} | {how} | {tags} |")
    notes = tool_info(tool).folder / "NOTES.md"
    out += ["", "## Notes", ""]
    if notes.is_file():
        out += [f"From `envs/{tool}/NOTES.md`: the program's facts measured while building the "
                "env.", "", _demoted(notes.read_text())]
    else:
        out.append(f"`envs/{tool}/NOTES.md` does not exist yet.")
    return "\n".join(out).rstrip() + "\n"


def _demoted(markdown: str) -> str:
    """``markdown`` with every heading two levels down (under the page's "## Notes") and its
    brackets outside code taken as text."""
    lines, fenced = [], False
    for line in markdown.strip().splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        level = len(line) - len(line.lstrip("#"))
        if not fenced and level and line[level:level + 1] == " ":
            line = "#" * min(level + 2, 6) + line[level:]
        if not fenced:  # "[Unnamed] [Active]" in a title is text, not a reference link
            parts = line.split("`")
            line = "`".join(p if i % 2 else p.replace("[", "\\[") for i, p in enumerate(parts))
        lines.append(line)
    return "\n".join(lines)
