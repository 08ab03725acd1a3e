"""Task specs: one JSON file per task under ``task_specs/<tool>/``, validated on load.

A spec is a template. Its ``params`` are sampled per seed into a concrete :class:`~.task.Task`
(a variant); ``{name}`` placeholders in the instruction and ``$name`` values in setup, evaluator,
oracle and negatives are filled from the sampled params, the gold values the data generators
return (``$gold.<name>.<key>``), and the sandbox paths (``{work}``, ``{home}``).

Schema (fields marked * are required)::

    id*          "<tool>/<slug>"            tool*        tool folder name
    title*       short name                 instruction* text shown to the agent
    difficulty*  easy | medium | hard       tags         list of strings
    max_steps    step budget (default 50)   heldout      true: a held-out task family
    modality     gui (default) | gui+cli | code: what the agent may use. ``gui``: mouse,
                 keyboard and the answer action (a program's own consoles reached through its
                 GUI count as GUI); ``gui+cli``: ``run()``/``launch()`` too, because the shell is
                 part of the real work; ``code``: reserved for code environments
    cli_timeout  seconds per CLI command (default 30)
    params       {name: {"choice": [...]} | {"int": [lo, hi]} | {"float": [lo, hi], "round": n}
                  | literal}
    setup        {"generate": [{"fn", "args", "as"}], "open": [files], "protect": [files],
                  "script": "<tool script run once the program is ready (the start state)>"}
    toggles      [{"name", "initial", "target", "box"}]: a state-control task (after StaR):
                 each toggle starts ``initial`` (true/false, usually "$param") and must end
                 ``target``; ``box`` [x0, y0, x1, y1] is its clickable area on screen when known.
                 When every toggle already starts at its target, doing nothing and saying DONE
                 is the right answer (a negative instruction), and the audit expects the no-op
                 to succeed. ``credit`` names the criterion that scores the toggle: where some
                 toggle must change, a toggle that starts right earns nothing and must stay
                 (its criterion becomes a weight-0 gate), so the start state scores 0 and
                 flipping every toggle scores 0.
    evaluator*   {"criteria": [criterion, ...]}   (see sciagent_gym.evaluation.Criterion), or
                 {"stages": [{"name", "blocks_from", "criteria"}, ...]}: a long workflow scored
                 per stage; a stage is scored only when the stages its ``blocks_from`` names
                 passed (see sciagent_gym.evaluation.stages)
    oracle*      [step, ...]    negatives*  {name: [step, ...]}
    gui_oracle   [step, ...]: the task solved as an agent must, through ``step()`` alone (mouse,
                 keyboard, answer; ``run()`` too when the modality is gui+cli), reading values
                 off the screen with ``read`` (OCR) or ``perceive`` (a tool's pixel reader)
                 steps; no ``script`` and no ``run`` otherwise.
                 When absent, an ``oracle`` that already is GUI-only serves as the GUI oracle.
                 Its step count per variant is the task's reference step count
                 (``Task.oracle_steps``: the denominator of the report's Steps*/oracle)
    oracle_interface  menus | console | mixed: how the GUI oracle works the program, through
                 menus and dialogs or by typing code into one of its consoles (derived from the
                 GUI oracle's steps and held equal in the spec tests; see
                 sciagent_gym.tasks.oracle_interface)
    cheats       {name: [step, ...]}: task-specific ways to a reward without the work (a
                 shell one-liner, a hand-written output file); agent actions only, each must
                 score 0 (the cheat audit plays them beside its generic cheats)
    infeasible   true when FAIL is the right answer
    hints        workflow hints (menu paths, commands) appended to the instruction when the env
                 is made with ``hints=True`` (MatToolBench's with/without-hints ablation)
    queries      [{"id", "scope", "params"}, ...]: a fixed query pool (ST-Bench): the variants
                 are the query indices, each with its own params and a split fixed by its id
                 (see sciagent_gym.tasks.queries)

A step is a pyautogui/CLI action string, {"action": {...}}, {"script": "<tool script>"} (run
through the tool's own scripting channel), {"run": "<shell>"} (run in the sandbox),
{"script": "<tool script>", "answer": "<template>"} (run the script, then give
``template.format(output=<its stripped output>)`` through the answer action, so an oracle reads a
value from the program instead of echoing the gold),
{"toggle": "<name>", "then": [step, ...]} (the steps run only when that toggle starts away
from its target: oracles of state-control tasks) or
{"await_window": "<title regex>", "focused": bool, "gone": bool, "timeout": s}: watch the screen,
without acting, until a window with that title is open (and focused) or, with ``gone``, closed.
GUI oracles use it where an agent would look before typing, so that a slow program never
receives keys meant for a dialog that has not appeared yet. It proves the window is active, not
which field has the focus: a key or click that moves the focus (Tab, a click on a field) ends
its step, and the keys for the next field go in the next step. Keys of one step are sent at once
with one timestamp, and Java's type-ahead lets those sent with a focus change land in the field
that is losing the focus (ImageJ's set-scale flaked under load that way).
{"in_window": "<title regex>", "do": [action, ...]}: the actions' coordinates are relative to
that window's top-left corner (found in the window list, as an agent finds it on screen), so a
dialog that opens somewhere else still gets its clicks; they reach ``step()`` as absolute actions.
{"read": {"region": [x, y, w, h], "window": "<title regex>", "pattern": "<regex>", "psm": n,
"number": true}, "answer": "<text with {output}>"}: read text off the settled screen with OCR
(the region is relative to the window when one is named), take the pattern's first group (or
whole match) and give the answer: how a GUI oracle answers with a value it saw, never with the
gold. With ``number`` the text is read as one number (a decimal comma as a point); with
``"timeout": s`` the screen is read again until the pattern shows up (a program still busy
after the screen settled, such as R loading a package). Capture only
the digits the tolerance needs, ``([0-9]+[.,][0-9]{{1,3}})`` (braces doubled, as in any
template): OCR misreads long runs of digits.
{"perceive": {"fn": "<name>", "region": [x, y, w, h], "window": "<title regex>", "args": {...},
"timeout": s}, "answer": "<text with {output}>"}: read an answer off the settled screen with the
tool's own perceiver (``PERCEIVERS[fn]`` of ``envs/<tool>/perceive.py``, called with the region's
pixels and ``args``), where the answer is a measurement of what is shown rather than text (a
lattice spacing, a grain count, which curve yields first). Its args may name the options a
question offers but never the gold: the point is that the screen carries the answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciagent_gym.errors import TaskSpecError
from sciagent_gym.evaluation import Criterion, SpecError
from sciagent_gym.evaluation.stages import flatten_evaluator
from sciagent_gym.tasks.oracle_interface import INTERFACES
from sciagent_gym.tasks.queries import check_queries
from sciagent_gym.tasks.step_schema import _check_steps, _require, gui_only

DIFFICULTIES = ("easy", "medium", "hard")
#: What the agent may use: ``gui`` (mouse, keyboard, answer), ``gui+cli`` (also run()/launch()),
#: ``code`` (code environments). See docs/design.md, section 2.
MODALITIES = ("gui", "gui+cli", "code")
CLI_MODALITIES = ("gui+cli", "code")
_TOP_FIELDS = {"id", "tool", "title", "instruction", "difficulty", "tags", "max_steps",
               "modality", "cli_timeout", "params", "setup", "evaluator", "oracle", "negatives",
               "gui_oracle", "cheats", "infeasible", "notes", "hints", "toggles", "heldout",
               "queries", "oracle_interface"}
_SETUP_FIELDS = {"generate", "open", "protect", "script"}
_TOGGLE_FIELDS = {"name", "initial", "target", "box", "credit"}


@dataclass(frozen=True)
class Generator:
    fn: str
    args: dict[str, Any]
    name: str


@dataclass(frozen=True)
class TaskSpec:
    id: str
    tool: str
    title: str
    instruction: str
    difficulty: str
    evaluator: list[dict]
    oracle: list[Any]
    negatives: dict[str, list[Any]]
    tags: tuple[str, ...] = ()
    max_steps: int = 50
    modality: str = "gui"
    cli_timeout: float = 30.0
    params: dict[str, Any] = field(default_factory=dict)
    generate: tuple[Generator, ...] = ()
    open: tuple[str, ...] = ()
    protect: tuple[str, ...] = ()
    infeasible: bool = False
    hints: str = ""
    setup_script: str = ""
    toggles: tuple[dict[str, Any], ...] = ()
    cheats: dict[str, list[Any]] = field(default_factory=dict)
    heldout: bool = False
    queries: tuple[dict[str, Any], ...] = ()
    source: str = "<dict>"
    explicit_gui_oracle: tuple[Any, ...] | None = None
    oracle_interface: str | None = None

    @property
    def gui_oracle(self) -> list[Any] | None:
        """The GUI oracle: the spec's own, else the oracle when it is GUI-only, else None."""
        if self.explicit_gui_oracle is not None:
            return list(self.explicit_gui_oracle)
        return list(self.oracle) if gui_only(self.oracle, self.allow_cli) else None

    @property
    def slug(self) -> str:
        return self.id.split("/", 1)[1]

    @property
    def allow_cli(self) -> bool:
        """True when the modality lets the agent use ``run()`` and ``launch()``."""
        return self.modality in CLI_MODALITIES


def _check_params(params: Any, source: str) -> None:
    _require(isinstance(params, dict), source, "params", "must be an object")
    for name, p in params.items():
        where = f"params.{name}"
        if not isinstance(p, dict):
            continue  # a literal value
        kinds = set(p) & {"choice", "int", "float"}
        _require(len(kinds) == 1, source, where, "needs exactly one of choice, int, float")
        kind = kinds.pop()
        value = p[kind]
        if kind == "choice":
            _require(isinstance(value, list) and value, source, where + ".choice",
                     "must be a non-empty list")
        else:
            _require(isinstance(value, list) and len(value) == 2 and value[0] <= value[1],
                     source, f"{where}.{kind}", "must be [low, high] with low <= high")
        extra = set(p) - {kind, "round"}
        _require(not extra, source, where, f"unknown field(s) {sorted(extra)}")


def parse_spec(data: Any, source: str = "<dict>") -> TaskSpec:
    """Validate a spec's JSON data and build a TaskSpec (raises TaskSpecError)."""
    _require(isinstance(data, dict), source, "(top)", "a task spec must be a JSON object")
    unknown = set(data) - _TOP_FIELDS
    _require(not unknown, source, sorted(unknown)[0] if unknown else "", "unknown field")
    for name in ("id", "tool", "title", "instruction", "difficulty", "evaluator", "oracle",
                 "negatives"):
        _require(name in data, source, name, "is required")
    for name in ("id", "tool", "title", "instruction"):
        _require(isinstance(data[name], str) and data[name].strip(), source, name,
                 "must be a non-empty string")
    _require(data["id"].startswith(data["tool"] + "/"), source, "id",
             f"must start with the tool name '{data['tool']}/'")
    _require(data["difficulty"] in DIFFICULTIES, source, "difficulty",
             f"must be one of {', '.join(DIFFICULTIES)}")
    max_steps = data.get("max_steps", 50)
    _require(isinstance(max_steps, int) and max_steps > 0, source, "max_steps",
             "must be a positive integer")
    params = data.get("params", {})
    _check_params(params, source)

    setup = data.get("setup", {})
    _require(isinstance(setup, dict), source, "setup", "must be an object")
    extra = set(setup) - _SETUP_FIELDS
    _require(not extra, source, f"setup.{sorted(extra)[0] if extra else ''}", "unknown field")
    generators = []
    for i, g in enumerate(setup.get("generate", [])):
        where = f"setup.generate[{i}]"
        _require(isinstance(g, dict) and isinstance(g.get("fn"), str), source, where + ".fn",
                 "is required")
        _require(isinstance(g.get("args", {}), dict), source, where + ".args", "must be an object")
        generators.append(Generator(g["fn"], g.get("args", {}), g.get("as", g["fn"])))
    for name in ("open", "protect"):
        files = setup.get(name, [])
        _require(isinstance(files, list) and all(isinstance(f, str) for f in files), source,
                 f"setup.{name}", "must be a list of file names")
    _require(isinstance(setup.get("script", ""), str), source, "setup.script",
             "must be a string of tool script")
    toggles = _check_toggles(data.get("toggles", []), source)

    try:
        criteria = flatten_evaluator(data["evaluator"])
    except SpecError as exc:
        raise TaskSpecError(source, exc.field, exc.message) from None
    names = [c.get("name") for c in criteria]
    dup = next((n for n in names if names.count(n) > 1), None)
    _require(dup is None, source, "evaluator", f"duplicate criterion name {dup!r}")
    for i, crit in enumerate(criteria):
        try:
            Criterion.from_dict(_placeholder_free(crit))
        except SpecError as exc:
            # A check parameter given as a $reference (e.g. a gold list) is validated once it
            # is resolved, when the task is staged; only its stand-in 0 failed here.
            check = crit.get("check") if isinstance(crit, dict) else None
            refs = {k for k, v in check.items() if isinstance(v, str) and v.startswith("$")} \
                if isinstance(check, dict) else set()
            if exc.field.rsplit(".check.", 1)[-1] not in refs or ".check." not in exc.field:
                raise TaskSpecError(source, f"evaluator.criteria[{i}]", str(exc)) from None
    _check_steps(data["oracle"], source, "oracle", toggles)
    _require(len(data["oracle"]) > 0, source, "oracle", "must not be empty")
    negatives = data["negatives"]
    _require(isinstance(negatives, dict) and negatives, source, "negatives",
             "needs at least one named negative")
    for name, steps in negatives.items():
        _check_steps(steps, source, f"negatives.{name}", toggles)
    hints = data.get("hints", "")
    _require(isinstance(hints, str), source, "hints", "must be a string")
    modality = data.get("modality", "gui")
    _require(modality in MODALITIES, source, "modality",
             f"must be one of {', '.join(MODALITIES)} (allow_cli is gone: gui+cli allows run())")
    cheats = data.get("cheats", {})
    _require(isinstance(cheats, dict), source, "cheats", "must be an object {name: [steps]}")
    for name, steps in cheats.items():
        _check_steps(steps, source, f"cheats.{name}", toggles)
        _require(all(isinstance(s, str) or (isinstance(s, dict) and set(s) == {"action"})
                     for s in steps), source, f"cheats.{name}",
                 "a cheat is what an agent can do: action strings or {action: ...} only")
    _require(isinstance(data.get("heldout", False), bool), source, "heldout",
             "must be true or false")
    queries = check_queries(data["queries"], source) if "queries" in data else ()
    gui_oracle = data.get("gui_oracle")
    if gui_oracle is not None:
        _check_steps(gui_oracle, source, "gui_oracle", toggles)
        _require(len(gui_oracle) > 0, source, "gui_oracle", "must not be empty")
        _require(gui_only(gui_oracle, modality in CLI_MODALITIES), source, "gui_oracle",
                 "uses only step() actions its modality allows: no script steps, no run "
                 "unless the modality is gui+cli")
        _require(gui_oracle[-1] in ("DONE", "FAIL"), source, "gui_oracle",
                 "must end with DONE or FAIL")
    interface = data.get("oracle_interface")
    _require(interface is None or interface in INTERFACES, source, "oracle_interface",
             f"must be one of {', '.join(INTERFACES)}")

    return TaskSpec(
        id=data["id"], tool=data["tool"], title=data["title"], instruction=data["instruction"],
        difficulty=data["difficulty"], evaluator=criteria, oracle=data["oracle"],
        negatives=negatives, tags=tuple(data.get("tags", ())), max_steps=max_steps,
        modality=modality, cheats=cheats, heldout=data.get("heldout", False), queries=queries,
        cli_timeout=float(data.get("cli_timeout", 30.0)), params=params,
        generate=tuple(generators), open=tuple(setup.get("open", ())),
        protect=tuple(setup.get("protect", ())), infeasible=bool(data.get("infeasible", False)),
        hints=hints, setup_script=setup.get("script", ""),
        toggles=tuple(data.get("toggles", ())), source=source,
        explicit_gui_oracle=tuple(gui_oracle) if gui_oracle is not None else None,
        oracle_interface=interface,
    )


def _check_toggles(toggles: Any, source: str) -> frozenset[str]:
    _require(isinstance(toggles, list), source, "toggles", "must be a list")
    names: set[str] = set()
    for i, t in enumerate(toggles):
        where = f"toggles[{i}]"
        _require(isinstance(t, dict) and {"name", "initial", "target"} <= set(t)
                 and not set(t) - _TOGGLE_FIELDS, source, where,
                 "a toggle is {name, initial, target, box and credit (optional)}")
        _require(isinstance(t["name"], str) and t["name"] not in names, source, where + ".name",
                 "must be a unique string")
        names.add(t["name"])
        for key in ("initial", "target"):
            value = t[key]
            _require(isinstance(value, bool) or (isinstance(value, str) and value.startswith("$")),
                     source, f"{where}.{key}", "must be true, false or a $parameter reference")
        _require(isinstance(t.get("credit", ""), str), source, where + ".credit",
                 "must be the name of a criterion")
        box = t.get("box")
        _require(box is None or (isinstance(box, list) and len(box) == 4
                                 and all(isinstance(v, (int, str)) for v in box)),
                 source, where + ".box", "must be [x0, y0, x1, y1]")
    return frozenset(names)


def count_variants(spec: TaskSpec) -> int | None:
    """Distinct parameter combinations, or None when a float range makes them unbounded.

    Every seed also draws new input data when the spec has generators, so the number of
    distinct episodes is larger still; this counts what the instruction can say. A query pool
    has exactly its queries.
    """
    if spec.queries:
        return len(spec.queries)
    total = 1
    for p in spec.params.values():
        if not isinstance(p, dict):
            continue
        if "choice" in p:
            total *= len(p["choice"])
        elif "int" in p:
            total *= p["int"][1] - p["int"][0] + 1
        else:
            return None
    return total


def _placeholder_free(obj: Any) -> Any:
    """Replace ``$refs`` by 0 so that a criterion's structure can be validated before seeding."""
    if isinstance(obj, dict):
        return {k: _placeholder_free(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_placeholder_free(v) for v in obj]
    if isinstance(obj, str) and obj.startswith("$"):
        return 0
    return obj


def load_spec(path: str | Path) -> TaskSpec:
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise TaskSpecError(str(path), f"line {exc.lineno}", f"invalid JSON: {exc.msg}") from None
    spec = parse_spec(data, str(path))
    _require(path.stem == spec.slug, str(path), "id",
             f"'{spec.id}' does not match the file name '{path.name}'")
    return spec


def load_specs(root: Path, tool: str | None = None) -> dict[str, TaskSpec]:
    """All specs under ``root`` (one folder per tool), by task id. The getters their criteria
    name must be registered first: :func:`sciagent_gym.tools.load_tool_specs` does both."""
    specs: dict[str, TaskSpec] = {}
    folders = [root / tool] if tool else sorted(p for p in root.iterdir() if p.is_dir())
    for folder in folders:
        for path in sorted(folder.glob("*.json")):
            spec = load_spec(path)
            specs[spec.id] = spec
    return specs
