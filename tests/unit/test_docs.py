"""The docs site (docs/, mkdocs.yml): its generated pages are current and its links resolve.

`make docs` builds it with ``mkdocs build --strict`` (and ``.ci/run`` does after the tests);
these checks need no MkDocs and run in a second.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sciagent_gym.cli.listing import PAGE_MARKER, env_page, envs_index, list_rows
from sciagent_gym.tools import discover

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
ENV_PAGES = DOCS / "envs"
RESULTS = ROOT / "benchmarks" / "results"
ENVS_INDEX = "<!-- generated: the env pages (scripts/update_readme.py) -->\n"
LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)\)")
#: The pages written by hand (the env pages are generated from the tool folders).
HAND_PAGES = sorted(p for p in DOCS.glob("*.md")) + [ENV_PAGES / "index.md"]


@pytest.fixture(scope="module")
def rows():
    return list_rows()


def test_every_env_page_is_the_generated_one(rows):
    """docs/envs/<tool>.md is what `make readme` renders from the tool's folders: a new task,
    a changed GUI oracle or NOTES.md fails here until the page is regenerated."""
    stale = [row["tool"] for row in rows
             if not (ENV_PAGES / f"{row['tool']}.md").is_file()
             or (ENV_PAGES / f"{row['tool']}.md").read_text() != env_page(row)]
    assert not stale, f"stale or missing env pages {stale}: run `make readme`"


def test_no_env_page_outlives_its_tool():
    pages = {p.stem for p in ENV_PAGES.glob("*.md")} - {"index"}
    assert pages == set(discover()), "run `make readme`"
    for page in pages:
        assert PAGE_MARKER in (ENV_PAGES / f"{page}.md").read_text()


def test_the_env_pages_index_is_the_generated_one(rows):
    text = (ENV_PAGES / "index.md").read_text()
    start = text.index(ENVS_INDEX) + len(ENVS_INDEX)
    shown = text[start:text.index("\n<!-- end generated -->", start - 1)]
    assert shown == envs_index(rows), "run `make readme`"


def test_an_env_page_shows_each_task_with_its_reference_steps(rows):
    row = next(r for r in rows if any(t["oracle_steps"] for t in r["tasks"]))
    page = env_page(row)
    assert page.startswith(f"# {row['env_id']}\n")
    for task in row["tasks"]:
        assert f"| `{task['id']}` |" in page
    assert "GUI oracle steps" in page and "works through" in page and "## Notes" in page


def _target(page: Path, link: str) -> Path | None:
    """The file a relative link of ``page`` names, or None for a URL or an in-page anchor."""
    if re.match(r"[a-z]+:", link) or link.startswith("#"):
        return None
    path = link.split("#")[0]
    if page.is_relative_to(DOCS) and path.startswith("results/"):
        return RESULTS / path.removeprefix("results/")  # served by docs/hooks.py
    return (page.parent / path).resolve()


@pytest.mark.parametrize("page", [ROOT / "README.md", *HAND_PAGES], ids=lambda p: p.name)
def test_relative_links_resolve(page):
    missing = [link for link in LINK.findall(page.read_text())
               if (target := _target(page, link)) is not None and not target.exists()]
    assert not missing, f"{page.relative_to(ROOT)}: broken links {missing}"


def test_the_docs_link_nowhere_outside_the_repository():
    for page in [ROOT / "README.md", *HAND_PAGES]:
        for link in LINK.findall(page.read_text()):
            target = _target(page, link)
            assert target is None or target.is_relative_to(ROOT), (page.name, link)


def test_every_nav_entry_exists():
    nav = re.findall(r"^\s*-\s+(?:[^:\n]+:\s+)?(\S+\.md)\s*$",
                     (ROOT / "mkdocs.yml").read_text(), re.M)
    assert nav and all((DOCS / entry).is_file() for entry in nav)
    hand = {p.relative_to(DOCS).as_posix() for p in HAND_PAGES}
    assert hand <= set(nav), f"pages missing from mkdocs.yml's nav: {hand - set(nav)}"


def test_user_docs_carry_no_issue_numbers():
    """Issue numbers belong to the tracker, not to the README or the hand-written pages."""
    for page in [ROOT / "README.md", *HAND_PAGES]:
        hits = re.findall(r"\bissues? \d+", page.read_text(), re.I)
        assert not hits, f"{page.relative_to(ROOT)}: {hits}"


def test_the_readme_holds_no_dated_runs():
    """Measured runs, with their dates and commands, live in the docs (speed, threat model)."""
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", (ROOT / "README.md").read_text())


def test_nothing_points_at_a_design_md():
    """The design notes are docs/design.md; no DESIGN.md exists to point at."""
    files = [*(ROOT / "sciagent_gym").rglob("*.py"), *(ROOT / "scripts").glob("*.py"),
             *DOCS.rglob("*.md"), ROOT / "README.md"]
    assert not [f.relative_to(ROOT) for f in files if "DESIGN.md" in f.read_text()]
