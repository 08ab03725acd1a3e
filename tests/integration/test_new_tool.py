"""A tool is its two folders and nothing else: copy one tool's envs/ and task_specs/ folders
under a new name into a copy of the tree, install that tree, and the new env registers, lists
its tasks, passes the spec checks every tool passes and renders its docs page, with no other
file touched."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE, NEW = "ds9", "newtool"


def _tracked() -> list[str]:
    return subprocess.run(["git", "ls-files"], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout.split()


def _copy_tool(src: Path) -> None:
    """What a developer does to start a tool from an existing one: copy both folders and
    rename the tool's own names (its module path, getter prefix, task ids, env id)."""
    for kind in ("envs", "task_specs"):
        shutil.copytree(src / kind / SOURCE, src / kind / NEW)
        for path in (src / kind / NEW).rglob("*"):
            if path.suffix not in (".py", ".json"):
                continue
            text = path.read_text()
            text = text.replace(f"sciagent_gym.envs.{SOURCE}.", f"sciagent_gym.envs.{NEW}.")
            text = re.sub(rf'(["\']){SOURCE}_', rf"\g<1>{NEW}_", text)
            text = text.replace(f'"{SOURCE}/', f'"{NEW}/')
            text = text.replace(f'"tool": "{SOURCE}"', f'"tool": "{NEW}"')
            path.write_text(text)
    meta_path = src / "envs" / NEW / "tool.json"
    meta = json.loads(meta_path.read_text())
    meta.update(name=NEW, env_id="SciGUI-NewTool-v0", display_name="New tool")
    meta_path.write_text(json.dumps(meta, indent=2))


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs the git checkout to list the tracked files")
    tmp = tmp_path_factory.mktemp("newtool")
    src, site = tmp / "src", tmp / "site"
    for rel in _tracked():
        if (ROOT / rel).is_file() and rel.split("/")[0] in (
                "sciagent_gym", "envs", "task_specs", "vm_images", "setup.py",
                "pyproject.toml", "README.md"):
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)
    before = {p.relative_to(src) for p in src.rglob("*") if p.is_file()}
    _copy_tool(src)
    touched = {p.relative_to(src) for p in src.rglob("*") if p.is_file()} - before
    assert all(p.parts[:2] in ((("envs", NEW)), ("task_specs", NEW)) for p in touched)
    build = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
         "--target", str(site), str(src)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-2000:]
    return tmp, site


def _run(tmp: Path, site: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, *argv], cwd=tmp, env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_copied_tool_registers_and_lists(installed):
    tmp, site = installed
    probe = _run(tmp, site, "-c", (
        "import json, gymnasium as gym, sciagent_gym\n"
        "from sciagent_gym.tools import load_tool_specs\n"
        f"specs = load_tool_specs({NEW!r})\n"
        "print(json.dumps({'file': sciagent_gym.__file__,\n"
        "  'registered': 'SciGUI-NewTool-v0' in gym.registry,\n"
        f"  'tasks': sorted(specs), 'source': len(load_tool_specs({SOURCE!r}))}}))"))
    assert probe.returncode == 0, probe.stderr[-3000:]
    seen = json.loads(probe.stdout)
    assert seen["file"].startswith(str(site))  # the installed copy, not this checkout
    assert seen["registered"]
    assert len(seen["tasks"]) == seen["source"] >= 10
    assert all(t.startswith(f"{NEW}/") for t in seen["tasks"])
    listed = _run(tmp, site, "-m", "sciagent_gym.cli", "list", "--json")
    assert listed.returncode == 0, listed.stderr[-3000:]
    assert "SciGUI-NewTool-v0" in listed.stdout and f"{NEW}/" in listed.stdout
    deps = _run(tmp, site, "-m", "sciagent_gym.cli", "deps", "--apt", "--tool", NEW)
    assert deps.returncode == 0 and "saods9" in deps.stdout.split()


def test_the_copied_tool_passes_the_common_spec_checks(installed):
    tmp, site = installed
    checks = ROOT / "tests" / "specs" / "test_tool_specs_common.py"
    # --noconftest: the checkout's conftest.py would put the checkout's own package first on
    # sys.path, ahead of the installed copy under test
    result = _run(tmp, site, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                  "no:xdist", "--noconftest", "--rootdir", str(tmp), "-k", NEW, str(checks))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    passed = re.search(r"(\d+) passed", result.stdout)
    assert passed and int(passed.group(1)) >= 10 * 5, result.stdout[-1000:]


def test_the_copied_tool_gets_its_generated_doc_page(installed):
    """Its docs page (docs/envs/<tool>.md, written by `make readme`) comes from its two folders:
    the env, each task with its GUI oracle's step count, and its NOTES.md."""
    tmp, site = installed
    page = _run(tmp, site, "-c", (
        "from sciagent_gym.cli.listing import env_page, list_rows\n"
        f"print(env_page(list_rows({NEW!r})[0]))"))
    assert page.returncode == 0, page.stderr[-3000:]
    assert page.stdout.startswith("# SciGUI-NewTool-v0\n")
    assert f"| `{NEW}/" in page.stdout and f"`envs/{NEW}/NOTES.md`" in page.stdout
