"""MkDocs hooks (mkdocs.yml ``hooks:``): the generated env pages in the nav, and the plots of
``benchmarks/results/`` served as ``results/<name>.png`` without copying them into docs/."""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def on_config(config):
    """Every ``docs/envs/<tool>.md`` under "Environments", after its index, by file name."""
    pages = sorted(p.name for p in (Path(config["docs_dir"]) / "envs").glob("*.md")
                   if p.name != "index.md")
    for item in config["nav"]:
        if isinstance(item, dict) and "Environments" in item:
            item["Environments"] = ["envs/index.md", *(f"envs/{name}" for name in pages)]
    return config


def on_files(files, config):
    for png in sorted(RESULTS.glob("*.png")):
        files.append(File.generated(config, f"results/{png.name}", abs_src_path=str(png)))
    return files
