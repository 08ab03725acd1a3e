"""Shared pieces of the earth-data spec builders (make_specs.py is the entry point): the
oracle step forms (a scripted run, the same as an agent's run(), the GUI oracle typing the
script into the terminal), the criteria every family uses and the spec frame of a family whose
oracles run its reference script."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

OUT = Path(__file__).resolve().parents[3] / "task_specs" / "earthdata"
TITLE = "EarthData terminal"


def _template(code: str) -> str:
    """Code as a spec template: literal braces doubled, ``@SEL@`` becomes ``{select}``."""
    return code.replace("{", "{{").replace("}", "}}").replace("@SEL@", "{select}")


def _shell(code: str) -> str:
    return f"cat > ref.py <<'EOF'\n{code}EOF\npython3 ref.py"


def scripted(code: str) -> list:
    """The scripted oracle (and negatives): write the script to the work directory and run
    it where the terminal's shell runs."""
    return [{"script": _shell(_template(code))}, "DONE"]


def agent_script(code: str) -> list:
    """The same through the agent's own run() action (cheats are agent actions only)."""
    return [f"run({json.dumps(_shell(_template(code)))})", "DONE"]


def typed(code: str) -> list:
    """The GUI oracle: type the script into the terminal as a quoted heredoc, run it, wait for
    the prompt."""
    lines = ["cat > ref.py <<'EOF'", *_template(code).splitlines(), "EOF"]
    keys = "\n".join(f"pyautogui.write({json.dumps(line)})\npyautogui.press('enter')"
                     for line in lines)
    return [{"await_window": f"^{TITLE}: ready 0$", "focused": True}, keys,
            {"await_window": f"^{TITLE}: ready 1$", "timeout": 60},
            "pyautogui.write('clear; python3 ref.py')\npyautogui.press('enter')",
            {"await_window": f"^{TITLE}: ready 2$", "timeout": 600}, "DONE"]


def write_files(files: dict[str, str]) -> list:
    """An agent's run() that writes files verbatim (a cheat or a negative)."""
    steps = [f"run({json.dumps(_template(f'printf %s {chr(39)}{text}{chr(39)} > {name}'))})"
             for name, text in files.items()]
    return [*steps, "DONE"]


def variant(code: str, model: str = "", sel: str = "@SEL@") -> str:
    """A family's reference script with its ``@MODEL@`` line replaced by ``model`` (a
    negative's or cheat's one-line change; empty for the reference) and, where ``sel`` is
    given, a fixed scope query instead of the task's ``{select}``."""
    return code.replace("@MODEL@", model).replace('SEL = "@SEL@"', f'SEL = "{sel}"')


def metrics_json(values: dict) -> list:
    """An agent's run() that writes only metrics.json (the metrics-only and defensive cheats):
    reported numbers with no table behind them."""
    return write_files({"metrics.json": json.dumps(values)})


def gate(name: str, getter: dict | str, check: dict, **extra: str) -> dict:
    """A weight-0 gate: it gives no credit, but the task scores 0 unless it holds; ``extra``
    (a description) stands between the gate flag and the getter."""
    return {"name": name, "weight": 0, "gate": True, **extra, "getter": getter, "check": check}


def within(tol: float) -> dict:
    """The check of a gap getter: 0 <= gap <= tol."""
    return {"op": "in_range", "min": 0, "max": tol}


def reported(key: str, tol: float, **fields: object) -> dict:
    """A gate that metrics.json's ``key`` agrees within ``tol`` with its recomputation from
    the written table (earth_reported_gap); ``fields`` are the getter's (metric, truth,
    path, ...), in the order the written JSON lists them."""
    return gate(f"reported {key} agrees with its recomputation",
                {"fn": "earth_reported_gap", "report": "metrics.json", "key": key, **fields},
                within(tol))


def reported_median(key: str, ids: str, table: dict) -> dict:
    """A gate that metrics.json's ``key`` is the median of the per-id table's values over the
    scope's ``ids`` (earth_reported_median_gap; ``table`` names path, id and value
    columns)."""
    return gate(f"reported {key} agrees with {table['path']}",
                {"fn": "earth_reported_median_gap", "report": "metrics.json", "key": key,
                 "ids": ids, **table}, within(0.001))


def realistic(names: list[str]) -> dict:
    return gate("realistic output", {"fn": "file_json", "path": "metrics.json"},
                {"op": "stbench_realistic", "names": names})


def covers(path: str, column: str, what: str, gold: str) -> dict:
    return gate(f"{path} covers exactly the scope's {what}",
                {"fn": "earth_groups", "path": path, "column": column},
                {"op": "set_equal", "expected": gold})


def target(name: str, getter: dict, tgt: str, ref: str, higher: bool) -> dict:
    """A scored metric: ``tgt`` is the inequality target, ``ref`` the gold key of the stbench
    reference value. As in ST-Bench, that is a weaker baseline pipeline's value (``base_*``,
    documented in the generator), not the oracle's; the families whose metric is a checked
    statistic of the data (one right value) keep that value (NOTES.md, 2026-12-07)."""
    return {"name": name, "weight": 1, "getter": getter,
            "check": {"op": "stbench_target", "target": tgt, "reference": ref,
                      "higher_is_better": higher}}


def queries(rows: list[tuple[str, str, str]]) -> list[dict]:
    return [{"id": q, "scope": s, "params": {"select": sel}} for q, s, sel in rows]


def tags(domain: str, category: str, difficulty: str, cap: str, stage: str, skill: str,
         mas: str) -> list[str]:
    return [f"domain:{domain}", f"category:{category}", f"difficulty:{difficulty}",
            f"capability:{cap}", f"stage:{stage}", f"skill:{skill}", f"mas:{mas}", "stbench",
            "csv"]


def recomputed(name: str, getter: dict) -> dict:
    """A gate that every id's value in a per-id table matches its recomputation (the getter
    fails otherwise), so a method that is off in one column fails the whole query, not only
    that column's target."""
    return gate(name, getter, {"op": "in_range", "min": -1e9, "max": 1e9})


def code_spec(slug: str, *, title: str, instruction: str, hints: str, difficulty: str,
              tag: list[str], generate: tuple[str, str], protect: list[str],
              criteria: list[dict], code: Callable[[], str], negatives: dict, cheats: dict,
              scopes: list[tuple[str, str, str]], max_steps: int = 40, cli_timeout: int = 300,
              heldout: bool = False) -> dict:
    """A code-modality family's spec: setup runs the data generator ``generate`` (its name and
    the gold prefix) on the task's scope, the oracle runs ``code()`` as a script and the GUI
    oracle types it into the terminal. Each family states its own criteria, negatives and
    cheats."""
    fn, prefix = generate
    head = {"id": f"earthdata/{slug}", "tool": "earthdata", "title": title}
    if heldout:
        head["heldout"] = True
    return {**head, "instruction": instruction, "hints": hints, "difficulty": difficulty,
            "modality": "code", "tags": tag, "max_steps": max_steps,
            "cli_timeout": cli_timeout,
            "setup": {"generate": [{"fn": fn, "as": prefix, "args": {"select": "$select"}}],
                      "protect": protect},
            "evaluator": {"criteria": criteria}, "oracle": scripted(code()),
            "gui_oracle": typed(code()), "negatives": negatives, "cheats": cheats,
            "queries": queries(scopes)}
