"""The tool SDK: every name it lists is there, and the files-only adapter refuses both
channels with the tool's own error."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciagent_gym import sdk
from sciagent_gym.tools.manifest import ToolInfo


def test_every_listed_name_is_exported_once():
    assert len(sdk.__all__) == len(set(sdk.__all__))
    missing = [n for n in sdk.__all__ if not hasattr(sdk, n)]
    assert not missing


class DemoError(sdk.ToolScriptError):
    pass


class Demo(sdk.FilesOnlyAdapter):
    error = DemoError
    judged_on = "the plots it saves"


def test_a_files_only_adapter_refuses_script_and_state_with_the_tools_error():
    adapter = Demo(ToolInfo("demo", "SciGUI-Demo-v0", "Demo 2", "tests", (), Path(".")))
    with pytest.raises(DemoError, match="Demo 2 has no scripting channel; tasks are solved "
                                        "through its GUI"):
        adapter.run_script(None, "x")  # type: ignore[arg-type]
    with pytest.raises(DemoError, match="no state channel: tasks are judged on the plots"):
        adapter.dump_state(None)  # type: ignore[arg-type]


def test_the_tools_that_have_no_channel_use_the_files_only_adapter():
    from sciagent_gym.tools import load_adapter

    for name in ("amide", "avogadro", "figureqa", "gwyddion", "kalgebra", "paraview"):
        adapter = load_adapter(name, getters=False)
        assert isinstance(adapter, sdk.FilesOnlyAdapter), name
        with pytest.raises(sdk.ToolScriptError):
            adapter.dump_state(None)  # type: ignore[arg-type]
