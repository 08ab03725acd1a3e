"""Rewrite the generated parts of the README and the docs in place.

    python scripts/update_readme.py          # or: make readme (alias: make docs-pages)
    python scripts/update_readme.py --check  # exit 1 and name the stale files, write nothing

What it writes, each from the live repository:

- the env table (``sciagent-gym list --markdown``) in ``README.md`` and ``docs/index.md``;
- one page per env, ``docs/envs/<tool>.md`` (its tasks with the GUI oracle's step count,
  modality and oracle interface, and its ``NOTES.md``: ``sciagent_gym.cli.listing.env_page``),
  and the list of them in ``docs/envs/index.md``; a page whose tool is gone is removed;
- the prior audit's table in ``docs/rewards-and-splits.md`` from
  ``benchmarks/results/prior-all.json`` (``sciagent-gym audit --prior --json``);
- the attack table in ``docs/threat-model.md`` from ``benchmarks/results/attacks-all.json``
  (``sciagent-gym audit --attacks --json``, most of an hour);
- the speed table in ``docs/speed.md`` from ``benchmarks/results/bench-all.json``
  (``sciagent-gym bench --all --out benchmarks/results``, an hour long).

The measured JSON files are read back, never rerun. Tests fail while a generated part is stale:
tests/unit/test_layout.py (env tables), tests/unit/test_docs.py (env pages),
tests/unit/test_prior.py, test_attack_table.py and test_bench_all.py (their tables). Run this
after adding a tool or a task, changing a GUI oracle's steps or a tool's NOTES.md, or saving a
new measurement.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

from sciagent_gym.cli.listing import env_page, envs_index, list_rows
from sciagent_gym.cli.main import main
from sciagent_gym.runs import attack_table, bench_all, prior
from sciagent_gym.runs.attacks import CATALOGUE

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
ENV_PAGES = DOCS / "envs"
RESULTS = ROOT / "benchmarks" / "results"
BENCH_ALL = RESULTS / "bench-all.json"
ATTACKS_ALL = RESULTS / "attacks-all.json"
PRIOR_ALL = RESULTS / "prior-all.json"
#: The env table's marker; the table ends at the first blank line after it.
ENV_TABLE = "<!-- generated: sciagent-gym list --markdown -->\n"
#: The list of env pages in docs/envs/index.md, up to the end marker.
ENVS_INDEX = "<!-- generated: the env pages (scripts/update_readme.py) -->\n"
END = "\n<!-- end generated -->"
#: Which hand-written file holds which measured table.
PRIOR_PAGE = DOCS / "rewards-and-splits.md"
ATTACK_PAGE = DOCS / "threat-model.md"
SPEED_PAGE = DOCS / "speed.md"


def generated(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        if main(argv) != 0:
            raise SystemExit(f"sciagent-gym {' '.join(argv)} failed")
    return out.getvalue().strip()


def _env_table(text: str, table: str) -> str:
    start = text.index(ENV_TABLE) + len(ENV_TABLE)
    stop = text.index("\n\n", start)
    return text[:start] + table + text[stop:]


def _section(text: str, marker: str, section: str) -> str:
    """``text`` with what lies between ``marker`` and the next end marker replaced."""
    start = text.index(marker) + len(marker)
    # from the marker's own newline: an empty section ends right there
    stop = text.index(END, start - 1)
    return text[:start] + section + text[stop:]


def expected() -> dict[Path, str | None]:
    """Every generated file's (or file with a generated part) wanted text; None: remove it."""
    rows = list_rows()
    table = generated(["list", "--markdown"])
    want: dict[Path, str | None] = {}
    for path in (README, DOCS / "index.md"):
        want[path] = _env_table(path.read_text(), table)
    index = ENV_PAGES / "index.md"
    want[index] = _section(index.read_text(), ENVS_INDEX, envs_index(rows))
    pages = {ENV_PAGES / f"{row['tool']}.md": env_page(row) for row in rows}
    for old in ENV_PAGES.glob("*.md"):
        if old != index and old not in pages:
            want[old] = None
    want.update(pages)
    if PRIOR_ALL.is_file():
        want[PRIOR_PAGE] = _section(PRIOR_PAGE.read_text(), prior.README_MARKER,
                                    prior.readme_section(json.loads(PRIOR_ALL.read_text())))
    if ATTACKS_ALL.is_file():
        want[ATTACK_PAGE] = _section(
            ATTACK_PAGE.read_text(), attack_table.README_MARKER,
            attack_table.readme_section(json.loads(ATTACKS_ALL.read_text()),
                                        attack_table.catalogue_of(CATALOGUE)))
    if BENCH_ALL.is_file():
        want[SPEED_PAGE] = _section(
            SPEED_PAGE.read_text(), bench_all.README_MARKER,
            bench_all.readme_section(json.loads(BENCH_ALL.read_text()),
                                     bench_all.half_painted(BENCH_ALL.parent)))
    return want


def stale() -> list[Path]:
    """The files whose generated parts differ from what :func:`expected` gives."""
    return [path for path, text in expected().items()
            if (path.read_text() if path.is_file() else None) != text]


if __name__ == "__main__":
    check = "--check" in sys.argv[1:]
    changed = []
    for path, text in expected().items():
        if (path.read_text() if path.is_file() else None) == text:
            continue
        changed.append(path.relative_to(ROOT))
        if check:
            continue
        if text is None:
            path.unlink()
        else:
            path.write_text(text)
    verb = "stale" if check else "updated"
    print("\n".join(f"{p}: {verb}" for p in changed) or "README and docs: already current",
          file=sys.stderr)
    sys.exit(1 if check and changed else 0)
