"""The threat model's attack table, rendered from a saved ``sciagent-gym audit --attacks --json``.

A whole catalogue over every tool takes most of an hour, so the table in docs/threat-model.md is
rendered from the saved report (``benchmarks/results/attacks-all.json``) rather than rerun;
``scripts/update_readme.py`` rewrites the section between :data:`README_MARKER` and the end
marker, and ``tests/unit/test_attack_table.py`` checks that the page and the report agree.
"""

from __future__ import annotations

from typing import Any

README_MARKER = ("<!-- generated: benchmarks/results/attacks-all.json "
                 "(sciagent-gym audit --attacks --json) -->\n")


def rows(report: dict[str, Any], catalogue: dict[str, tuple[str, str]]) -> list[list[str]]:
    """One row per attack of ``catalogue`` (name -> (kind, description)), in catalogue order:
    on how many of the tools it applies to it held, the tools where it did not, those it does
    not apply to (``played`` false) and those it was not played on."""
    tools = [t["tool"] for t in report["tools"]]
    results = {(t["tool"], r["attack"]): r for t in report["tools"] for r in t["results"]}
    out = []
    for name, (kind, description) in catalogue.items():
        ran = [tool for tool in tools if (tool, name) in results]
        na = [tool for tool in ran if not results[tool, name].get("played", True)]
        played = [tool for tool in ran if tool not in na]
        held = [tool for tool in played if results[tool, name]["held"]]
        broken = [tool for tool in played if tool not in held]
        missing = [tool for tool in tools if tool not in ran]
        notes = [*(f"broken: {t}" for t in broken), *(f"not played: {t}" for t in missing)]
        if na:
            notes.append(f"not applicable on {len(na)}" if len(na) > 3
                         else "not applicable on " + ", ".join(na))
        out.append([f"`{name}`", kind, description, f"{len(held)}/{len(tools) - len(na)}",
                    ", ".join(notes) or "-"])
    return out


def markdown(report: dict[str, Any], catalogue: dict[str, tuple[str, str]]) -> str:
    """The table, with a total row."""
    body = rows(report, catalogue)
    lines = ["| attack | kind | what it tries | held on | where not |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    lines.append(f"| **total** | | | **{report['held']}/{report['total']}** | |")
    return "\n".join(lines)


def readme_section(report: dict[str, Any], catalogue: dict[str, tuple[str, str]]) -> str:
    """What the docs show: how it was measured, then the table."""
    tools = [t["tool"] for t in report["tools"]]
    when = report.get("measured", "")
    skipped = report.get("skipped") or {}
    text = (f"Measured{' on ' + when if when else ''} with `sciagent-gym audit --attacks "
            f"--json > benchmarks/results/attacks-all.json`: {len(catalogue)} attacks, "
            f"{len(tools)} tools, one env each, every attack from a fresh episode"
            + (f"; not installed: {', '.join(sorted(skipped))}" if skipped else "") + ".\n\n")
    return text + markdown(report, catalogue)


def catalogue_of(attacks: Any) -> dict[str, tuple[str, str]]:
    """``{name: (kind, description)}`` of an attack catalogue (``attacks.CATALOGUE``)."""
    return {a.name: (a.kind, a.description) for a in attacks}
