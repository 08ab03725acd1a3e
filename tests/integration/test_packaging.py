"""The wheel carries everything the envs need at run time: every tracked file of envs/,
task_specs/ and vm_images/, including the snapshot homes' dot-directories (globs skip those
unless pyproject.toml names them), and no tool's tests (envs/<tool>/tests/)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGED = {"envs": "sciagent_gym/envs", "task_specs": "sciagent_gym/task_specs",
            "vm_images": "sciagent_gym/vm_images"}


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                    reason="needs the git checkout to list the tracked files")
def test_wheel_contains_every_data_file(tmp_path):
    def ls_files(*paths: str) -> list[str]:
        return subprocess.run(["git", "ls-files", *paths], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.split()

    # Build from a copy of the tracked files, so the checkout gets no build/ or egg-info.
    src = tmp_path / "src"
    for path in ls_files():
        if (ROOT / path).is_file():
            (src / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / path, src / path)
    tracked = [p for p in ls_files(*PACKAGED) if "/tests/" not in p]
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(src)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = tmp_path.glob("sciagent_gym-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {PACKAGED[path.split("/", 1)[0]] + "/" + path.split("/", 1)[1]
                for path in tracked}
    missing = sorted(expected - names)
    assert not missing, f"{len(missing)} data files left out of the wheel: {missing[:10]}"
    assert "sciagent_gym/envs/imagej/snapshot/home/.imagej/IJ_Prefs.txt" in names
    assert not [n for n in names if "/tests/" in n], "a tool's tests went into the wheel"
    assert ls_files("envs/praat/tests"), "the check above needs a tool with tests"
