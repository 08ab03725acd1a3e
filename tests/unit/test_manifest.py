"""tool.json is parsed at discovery into a typed, frozen ToolInfo; a bad one is refused with
the file and the field named."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from sciagent_gym.errors import ManifestError
from sciagent_gym.isolation.confinement import etc_binds
from sciagent_gym.tools import discover
from sciagent_gym.tools.manifest import parse_manifest, read_manifest

BASE = {"name": "demo", "env_id": "SciGUI-Demo-v0", "display_name": "Demo", "domain": "tests"}


def _parse(**keys):
    return parse_manifest({**BASE, **keys}, Path("/x/envs/demo"))


def test_a_full_manifest_is_typed_and_frozen():
    info = _parse(program="Demo 1.0", debian=["xterm"], display={"glx": False},
                  settle={"quiet": 0.2}, etc=["demo", "gdal/conf"], processes=["demo"],
                  uses=["jmol", "benchmarks.stbench"],
                  requires=[{"program": "demo", "package": "demo"}])
    assert (info.program, info.debian, info.glx) == ("Demo 1.0", ("xterm",), False)
    assert dict(info.settle) == {"quiet": 0.2} and info.etc == ("demo", "gdal/conf")
    assert info.uses == ("jmol", "benchmarks.stbench") and info.requires[0].package == "demo"
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.glx = True  # type: ignore[misc]
    with pytest.raises(TypeError):
        info.settle["quiet"] = 1.0  # type: ignore[index]


def test_defaults_for_a_minimal_manifest():
    info = _parse()
    assert info.glx and not info.settle and info.etc == info.uses == info.processes == ()
    assert info.image is None and info.program == ""


@pytest.mark.parametrize(("keys", "field", "says"), [
    ({"setle": {}}, "setle", "unknown key"),
    ({"display": {"glx": "no"}}, "display", "glx"),
    ({"display": {"gl": False}}, "display", "glx"),
    ({"settle": {"tolerance": 5}}, "settle", "unknown field"),
    ({"settle": {"quiet": 0}}, "settle.quiet", "(0, 10]"),
    ({"settle": {"quiet": True}}, "settle.quiet", "(0, 10]"),
    ({"etc": ["../root"]}, "etc", "not a path under /etc"),
    ({"etc": ["/etc/qgis"]}, "etc", "not a path under /etc"),
    ({"etc": ["shadow"]}, "etc", "never shown"),
    ({"etc": ["sudoers.d/x"]}, "etc", "never shown"),
    ({"etc": "qgis"}, "etc", "list of non-empty strings"),
    ({"uses": [""]}, "uses", "list of non-empty strings"),
    ({"program": 3}, "program", "a string"),
    ({"requires": [{"program": "a", "python": "b", "pip": "b"}]}, "requires[0]", "not both"),
    ({"requires": [{"program": "a", "colour": "red"}]}, "requires[0]", "colour"),
    ({"image": []}, "image", "an object"),
    ({"name": "other"}, "name", "folder"),
])
def test_a_bad_manifest_names_its_file_and_field(keys, field, says):
    with pytest.raises(ManifestError) as err:
        _parse(**keys)
    assert err.value.field == field and says in err.value.message
    assert str(err.value).startswith("/x/envs/demo/tool.json: ")


def test_missing_keys_and_unreadable_files_are_manifest_errors(tmp_path):
    with pytest.raises(ManifestError, match="env_id: missing"):
        parse_manifest({"name": "demo", "display_name": "D", "domain": "d"}, Path("/x/demo"))
    (tmp_path / "demo").mkdir()
    bad = tmp_path / "demo" / "tool.json"
    bad.write_text("{not json")
    with pytest.raises(ManifestError, match="not readable JSON"):
        read_manifest(bad)
    bad.write_text(json.dumps([BASE]))
    with pytest.raises(ManifestError, match="a JSON object"):
        read_manifest(bad)


def test_every_shipped_manifest_parses():
    tools = discover()
    assert tools and all(info.folder.name == name for name, info in tools.items())


def test_a_programs_own_etc_entries_are_bound_beside_the_shared_ones(monkeypatch):
    from sciagent_gym.isolation import confinement

    monkeypatch.setattr(confinement, "ETC_ALLOW", ("os-release",))
    shared = etc_binds()
    assert "/etc/hostname" not in shared
    own = etc_binds(("hostname", "os-release", "no-such-entry-here"))
    assert own.count("/etc/os-release") == shared.count("/etc/os-release")  # bound once
    assert "/etc/hostname" in own  # the program's own entry is shown
    assert "/etc/no-such-entry-here" not in own  # absent entries are skipped
