"""Rewrite the README's generated tables (`sciagent-gym list --markdown [--tasks]`) in place.

    python scripts/update_readme.py          # or: make readme

tests/unit/test_layout.py fails when the README and these commands disagree; run this after
adding a tool or a task, or changing a GUI oracle's steps. The "## Speed" table is rendered from
benchmarks/results/bench-all.json (`sciagent-gym bench --all --out benchmarks/results`, an hour
long, so it is read back rather than rerun; tests/unit/test_bench_all.py checks it), and the
threat model's attack table from benchmarks/results/attacks-all.json (`sciagent-gym audit
--attacks --json`, most of an hour; tests/unit/test_attack_table.py checks it), and the prior
audit's from benchmarks/results/prior-all.json (`sciagent-gym audit --prior --json`;
tests/unit/test_prior.py checks it).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

from sciagent_gym.cli.main import main
from sciagent_gym.runs import attack_table, bench_all, prior
from sciagent_gym.runs.attacks import CATALOGUE

README = Path(__file__).resolve().parents[1] / "README.md"
BENCH_ALL = README.parent / "benchmarks" / "results" / "bench-all.json"
ATTACKS_ALL = README.parent / "benchmarks" / "results" / "attacks-all.json"
PRIOR_ALL = README.parent / "benchmarks" / "results" / "prior-all.json"
#: (start marker, argv, where the table ends: a blank line or an end marker)
TABLES = [
    ("<!-- generated: sciagent-gym list --markdown -->\n", ["list", "--markdown"], "\n\n"),
    ("<!-- generated: sciagent-gym list --markdown --tasks -->\n",
     ["list", "--markdown", "--tasks"], "\n<!-- end generated -->"),
]


def generated(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        if main(argv) != 0:
            raise SystemExit(f"sciagent-gym {' '.join(argv)} failed")
    return out.getvalue().strip()


def update(text: str) -> str:
    for marker, argv, end in TABLES:
        start = text.index(marker) + len(marker)
        stop = text.index(end, start)
        text = text[:start] + generated(argv) + text[stop:]
    if BENCH_ALL.is_file() and bench_all.README_MARKER in text:
        text = _section(text, bench_all.README_MARKER, bench_all.readme_section(
            json.loads(BENCH_ALL.read_text()), bench_all.half_painted(BENCH_ALL.parent)))
    if ATTACKS_ALL.is_file() and attack_table.README_MARKER in text:
        text = _section(text, attack_table.README_MARKER, attack_table.readme_section(
            json.loads(ATTACKS_ALL.read_text()), attack_table.catalogue_of(CATALOGUE)))
    if PRIOR_ALL.is_file() and prior.README_MARKER in text:
        text = _section(text, prior.README_MARKER,
                        prior.readme_section(json.loads(PRIOR_ALL.read_text())))
    return text


def _section(text: str, marker: str, section: str) -> str:
    """``text`` with what lies between ``marker`` and the next end marker replaced."""
    start = text.index(marker) + len(marker)
    # from the marker's own newline: an empty section ends right there
    stop = text.index("\n<!-- end generated -->", start - 1)
    return text[:start] + section + text[stop:]


if __name__ == "__main__":
    old = README.read_text()
    new = update(old)
    if new != old:
        README.write_text(new)
    print(f"{README.name}: {'updated' if new != old else 'already current'}", file=sys.stderr)
