"""Rewrite the README's generated tables (`sciagent-gym list --markdown [--tasks]`) in place.

    python scripts/update_readme.py          # or: make readme

tests/unit/test_layout.py fails when the README and these commands disagree; run this after
adding a tool or a task, or changing a GUI oracle's steps.
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

from sciagent_gym.cli.main import main

README = Path(__file__).resolve().parents[1] / "README.md"
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
    return text


if __name__ == "__main__":
    old = README.read_text()
    new = update(old)
    if new != old:
        README.write_text(new)
    print(f"{README.name}: {'updated' if new != old else 'already current'}", file=sys.stderr)
