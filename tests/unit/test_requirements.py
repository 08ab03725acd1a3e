"""How a tool's programs are found: an environment variable, PATH, then install locations.

QuPath (issue 7) is the reason: no system package provides it, so it may live wherever its
recipe put it or wherever the user points ``QUPATH_EXE``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from sciagent_gym.cli.main import main
from sciagent_gym.errors import MissingProgramError
from sciagent_gym.tools import Requirement


def _exe(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def bare_path(monkeypatch, tmp_path):
    """PATH holding only an empty directory, so nothing is found there by accident."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("FAKE_TOOL_EXE", raising=False)
    return empty


def test_env_variable_wins_and_must_name_an_executable(bare_path, tmp_path, monkeypatch):
    exe = _exe(tmp_path / "opt" / "FakeTool")
    req = Requirement("FakeTool", "faketool", env="FAKE_TOOL_EXE")
    assert req.locate() is None and req.missing()
    monkeypatch.setenv("FAKE_TOOL_EXE", str(exe))
    assert req.locate() == exe and not req.missing()
    monkeypatch.setenv("FAKE_TOOL_EXE", str(tmp_path / "nowhere"))
    assert req.missing()
    err = req.error()
    assert isinstance(err, MissingProgramError)
    assert "FAKE_TOOL_EXE=" in str(err) and "not an executable" in str(err)
    # A file that exists but is not executable is not accepted either.
    plain = tmp_path / "plain"
    plain.write_text("x")
    monkeypatch.setenv("FAKE_TOOL_EXE", str(plain))
    assert req.missing()


def test_path_then_search_locations_with_variables(bare_path, tmp_path, monkeypatch):
    req = Requirement("FakeTool", "faketool", install="sciagent-gym install faketool",
                      search=("$FAKE_HOME/bin/FakeTool", "~/fake/bin/FakeTool"))
    monkeypatch.delenv("FAKE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert req.missing()  # unset variable: that location is skipped, not taken literally
    assert "sciagent-gym install faketool" in str(req.error())
    home_exe = _exe(tmp_path / "home" / "fake" / "bin" / "FakeTool")
    assert req.locate() == home_exe
    monkeypatch.setenv("FAKE_HOME", str(tmp_path / "prefix"))
    prefix_exe = _exe(tmp_path / "prefix" / "bin" / "FakeTool")
    assert req.locate() == prefix_exe  # earlier search entries come first
    on_path = _exe(bare_path / "FakeTool")
    assert req.locate() == on_path  # PATH before install locations


def test_install_command_names_known_recipes(capsys):
    assert main(["install", "no-such-tool"]) == 1
    err = capsys.readouterr().err
    assert "no install recipe for 'no-such-tool'" in err


def test_apt_hint_by_default():
    req = Requirement("surely-not-installed-xyz", "xyz-pkg")
    assert req.missing()
    assert "apt-get install -y xyz-pkg" in str(req.error())
    assert os.environ.get("PATH")  # the test did not clobber the real PATH


def test_python_module_requirements_are_found_by_import_and_installed_by_pip(tmp_path):
    present = Requirement(python="json", pip="json-is-stdlib")
    assert not present.missing() and present.locate().name == "__init__.py"
    absent = Requirement(python="surely_not_a_module_xyz", pip="xyz-dist>=1.0")
    assert absent.missing() and absent.name == "surely_not_a_module_xyz"
    assert "pip install 'xyz-dist>=1.0'" in str(absent.error())
    with pytest.raises(ValueError, match="not both"):
        Requirement("prog", "pkg", python="mod", pip="dist")
    with pytest.raises(ValueError, match="needs its 'pip'"):
        Requirement(python="mod")


def test_deps_lists_pip_requirements_apart_from_debian_packages(tmp_path):
    import json

    from sciagent_gym.deps import pip_packages, tool_packages

    meta = {"name": "t", "requires": [{"program": "fityk", "package": "fityk"},
                                      {"python": "pymatgen.core", "pip": "pymatgen>=2024.1"}]}
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "tool.json").write_text(json.dumps(meta))
    assert tool_packages(meta) == ["fityk"]  # a pip requirement is no Debian package
    assert pip_packages(tmp_path) == ["pymatgen>=2024.1"]
    assert pip_packages(tmp_path, tools=["other"]) == []
