"""Shared pieces of the earth-data spec builders (build_specs.py is the entry point): the
oracle step forms (a scripted run, the same as an agent's run(), the GUI oracle typing the
script into the terminal) and the criteria every family uses."""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "task_specs" / "earthdata"
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


def realistic(names: list[str]) -> dict:
    return {"name": "realistic output", "weight": 0, "gate": True,
            "getter": {"fn": "file_json", "path": "metrics.json"},
            "check": {"op": "stbench_realistic", "names": names}}


def covers(path: str, column: str, what: str, gold: str) -> dict:
    return {"name": f"{path} covers exactly the scope's {what}", "weight": 0, "gate": True,
            "getter": {"fn": "earth_groups", "path": path, "column": column},
            "check": {"op": "set_equal", "expected": gold}}


def target(name: str, getter: dict, tgt: str, ref: str, higher: bool) -> dict:
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
    return {"name": name, "weight": 0, "gate": True, "getter": getter,
            "check": {"op": "in_range", "min": -1e9, "max": 1e9}}
