"""The package's shape holds as it grows: no import cycles (lazy ones included), modules of one
concept (small, or listed here with the reason), one place for exceptions, and a tool that is
its two folders and nothing else."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from sciagent_gym.tools import discover, envs_root

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "sciagent_gym"

#: Modules over MAX_LINES that are one concept each, and why they stay whole.
MAX_LINES = 400
ONE_CONCEPT = {
    "sciagent_gym/env.py": "the Gymnasium env: reset, step, termination, reward, info",
    "sciagent_gym/server/app.py": "the control server's HTTP routes, one handler each",
    "sciagent_gym/providers/qemu/vm.py": "QemuVM: boot, snapshots and saved states of one VM",
    "sciagent_gym/evaluation/checks.py": "the registry of comparison checks, one function each",
    "sciagent_gym/runs/attacks.py": "the hostile-agent catalogue, one function per attack",
    "sciagent_gym/transfer/files.py": "bounded, symlink-safe file and tree transfer",
    "sciagent_gym/providers/local/sandbox.py": "the bubblewrap sandbox of one zone",
    "sciagent_gym/isolation/sandbox_agent.py": "the helper inside a zone: one file by "
    "necessity, bound alone into the sandbox and run with the standard library only",
    "sciagent_gym/actions/validate.py": "the caps and value checkers every action form shares",
    "envs/materials/inside/optimade_server.py": "the OPTIMADE server run in the agent zone: "
    "one file by necessity, started alone by the zone's python3 with the standard library",
}
#: Tool modules over MAX_LINES that are several concepts and still to be split (what each
#: holds); a module that is split, or has shrunk under the cap, must leave the list (none
#: left).
SPLIT_OPEN: dict[str, str] = {}


def _is_tool_test(path: Path) -> bool:
    """A tool's own tests (envs/<tool>/tests/): test code, which may import the core it
    tests, as tests/ does; not part of the tool the package ships."""
    return "tests" in path.relative_to(envs_root()).parts if envs_root() in path.parents \
        else False


def _modules() -> dict[str, Path]:
    """Dotted name -> file, for the package and the tool folders (shipped inside it)."""
    found = {}
    for base, prefix in ((PACKAGE, "sciagent_gym"), (envs_root(), "sciagent_gym.envs")):
        for path in base.rglob("*.py"):
            rel = path.relative_to(base).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            if "snapshot" in parts or _is_tool_test(path):
                continue
            found[".".join([prefix, *parts])] = path
    return found


def _imports(path: Path, name: str, modules: dict[str, Path]) -> set[str]:
    """Every module ``name`` imports anywhere in its body (top level, functions,
    TYPE_CHECKING blocks), as the most specific module of ours each import names."""
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                       for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles_lazy_or_not():
    modules = _modules()
    graph = {name: _imports(path, name, modules) for name, path in modules.items()}
    assert _cycles(graph) == []


def test_the_core_names_no_ported_benchmark():
    """A ported benchmark is imported by name only in its own package and by a tool whose
    manifest ``uses`` it (EarthData's specs use ST-Bench's stbench_* checks); the core
    reaches benchmarks only through the registries (``benchmarks.load_all``,
    ``evaluation.rewards``)."""
    modules = _modules()
    found = {}
    for name, path in modules.items():
        if name.startswith("sciagent_gym.benchmarks"):
            continue
        named = {m for m in _imports(path, name, modules)
                 if m.startswith("sciagent_gym.benchmarks.")
                 and m != "sciagent_gym.benchmarks.registry"}
        parts = name.split(".")
        allowed = _allowed_for(parts[2]) if parts[:2] == ["sciagent_gym", "envs"] \
            and len(parts) > 2 else ()
        named = {m for m in named if not any(m == a or m.startswith(a + ".") for a in allowed)}
        if named:
            found[name] = sorted(named)
    assert not found, f"import benchmarks through their registries, not by name: {found}"
    tree = ast.parse((PACKAGE / "env.py").read_text())
    for node in ast.walk(tree):  # docstrings may name them; code may not
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(getattr(body[0], "value", None), ast.Constant):
            node.body = body[1:] or [ast.Pass()]
    without_docs = ast.unparse(tree)
    for bench in ("stbench", "csmbench"):
        assert bench not in without_docs.lower(), f"env.py has a {bench} branch"


#: The core's packages (and top-level modules), lowest first: a package imports only from
#: layers below its own (lazy and TYPE_CHECKING imports included). Isolation primitives sit
#: below both the providers and the evaluation; the host/guest transfer format below both the
#: providers and the control server, which import neither each other.
LAYERS = (
    ("errors",),
    ("blas", "deps", "processes", "run_records", "safe_fs", "screen_space", "timings"),
    ("actions", "agents", "datagen", "isolation", "transfer"),
    ("controller",),
    ("evaluation",),
    ("tasks",),
    ("tools",),
    ("benchmarks", "providers", "sdk", "server"),
    ("env",),
    ("runs", "wrappers"),
    ("cli",),
    ("__init__",),
)


def _package(module: str) -> str | None:
    """The core package (or top-level module) a dotted module belongs to; None for tools."""
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__"
    return None if parts[1] in ("envs", "task_specs", "vm_images") else parts[1]


def _upward_imports(graph: dict[str, set[str]]) -> list[str]:
    layer = {name: i for i, names in enumerate(LAYERS) for name in names}
    bad = []
    for module, targets in sorted(graph.items()):
        src = _package(module)
        if src is None:
            continue
        for target in sorted(targets):
            dst = _package(target)
            # the package root runs before any of its modules: importing it adds no edge
            if dst is None or dst == src or dst == "__init__":
                continue
            if src not in layer or dst not in layer:
                bad.append(f"{module} -> {target}: {src if src not in layer else dst} is in "
                           "no layer (add it to LAYERS)")
            elif layer[dst] >= layer[src]:
                bad.append(f"{module} -> {target}: {src} may not import {dst}")
    return bad


def test_the_core_is_layered():
    """No package imports one in its own layer or above (the package graph has no cycle and
    keeps one order), counting imports inside functions and TYPE_CHECKING blocks."""
    modules = _modules()
    graph = {name: _imports(path, name, modules) for name, path in modules.items()}
    assert _upward_imports(graph) == []


def test_the_layer_check_sees_an_upward_import():
    graph = {"sciagent_gym.evaluation.isolated": {"sciagent_gym.providers.local.sandbox"},
             "sciagent_gym.providers.local.slot": {"sciagent_gym.evaluation.state"},
             "sciagent_gym.newpkg.x": {"sciagent_gym.errors"}}
    assert _upward_imports(graph) == [
        "sciagent_gym.evaluation.isolated -> sciagent_gym.providers.local.sandbox: "
        "evaluation may not import providers",
        "sciagent_gym.newpkg.x -> sciagent_gym.errors: newpkg is in no layer (add it to LAYERS)"]


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def _sources() -> list[Path]:
    """The package's modules and the tool folders' (snapshot homes left out)."""
    tools = [p for p in envs_root().rglob("*.py")
             if "snapshot" not in p.parts and not _is_tool_test(p)]
    return [*PACKAGE.rglob("*.py"), *tools]


def test_modules_are_small_or_one_concept():
    """The line cap holds in the core and in the tool folders alike."""
    too_big = {}
    for path in _sources():
        rel = str(path.resolve().relative_to(ROOT))
        lines = len(path.read_text().splitlines())
        if lines > MAX_LINES and rel not in ONE_CONCEPT and rel not in SPLIT_OPEN:
            too_big[rel] = lines
    assert not too_big, f"split these, or list them in ONE_CONCEPT with the reason: {too_big}"
    stale = [rel for rel in [*ONE_CONCEPT, *SPLIT_OPEN]
             if not (ROOT / rel).is_file()
             or len((ROOT / rel).read_text().splitlines()) <= MAX_LINES]
    assert not stale, f"ONE_CONCEPT or SPLIT_OPEN lists modules that no longer need it: {stale}"


def test_every_exception_lives_in_errors():
    """Exceptions are defined in sciagent_gym/errors.py only (tool folders define their own
    channel errors as subclasses of errors.ToolScriptError)."""
    elsewhere = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "errors.py" and path.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(
                    re.search(r"(Error|Exception|Failure)$", ast.unparse(b))
                    for b in node.bases):
                elsewhere.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert not elsewhere


def test_no_tool_is_named_outside_its_folders():
    """Adding a tool touches only envs/<tool>/ and task_specs/<tool>/: packaging, set-up and
    the core never name one (docs and tests may)."""
    names = sorted(discover())
    core_files = [*PACKAGE.rglob("*.py"), ROOT / "pyproject.toml", ROOT / "setup.py",
                  ROOT / "Makefile", *(ROOT / "vm_images").rglob("*.txt"),
                  *(ROOT / "vm_images").rglob("*.json")]
    hits = []
    for path in core_files:
        text = path.read_text()
        for name in names:
            for m in re.finditer(rf"envs[./]{name}\b|task_specs[./]{name}\b", text):
                hits.append(f"{path.relative_to(ROOT)}: {m.group(0)}")
    assert not hits


def _allowed_for(tool: str) -> tuple[str, ...]:
    """What a tool's code may import of the package: the SDK, its own folder and what its
    manifest ``uses`` (tools by name, ported benchmarks as ``benchmarks.<name>``)."""
    uses = discover()[tool].uses
    return ("sciagent_gym.sdk", f"sciagent_gym.envs.{tool}",
            *(f"sciagent_gym.{u}" if u.startswith("benchmarks.") else f"sciagent_gym.envs.{u}"
              for u in uses))


def test_tools_import_only_the_sdk():
    """The tool contract is one module: a tool's code imports ``sciagent_gym.sdk`` and
    nothing else of the core (lazy and TYPE_CHECKING imports included), so the core can
    change behind it."""
    modules = _modules()
    found = {}
    for name, path in modules.items():
        parts = name.split(".")
        if parts[:2] != ["sciagent_gym", "envs"] or len(parts) < 3:
            continue
        allowed = _allowed_for(parts[2])
        bad = sorted(m for m in _imports(path, name, modules)
                     if m.startswith("sciagent_gym")
                     and not any(m == a or m.startswith(a + ".") for a in allowed))
        if bad:
            found[str(path.relative_to(envs_root().parent))] = bad
    assert not found, f"import these through sciagent_gym.sdk (or list the tool in 'uses'): " \
                      f"{found}"


def test_the_sdk_rule_catches_a_core_import(tmp_path):
    """The check above sees an import nested in a function, as a lazy import would be."""
    code = tmp_path / "adapter.py"
    code.write_text("def f():\n    from sciagent_gym.tools.adapter import hold_focus\n")
    modules = {**_modules(), "sciagent_gym.envs.x.adapter": code}
    assert "sciagent_gym.tools.adapter" in _imports(code, "sciagent_gym.envs.x.adapter", modules)


def test_what_a_manifest_uses_exists():
    benchmarks = {p.name for p in (PACKAGE / "benchmarks").iterdir() if p.is_dir()}
    for tool, info in discover().items():
        for used in info.uses:
            if used.startswith("benchmarks."):
                assert used.split(".", 1)[1] in benchmarks, (tool, used)
            else:
                assert used in discover() and used != tool, (tool, used)


def _code_strings(tree: ast.AST) -> list[tuple[int, str]]:
    """String constants and names of a module's code: docstrings and ``help=`` texts (what
    a person reads) left out."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant):
            skip.add(id(body[0].value))
        if isinstance(node, ast.keyword) and node.arg == "help":
            skip.update(id(n) for n in ast.walk(node.value))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in skip:
            out.append((node.lineno, node.value))
        elif isinstance(node, ast.Name):
            out.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute):
            out.append((node.lineno, node.attr))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.append((node.lineno, node.name))
    return out


def _tool_names_pattern() -> re.Pattern:
    tools = discover().values()
    words = "|".join(sorted({re.escape(t.name) for t in tools}))
    ids = "|".join(sorted({re.escape(t.env_id) for t in tools}))
    return re.compile(rf"(?<![\w-])({words})(?![\w-])|{ids}", re.IGNORECASE)


def test_the_core_names_no_tool_in_its_code():
    """Tool knowledge lives in the tool's folder (its manifest, its adapter): the core's code
    names no tool, not even as a bare string or a default env (docstrings and help texts,
    which people read, may give one as an example)."""
    pattern = _tool_names_pattern()
    hits = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] in ("envs", "task_specs", "vm_images"):
            continue
        for line, text in _code_strings(ast.parse(path.read_text())):
            hits += [f"{rel}:{line}: {m.group(0)!r}" for m in pattern.finditer(text)]
    assert not hits, hits


def test_the_tool_name_check_sees_strings_and_defaults():
    tree = ast.parse('"""Docs may say imagej."""\n'
                     'def run(env_id="SciGUI-ImageJ-v0"):\n'
                     '    p.add_argument("--env", help="e.g. praat")\n'
                     '    return ["/etc/qgis", "materials-science"]\n')
    texts = [t for _, t in _code_strings(tree)]
    found = [m.group(0) for t in texts for m in _tool_names_pattern().finditer(t)]
    assert sorted(found) == ["SciGUI-ImageJ-v0", "qgis"]


#: Longest code string (in lines) a tool's adapter may hold: a one-line command or a few lines
#: typed at the program's console (console_rebind). The code its channel runs inside the
#: program is a file in ``inside/``, read with ``sdk.inside_text``. (Oracle scripts in data.py
#: are task content, generated per variant, and stay there.)
MAX_CODE_LINES = 5
#: Tools whose adapter still embeds longer code, and why (none left).
INSIDE_OPEN: dict[str, str] = {}


def _long_code_strings(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    docs = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant):
            docs.add(id(body[0].value))
    return [f"{path.parent.name}/{path.name}:{node.lineno} ({node.value.count(chr(10))} lines)"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docs and node.value.count("\n") > MAX_CODE_LINES]


def test_code_run_in_a_program_lives_in_inside():
    found = []
    for tool in sorted(discover()):
        if tool in INSIDE_OPEN:
            continue
        found += _long_code_strings(envs_root() / tool / "adapter.py")
    assert not found, f"move these into the tool's inside/ folder: {found}"
    assert all(_long_code_strings(envs_root() / t / "adapter.py") for t in INSIDE_OPEN), \
        "a tool listed in INSIDE_OPEN no longer needs it"


@pytest.mark.parametrize("tool", sorted(discover()))
def test_tool_folder_has_what_discovery_needs(tool):
    folder = envs_root() / tool
    for name in ("tool.json", "adapter.py", "NOTES.md"):
        assert (folder / name).is_file(), f"{tool}: {name} missing"
    assert (ROOT / "task_specs" / tool).is_dir() or (folder.parent.parent / "task_specs"
                                                     / tool).is_dir()


def test_readme_env_table_is_the_generated_one():
    """The README's and the docs' table of envs is `sciagent-gym list --markdown`: a new tool
    folder gets its row by running `make readme`, and a stale table fails here."""
    import contextlib
    import io

    from sciagent_gym.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["list", "--markdown"]) == 0
    marker = "<!-- generated: sciagent-gym list --markdown -->\n"
    for page in (ROOT / "README.md", ROOT / "docs" / "index.md"):
        text = page.read_text()
        assert marker in text, page
        start = text.index(marker) + len(marker)
        table = text[start:text.index("\n\n", start)]
        assert table == out.getvalue().strip(), f"{page.name}: run `make readme`"
        assert all(f"`{info.env_id}`" in table for info in discover().values())


def test_readme_is_one_screen_and_the_task_tables_are_in_the_env_pages():
    """The README stays what a newcomer reads (the manual is docs/); each env's task table is
    on its generated page (tests/unit/test_docs.py keeps those current)."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    assert "--markdown --tasks" not in readme
